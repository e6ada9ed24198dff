"""MindSpore's Primitive: an op configured at construction and called like a function.

Built-in Primitives are not written as classes one by one: each is one line of a
family table in ``cellkit.ops.operations`` — the name, the functional op it calls,
and its constructor arguments with their defaults — and :func:`install_primitives`
generates the class. The constructor's arguments are stored as attributes (and in
``attrs``, as MindSpore's ``add_prim_attr`` does) and are passed to the op as
keyword arguments on every call.

Primitives compare equal when their class and configuration are equal, so two
Cells holding equal Primitives have equal structure (and share compilations).

``Primitive`` and ``PrimitiveWithInfer`` are also base classes for Primitives
written by users, as in MindSpore: define ``__call__`` (or ``infer_value``).

>>> import cellkit as ms
>>> from cellkit.ops import operations as P
>>> P.MatMul(transpose_b=True)(ms.ops.ones((2, 3)), ms.ops.ones((4, 3))).shape
(2, 4)
>>> P.MatMul(False, True) == P.MatMul(transpose_b=True)
True
>>> P.MatMul(transpose_c=True)
Traceback (most recent call last):
...
TypeError: MatMul() got an unexpected keyword argument 'transpose_c'; its arguments are (transpose_a=False, transpose_b=False)
>>> class Double(ms.ops.Primitive):
...     def __call__(self, x):
...         return x * 2
>>> Double()(ms.Tensor([1., 2.]))
Array([2., 4.], dtype=float32)
"""

from __future__ import annotations

import functools
import inspect

__all__ = ["Primitive", "PrimitiveWithInfer", "PrimitiveWithCheck", "prim_attr_register", "constexpr",
           "make_primitive", "install_primitives", "REQUIRED"]


class Primitive:
    """Base class of every Primitive: a named op with attributes fixed at construction."""

    def __init__(self, name=None):
        self.name = name if name is not None else type(self).__name__
        self.attrs = {}
        self._config = {}

    def add_prim_attr(self, name, value):
        """Record an attribute (MindSpore's graph compiler reads these; here they are informative)."""
        self.attrs[name] = value
        return self

    def del_prim_attr(self, name):
        self.attrs.pop(name, None)
        return self

    def init_prim_io_names(self, inputs, outputs):
        """Record the input and output names (MindSpore uses them to build its graph)."""
        self.add_prim_attr("input_names", list(inputs))
        self.add_prim_attr("output_names", list(outputs))

    def set_device(self, device_target):
        """Accepted for compatibility: JAX places the computation (see docs/differences.md)."""
        return self

    def shard(self, in_strategy=None, out_strategy=None):
        """Accepted for compatibility: sharding is ``jax.sharding`` on Parameters and inputs (see
        ``cellkit.parallel``), so an operator-level strategy is recorded but not applied."""
        self.add_prim_attr("in_strategy", in_strategy)
        self.add_prim_attr("out_strategy", out_strategy)
        return self

    def recompute(self, mode=True):
        """Accepted for compatibility: use ``Cell.recompute()`` or ``jax.checkpoint``."""
        self.add_prim_attr("recompute", mode)
        return self

    def __eq__(self, other):
        return type(self) is type(other) and self._config == other._config

    def __hash__(self):
        return hash((type(self), tuple(sorted((k, repr(v)) for k, v in self._config.items()))))

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._config.items())
        return f"Prim[{self.name}]({args})" if args else f"Prim[{self.name}]"

    def __call__(self, *args):
        raise NotImplementedError(f"Primitive {self.name} does not define __call__: a Primitive written "
                                  "for cellkit computes its output in __call__ (or in infer_value)")


class PrimitiveWithInfer(Primitive):
    """A Primitive that also declares ``infer_shape``/``infer_dtype``/``infer_value``.

    JAX infers shapes and dtypes by tracing, so the infer methods are not needed; a
    subclass that defines only ``infer_value`` is called through it.
    """

    def __call__(self, *args):
        if type(self).infer_value is not PrimitiveWithInfer.infer_value:
            return self.infer_value(*args)
        return super().__call__(*args)

    def infer_shape(self, *args):
        return args[0] if args else None

    def infer_dtype(self, *args):
        return args[0] if args else None

    def infer_value(self, *args):
        return None


class PrimitiveWithCheck(PrimitiveWithInfer):
    """A Primitive that checks its inputs in ``check_shape``/``check_dtype`` (accepted, not called)."""

    def check_shape(self, *args):
        return None

    def check_dtype(self, *args):
        return None


def prim_attr_register(fn):
    """Decorator for a user Primitive's ``__init__``: its arguments become attributes, as in MindSpore."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def init(self, *args, **kwargs):
        bound = sig.bind(self, *args, **kwargs)
        bound.apply_defaults()
        Primitive.__init__(self, type(self).__name__)
        for k, v in list(bound.arguments.items())[1:]:
            self._config[k] = v
            self.add_prim_attr(k, v)
            setattr(self, k, v)
        fn(self, *args, **kwargs)
    return init


def constexpr(fn=None, *, get_instance=True, reuse_result=True, check=True):
    """MindSpore's ``constexpr``: a function of constants evaluated at trace time. In cellkit every
    Python function already runs at trace time, so this returns the function unchanged."""
    if fn is None:
        return lambda f: f
    return fn


REQUIRED = inspect.Parameter.empty  # a constructor argument without a default, in a table line


def make_primitive(name, fn, defaults=None, check=None, module=None, doc=None, runs=None):
    """A Primitive class named ``name`` whose constructor takes ``defaults`` (name -> default, or
    ``REQUIRED``) and
    whose call is ``fn(*args, **kwargs, **configuration)``; ``check(**configuration)`` validates.
    ``runs``: what a call runs instead of ``fn`` itself (``fn`` with the host path), still shown as ``fn``."""
    defaults = dict(defaults or {})
    runs = fn if runs is None else runs
    sig = inspect.Signature([inspect.Parameter(k, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=v)
                             for k, v in defaults.items()])
    shown = ", ".join(k if v is REQUIRED else f"{k}={v!r}" for k, v in defaults.items())

    def __init__(self, *args, **kwargs):
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{name}() {e}; its arguments are ({shown})") from None
        bound.apply_defaults()
        config = dict(bound.arguments)
        if check is not None:
            check(**config)
        Primitive.__init__(self, name)
        self._config = config
        for k, v in config.items():
            self.add_prim_attr(k, v)
            setattr(self, k, v)

    def __call__(self, *args, **kwargs):
        return runs(*args, **kwargs, **self._config)

    __init__.__signature__ = sig
    target = getattr(fn, "__name__", repr(fn))
    return type(name, (Primitive,), {
        "__init__": __init__, "__call__": __call__, "__module__": module or __name__, "op": staticmethod(fn),
        "__doc__": doc or f"MindSpore's ``ops.{name}({shown})``: calls ``{target}`` with the arguments "
                          "and the configuration.",
    })


def install_primitives(namespace: dict, names: list, table: dict) -> None:
    """Generate each Primitive of ``table`` into ``namespace`` and export it.

    A table line is ``"Name": (fn, {"arg": default, ...})`` or ``(fn, defaults, check)``. A small eager
    call runs on the host where ``fn`` allows it (``eager_jit.host_first``), as the functional op's does.
    """
    from ..eager_jit import host_first   # (a small eager call runs on the host as the functional op's does)
    module = namespace["__name__"]
    for name, line in table.items():
        fn, defaults, *rest = line
        namespace[name] = make_primitive(name, fn, defaults, rest[0] if rest else None, module, runs=host_first(fn))
        names.append(name)
