"""Small eager ops run by NumPy on the CPU backend: no XLA compilation per shape.

An eager reshape, transpose, concatenation, slice or split of a new shape costs an
XLA compilation (10-30 ms on CPU) for a copy that takes microseconds: a decoding
loop whose key/value cache grows by one position per token compiles its
``concat`` and ``swapaxes`` once per length, and its attention's matmuls and
softmax too. :func:`plan` traces an op once per input signature and flattens
its jaxpr into NumPy steps when every equation is one of :data:`PRIMITIVES`
(data movement: NumPy gives exactly XLA's bits; the plan is ``exact``) or of
:data:`cellkit.host_compute.PRIMITIVES` (arithmetic computed as XLA's CPU code
computes it, perhaps not to the last bit); :func:`run` evaluates a plan and puts
the results on the device without compiling anything.

Only where that is the same computation: the CPU backend, concrete arrays and
no JAX trace active (or, for an exact plan inside an eager grad, concrete primal
values: :func:`differentiable`), each on the default device and not committed to
another, at most :data:`MAX_ELEMENTS` elements in and out (larger work goes to
XLA, whose dispatch is asynchronous), and results that are not weakly typed.
Inputs of up to :data:`MAX_INPUT_ELEMENTS` elements, which NumPy reads in
place, are taken where the op only contracts them into small arrays (a layer's
convolution or matrix product with its weights): every array its equations
make holds at most :data:`MAX_ELEMENTS` elements but views.
Conversions in an exact plan only where exact (bool to anything, integer to
integer); integer and bool arithmetic (an index made positive, a clamp) wraps
the same in both.

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

import contextlib
import functools
import math
import os

import jax
import numpy as np

from . import host_compute, tracing
from .host_keys import concrete_context

__all__ = ["plan", "run", "differentiable", "eval_inlined", "kind", "unsuited", "usable", "small", "local", "ready", "on_cpu", "set_compute", "Plan", "PASSTHROUGH",
           "UNSUITED", "NEVER", "EXACT", "COMPUTE", "PRIMITIVES", "MAX_ELEMENTS", "MAX_INPUT_ELEMENTS", "HOT",
           "light"]

MAX_ELEMENTS = 1 << 16
# Inputs are read in place (a CPU array's buffer is NumPy's without a copy): a ResNet's 3x3 convolution of
# 512 channels has 2**21 weights, a few ms of host work where a compiled one costs 10-70 ms to get. Larger
# inputs go to XLA; so does any op that makes an array larger than MAX_ELEMENTS from them (_contracts).
MAX_INPUT_ELEMENTS = 1 << 22
# A host call costs about 25 us more than a compiled one (mostly copying the result to the device);
# compiling costs 10-30 ms. A signature called more than HOT times is compiled (see Plan.calls).
HOT = 256
_cpu = []   # [bool] once known (asking starts JAX's backend, so not at import)
try:
    from jax._src.array import ArrayImpl as _ArrayImpl
    from jax._src.core import DropVar as _DropVar, Literal as _Literal
except ImportError:   # another jax: nothing runs here
    _ArrayImpl = _Literal = _DropVar = ()
try:   # a device array straight from a NumPy array (jax.device_put's own path, without its overhead)
    from jax._src.lib import xla_client as _xc
    from jax._src.sharding_impls import SingleDeviceSharding as _Single
    _batched_put = _xc.batched_device_put
except (ImportError, AttributeError):
    _batched_put = None
_device = []


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
    return x[host_compute.window(starts, slice_sizes, np.shape(x))]


def _split(x, sizes, axis, **_):
    return tuple(np.split(x, np.cumsum(sizes)[:-1].astype(int), axis=axis))


def _select_n(which, *cases):
    if np.dtype(which.dtype) != np.bool_:
        raise _NotHost
    return np.where(which, cases[1], cases[0]) if len(cases) == 2 else cases[0]


def _iota(dtype, shape, dimension, **_):
    if np.dtype(dtype).kind not in "iuf":   # positions below 2**24 are exact in any float
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
# Equations of these primitives are exact only for some dtypes or parameters (checked when planning).
_EXACT_IF = {
    "convert_element_type": lambda eqn: _exact_conversion(eqn.invars[0].aval.dtype, eqn.params["new_dtype"]),
    "select_n": lambda eqn: np.dtype(eqn.invars[0].aval.dtype) == np.bool_,
    "iota": lambda eqn: np.dtype(eqn.params["dtype"]).kind in "iuf",
    "reshape": lambda eqn: eqn.params.get("dimensions") is None,
    **{name: lambda eqn: all(np.dtype(v.aval.dtype).kind in "biu" for v in eqn.invars) for name in _INTEGER},
}


class Plan:
    """An op's traced jaxpr for one input signature, flattened into NumPy steps; the output structure to
    rebuild, the function it was traced from, whether every step gives XLA's exact bits (``exact``),
    and how many times it ran (the caller compiles an exact plan instead once that passes :data:`HOT`)."""

    __slots__ = ("jaxpr", "out_tree", "fn", "calls", "jvp", "exact", "steps", "registers", "inputs", "outputs",
                 "flushes", "avals", "forwarded")

    def __init__(self, jaxpr, out_tree, fn, exact=True):   # (jaxpr: a ClosedJaxpr)
        self.jaxpr, self.out_tree, self.fn, self.calls, self.jvp, self.exact = jaxpr, out_tree, fn, 0, None, exact
        self.steps, self.registers, self.inputs, self.outputs, self.flushes = _program(jaxpr, exact)
        self.avals = [jax.core.ShapedArray(v.aval.shape, v.aval.dtype) for v in jaxpr.jaxpr.outvars]
        self.forwarded = [self.inputs.index(slot) if slot in self.inputs else None for slot in self.outputs]


def on_cpu() -> bool:
    """Whether this process's backend is the CPU (the only one where host results are the same and cheap)."""
    if not _cpu:
        _cpu.append(jax.default_backend() == "cpu")
    return _cpu[0]


