"""One XLA executable per eager op call, not one per ``jax.numpy`` primitive inside it.

An eager (PyNative) call of a cellkit op runs its ``jax.numpy``/``lax`` code
primitive by primitive, and XLA compiles each primitive once per new shape:
an op of five primitives costs five compilations on a first run, and its
backward pass as many again. :func:`eager_jit` wraps an op so that an eager
call runs it as one ``jax.jit`` executable (cached per op, argument structure,
static arguments and shapes), and its ``value_and_grad`` backward as one more.

What stays exactly as it was:

* Calls inside a staging or batching trace (``cellkit.jit``, ``jax.jit``,
  ``vmap``: such a tracer among the arguments, or a staged cellkit frame
  active) call the op directly. Inside an eager ``grad``/``value_and_grad``
  the forward-mode tracers are taken as inputs: the op is differentiated as
  one executable.
* Arrays are the executable's inputs; every other argument (numbers, shapes,
  axes, dtypes, strings) is static, compared by type and value. A Parameter
  (an op may write into it), a NumPy array, an unhashable argument, or any
  other object sends the call down the op-by-op path.
* An op whose tracing reads or writes a Parameter (the random key stream,
  ``ops.assign``), warns, needs concrete values (``int(x)``, ``x.asnumpy()``,
  data-dependent shapes) or fails in any way runs op by op, for that
  signature, from then on; the first such call is run op by op too, so its
  result, error or warning is the one the op gives eagerly.
* A call form (an op with the same arguments but for its Python floats: a
  learning rate that changes every step, say) is compiled for
  :data:`MAX_STATIC` distinct float values at most; further values of that form
  run op by op, so it never compiles once per value. The op's other forms, and
  calls the host runs (below), are left as they were.
* An op that only moves data (a reshape, transpose, concatenation, slice or
  split: :mod:`cellkit.host_ops`) on small concrete arrays on the CPU backend
  runs with NumPy instead, giving the same bits with no compilation per shape,
  until the same signature has run :data:`host_ops.HOT` times; it is compiled then.
  Inside an eager grad its forward value is made so too; its gradient is JAX's.
* Outside any grad or trace, a small op that computes (float arithmetic,
  reductions, small matrix products: :mod:`cellkit.host_compute`) runs with
  NumPy too, the way XLA's CPU code computes it, and stays there for that
  signature, so a signature always gives the same bits.
* Inside an eager grad (concrete primal values), any other op's forward
  values come from the host or from one top-level executable compiled with
  the eager options (:mod:`cellkit.eager_grad`); the part linear in the
  tangents is JAX's own.

``CELLKIT_EAGER_JIT=0`` (read at import) or ``set_enabled(False)`` turns the
mechanism off. Registries apply it where ops are registered
(``cellkit.ops.function`` families, the Tensor-method families); an op opts
out with :func:`op_by_op`, a family module with ``EAGER_JIT = False``.

>>> import jax.numpy as jnp
>>> from cellkit.eager_jit import eager_jit
>>> @eager_jit
... def scaled_softplus(x, beta=1.0):
...     return jnp.log1p(jnp.exp(beta * x)) / beta
>>> scaled_softplus(jnp.zeros(2, jnp.float32), beta=2.0).shape   # log1p, exp, mul, div: one executable
(2,)
"""

from __future__ import annotations

import functools
import os
import types
import warnings

import jax
import numpy as np

from . import eager_grad, host_ops
from .parameter import Parameter, local
from .tensor import as_array
from .tiered_jit import tiered_jit

__all__ = ["eager_jit", "host_first", "op_by_op", "needs_values", "install", "wraps_op", "set_enabled", "enabled",
           "MAX_STATIC", "MAX_ENTRIES", "stats"]

MAX_STATIC = 8
MAX_ENTRIES = 1024
_enabled = [os.environ.get("CELLKIT_EAGER_JIT", "1").strip().lower() not in ("0", "off", "false", "no")]
_Tracer = jax.core.Tracer
try:
    from jax._src.array import ArrayImpl as _ArrayImpl   # (not an array: that would start the backend at import)
