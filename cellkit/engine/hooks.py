"""Running Cells with hooks or recompute; ``HookBackward`` and ``InsertGradientOf``.

A Cell that has hooks (``Cell.register_*_hook``) or ``recompute`` is called
through :func:`_extras_call` (installed in ``cellkit.cell.extras_call``): forward
pre-hooks may replace the inputs, forward hooks the output. Backward hooks are
identities with a ``jax.custom_vjp``: one on the Cell's outputs (it runs the
backward pre-hooks on the output gradients and keeps them), one on its inputs
(it runs the backward hooks with the input gradients and the kept output
gradients). They act wherever JAX differentiates in reverse mode (``grad``,
``vjp``, ``jax.grad`` ...), eagerly and under ``cellkit.jit``; under ``jit``
hooks run while the function is traced, so their Python side effects happen
once per compilation (use ``jax.debug.print`` to see values on every call).

>>> import cellkit as ms
>>> from cellkit import ops
>>> reverse = ops.InsertGradientOf(lambda g: -g)
>>> ms.grad(lambda x: (reverse(x) * 3).sum())(ms.Tensor([1., 2.]))
Array([-3., -3.], dtype=float32)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import context
from ..cell import _call_inner, extras_call
from ..parameter import Parameter, local
from .bprop import _graph_call
from .frame import _to_values
from .checkpointing import checkpointed

__all__ = ["HookBackward", "InsertGradientOf"]


def _is_float_array(a) -> bool:
    if isinstance(a, Parameter):
        a = a.value
    if not isinstance(a, (jax.Array, np.ndarray)):
        return False
    return jnp.issubdtype(a.dtype, jnp.inexact)


def _as_grads(result, n, who):
    """A hook's result as a tuple of ``n`` gradients (None: unchanged)."""
    if result is None:
        return None
    if not isinstance(result, (tuple, list)):
        result = (result,)
    if len(result) != n:
        raise ValueError(f"{who} returned {len(result)} gradient(s); expected {n} (one per "
                         "gradient it was given), as a tuple")
    return tuple(result)


def _identity_with_backward(values, on_grads):
    """``values`` (a tuple of arrays) unchanged; in reverse mode their gradients go through
    ``on_grads(tuple of gradients) -> tuple of gradients``."""

    meta = [(jnp.shape(v), jnp.result_type(v)) for v in values]  # static: the closure may keep it

    @jax.custom_vjp
    def ident(vs):
        return vs

    def fwd(vs):
        return vs, None

    def bwd(_, grads):
        new = on_grads(tuple(grads))
        return (tuple(jnp.broadcast_to(jnp.asarray(g, dt), shape) for g, (shape, dt) in zip(new, meta)),)

    ident.defvjp(fwd, bwd)
    return ident(tuple(values))


def _no_forward_mode(err, cell, what):
    if isinstance(err, TypeError) and "custom_vjp" in str(err) and "forward-mode" in str(err):
        return TypeError(f"Cell {cell.cls_name} has {what}, which act in reverse mode only, and was "
                         "differentiated in forward mode (jvp, jacfwd, hvp, hessian); remove the hooks "
                         "(handle.remove()) for forward mode")
    return None


def _wrap_floats(items, on_grads):
    idx = [i for i, a in enumerate(items) if _is_float_array(a)]
    if not idx:
        return items
    new = _identity_with_backward([_to_values(items[i]) for i in idx], on_grads)
    items = list(items)
    for i, v in zip(idx, new):
        items[i] = v
    return items


def _extras_call(cell, args, kwargs):
    if local.frame is None and context.graph[0]:
        return _graph_call(cell, *args, **kwargs)
    d = cell.__dict__
    hooks = d.get("_cell_hooks")
    if hooks is not None:
        for fn, with_kwargs in hooks.of("forward_pre"):
            result = fn(cell, args, kwargs) if with_kwargs else fn(cell, args)
            if result is None:
                continue
            if with_kwargs:
                args, kwargs = result
            else:
                args = result if isinstance(result, tuple) else (result,)
        backward, backward_pre = hooks.of("backward"), hooks.of("backward_pre")
    else:
        backward = backward_pre = ()
    kept = []
    try:
        if backward:
            def on_input_grads(grad_input):
                grad_output = kept[0] if kept else ()
                for fn, _ in backward:
                    new = _as_grads(fn(cell, grad_input, grad_output), len(grad_input),
                                    f"backward hook of Cell {cell.cls_name}")
                    grad_input = new if new is not None else grad_input
                return grad_input

            args = tuple(_wrap_floats(args, on_input_grads))
        if "_cell_recompute" in d:
            out = checkpointed(lambda *a, **k: _call_inner(cell, a, k), cell, args, kwargs, d["_cell_recompute"])
        else:
            out = _call_inner(cell, args, kwargs)
        if backward or backward_pre:
            def on_output_grads(grad_output):
                for fn, _ in backward_pre:
                    new = _as_grads(fn(cell, grad_output), len(grad_output),
                                    f"backward pre-hook of Cell {cell.cls_name}")
                    grad_output = new if new is not None else grad_output
                kept[:] = [grad_output]
                return grad_output

            leaves, tree = jax.tree_util.tree_flatten(out)
            out = jax.tree_util.tree_unflatten(tree, _wrap_floats(leaves, on_output_grads))
    except TypeError as err:
        new = _no_forward_mode(err, cell, "backward hooks")
        if new is None:
            raise
        raise new from err
    if hooks is not None:
        for fn, with_kwargs in hooks.of("forward"):
            result = fn(cell, args, kwargs, out) if with_kwargs else fn(cell, args, out)
            if result is not None:
                out = result
    return out


extras_call[0] = _extras_call


class HookBackward:
    """MindSpore's ``ops.HookBackward(hook_fn)``: the inputs unchanged; their gradients go through
    ``hook_fn(grads)`` (``grads`` a tuple, one per input), whose non-None result replaces them.

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> triple = ops.HookBackward(lambda g: g[0] * 3)
    >>> ms.grad(lambda x: (triple(x) * x).sum())(ms.Tensor([1., 2.]))
    Array([4., 8.], dtype=float32)
    """

    def __init__(self, hook_fn, cell_id=""):
        if not callable(hook_fn):
            raise TypeError(f"HookBackward: hook_fn must be a Python function, got {type(hook_fn).__name__}")
        self.hook_fn = hook_fn
        self.cell_id = cell_id

    def __call__(self, *args):
        hook = self.hook_fn

        def on_grads(grads):
            new = _as_grads(hook(grads), len(grads), "HookBackward's hook_fn")
            return grads if new is None else new

        out = _identity_with_backward([_to_values(a) for a in args], on_grads)
        return out[0] if len(out) == 1 else tuple(out)


class InsertGradientOf:
    """MindSpore's ``ops.InsertGradientOf(f)``: the input unchanged; its gradient becomes ``f(gradient)``
    (with several inputs, ``f`` is applied to each one's gradient).

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> clip = ops.InsertGradientOf(lambda g: ops.clip_by_value(g, -0.5, 0.5))
    >>> ms.grad(lambda x: (clip(x) * 4).sum())(ms.Tensor([1.]))
    Array([0.5], dtype=float32)
    """

    def __init__(self, f):
        if not callable(f):
            raise TypeError(f"InsertGradientOf: f must be a function, got {type(f).__name__}")
        self.f = f

    def __call__(self, *args):
        f = self.f
        out = _identity_with_backward([_to_values(a) for a in args], lambda grads: tuple(f(g) for g in grads))
        return out[0] if len(out) == 1 else tuple(out)
