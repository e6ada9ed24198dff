"""An eager op inside an eager ``grad``/``vjp``: its forward values from one cheap executable or the host.

Inside an eager ``value_and_grad``, JAX linearizes each op as it runs: it splits
the op's JVP into the part that depends on the primal values only (the outputs,
and the residuals the tangents need, such as ``exp(x)`` for ``exp``) and the part
linear in the tangents, runs the first and records the second for the backward
pass. It compiles the first part nested in the differentiation, where XLA
options cannot be given, once per op and shape.

:func:`linearize` makes the same split itself (``partial_eval_jaxpr_nounits`` of
the op's JVP jaxpr) and returns the op as a ``jax.custom_jvp`` whose rule runs
the primal part as a top-level call: with NumPy when :mod:`cellkit.host_ops` can
run it on these arrays (no compilation at all), else as one
:func:`cellkit.tiered_jit.tiered_jit` executable (cheaper XLA options). The part
linear in the tangents is JAX's own jaxpr, evaluated on the tangents, so a
``vjp`` records and transposes exactly the operations JAX would have, and the
backward pass is unchanged.

>>> import jax, jax.numpy as jnp
>>> op = linearize(jnp.tanh, [jnp.ones(3, jnp.float32)])
>>> jax.grad(lambda x: op(x).sum())(jnp.zeros(3, jnp.float32))
Array([1., 1., 1.], dtype=float32)
"""

from __future__ import annotations

import numpy as np

import jax

from jax.custom_derivatives import SymbolicZero

try:   # (jax.extend.core's own name; importing jax.extend loads Pallas, ~13 ms of every import)
    from jax._src.core import jaxpr_as_fun
except ImportError:   # another jax
    from jax.extend.core import jaxpr_as_fun

from . import host_ops, tracing
from .tiered_jit import tiered_jit

__all__ = ["linearize"]


def linearize(fn, primals, host=True, family=None):
    """``fn`` as a ``jax.custom_jvp`` whose forward values come from the host (``host`` and the arrays
    allow it) or a top-level executable, for calls with primal values like ``primals``; None when that
    cannot be done (an output that is not floating, a JVP JAX refuses: a ``custom_vjp`` inside).
    ``family``: what names ``fn`` for any shapes, for :func:`cellkit.tracing.trace`."""
    try:
        return _linearize(fn, primals, host, family)
    except Exception:   # noqa: BLE001 - a JVP that cannot be split or run here: JAX's own path
        return None


def _linearize(fn, primals, host, family):
    shapes = [jax.ShapeDtypeStruct(np.shape(a), a.dtype) for a in primals]
    inexact = tuple(i for i, a in enumerate(shapes) if np.issubdtype(a.dtype, np.inexact))
    on_host = host and host_ops.small(primals, host_ops.MAX_INPUT_ELEMENTS)   # (then host_ops.light)
    # Every floating input differentiated (the usual call): split now, so that a JVP that cannot be
    # split (or an output that is not floating) fails here, outside the grad, and the op is left to JAX.
    trees = []   # (the output tree, appended by the split's trace)
    # The inputs with a nonzero tangent -> (forward runner, tangent function, m).
    splits = {inexact: _split(fn, shapes, inexact, on_host, family, trees)}
    out_tree = trees[0]

    def rule(values, tangents):
        # Symbolic zeros: an input that is not differentiated (data, labels, moving statistics) is a
        # known input of the JVP, so nothing of its tangent is computed, nor any zero made.
        moving = tuple(i for i in inexact if not isinstance(tangents[i], SymbolicZero))
        split = splits.get(moving)
        if split is None:
            split = splits[moving] = _split(fn, shapes, moving, on_host, family)
        forward, tangent, m = split
        outs = forward(list(values))
        moved = tangent(outs[m:], [tangents[i] for i in moving])
        return jax.tree_util.tree_unflatten(out_tree, outs[:m]), jax.tree_util.tree_unflatten(out_tree, moved)

    op = jax.custom_jvp(fn)
    op.defjvp(rule, symbolic_zeros=True)
    return op


def _split(fn, shapes, moving, on_host, family=None, out_tree=None):
    """The op's JVP split for tangents of the inputs ``moving``: a runner of the part that depends on
    the values only (outputs, then residuals), a function of (residuals, tangents) for the rest, and
    the number of outputs (their tree appended to the list ``out_tree`` when given). Raises when an
    output is not floating, or there is none."""
    from jax._src.interpreters import partial_eval as pe
    n = len(shapes)

    def jvp_flat(*args):
        values, tangents = list(args[:n]), args[n:]

        def of_moving(*xs):
            full = list(values)
            for i, x in zip(moving, xs):
                full[i] = x
            return fn(*full)
        out, tangent = jax.jvp(of_moving, tuple(values[i] for i in moving), tuple(tangents))
        leaves, tree = jax.tree_util.tree_flatten(out)
        if out_tree is not None:
            out_tree.append(tree)
        return leaves + jax.tree_util.tree_leaves(tangent)
    closed, _ = tracing.trace(jvp_flat, *shapes, *[shapes[i] for i in moving],
                              family=None if family is None else ("jvp", family))
    m = len(closed.out_avals) // 2
    if not m or not all(np.issubdtype(a.dtype, np.inexact) for a in closed.out_avals[:m]):
        raise ValueError("an output that is not floating, or none")
    known, unknown, out_unknowns, _ = pe.partial_eval_jaxpr_nounits(
        closed, [False] * n + [True] * len(moving), [False] * m + [True] * m)
    if any(out_unknowns[:m]):
        raise ValueError("an output depends on a tangent")
    forward = _runner(known, fn, on_host, weak_ok=m)
    tangent_runner = []

    def tangent(residuals, tangents):
        # Concrete tangents (forward mode) are one call too; traced ones are recorded op by op.
        if all(isinstance(t, jax.Array) and not isinstance(t, jax.core.Tracer) for t in tangents):
            if not tangent_runner:
                tangent_runner.append(_runner(unknown, fn, on_host))
            return tangent_runner[0](list(residuals) + list(tangents))
        return host_ops.eval_inlined(unknown.jaxpr, unknown.consts, *residuals, *tangents)
    return forward, tangent, m


def _runner(closed, fn, host, weak_ok=None):
    """A function of a list of arrays running ``closed``: a host plan when ``host`` and NumPy can run it
    (no result weakly typed among the first ``weak_ok``), else one executable."""
    if host:
        kind = host_ops.kind(closed.jaxpr)
        outs = closed.jaxpr.outvars if weak_ok is None else closed.jaxpr.outvars[:weak_ok]
        if (kind in (host_ops.EXACT, host_ops.COMPUTE) and not host_ops.unsuited(outs, limit=None)
                and host_ops.light(closed.jaxpr)):
            plan = host_ops.Plan(closed, jax.tree_util.tree_structure([0] * len(closed.out_avals)), fn,
                                 kind == host_ops.EXACT)
            return lambda arrays: host_ops.run(plan, arrays)
    compiled = tiered_jit(jaxpr_as_fun(closed))
    return lambda arrays: list(compiled(*arrays))
