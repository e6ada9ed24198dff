"""Cells with a forward-mode rule: ``jvp(self, primals, tangents)`` as a ``jax.custom_jvp``.

A ``bprop`` Cell is a ``jax.custom_vjp``: reverse mode only (it composes with
itself, so ``grad`` of ``grad`` works), and JAX refuses forward mode on it. A Cell
that defines ``jvp(self, primals, tangents) -> (output, output tangent)`` instead
gets a ``jax.custom_jvp``: its rule gives the output's tangent from the inputs'
tangents, the Parameters' part is differentiated through ``construct``, and JAX
derives reverse mode by transposing the (linear) rule, so the Cell works under
``jvp``, ``jacfwd``, ``hvp``, ``grad`` and every composition of them. Like a
``bprop`` Cell's, its Parameters and the random key are explicit inputs, and the
Parameters its forward pass assigns are written back.

>>> import jax.numpy as jnp
>>> import cellkit as ms
>>> from cellkit import nn, ops
>>> class SafeLog(nn.Cell):
...     def construct(self, x):
...         return jnp.log(x)
...     def jvp(self, primals, tangents):
...         (x,), (t,) = primals, tangents
...         return jnp.log(x), t / jnp.maximum(x, 0.25)
>>> ops.jvp(SafeLog(), ms.Tensor([0., 2.]), ms.Tensor([1., 1.]))[1]
Array([4. , 0.5], dtype=float32)
>>> ms.grad(lambda x: SafeLog()(x).sum())(ms.Tensor([0., 2.]))
Array([4. , 0.5], dtype=float32)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import random as ckrandom
from ..cell_errors import note as _note
from ..parameter import local
from .frame import _run_in_frame, _to_values

__all__ = []


def _zero_tangent(v):
    v = jnp.asarray(v)
    if jnp.issubdtype(v.dtype, jnp.inexact):
        return jnp.zeros_like(v)
    return np.zeros(v.shape, jax.dtypes.float0)


def _call_with_jvp(cell, args, kwargs, params, is_array):
    state = params + (ckrandom.rng_state,)
    outer = [local.frame]
    staged = outer[0].staged if outer[0] is not None else False
    dyn_idx = [i for i, a in enumerate(args) if is_array(a)]
    svals = [p.value for p in state]
    dvals = [_to_values(args[i]) for i in dyn_idx]
    args = tuple(None if i in dyn_idx else a for i, a in enumerate(args))
    index = {id(p): i for i, p in enumerate(state)}

    def run(svals, dvals):
        out, frame = _run_in_frame(outer[0], staged, state, svals, cell.construct, args, dyn_idx, dvals, kwargs)
        new = {}
        for p, v in frame.writes():
            if id(p) not in index:
                raise RuntimeError(f"{cell.cls_name} has a custom jvp and assigned Parameter '{p.name}', "
                                   "which it does not own; only its own Parameters may be updated inside it")
            new[index[id(p)]] = v
        return out, new

    @jax.custom_jvp
    def primal(svals, dvals):
        return run(svals, dvals)

    @primal.defjvp
    def rule(primals, tangents):
        svals, dvals = primals
        t_state, t_dyn = tangents
        out, new = run(svals, dvals)
        full = list(args)
        tans = [None] * len(args)
        for k, i in enumerate(dyn_idx):
            full[i], tans[i] = dvals[k], t_dyn[k]
        result, _ = _run_in_frame(None, False, state, svals, lambda: cell.jvp(tuple(full), tuple(tans)), (), (), (), {})
        if not isinstance(result, tuple) or len(result) != 2:
            raise ValueError(f"{cell.cls_name}.jvp must return (output, output tangent), got "
                             f"{type(result).__name__}")
        t_out = result[1]
        # The Parameters' part, through construct with the inputs held fixed.
        _, t_params = jax.jvp(lambda s: run(s, dvals)[0], (svals,), (t_state,))
        t_out = jax.tree_util.tree_map(lambda a, b: jnp.asarray(a, jnp.result_type(b)) + b, t_out, t_params)
        return (out, new), (t_out, {i: _zero_tangent(v) for i, v in new.items()})

    try:
        out, new = primal(svals, dvals)
    except Exception as err:
        _note(err, f"  in Cell {cell.cls_name} (custom jvp)")
        raise
    finally:
        outer[0] = None
    for i, v in new.items():
        state[i]._write(v)
    return out