def ready() -> bool:
    """:func:`on_cpu`, and no JAX trace is active but an eager differentiation's (``jvp``, ``vjp``,
    ``grad`` over concrete values, where an op on concrete arrays gives a concrete array as it would
    outside); inside a staging or batching trace the op is staged as before."""
    return on_cpu() and concrete_context()


def usable(arrays) -> bool:
    """Whether calls with these arrays may run here: :func:`ready`, and :func:`small` up to
    :data:`MAX_INPUT_ELEMENTS` (:func:`plan` then asks more of an op with more than :data:`MAX_ELEMENTS`)."""
    return ready() and small(arrays, MAX_INPUT_ELEMENTS)


def small(arrays, limit=MAX_ELEMENTS) -> bool:
    """Whether these are :func:`local` arrays with at most ``limit`` (:data:`MAX_ELEMENTS`) elements in all."""
    return local(arrays) and sum(a.size for a in arrays) <= limit


def local(arrays) -> bool:
    """Whether these are concrete arrays on one device, not committed to it (results made on the
    host go to the default device)."""
    for a in arrays:
        if type(a) is not _ArrayImpl or a._committed or len(a.sharding.device_set) != 1:
            return False
    return True


def _inner(eqn):
    """A nested call's (jaxpr, constants), or None."""
    inner = eqn.params.get("jaxpr", eqn.params.get("call_jaxpr"))
    return None if inner is None else (getattr(inner, "jaxpr", inner), getattr(inner, "consts", ()))


def _exact(eqn) -> bool:
    """Whether the equation is in the data-movement table, for its dtypes and parameters."""
    name = eqn.primitive.name
    return name in PRIMITIVES and (name not in _EXACT_IF or _EXACT_IF[name](eqn))


def kind(jaxpr):
    """EXACT when every equation (nested calls included) is one NumPy computes exactly as XLA does,
    COMPUTE when some are computed as XLA's CPU code does but perhaps not to the bit
    (:mod:`cellkit.host_compute`; only where that is switched on), None when one is neither for these
    dtypes and sizes, NEVER when a primitive is one the host never runs (a sort, a general scatter)."""
    found = EXACT
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name in _NESTED:
            inner = _inner(eqn)
            sub = None if inner is None else kind(inner[0])
            if sub is None or sub == NEVER:
                return sub
            found = found if sub == EXACT else COMPUTE
        elif name not in PRIMITIVES and name not in host_compute.PRIMITIVES:
            return NEVER
        elif _exact(eqn):
            continue
        elif (_compute[0] and name in host_compute.PRIMITIVES and host_compute.ALLOWED[name](eqn)
              and eqn.params.get("accuracy") is None      # (a requested accuracy: XLA's own algorithm)
              and not (isinstance(host_compute.PRIMITIVES[name], np.ufunc)
                       and any(v is not None for v in eqn.params.values()))):
            found = COMPUTE
        else:
            return None
    return found


