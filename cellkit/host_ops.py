"""Eager data-movement ops run by NumPy on the CPU backend: same bits, no XLA compilation per shape.

An eager reshape, transpose, concatenation, slice or split of a new shape costs an
XLA compilation (10-30 ms on CPU) for a copy that takes microseconds: a decoding
loop whose key/value cache grows by one position per token compiles its
``concat`` and ``swapaxes`` once per length. These primitives move bits and
compute nothing, so NumPy gives exactly XLA's result. :func:`plan` traces an op
once per input signature (shapes, dtypes) and keeps its jaxpr when every
equation is one of :data:`PRIMITIVES`; :func:`run` evaluates such a plan with
NumPy and puts the results on the device (``jax.device_put``, no compilation).

Only where that is the same computation: the CPU backend, concrete arrays
and no JAX trace active (or, inside an eager grad, concrete primal values:
:func:`differentiable`), each on the default device and not committed to
another, at most :data:`MAX_ELEMENTS` elements in and out (larger copies go to
XLA, whose dispatch is asynchronous), and results that are not weakly typed.
Floating-point arithmetic is never done here: XLA's CPU code flushes subnormal
numbers to zero and contracts multiply-adds, which NumPy does not. Integer and
bool arithmetic (add, sub, max, min, comparisons, and/or/not: an index made
positive, a clamp) wraps the same in both. Conversions only where exact (bool
to anything, integer to integer).

>>> import jax, jax.numpy as jnp
>>> x = jnp.arange(6.0).reshape(2, 3)
>>> p = plan(lambda a: (jnp.swapaxes(a, 0, 1), jnp.concatenate([a, a], 1)), [x])
>>> [e.primitive.name for e in p.jaxpr.jaxpr.eqns]
['transpose', 'concatenate']
>>> t, c = run(p, [x])
>>> t.shape, c.shape, type(t).__name__
((3, 2), (2, 6), 'ArrayImpl')
"""

from __future__ import annotations

import math

import jax
import numpy as np

__all__ = ["plan", "run", "differentiable", "usable", "small", "ready", "on_cpu", "Plan", "PASSTHROUGH", "UNSUITED",
           "PRIMITIVES", "MAX_ELEMENTS", "HOT"]

MAX_ELEMENTS = 1 << 16
# A host call costs about 25 us more than a compiled one (mostly copying the result to the device);
# compiling costs 10-30 ms. A signature called more than HOT times is compiled (see Plan.calls).
HOT = 256
_cpu = []   # [bool] once known (asking starts JAX's backend, so not at import)
try:
    from jax._src.array import ArrayImpl as _ArrayImpl
    from jax._src.core import Literal as _Literal, trace_state_clean
except ImportError:   # another jax: nothing runs here
    _ArrayImpl = _Literal = ()

    def trace_state_clean():
        return False


class _NotHost(Exception):
    """The jaxpr has an equation NumPy would not compute exactly as XLA does."""


def _exact_conversion(src, dst) -> bool:
    src, dst = np.dtype(src), np.dtype(dst)
    return src == dst or src == np.bool_ or src.kind in "iu" and dst.kind in "iu"


def _convert(x, new_dtype, **_):
    if not _exact_conversion(x.dtype, new_dtype):
        raise _NotHost
    return x.astype(new_dtype)


def _broadcast_in_dim(x, shape, broadcast_dimensions, **_):
    expanded = [1] * len(shape)
    for axis, dim in zip(broadcast_dimensions, np.shape(x)):
        expanded[axis] = dim
    return np.broadcast_to(np.reshape(x, expanded), shape)


def _reshape(x, new_sizes, dimensions=None, **_):
    if dimensions is not None:
        raise _NotHost
    return np.reshape(x, new_sizes)


def _slice(x, start_indices, limit_indices, strides=None, **_):
    strides = strides or (1,) * len(start_indices)
    return x[tuple(slice(a, b, s) for a, b, s in zip(start_indices, limit_indices, strides))]


def _dynamic_slice(x, *starts, slice_sizes, **_):
    # XLA clamps each start so that the slice stays inside the operand.
    index = []
    for start, size, dim in zip(starts, slice_sizes, np.shape(x)):
        begin = min(max(int(start), 0), dim - size)
        index.append(slice(begin, begin + size))
    return x[tuple(index)]


def _split(x, sizes, axis, **_):
    return tuple(np.split(x, np.cumsum(sizes)[:-1].astype(int), axis=axis))


