"""How ``cellkit.numpy`` builds its functions from table lines.

``define(name, params, impl)`` makes a real Python function with MindSpore's signature
(``params``, exactly as ``inspect.signature`` prints MindSpore's) whose body calls
``impl`` with the arguments in that order. A module's table is a dict ``{name: (params, impl)}``
and ``install(table, namespace)`` defines them all.

>>> from cellkit.numpy._registry import define
>>> f = define("twice", "x, k=2", lambda x, k: x * k)
>>> import inspect; print(inspect.signature(f)), f(3)
(x, k=2) 6
"""

from __future__ import absolute_import

import ast

from . import dtypes

__all__ = ["define", "install"]

_DEFAULTS = {"float32": dtypes.float32, "int32": dtypes.int32, "pi": dtypes.pi}


def _arguments(params):
    """The call passing each parameter on: in order, by keyword after ``*args``."""
    spec = ast.parse(f"def f({params}): pass").body[0].args
    out = [a.arg for a in spec.posonlyargs + spec.args]
    if spec.vararg:
        out.append("*" + spec.vararg.arg)
    out += [f"{a.arg}={a.arg}" for a in spec.kwonlyargs]
    if spec.kwarg:
        out.append("**" + spec.kwarg.arg)
    return ", ".join(out)


def define(name, params, impl, doc=None, module=None):
    """A function ``name(params)`` that returns ``impl(<each parameter, in order>)``."""
    args = _arguments(params)
    namespace = dict(_DEFAULTS, _impl=impl)
    exec(f"def {name}({params}):\n    return _impl({args})\n", namespace)  # noqa: S102 - a fixed template
    fn = namespace[name]
    fn.__doc__ = doc or getattr(impl, "__doc__", None) or f"MindSpore's ``mindspore.numpy.{name}``."
    fn.__module__ = module or __name__
    fn.__qualname__ = name
    return fn


def install(table, namespace, doc="MindSpore's ``mindspore.numpy.{name}({params})``{note}."):
    """Define every ``name: (params, impl[, note])`` line of ``table`` in ``namespace``; returns the names."""
    for name, line in table.items():
        params, impl, *note = line
        text = doc.format(name=name, params=params, note=f": {note[0]}" if note else "")
        namespace[name] = define(name, params, impl, text, namespace.get("__name__"))
    return list(table)
