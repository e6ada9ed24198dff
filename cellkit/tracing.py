"""``trace``: an eager op's jaxpr, as ``jax.make_jaxpr`` gives it, for less Python per trace.

Host plans (:mod:`cellkit.host_ops`) and the JVP splits of an eager grad
(:mod:`cellkit.eager_grad`) trace each op once per input signature; a script
with many shapes traces hundreds of them. ``jax.make_jaxpr`` traces through
``jax.jit``'s machinery (argument names from the signature, shardings,
donation, a jit object per call): about half of a small op's trace. ``trace``
hands the function to JAX's tracer directly and gives the same closed jaxpr
and output shapes.

The direct path uses JAX internals. The first call checks it against
``jax.make_jaxpr`` on a probe function (equations, constants, output tree,
weak types); where this JAX differs, or lacks them, every call takes
``jax.make_jaxpr``.

>>> import jax.numpy as jnp
>>> closed, shapes = trace(lambda x: {"y": jnp.sin(x) * 2}, jnp.ones(3))
>>> [eqn.primitive.name for eqn in closed.jaxpr.eqns], shapes["y"].shape
(['sin', 'mul'], (3,))
"""

from __future__ import annotations

import jax
import numpy as np

__all__ = ["trace"]

_direct = []   # [function or None], decided on the first call


def _make_jaxpr(fn, args):
    return jax.make_jaxpr(fn, return_shape=True)(*args)


def _direct_trace():
    from jax._src import api_util, core
    from jax._src import linear_util as lu
    from jax._src.interpreters import partial_eval as pe

    def direct(fn, args):
        flat, in_tree = jax.tree_util.tree_flatten(args)
        avals = [core.shaped_abstractify(x) for x in flat]
        debug = api_util.debug_info("cellkit.tracing.trace", fn, args, {})
        wrapped, out_tree = api_util.flatten_fun_nokwargs(lu.wrap_init(fn, debug_info=debug), in_tree)
        jaxpr, out_avals, consts = pe.trace_to_jaxpr_dynamic(wrapped, avals)
        shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in out_avals]
        return core.ClosedJaxpr(jaxpr, consts), jax.tree_util.tree_unflatten(out_tree(), shapes)
    return direct


def _probe(x, y, n):
    z = jax.numpy.where(x > 0, x * n, jax.lax.exp(y))
    return {"sum": z.sum(axis=0), "pair": (z.astype(np.int32), 2.0 * x, np.arange(3.0))}


def _same(a, b) -> bool:
    (ja, sa), (jb, sb) = a, b
    def avals(closed):
        return [(v.aval.shape, v.aval.dtype, v.aval.weak_type)
                for v in (*closed.jaxpr.constvars, *closed.jaxpr.invars, *closed.jaxpr.outvars)]
    return (str(ja) == str(jb) and len(ja.consts) == len(jb.consts) and avals(ja) == avals(jb)
            and jax.tree_util.tree_structure(sa) == jax.tree_util.tree_structure(sb)
            and jax.tree_util.tree_leaves(sa) == jax.tree_util.tree_leaves(sb))


def _choose():
    try:
        direct = _direct_trace()
        args = (jax.ShapeDtypeStruct((2, 3), np.float32), np.ones((2, 3), np.float32), 3)
        if _same(direct(_probe, args), _make_jaxpr(_probe, args)):
            return direct
    except Exception:   # noqa: BLE001 - another JAX: its own make_jaxpr
        pass
    return None


def trace(fn, *args):
    """``jax.make_jaxpr(fn, return_shape=True)(*args)``: the closed jaxpr of ``fn`` for arguments of these
    shapes and dtypes (arrays, ``ShapeDtypeStruct``, Python scalars), and its output shapes."""
    if not _direct:
        _direct.append(_choose())
    direct = _direct[0]
    return (direct or _make_jaxpr)(fn, args)
