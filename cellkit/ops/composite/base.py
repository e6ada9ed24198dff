"""MindSpore's composite building blocks (``ops/composite/base.py``): ``MultitypeFuncGraph``,
``HyperMap``, ``Map``, ``add_flags`` and ``partial``.

A :class:`MultitypeFuncGraph` is a function overloaded on MindSpore's type names, as the
optimizers use it; :class:`HyperMap` applies a function over (nested) tuples and lists.
Dispatch happens in Python, so it works eagerly and while tracing (a traced value is a
"Tensor").

>>> import cellkit as ms
>>> from cellkit.ops import composite as C, functional as F
>>> scale = C.MultitypeFuncGraph("scale")
>>> @scale.register("Number", "Tensor")
... def _scale_tensor(s, x):
...     return s * x
>>> @scale.register("Number", "Tuple")
... def _scale_tuple(s, xs):
...     return tuple(s * x for x in xs)
>>> scale(2.0, ms.Tensor([1., 2.]))
Array([2., 4.], dtype=float32)
>>> C.HyperMap()(F.partial(scale, 3.0), (ms.Tensor([1.]), ms.Tensor([2.])))
(Array([3.], dtype=float32), Array([6.], dtype=float32))
>>> scale("a", ms.Tensor([1.]))
Traceback (most recent call last):
...
ValueError: MultitypeFuncGraph 'scale' has no function registered for the types (String, Tensor); registered: (Number, Tensor), (Number, Tuple)
"""

from __future__ import annotations

import functools

import numpy as np

from ...parameter import Parameter
from ...tensor import Tensor

__all__ = ["MultitypeFuncGraph", "HyperMap", "Map", "add_flags", "partial"]

partial = functools.partial


def _type_names(x):
    """MindSpore's type names that ``x`` matches, most specific first."""
    if isinstance(x, Parameter):
        return ("Parameter", "RefKey", "Tensor")
    if isinstance(x, (Tensor, np.ndarray)):
        return ("Tensor",)
    if x is None:
        return ("None", "NoneType")
    if isinstance(x, bool):
        return ("Bool", "Number")
    if isinstance(x, (int, np.integer)):
        return ("Int", "Int64", "Number")  # MindSpore types a Python int as Int64
    if isinstance(x, (float, np.floating)):
        return ("Float", "Number")
    if isinstance(x, complex):
        return ("Complex", "Number")
    if isinstance(x, str):
        return ("String", "Str")
    if isinstance(x, tuple):
        return ("Tuple",)
    if isinstance(x, list):
        return ("List",)
    if isinstance(x, dict):
        return ("Dict",)
    if isinstance(x, slice):
        return ("Slice",)
    if isinstance(x, type):
        return ("TypeType",)
    if callable(x):
        return ("Function", "Func")
    return (type(x).__name__,)


def _type_key(t):
    """A registered type as a name: MindSpore's strings, or a cellkit/NumPy dtype or Python type."""
    if isinstance(t, str):
        return {"Func": "Function", "Str": "String", "NoneType": "None", "RefKey": "Tensor"}.get(t, t)
    if isinstance(t, type):
        return {int: "Int", float: "Float", bool: "Bool", str: "String", tuple: "Tuple", list: "List",
                dict: "Dict"}.get(t, t.__name__)
    return str(t)


class MultitypeFuncGraph:
    """A function with one implementation per tuple of argument types (MindSpore's type names:
    "Tensor", "Number", "Int", "Float", "Bool", "String", "Tuple", "List", "Dict", "Function",
    "None", ...). A call runs the registered function whose types match the arguments, preferring
    exact types ("Int") over general ones ("Number")."""

    def __init__(self, name, read_value=False):
        if not isinstance(name, str):
            raise TypeError(f"MultitypeFuncGraph: name must be a str, got {type(name).__name__}")
        self.name = name
        self.read_value = read_value
        self.entries = []

    def register(self, *type_names):
        """Decorator: register the function for arguments of ``type_names``."""
        keys = tuple(_type_key(t) for t in type_names)

        def deco(fn):
            self.entries = [(k, f) for k, f in self.entries if k != keys] + [(keys, fn)]
            return fn
        return deco

    def _match(self, args):
        best, best_score = None, None
        kinds = [_type_names(a) for a in args]
        for keys, fn in self.entries:
            if len(keys) != len(args):
                continue
            score = 0
            for key, names in zip(keys, kinds):
                if key in names:
                    score += names.index(key)
                elif key == "Tensor" and "Tensor" not in names and names[0] in ("Parameter",):
                    score += 1
                else:
                    break
            else:
                if best_score is None or score < best_score:
                    best, best_score = fn, score
        return best

    def __call__(self, *args):
        fn = self._match(args)
        if fn is None:
            got = ", ".join(_type_names(a)[0] for a in args)
            registered = ", ".join(f"({', '.join(k)})" for k, _ in self.entries) or "nothing"
            raise ValueError(f"MultitypeFuncGraph '{self.name}' has no function registered for the types ({got}); "
                            f"registered: {registered}")
        return fn(*args)

    def __repr__(self):
        return f"MultitypeFuncGraph({self.name!r}, {len(self.entries)} registered)"


def _is_seq(x):
    return isinstance(x, (tuple, list))


def _map(fn, args, nested, who):
    seqs = [a for a in args if _is_seq(a)]
    if not seqs:
        return fn(*args)
    n = len(seqs[0])
    if any(len(s) != n for s in seqs):
        raise ValueError(f"{who}: the sequences must have the same length, got {[len(s) for s in seqs]}")
    out = []
    for i in range(n):
        items = [a[i] if _is_seq(a) else a for a in args]
        out.append(_map(fn, items, nested, who) if nested else fn(*items))
    return tuple(out)  # MindSpore's: a tuple for any mix of tuples, lists and ParameterTuples


class HyperMap:
    """Apply ``ops`` to the elements of (nested) tuples or lists, zipped: ``HyperMap(f)(xs, ys)`` is
    ``tuple(f(x, y) for x, y in zip(xs, ys))``, recursing into nested sequences; arguments that
    are not sequences are passed whole to every call. Without ``ops``, the first argument is the
    function. ``reverse`` is accepted (the order of the calls has no effect here)."""

    _nested = True

    def __init__(self, ops=None, reverse=False):
        self.ops = ops
        self.reverse = reverse

    def __call__(self, *args):
        fn, args = (self.ops, args) if self.ops is not None else (args[0], args[1:])
        if not callable(fn):
            raise TypeError(f"{type(self).__name__}: the function to apply must be callable, got {type(fn).__name__}")
        return _map(fn, args, self._nested, type(self).__name__)


class Map(HyperMap):
    """Apply ``ops`` to the elements of tuples or lists, zipped, one level deep (see :class:`HyperMap`)."""

    _nested = False


def add_flags(fn=None, **flags):
    """Set ``flags`` as attributes of ``fn`` (MindSpore's graph compiler reads them); returns ``fn``."""
    def deco(f):
        existing = dict(getattr(f, "_mindspore_flags", {}))
        existing.update(flags)
        try:
            f._mindspore_flags = existing
        except AttributeError:
            pass
        return f
    return deco if fn is None else deco(fn)
