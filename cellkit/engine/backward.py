"""The backward pass of an eager ``grad``/``value_and_grad`` as one compiled executable per structure.

``jax.vjp`` runs a PyNative forward function eagerly (its Python sees concrete
values on every call) and records the linear part as a jaxpr. Evaluating that
jaxpr runs the backward pass primitive by primitive, and XLA compiles each
backward primitive once per shape. :func:`run_backward` instead compiles the
whole backward pass as one ``jax.jit`` executable, cached by the jaxpr's text
(its equations, shapes, dtypes and literal constants) and the residuals'
layout: the next step of the same model finds the executable and runs it.

The backward pass stays op by op (``vjp_fn(ct)``, exactly as before) when:
a residual or cotangent is traced (``grad`` inside ``cellkit.jit``); the
backward pass runs Python of the user's (a Cell's ``bprop``, backward hooks,
``custom_vjp`` rules, which PyNative calls with concrete values every step);
the jaxpr holds constants its text does not show; JAX's ``vjp`` object is not
the one this module knows; ``CELLKIT_EAGER_JIT=0`` (``cellkit.eager_jit``).
"""

from __future__ import annotations

import jax

try:   # (jax.extend.core's own name; importing jax.extend loads Pallas, ~13 ms of every import)
    from jax._src.core import jaxprs_in_params
except ImportError:   # another jax
    from jax.extend.core import jaxprs_in_params

from .. import eager_jit
from ..host_steps import HostFirst
from ..tiered_jit import tiered_jit

__all__ = ["run_backward", "MAX_ENTRIES"]

MAX_ENTRIES = 256
_cache: dict = {}
# Primitives whose backward runs Python (custom_vjp bwd rules, bprop, hooks): never compiled whole.
_PYTHON_BACKWARD = ("custom_vjp", "custom_lin", "custom_transpose")


def run_backward(vjp_fn, ct):
    """``vjp_fn(ct)``, compiled whole when that is safe (see the module's text)."""
    if not eager_jit.enabled():
        return vjp_fn(ct)
    try:
        plan = _plan(vjp_fn, ct)
    except Exception:   # noqa: BLE001 - an unknown vjp object: the op-by-op backward
        plan = None
    if plan is None:
        return vjp_fn(ct)
    jitted, dynamic = plan
    try:
        return jitted(dynamic, ct)
    except Exception:   # noqa: BLE001 - e.g. a weakly typed cotangent jit would widen: op by op
        return vjp_fn(ct)


def _plan(vjp_fn, ct):
    fun = getattr(vjp_fn, "fun", None)
    args = getattr(fun, "args", None)
    if args is None or len(args) != 4 or not hasattr(vjp_fn, "opaque_residuals"):
        return None
    spec, out_known, jaxpr, out_avals = args
    res_leaves, res_tree = jax.tree_util.tree_flatten((vjp_fn.args_res, vjp_fn.opaque_residuals))
    dynamic, layout = [], []
    for leaf in res_leaves:
        if isinstance(leaf, jax.Array) and not isinstance(leaf, jax.core.Tracer):
            dynamic.append(leaf)
            layout.append(None)
        elif isinstance(leaf, (jax.core.Tracer, jax.Array)) or hasattr(leaf, "shape"):
            return None
        else:
            layout.append(leaf)   # JAX's markers for unused inputs
    for leaf in jax.tree_util.tree_leaves(ct):
        if not isinstance(leaf, jax.Array) or isinstance(leaf, jax.core.Tracer):
            return None
    try:
        marker_key = tuple(None if m is None else type(m) for m in layout)
        key = (str(jaxpr), tuple(spec), tuple(out_known), res_tree, marker_key,
               vjp_fn.in_tree, vjp_fn.out_tree)
        hash(key)
    except TypeError:
        return None
    jitted = _cache.get(key)
    if jitted is None:
        if not _safe(jaxpr) or len(_cache) >= MAX_ENTRIES:
            return None
        jitted = _cache[key] = _build(vjp_fn, res_tree, layout)
    return jitted, dynamic


def _safe(jaxpr) -> bool:
    """No Python in the backward pass and no constant that the jaxpr's text leaves out.

    The top jaxpr's constvars are the residuals (inputs); a nested jaxpr's are baked-in constants.
    """
    for eqn in jaxpr.eqns:
        if any(tag in eqn.primitive.name for tag in _PYTHON_BACKWARD):
            return False
        for sub in jaxprs_in_params(eqn.params):
            if getattr(sub, "constvars", None) or not _safe(sub):
                return False
        for value in eqn.params.values():
            consts = getattr(value, "consts", None)
            if consts:
                return False
    return True


def _build(first, res_tree, layout):
    fun, in_tree, out_tree = first.fun, first.in_tree, first.out_tree
    vjp_type = type(first)

    def backward(dynamic, ct):
        it = iter(dynamic)
        leaves = [next(it) if m is None else m for m in layout]
        args_res, opaque = jax.tree_util.tree_unflatten(res_tree, leaves)
        return vjp_type(fun, in_tree, out_tree, args_res, opaque)(ct)

    return HostFirst(tiered_jit(backward))   # (a small model's first backward passes: on the host)