# Equations whose result NumPy makes as a view of their input (or at most one copy of it).
_VIEWS = frozenset({"reshape", "transpose", "squeeze", "expand_dims", "slice", "rev", "copy", "copy_p"})


def _contracts(jaxpr, limit) -> bool:
    """Whether every array the equations make (nested calls included) holds at most ``limit`` elements,
    but views: an op that reads large inputs only to contract them (a convolution or matrix product
    with its weights), not one that computes element by element over them."""
    for eqn in jaxpr.eqns:
        inner = _inner(eqn) if eqn.primitive.name in _NESTED else None
        if inner is not None:
            if not _contracts(inner[0], limit):
                return False
        elif eqn.primitive.name not in _VIEWS and any(
                math.prod(getattr(v.aval, "shape", ())) > limit for v in eqn.outvars):
            return False
    return True


def light(jaxpr, limit=MAX_ELEMENTS) -> bool:
    """Whether the host's work for this jaxpr is small: inputs of at most ``limit`` elements in all, or
    larger inputs that the equations only contract (every array they make, views aside, holds at most
    ``limit`` elements: a convolution or matrix product with a layer's weights)."""
    return sum(math.prod(v.aval.shape) for v in jaxpr.invars) <= limit or _contracts(jaxpr, limit)


def unsuited(outvars, limit=MAX_ELEMENTS) -> bool:
    """Whether one of these jaxpr results is weakly typed (NumPy has no weak types) or larger than
    ``limit`` elements (None: any size)."""
    for var in outvars:
        aval = getattr(var, "aval", None)
        if aval is not None and (getattr(aval, "weak_type", False)
                                 or limit is not None and math.prod(aval.shape) > limit):
            return True
    return False


PASSTHROUGH = "passthrough"   # every output is an input unchanged: the call is left to JAX
UNSUITED = "unsuited"         # moves data, but a result is weakly typed or too big: left to JAX
EXACT, COMPUTE = "exact", "compute"
NEVER = "never"               # a primitive the host never runs, whatever the shapes and dtypes
_CALLS = ("jit", "pjit", "closed_call", "core_call")
_NESTED = _CALLS + ("custom_jvp_call", "custom_vjp_call")
_compute = [os.environ.get("CELLKIT_HOST_COMPUTE", "1").strip().lower() not in ("0", "off", "false", "no")]


def set_compute(on: bool) -> None:
    """Whether small eager ops that compute (not only move data) may run on the host
    (:mod:`cellkit.host_compute`); on unless ``CELLKIT_HOST_COMPUTE=0``. Plans already made are kept."""
    _compute[0] = bool(on)


def plan(fn, arrays, limit=MAX_ELEMENTS, family=None):
    """``fn(*arrays)``'s jaxpr as a :class:`Plan` when NumPy can run it; None when it cannot for these
    arrays, :data:`NEVER` when it uses a primitive the host never runs (for no arrays at all).

    :data:`PASSTHROUGH` when every output is an input unchanged (``x.astype(x.dtype)``: JAX hands back
    the array itself, which is cheaper than any copy; where only some are, as a normalisation's
    moving statistics in eval mode, :func:`run` hands those back as JAX does), :data:`UNSUITED` when a result is weakly typed
    or larger than ``limit`` elements (None: any size; for a caller that runs the plan once, such as an
    optimizer's zero state). A signature of an exact plan that is called over and over is
    better compiled once: the caller stops running it once its ``calls`` pass :data:`HOT`. A plan that
    computes (``exact`` False) is kept for good, so a signature always gives the same bits.
    Inputs of more than ``limit`` elements in all: None unless the op only contracts them (every array
    its equations make, views aside, holds at most ``limit`` elements).
    """
    closed, shapes = tracing.trace(fn, *arrays, family=family)
    found = kind(closed.jaxpr)
    if found is None or found == NEVER:
        return found
    if limit is not None and not light(closed.jaxpr, limit):
        return None
    if unsuited(closed.jaxpr.outvars, limit):
        return UNSUITED
    if all(v in closed.jaxpr.invars for v in closed.jaxpr.outvars if not isinstance(v, _Literal)):
        return PASSTHROUGH
    return Plan(closed, jax.tree_util.tree_structure(shapes), fn, found == EXACT)