except ImportError:   # another jax
    _ArrayImpl = type(jax.numpy.zeros(()))
_STATIC_TYPES = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis), slice, np.dtype, type,
                 np.generic)
_stats = {"compiled": 0, "op_by_op": 0, "host": 0}
_MISS = object()      # no host result: compile
# The tracers of an eager grad/value_and_grad (forward-mode and linearize): a jitted op on them is
# differentiated as one executable forward and one backward. Staging tracers (jit) are never taken.
try:
    from jax._src.interpreters.ad import JVPTracer, LinearizeTracer
    _DIFF_TRACERS = frozenset({JVPTracer, LinearizeTracer})
except ImportError:   # another jax: only concrete arrays
    _DIFF_TRACERS = frozenset()


def enabled() -> bool:
    """Whether eager op calls are compiled as one executable each."""
    return _enabled[0]


def set_enabled(on: bool) -> None:
    """Turn the mechanism on or off for this process."""
    _enabled[0] = bool(on)


def stats() -> dict:
    """How many (op, signature) pairs were compiled whole, ran with NumPy (``host``), or fell back to op by op."""
    return dict(_stats)


def op_by_op(fn):
    """Mark ``fn`` as an op that always runs primitive by primitive (registries then leave it alone)."""
    fn._cellkit_eager_jit = False
    return fn


class _Stateful(Exception):
    """Raised inside an op's trace that touches a Parameter: the op is stateful."""


class _NeedsValues(Exception):
    """Raised inside an op's trace that needs concrete values."""


_tracing = [False]


class _GuardFrame:
    """Stands in as the engine frame while an op is traced: any Parameter access means 'stateful'."""
    staged = True

    def read(self, param):
        raise _Stateful

    def write(self, param, value):
        raise _Stateful

    def adopt(self, param):
        raise _Stateful

    def owns(self, param):
        return False


_GUARD = _GuardFrame()


def _classify(leaves, numpy=False):
    """(dynamic values, static key) for a call's leaves, or None when the call must run op by op.
    ``numpy``: a small NumPy array of numbers is an input too, put on the device (as JAX's own
    functions take it); else it sends the call op by op."""
    dynamic, static = [], []
    for leaf in leaves:
        if isinstance(leaf, _ArrayImpl) or type(leaf) in _DIFF_TRACERS:
            dynamic.append(leaf)
            static.append(None)
        elif (numpy and type(leaf) is np.ndarray and leaf.dtype.kind in "biufc"
              and leaf.size <= host_ops.MAX_ELEMENTS):
            dynamic.append(as_array(leaf))   # (a copy: never the caller's buffer)
            static.append(None)
        elif isinstance(leaf, (_Tracer, np.ndarray)):
            return None
        elif isinstance(leaf, Parameter):
            # An op may write into a Parameter argument (ops.embedding's max_norm, the in-place ops) or
            # read it through a frame: it keeps getting the Parameter itself, op by op.
            return None
        elif type(leaf) is slice:   # (an index: unhashable before Python 3.12, kept by its three parts)
            parts = (leaf.start, leaf.stop, leaf.step)
            if not all(p is None or type(p) is int for p in parts):
                return None
            static.append((slice, parts))
        elif isinstance(leaf, _STATIC_TYPES) and not isinstance(leaf, np.ndarray):
            if isinstance(leaf, float) and leaf != leaf:   # NaN never equals itself: no cache key
                return None
            try:
                hash(leaf)
            except TypeError:
                return None
            static.append((type(leaf), leaf))
        elif hasattr(leaf, "dtype") and hasattr(leaf, "shape") and not isinstance(leaf, np.ndarray):
            try:
                static.append((type(leaf), hash(leaf), leaf))   # dtypes of ml_dtypes, cellkit Types
            except TypeError:
                return None
        else:
            try:
                hash(leaf)
            except TypeError:
                return None
            if isinstance(leaf, (_Tracer, np.ndarray)) or callable(leaf) and not isinstance(leaf, type):
                return None
            static.append((type(leaf), leaf))
    return dynamic, tuple(static)


