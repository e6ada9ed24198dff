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

**Families.** A caller that traces the same op for one shape after another
(a growing cache, a new batch size) names the op's *family*. JAX's own
functions inside an op are jitted each (``jnp.matmul``, ``jax.nn.softmax``):
traced as they are, each makes a jaxpr of its own per new shape, which is then
inlined, about 60 % of the op's trace. Under ``jax.disable_jit()`` they run
as plain Python on the tracers instead, which gives the same values (that is
``disable_jit``'s promise) in an equation list without the nested calls. It
would also unroll a ``lax.scan`` and try a ``while_loop`` in Python, so a
family is traced that way only once its first trace, made as above, holds
no loop (``scan``, ``while``) at any depth, or from its first trace on when its
op is declared free of loops (:func:`declared_loop_free`: JAX's own functions,
and cellkit's but those its modules name in ``EAGER_LOOPS``; a test keeps
that list whole).

>>> import jax.numpy as jnp
>>> closed, shapes = trace(lambda x: {"y": jnp.sin(x) * 2}, jnp.ones(3))
>>> [eqn.primitive.name for eqn in closed.jaxpr.eqns], shapes["y"].shape
(['sin', 'mul'], (3,))
"""

from __future__ import annotations

import functools
import sys

import jax
import numpy as np

try:   # (jax.extend.core's own name; importing jax.extend loads Pallas, ~13 ms of every import)
    from jax._src.core import jaxprs_in_params
except ImportError:   # another jax
    from jax.extend.core import jaxprs_in_params

__all__ = ["trace", "has_loop", "declared_loop_free", "MAX_FAMILIES"]

MAX_FAMILIES = 4096
LOOPS = frozenset({"scan", "while"})
_direct = []   # [function or None], decided on the first call
_loop_free = {}   # family -> whether its first trace held no loop


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


def has_loop(jaxpr) -> bool:
    """Whether ``jaxpr`` (a Jaxpr or ClosedJaxpr) holds a ``scan`` or ``while`` equation at any depth."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    return any(eqn.primitive.name in LOOPS or any(has_loop(inner) for inner in jaxprs_in_params(eqn.params))
               for eqn in jaxpr.eqns)


def trace(fn, *args, family=None):
    """``jax.make_jaxpr(fn, return_shape=True)(*args)``: the closed jaxpr of ``fn`` for arguments of these
    shapes and dtypes (arrays, ``ShapeDtypeStruct``, Python scalars), and its output shapes.

    ``family`` (hashable: the op and its static arguments) names what ``fn`` computes for any shapes; once
    a family's first trace shows no loop, later ones trace JAX's jitted functions inline (the module's
    text): the same values, in other equations."""
    if not _direct:
        _direct.append(_choose())
    direct = _direct[0]
    if family is None or direct is None:
        return (direct or _make_jaxpr)(fn, args)
    loop_free = _loop_free.get(family)
    if loop_free is None and declared_loop_free(family):
        loop_free = _remember(family, True)
    if loop_free:
        with jax.disable_jit():
            return direct(fn, args)
    traced = direct(fn, args)
    if loop_free is None:
        _remember(family, not has_loop(traced[0]))
    return traced


def _remember(family, loop_free: bool) -> bool:
    if len(_loop_free) >= MAX_FAMILIES:
        _loop_free.clear()   # (bounded: a family forgotten is traced as a first one again)
    _loop_free[family] = loop_free
    return loop_free


def declared_loop_free(family) -> bool:
    """Whether a family's op is known to call no JAX loop from its Python, so that its first trace may be
    inline too: a family is ``(op, static arguments)``, or ``(tag, family)`` (an eager grad's JVP split);
    the op (unwrapped) is one of JAX's own functions, or a cellkit function whose module does not name it
    in ``EAGER_LOOPS`` (``True``: every function of the module; else a tuple of names). Anything else
    (a user's function, an op that loops) is traced first as it is, to see."""
    op = family
    while isinstance(op, tuple) and len(op) == 2 and isinstance(op[0], str):
        op = op[1]
    if not isinstance(op, tuple) or not op:
        return False
    op = op[0]
    for _ in range(8):   # (a tiered_jit object, functools.wraps and jax.jit wrappers, a partial, a method)
        inner = (op.func if isinstance(op, functools.partial) else getattr(op, "__func__", None)
                 or getattr(op, "__wrapped__", None))
        if inner is None:
            break
        op = inner
    module = getattr(op, "__module__", None) or ""
    if module == "jax" or module.startswith("jax."):
        return True   # (JAX's functions loop only over a few steps: searchsorted's levels, polyval's terms)
    if not module.startswith("cellkit."):
        return False
    loops = getattr(sys.modules.get(module), "EAGER_LOOPS", False)
    return loops is not True and getattr(op, "__name__", None) not in (loops or ())