def _program(closed, exact):
    """The jaxpr flattened (nested calls inlined) into steps ``(fn, inputs, outputs, avals, arithmetic,
    multiple results)`` over a list of registers, which holds the constants and literals from the start.
    In a plan that computes, an arithmetic step's float inputs are first flushed of subnormal numbers
    (a step of its own, once per register that may hold them: the op's inputs and constants) and the
    op's results an arithmetic step wrote are flushed, as XLA's CPU code does. (Within the op,
    subnormal intermediates are kept: flushing every step's results cost a fifth of a host call.)"""
    registers, steps = [], []

    def new(value=None):
        registers.append(value)
        return len(registers) - 1

    clean, flushed = set(), {}    # registers without subnormals; register -> its flushed copy
    computed = set()              # registers an arithmetic step wrote (flushed when they are outputs)

    def constant(value, dtype=None):
        slot = new(np.array(value if exact else host_compute.flush(np.asarray(value, dtype)), dtype=dtype))
        registers[slot].setflags(write=False)
        clean.add(slot)
        return slot

    def without_subnormals(slot, aval):
        # XLA's CPU code reads subnormal inputs as zero (denormals-are-zero): a copy flushed once.
        if exact or slot in clean or np.dtype(aval.dtype).kind != "f":
            return slot
        if slot not in flushed:
            flushed[slot] = new()
            clean.add(flushed[slot])
            steps.append((host_compute.flush, [slot], [flushed[slot]], [(tuple(aval.shape), np.dtype(aval.dtype))],
                          False, False))
        return flushed[slot]

    def walk(jaxpr, consts, inputs):
        env = dict(zip(jaxpr.invars, inputs))
        env.update((var, constant(c)) for var, c in zip(jaxpr.constvars, consts))

        def read(var):
            return constant(var.val, var.aval.dtype) if isinstance(var, _Literal) else env[var]
        for eqn in jaxpr.eqns:
            ins, name = [read(v) for v in eqn.invars], eqn.primitive.name
            if name in _NESTED:
                outs = walk(*_inner(eqn), ins)
            else:
                computes = not _exact(eqn)
                arithmetic = computes and name not in host_compute.BITWISE
                table = host_compute.PRIMITIVES if computes else PRIMITIVES
                fn = table[name]
                params = {} if isinstance(fn, np.ufunc) else eqn.params   # (a ufunc's are all None: _kind)
                fn = functools.partial(fn, **params) if params else fn
                if arithmetic:
                    ins = [without_subnormals(i, v.aval) for i, v in zip(ins, eqn.invars)]
                outs = [new() for _ in eqn.outvars]
                if arithmetic:
                    computed.update(outs)
                if arithmetic or all(i in clean for i in ins):
                    clean.update(outs)
                steps.append((fn, ins, outs, [(tuple(v.aval.shape), np.dtype(v.aval.dtype)) for v in eqn.outvars],
                              arithmetic, eqn.primitive.multiple_results))
            env.update(zip(eqn.outvars, outs))
        return [read(v) for v in jaxpr.outvars]

    inputs = [new() for _ in closed.jaxpr.invars]
    outputs = walk(closed.jaxpr, closed.consts, inputs)
    return steps, registers, inputs, outputs, [i in computed for i in outputs]


def _eval(p: Plan, args):
    regs = list(p.registers)
    for slot, value in zip(p.inputs, args):
        regs[slot] = value
    for fn, ins, outs, avals, _, multiple in p.steps:
        results = fn(*[regs[i] for i in ins])
        for slot, value, (shape, dtype) in zip(outs, results if multiple else (results,), avals):
            value = np.asarray(value)
            if value.shape != shape or value.dtype != dtype:
                raise _NotHost
            regs[slot] = value
    return [host_compute.flush(regs[i]) if computed else regs[i] for i, computed in zip(p.outputs, p.flushes)]