def _is_leaf(x):
    return isinstance(x, Parameter)


def eager_jit(fn):
    """``fn`` whose eager calls run as one compiled executable; see the module's text."""
    return _wrap(fn, compile=True)


def host_first(fn):
    """``fn`` (JAX's own jitted function or array method) whose eager calls that only move data run
    with NumPy (:mod:`cellkit.host_ops`); every other call is ``fn``'s own, compiled by JAX as before.

    >>> import jax.numpy as jnp
    >>> swap = host_first(jnp.swapaxes)
    >>> swap(jnp.zeros((2, 3)), 0, 1).shape   # no XLA compilation for this shape
    (3, 2)
    """
    return _wrap(fn, compile=False)


def _jax_jitted(fn) -> bool:
    return hasattr(fn, "lower") and hasattr(fn, "trace") and not isinstance(fn, types.FunctionType)


def _wrap(fn, compile):
    if getattr(fn, "_cellkit_eager_jit", None) is False or getattr(fn, "_cellkit_eager_wrapped", False):
        return fn
    # A JAX jitted function whose first plan uses a primitive the host never runs (a sort, a loop) is
    # never asked again. Anything else is asked once per signature: which signatures run on the host
    # must not depend on the order of calls, since a host result that computes may differ from XLA's
    # in the last bit.
    whole = not compile and _jax_jitted(fn)
    entries = {}          # (treedef, static key) -> jitted function, or None: op by op
    values = {}           # (treedef, static key without floats) -> the static keys compiled (MAX_STATIC at most)
    plans = {}            # (treedef, static key) -> {input signature: host_ops.plan's answer}, or False
    state = {"host_off": False}

    grads = {}            # (key, input signature) -> the op as eager_grad.linearize made it, or None

    def host_plan(key, arrays, answer=False):
        """host_ops.plan's Plan for these arrays (made once per signature), or None (``answer``: whatever
        host_ops.plan answered, PASSTHROUGH included)."""
        by_signature = plans.get(key)
        if by_signature is False or state["host_off"]:
            return None
        if by_signature is None:
            if len(plans) >= MAX_ENTRIES:
                plans.clear()     # (bounded: a plan dropped is made again, the same)
            by_signature = plans[key] = {}
        signature = _signature(arrays)
        plan = by_signature.get(signature, _MISS)
        if plan is _MISS:
            if len(by_signature) >= MAX_ENTRIES:
                by_signature.clear()
            plan = by_signature[signature] = _plan(_body(fn, *key), arrays, (fn, key))
            if plan is host_ops.NEVER:
                plans[key] = False   # never asked again
                if whole:
                    state["host_off"] = True
            if isinstance(plan, host_ops.Plan):
                _stats["host"] += 1
        return plan if answer or isinstance(plan, host_ops.Plan) else None

    def crowded(key):
        """Whether compiling for ``key`` would make more than MAX_STATIC executables of one call form
        (the same arguments but for their floats: a learning rate that changes every step, say); that
        form's further float values then run op by op, compiling nothing per value. Calls that run on
        the host never come here, so the order of calls never decides which run there."""
        treedef, static = key
        if not any(s is not None and s[0] in (float, complex) for s in static):
            return False
        seen = values.setdefault((treedef, tuple(s for s in static if s is None or s[0] not in (float, complex))),
                                 set())
        if static in seen:
            return False
        if len(seen) >= MAX_STATIC:
            return True
        seen.add(static)
        return False

    def host_call(key, dynamic):
        """The op's result computed with NumPy (host_ops), or _MISS."""
        plan = host_plan(key, dynamic)
        if plan is None or plan.exact and plan.calls >= host_ops.HOT:
            return _MISS   # (hot: the compiled call is faster from here on, and gives the same bits)
        try:
            return host_ops.run(plan, dynamic)
        except Exception:   # noqa: BLE001 - NumPy would differ (a dtype it would change): compile
            plans[key][_signature(dynamic)] = None
            return _MISS

    def grad_call(key, dynamic, primals):
        """Under an eager grad whose primal values (``primals``) are concrete: the op with its forward
        values made on the host or by one top-level executable (cellkit.eager_grad), or _MISS."""
        signature = (key, _signature(primals))
        op = grads.get(signature, _MISS)
        if op is _MISS:
            plan = (host_plan(key, primals, answer=True)
                    if host_ops.small(primals, host_ops.MAX_INPUT_ELEMENTS) else None)
            if isinstance(plan, host_ops.Plan) and plan.exact and all(
                    np.issubdtype(d.dtype, np.inexact) for d in primals):
                op = host_ops.differentiable(plan)   # (a data-movement op of floating arrays: linear)
            else:
                on_host = isinstance(plan, host_ops.Plan) or plan is host_ops.PASSTHROUGH
                if not on_host and crowded(key):
                    return _MISS   # (not kept: a float that changes every call would fill the table)
                if len(grads) >= MAX_ENTRIES:
                    grads.clear()
                with _Guarded():
                    op = eager_grad.linearize(_body(fn, *key), primals, host=on_host, family=(fn, key))
            grads[signature] = op
        if op is None:
            return _MISS
        try:
            return op(*dynamic)
        except Exception:   # noqa: BLE001 - fails here: JAX's own path, for this signature from now on
            grads[signature] = None
            return _MISS

    @functools.wraps(fn)
    def call(*args, **kwargs):
        frame = local.frame
        if not _enabled[0] or frame is not None and getattr(frame, "staged", True):
            return fn(*args, **kwargs)
        if not compile and not (host_ops.on_cpu() and _first_level(args, host_ops.MAX_INPUT_ELEMENTS)):
            return fn(*args, **kwargs)
        leaves, treedef = jax.tree_util.tree_flatten((args, kwargs), is_leaf=_is_leaf)
        split = _classify(leaves, numpy=not compile)
        if split is None:
            return fn(*args, **kwargs)
        dynamic, static = split
        key = (treedef, static)
        try:
            jitted = entries.get(key, False)
        except TypeError:      # an unhashable static part (a pytree node's own data)
            return fn(*args, **kwargs)
        # The host is asked before anything this key's compiled entry says, so which calls run there
        # depends only on the op, the signature and the context, never on what ran before.
        primals = _diff_primals(dynamic)
        if primals is not None:
            out = grad_call(key, dynamic, primals)
            if out is not _MISS:
                return out
        elif plans.get(key) is not False and host_ops.usable(dynamic):
            out = host_call(key, dynamic)
            if out is not _MISS:
                return out
        if jitted is None or not compile:
            return fn(*args, **kwargs)
        if jitted is False and (len(entries) >= MAX_ENTRIES or crowded(key)):
            return fn(*args, **kwargs)   # (executables kept for MAX_ENTRIES keys, MAX_STATIC floats of a form)
        if jitted is False:
            jitted = tiered_jit(_body(fn, treedef, static))
            entries[key] = jitted
            try:
                out = _first_call(jitted, dynamic)
            except Exception:   # noqa: BLE001 - any failure: this signature runs op by op, as before
                entries[key] = None
                _stats["op_by_op"] += 1
                return fn(*args, **kwargs)
            _stats["compiled"] += 1
            return out
        try:
            return jitted(*dynamic)
        except Exception:   # noqa: BLE001 - a new shape or dtype the op refuses or needs values for:
            return fn(*args, **kwargs)   # op by op, so the error (or result) is the op's own

    call._cellkit_eager_wrapped = True
    call.__wrapped__ = fn
    return call


