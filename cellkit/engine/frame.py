"""Frames: the values Parameters have inside one transform, and what was written there.

A Parameter read (``param.value``) asks the active frame first (``local.frame``,
kept by ``cellkit.parameter``); outside every transform there is none. ``jit``,
``grad``/``value_and_grad`` and custom ``bprop`` each open a :class:`Frame`; reads
fall through to the enclosing frame, and :func:`_apply_writes` hands a closed
frame's writes to its parent (or stores them, at the top).
"""

from __future__ import annotations

import threading

import jax

from ..parameter import Parameter, commit, local

__all__ = ["Frame"]

_MISS = object()
_Tracer = jax.core.Tracer


class _Modes(threading.local):
    # The Taylor-mode transform tracing on this thread ("jet", "derivative"), else None: a Cell
    # with a custom bprop or jvp rule refuses to run under it (its rule gives first order only).
    taylor = None


modes = _Modes()


class _Rediscover(Exception):
    """A compiled function met a Parameter it was not given: discover again."""

    _ck_internal = True  # control flow, not an error: Cells do not annotate it


class Frame:
    """Values of Parameters inside one transform, and the set written there.

    ``staged`` frames belong to a ``jit`` trace: reads of Parameters the frame
    does not know are captured (``discover``) or force a new discovery.
    """

    __slots__ = ("parent", "values", "params", "written", "staged", "discover", "captured", "created",
                 "restores")

    def __init__(self, parent=None, staged=False, discover=False):
        self.parent = parent
        self.values = {}
        self.params = {}
        self.written = {}
        self.staged = staged
        self.discover = discover
        self.captured = {}
        self.created = set()
        # (object, attribute, old value): array attributes rebound inside the transform by an
        # assignment (``self.buf[0] = 1``), put back when it ends, as in MindSpore's graph mode
        self.restores = None

    def bind(self, param, value) -> None:
        self.values[id(param)] = value
        self.params[id(param)] = param

    def read(self, param):
        f = self
        key = id(param)
        while f is not None:
            v = f.values.get(key, _MISS)
            if v is not _MISS:
                return v
            if key in f.created:
                return param._get()
            root = f
            f = f.parent
        return root._miss(param)

    def _miss(self, param):
        value = param._value
        if isinstance(value, _Tracer):  # a copy made inside a JAX trace: its value is current
            return value
        if not self.staged:
            return param._get()
        if self.discover:
            value = param._get()
            self.captured[id(param)] = param
            self.bind(param, value)
            return value
        raise _Rediscover(param)

    def write(self, param, value) -> None:
        key = id(param)
        if self.parent is None and key not in self.values and key not in self.created:
            self._miss(param)  # a write-only Parameter is captured like a read one
        self.values[key] = value
        self.params[key] = param
        self.written[key] = param

    def adopt(self, param) -> None:
        """A Parameter created while this frame is active is local to it."""
        self.created.add(id(param))
        self.params[id(param)] = param

    def owns(self, param) -> bool:
        """Was ``param`` created inside this frame (or one it is nested in)?"""
        f = self
        while f is not None:
            if id(param) in f.created:
                return True
            f = f.parent
        return False

    def writes(self):
        """(param, value) for each written Parameter that outlives the frame."""
        return [(p, self.values[k]) for k, p in self.written.items() if k not in self.created]


def _apply_writes(parent, writes) -> None:
    if parent is None:
        for p, v in writes:
            commit(p, v)
    else:
        for p, v in writes:
            parent.write(p, v)


class _Active:
    """Context manager making ``frame`` the active one on this thread."""

    __slots__ = ("frame", "saved")

    def __init__(self, frame):
        self.frame = frame

    def __enter__(self):
        self.saved = local.frame
        local.frame = self.frame
        return self.frame

    def __exit__(self, *exc):
        local.frame = self.saved
        restores = self.frame.restores
        if restores:
            self.frame.restores = None
            for obj, name, old in reversed(restores):
                obj.__dict__[name] = old


def _run_in_frame(parent, staged, params, vals, fn, args, positions, xs, kwargs):
    """``fn(*args, **kwargs)`` with ``args[positions]`` replaced by ``xs``, in a new frame
    (child of ``parent``) that binds ``params`` to ``vals``; returns (output values, frame)."""
    frame = Frame(parent, staged=staged)
    for p, v in zip(params, vals):
        frame.bind(p, v)
    full = list(args)
    for i, x in zip(positions, xs):
        full[i] = x
    with _Active(frame):
        out = _to_values(fn(*full, **kwargs))
    return out, frame


def _is_param(x) -> bool:
    return isinstance(x, Parameter)


def _to_values(tree):
    """Replace Parameters in an output tree by their current values."""
    if isinstance(tree, Parameter):
        return tree.value
    if isinstance(tree, jax.Array):
        return tree
    return jax.tree_util.tree_map(lambda x: x.value if isinstance(x, Parameter) else x,
                                  tree, is_leaf=_is_param)