def _select_n(which, *cases):
    if np.dtype(which.dtype) != np.bool_:
        raise _NotHost
    return np.where(which, cases[1], cases[0]) if len(cases) == 2 else cases[0]


def _iota(dtype, shape, dimension, **_):
    if np.dtype(dtype).kind not in "iu":
        raise _NotHost
    axis = np.arange(shape[dimension], dtype=dtype)
    return np.broadcast_to(axis.reshape([-1 if i == dimension else 1 for i in range(len(shape))]), shape)


# One line per primitive: a NumPy function of the inputs and the equation's parameters.
PRIMITIVES = {
    "reshape": _reshape,
    "transpose": lambda x, permutation: np.transpose(x, permutation),
    "concatenate": lambda *xs, dimension: np.concatenate(xs, axis=dimension),
    "stack": lambda *xs, axis: np.stack(xs, axis=axis),
    "squeeze": lambda x, dimensions: np.squeeze(x, axis=tuple(dimensions)),
    "expand_dims": lambda x, dimensions: np.expand_dims(x, tuple(dimensions)),
    "broadcast_in_dim": _broadcast_in_dim,
    "slice": _slice,
    "dynamic_slice": _dynamic_slice,
    "rev": lambda x, dimensions: np.flip(x, tuple(dimensions)) if dimensions else x,
    "split": _split,
    "tile": lambda x, reps: np.tile(x, reps),
    "copy": lambda x: x,
    "copy_p": lambda x: x,
    "select_n": _select_n,
    "iota": _iota,
    "convert_element_type": _convert,
}


def _wrapping(ufunc):
    """An integer NumPy ufunc that wraps on overflow silently, as XLA's does."""
    def op(*xs):
        with np.errstate(over="ignore"):
            return np.asarray(ufunc(*xs))
    return op


# Integer and bool arithmetic is exact in both (two's complement): index arithmetic (a negative
# index normalised, a clamp) stays on the host. Only for integer and bool operands (_EXACT_IF).
_INTEGER = {"add": np.add, "sub": np.subtract, "max": np.maximum, "min": np.minimum, "lt": np.less,
            "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal,
            "and": np.bitwise_and, "or": np.bitwise_or, "not": np.invert}
PRIMITIVES.update({name: _wrapping(ufunc) for name, ufunc in _INTEGER.items()})
_NESTED = ("jit", "pjit", "closed_call", "core_call")
# Equations of these primitives are exact only for some dtypes or parameters (checked when planning).
_EXACT_IF = {
    "convert_element_type": lambda eqn: _exact_conversion(eqn.invars[0].aval.dtype, eqn.params["new_dtype"]),
    "select_n": lambda eqn: np.dtype(eqn.invars[0].aval.dtype) == np.bool_,
    "iota": lambda eqn: np.dtype(eqn.params["dtype"]).kind in "iu",
    "reshape": lambda eqn: eqn.params.get("dimensions") is None,
    **{name: lambda eqn: all(np.dtype(v.aval.dtype).kind in "biu" for v in eqn.invars) for name in _INTEGER},
}


class Plan:
    """An op's traced jaxpr for one input signature, the output structure to rebuild, the function it
    was traced from, and how many times it ran (the caller compiles the op instead once that passes
    :data:`HOT`)."""

    __slots__ = ("jaxpr", "out_tree", "fn", "calls", "jvp")

    def __init__(self, jaxpr, out_tree, fn):
        self.jaxpr, self.out_tree, self.fn, self.calls, self.jvp = jaxpr, out_tree, fn, 0, None


def on_cpu() -> bool:
    """Whether this process's backend is the CPU (the only one where host results are the same and cheap)."""
    if not _cpu:
        _cpu.append(jax.default_backend() == "cpu")
    return _cpu[0]


def ready() -> bool:
    """:func:`on_cpu`, and no JAX trace is active (inside one, the op is staged as before)."""
    return on_cpu() and trace_state_clean()


def usable(arrays) -> bool:
    """Whether calls with these arrays may run here: :func:`ready`, and :func:`small`."""
    return ready() and small(arrays)


def small(arrays) -> bool:
    """Whether these are concrete arrays on the default device, not committed, with at most
    :data:`MAX_ELEMENTS` elements in all."""
    total = 0
    for a in arrays:
        if type(a) is not _ArrayImpl or a._committed or len(a.sharding.device_set) != 1:
            return False
        total += a.size
    return total <= MAX_ELEMENTS