def _put(values, avals):
    """Fresh device arrays of ``values`` (never a view of an input's buffer, which a later step may donate)."""
    out, seen = [], set()
    for value, aval in zip(values, avals):
        if id(value) in seen or not (value.flags.owndata and value.flags.writeable and value.flags.c_contiguous):
            value = np.array(value, order="C", copy=True)   # (an output twice: two buffers, never one)
        seen.add(id(value))
        device = _default_device()
        out.append(_batched_put(aval, _Single(device), [value], [device], False) if device is not None
                   else jax.device_put(value))
    return out


def _default_device():
    """The device ``jax.device_put`` would choose, when that is simply the first (else None)."""
    if _batched_put is None or jax.config.jax_default_device is not None:
        return None
    if not _device:
        _device.append(jax.devices()[0])
    return _device[0]


def run(p: Plan, arrays):
    """Evaluate a :class:`Plan` with NumPy; the outputs are fresh device arrays. Raises if NumPy's
    result would not be XLA's (then the caller compiles)."""
    p.calls += 1
    with np.errstate(all="ignore"):
        values = _eval(p, [np.asarray(a) for a in arrays])
    # An input handed back unchanged is the array itself, as from JAX's jit; the rest are put on the device.
    kept = [arrays[i] if i is not None and type(arrays[i]) is _ArrayImpl else None for i in p.forwarded]
    put = iter(_put([v for v, k in zip(values, kept) if k is None], [a for a, k in zip(p.avals, kept) if k is None]))
    return jax.tree_util.tree_unflatten(p.out_tree, [next(put) if k is None else k for k in kept])


def eval_inlined(jaxpr, consts, *args):
    """``jax.core.eval_jaxpr`` with nested jitted calls evaluated equation by equation: on an eager
    grad's tracers a nested ``jit`` runs its known part as an executable of its own (JAX's
    ``log_softmax``, ``take_along_axis``, ``squeeze``: one compilation each), where its equations
    are recorded as they are."""
    env = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))

    def read(var):
        return var.val if isinstance(var, _Literal) else env[var]
    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        inner = _inner(eqn) if eqn.primitive.name in _CALLS else None
        if inner is not None:
            outs = eval_inlined(inner[0], inner[1], *ins)
        else:
            params, subfuns = eqn.primitive.get_bind_params(eqn.params), ()
            if isinstance(params, tuple):   # (an older jax: the sub-functions, then the parameters)
                subfuns, params = params
            ctx = getattr(getattr(eqn, "ctx", None), "manager", None)
            with ctx if ctx is not None else contextlib.nullcontext():
                outs = eqn.primitive.bind(*subfuns, *ins, **params)
            outs = outs if eqn.primitive.multiple_results else [outs]
        env.update((v, o) for v, o in zip(eqn.outvars, outs) if not isinstance(v, _DropVar))
    return [read(v) for v in jaxpr.outvars]


def differentiable(p: Plan):
    """The op the plan was traced from (``p.fn``) as a ``jax.custom_jvp`` whose primal output is the
    plan run on the host, for calls inside an eager ``grad``/``vjp`` whose primal inputs are concrete
    (made once per plan; only for an ``exact`` plan, whose op only moves data).

    A data-movement op is linear: its tangent is the op applied to the tangents, staged into the
    differentiation trace as before, so the backward pass is the one JAX would build, and only the
    forward value comes from NumPy instead of a compiled executable.
    """
    if p.jvp is None:
        fn = p.fn
        g = jax.custom_jvp(fn)

        def rule(primals, tangents):
            # Concrete tangents (forward mode, or zeros JAX made concrete) are moved on the host too.
            out = run(p, primals)
            if all(type(t) is _ArrayImpl for t in tangents):
                return out, run(p, tangents)
            moved = eval_inlined(p.jaxpr.jaxpr, p.jaxpr.consts, *jax.tree_util.tree_leaves(tangents))
            return out, jax.tree_util.tree_unflatten(p.out_tree, moved)
        g.defjvp(rule)
        p.jvp = g
    return p.jvp