def _signature(arrays):
    """What a plan or a linearized op is kept for: the arrays' shapes, dtypes and weak types."""
    return tuple((d.shape, d.dtype, d.weak_type) for d in arrays)


def _diff_primals(dynamic):
    """Under an eager grad (first order, CPU): the concrete primal values behind the tracers, when all
    are concrete arrays (the op's forward values are then made on the host or by one top-level
    executable: ``grad_call``); else None."""
    if not _DIFF_TRACERS or not any(type(d) in _DIFF_TRACERS for d in dynamic) or not host_ops.on_cpu():
        return None
    primals = [d.primal if type(d) in _DIFF_TRACERS else d for d in dynamic]
    if not all(type(p) is _ArrayImpl for p in primals):
        return None
    return primals


def _first_level(args, limit) -> bool:
    """No tracer among the positional arrays but an eager grad's, and, outside a grad, no concrete
    array larger than ``limit`` elements (a cheap first look, before flattening)."""
    big = diff = False
    for a in args:
        if type(a) is _ArrayImpl:
            big = big or a.size > limit
        elif isinstance(a, _Tracer):
            if type(a) not in _DIFF_TRACERS:
                return False
            diff = True
    return diff or not big


def _body(fn, treedef, static):
    """``fn`` as a function of the call's arrays only (the static leaves put back in place)."""
    def body(*dynamic):
        it = iter(dynamic)
        leaves = [next(it) if s is None else slice(*s[1]) if s[0] is slice else s[-1] for s in static]
        args, kwargs = jax.tree_util.tree_unflatten(treedef, leaves)
        out = fn(*args, **kwargs)
        for leaf in jax.tree_util.tree_leaves(out):
            if not isinstance(leaf, _Tracer):   # a Python number, a NumPy array: keep its type, op by op
                raise _NeedsValues
        return out
    body.__name__ = getattr(fn, "__name__", "op")
    return body


