"""Cells with a custom ``bprop``, and Cell calls in GRAPH_MODE.

``Cell.__call__`` hands a Cell that defines ``bprop`` (or any Cell called
eagerly in GRAPH_MODE) to :func:`_special_call` through the ``special_call``
slot of ``cellkit.cell``. A ``bprop`` Cell runs as a ``jax.custom_vjp`` whose
primal takes the Cell's Parameter values and the random key as explicit inputs
(a ``custom_vjp`` must not close over traced values); its forward pass runs in
a frame binding those inputs, and the writes it makes are returned and stored.
In GRAPH_MODE an eager call goes through one shared ``jit`` of ``cell(*args)``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import context
from .. import random as ckrandom
from ..cell import special_call
from ..cell_members import graph_call
from ..cell_errors import note as _note
from ..parameter import Parameter, local, structure_epoch
from .custom_jvp import _call_with_jvp
from .frame import _run_in_frame, _to_values, modes
from .jit_function import JitFunction

__all__ = []


def _is_array_arg(a) -> bool:
    return isinstance(a, (jax.Array, np.ndarray, np.generic, Parameter))


def _bprop_params(cell):
    d = cell.__dict__
    cached = d.get("_ck_bprop_params")
    if cached is not None and cached[0] == structure_epoch[0]:
        return cached[1]
    params = tuple(cell.get_parameters())
    d["_ck_bprop_params"] = (structure_epoch[0], params)
    return params


def _parse_bprop_result(cell, result, n_inputs, state):
    param_grads = {}
    if (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict)
            and isinstance(result[0], (tuple, list))):
        result, param_grads = result
    if not isinstance(result, (tuple, list)):
        result = (result,)
    if len(result) != n_inputs:
        raise ValueError(f"{cell.cls_name}.bprop returned {len(result)} input gradient(s) but "
                         f"construct received {n_inputs} input(s); return one per input, as a tuple")
    index = {id(p): i for i, p in enumerate(state)}
    names = {p.name: i for i, p in enumerate(state)}
    by_index = {}
    for key, g in param_grads.items():
        i = index.get(id(key)) if isinstance(key, Parameter) else names.get(key)
        if i is None:
            raise ValueError(f"{cell.cls_name}.bprop returned a gradient for {key!r}, which is "
                             f"not a Parameter of this Cell")
        p = state[i]
        if tuple(jnp.shape(g)) != p.shape:
            raise ValueError(f"{cell.cls_name}.bprop: gradient for Parameter '{p.name}' has shape "
                             f"{tuple(jnp.shape(g))}, expected {p.shape}")
        by_index[i] = jnp.asarray(g, p.value.dtype)
    return tuple(result), by_index


def _call_with_bprop(cell, args, kwargs):
    params = _bprop_params(cell)
    state = params + (ckrandom.rng_state,)
    # The enclosing frame, reachable from the functions below only while this call runs: JAX
    # keeps them in the traced computation, and the frame holds that trace's tracers.
    outer = [local.frame]
    staged = outer[0].staged if outer[0] is not None else False
    dyn_idx = [i for i, a in enumerate(args) if _is_array_arg(a)]
    svals = [p.value for p in state]
    dvals = [_to_values(args[i]) for i in dyn_idx]
    # The functions below must not close over the (possibly traced) array inputs themselves.
    args = tuple(None if i in dyn_idx else a for i, a in enumerate(args))

    def run(svals, dvals):
        out, frame = _run_in_frame(outer[0], staged, state, svals, cell.construct, args, dyn_idx, dvals, kwargs)
        index = {id(p): i for i, p in enumerate(state)}
        writes = {}
        for p, v in frame.writes():
            if id(p) not in index:
                raise RuntimeError(f"{cell.cls_name} has a custom bprop and assigned Parameter "
                                   f"'{p.name}', which it does not own; only its own Parameters "
                                   "may be updated inside it")
            writes[index[id(p)]] = v
        return out, writes

    @jax.custom_vjp
    def primal(svals, dvals):
        return run(svals, dvals)

    def fwd(svals, dvals):
        out, writes = run(svals, dvals)
        return (out, writes), (svals, dvals, out)

    def bwd(res, cts):
        svals, dvals, out = res
        dout = cts[0]
        result, _ = _run_in_frame(None, False, state, svals, lambda *a: cell.bprop(*a, out, dout),
                                  args, dyn_idx, dvals, {})
        dx, by_index = _parse_bprop_result(cell, result, len(args), state)
        d_state = [by_index.get(i) for i in range(len(state))]
        d_dyn = []
        for k, i in enumerate(dyn_idx):
            dtype = jnp.asarray(dvals[k]).dtype
            ok = dx[i] is not None and jnp.issubdtype(dtype, jnp.inexact)
            d_dyn.append(jnp.asarray(dx[i]).astype(dtype) if ok else None)
        return d_state, d_dyn

    primal.defvjp(fwd, bwd)
    try:
        out, writes = primal(svals, dvals)
    except TypeError as err:
        if "custom_vjp" in str(err) and "forward-mode" in str(err):
            raise TypeError(f"Cell {cell.cls_name} has a custom bprop, which acts in reverse mode only, "
                            "and was differentiated in forward mode (jvp, jacfwd, hvp, hessian). Define "
                            f"jvp(self, primals, tangents) on {cell.cls_name} instead of bprop: it serves "
                            "forward mode and, transposed, reverse mode") from err
        _note(err, f"  in Cell {cell.cls_name} (custom bprop)")
        raise
    except Exception as err:
        _note(err, f"  in Cell {cell.cls_name} (custom bprop)")
        raise
    finally:
        outer[0] = None
    for i, v in writes.items():
        state[i]._write(v)
    return out


def _special_call(cell, args, kwargs):
    if local.frame is None and _graph_mode():
        return _graph_call(cell, *args, **kwargs)
    if modes.taylor is not None and (type(cell)._ck_jvp or callable(getattr(type(cell), "bprop", None))):
        rule = "jvp" if type(cell)._ck_jvp else "bprop"
        raise TypeError(f"Cell {cell.cls_name} has a custom {rule}, which gives first derivatives only, and "
                        f"was called under ops.{modes.taylor} (Taylor mode), which needs every order: there "
                        f"is no Taylor rule for {cell.cls_name}. Take the rule off, or differentiate "
                        f"{cell.cls_name} by nested grad/jvp")
    if type(cell)._ck_jvp:
        if callable(getattr(type(cell), "bprop", None)):
            raise TypeError(f"Cell {cell.cls_name} defines both bprop and jvp; define one: jvp serves "
                            "forward and reverse mode, bprop reverse mode only")
        return _call_with_jvp(cell, args, kwargs, _bprop_params(cell), _is_array_arg)
    return _call_with_bprop(cell, args, kwargs)


def _graph_mode() -> bool:
    return context.graph[0]


def _call_cell(cell, *args, **kwargs):
    return cell(*args, **kwargs)


_graph_call = JitFunction(_call_cell)
special_call[0] = _special_call
graph_call[0] = _graph_call