def _moves_data(jaxpr) -> bool:
    """Whether every equation (nested calls included) is one NumPy computes exactly as XLA does."""
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name in _NESTED:
            inner = eqn.params.get("jaxpr", eqn.params.get("call_jaxpr"))
            if inner is None or not _moves_data(getattr(inner, "jaxpr", inner)):
                return False
        elif name not in PRIMITIVES or name in _EXACT_IF and not _EXACT_IF[name](eqn):
            return False
    return True


def _unsuited(jaxpr) -> bool:
    """Whether a result is weakly typed (NumPy has no weak types) or too big for the host."""
    for var in jaxpr.outvars:
        aval = getattr(var, "aval", None)
        if aval is not None and (getattr(aval, "weak_type", False) or math.prod(aval.shape) > MAX_ELEMENTS):
            return True
    return False


PASSTHROUGH = "passthrough"   # an output is an input unchanged: the call is left to JAX
UNSUITED = "unsuited"         # moves data, but a result is weakly typed or too big: left to JAX


def plan(fn, arrays):
    """``fn(*arrays)``'s jaxpr as a :class:`Plan` when it only moves data; None when it computes.

    :data:`PASSTHROUGH` when an output is an input unchanged (``x.astype(x.dtype)``: JAX hands back
    the array itself, which is cheaper than any copy), :data:`UNSUITED` when a result is weakly typed
    or larger than :data:`MAX_ELEMENTS`. A signature that is called over and over is better compiled
    once: the caller stops running a plan once its ``calls`` pass :data:`HOT`.
    """
    closed, shapes = jax.make_jaxpr(fn, return_shape=True)(*arrays)
    if not _moves_data(closed.jaxpr):
        return None
    if _unsuited(closed.jaxpr):
        return UNSUITED
    if any(v in closed.jaxpr.invars for v in closed.jaxpr.outvars if not isinstance(v, _Literal)):
        return PASSTHROUGH
    return Plan(closed, jax.tree_util.tree_structure(shapes), fn)


def _read(env, var):
    return var.val if isinstance(var, _Literal) else env[var]


def _eval(jaxpr, consts, args):
    env = {}
    for var, value in zip(jaxpr.constvars, consts):
        env[var] = np.asarray(value)
    for var, value in zip(jaxpr.invars, args):
        env[var] = value
    for eqn in jaxpr.eqns:
        ins = [np.asarray(_read(env, v)) for v in eqn.invars]
        name = eqn.primitive.name
        if name in _NESTED:
            inner = eqn.params.get("jaxpr", eqn.params.get("call_jaxpr"))
            outs = _eval(getattr(inner, "jaxpr", inner), getattr(inner, "consts", ()), ins)
        else:
            outs = PRIMITIVES[name](*ins, **eqn.params)
            outs = outs if eqn.primitive.multiple_results else (outs,)
        for var, value in zip(eqn.outvars, outs):
            aval = var.aval
            if tuple(np.shape(value)) != tuple(aval.shape) or np.dtype(value.dtype) != np.dtype(aval.dtype):
                raise _NotHost
            env[var] = value
    return [_read(env, v) for v in jaxpr.outvars]


def run(p: Plan, arrays):
    """Evaluate a :class:`Plan` with NumPy; the outputs are fresh device arrays. Raises if NumPy's
    result would not be XLA's (then the caller compiles)."""
    p.calls += 1
    outs = _eval(p.jaxpr.jaxpr, p.jaxpr.consts, [np.asarray(a) for a in arrays])
    # A fresh C-ordered copy each: never a view of an input's buffer (which a later step may donate).
    return jax.tree_util.tree_unflatten(
        p.out_tree, [jax.device_put(np.array(o, order="C", copy=True)) for o in outs])


def differentiable(p: Plan):
    """The op the plan was traced from (``p.fn``) as a ``jax.custom_jvp`` whose primal output is the
    plan run on the host, for calls inside an eager ``grad``/``vjp`` whose primal inputs are concrete
    (made once per plan).

    A data-movement op is linear: its tangent is the op applied to the tangents, staged into the
    differentiation trace as before, so the backward pass is the one JAX would build, and only the
    forward value comes from NumPy instead of a compiled executable.
    """
    if p.jvp is None:
        fn = p.fn
        g = jax.custom_jvp(fn)

        def rule(primals, tangents):
            # Concrete tangents (forward mode, or zeros JAX made concrete) are moved on the host too.
            concrete = all(type(t) is _ArrayImpl for t in tangents)
            return run(p, primals), run(p, tangents) if concrete else fn(*tangents)
        g.defjvp(rule)
        p.jvp = g
    return p.jvp