class _Guarded:
    """While an op is traced: Parameter access refused, warnings are failures, needs_values stops it."""

    def __enter__(self):
        self.saved, local.frame = local.frame, _GUARD
        _tracing[0] = True
        self.warnings = warnings.catch_warnings()
        self.warnings.__enter__()
        warnings.simplefilter("error")

    def __exit__(self, *exc):
        self.warnings.__exit__(*exc)
        local.frame = self.saved
        _tracing[0] = False


def _first_call(jitted, dynamic):
    """Trace, compile and run ``jitted`` guarded (see :class:`_Guarded`)."""
    with _Guarded():
        return jitted(*dynamic)


def _plan(body, dynamic, family=None):
    """A host_ops plan of ``body`` for these arrays (traced guarded; ``family`` names the op and its
    static arguments, for :func:`cellkit.tracing.trace`), or None."""
    try:
        with _Guarded():
            return host_ops.plan(body, dynamic, family=family)
    except Exception:   # noqa: BLE001 - stateful, needs values, warns, fails: not a host op
        return None


def needs_values() -> None:
    """Call where an op's Python needs concrete values and would take another path on a tracer.

    Inside :func:`eager_jit`'s trace of an eager call it stops the trace, so the
    call runs op by op with concrete values (a label-range check, a test for
    distinct indices); anywhere else it does nothing.

    >>> needs_values()   # not tracing: nothing happens
    """
    if _tracing[0]:
        raise _NeedsValues


def wraps_op(obj) -> bool:
    """Whether a registry entry is an op :func:`install` wraps: a plain Python function not marked op by op."""
    return (isinstance(obj, types.FunctionType) and getattr(obj, "_cellkit_eager_jit", None) is not False
            and not getattr(obj, "_cellkit_eager_wrapped", False))


def install(module, names) -> None:
    """Wrap the ops ``names`` of a registry module with :func:`eager_jit`, in the module itself.

    Nothing happens when the module sets ``EAGER_JIT = False``. Functions
    marked with :func:`op_by_op` and classes are left alone; JAX's own jitted
    functions (already one executable each) get :func:`host_first`.
    """
    if not getattr(module, "EAGER_JIT", True):
        return
    for name in names:
        obj = getattr(module, name, None)
        if wraps_op(obj):
            setattr(module, name, eager_jit(obj))
        elif _jax_jitted(obj) and getattr(obj, "_cellkit_eager_jit", None) is not False:
            setattr(module, name, host_first(obj))
