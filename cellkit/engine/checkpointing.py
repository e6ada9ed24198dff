"""Recompute (gradient checkpointing) on ``jax.checkpoint``, for Cells and functions.

The recomputed call runs through :func:`~cellkit.engine.transforms.pure` with the
Cell's Parameters and the random key as explicit inputs of ``jax.checkpoint``, so
the backward pass recomputes the forward pass with the same values (the same
Dropout mask), and the Parameters it assigns are written back once. A policy
from ``jax.checkpoint_policies`` (by name or value) says which intermediates may
still be saved; :data:`POLICIES` lists the names.

>>> import cellkit as ms
>>> from cellkit import nn, ops
>>> net = nn.Dense(3, 3)
>>> g = ms.grad(lambda x: ms.recompute(net, x, policy="nothing_saveable").sum())(ops.ones((2, 3)))
>>> g.shape
(2, 3)
"""

from __future__ import annotations

import jax
import numpy as np

from .. import random as ckrandom
from ..cell import Cell
from ..parameter import Parameter, local
from .capture import cell_signature
from .frame import _to_values
from .transforms import finish, pure

__all__ = ["recompute", "POLICIES"]

POLICIES = tuple(sorted(n for n in dir(jax.checkpoint_policies) if not n.startswith("_")))


def _policy(policy):
    if policy is None or callable(policy) and not isinstance(policy, str):
        return policy
    fn = getattr(jax.checkpoint_policies, policy, None) if isinstance(policy, str) else None
    if fn is None:
        raise ValueError(f"recompute: unknown policy {policy!r}; use one of {list(POLICIES)}")
    if policy.startswith("save_") or policy.startswith("offload") or policy.endswith("_names"):
        raise ValueError(f"recompute: policy {policy!r} takes arguments; pass "
                         f"jax.checkpoint_policies.{policy}(...) itself")
    return fn


def _is_array_arg(a) -> bool:
    return isinstance(a, (jax.Array, np.ndarray, np.generic, Parameter))


def checkpointed(fn, owner, args, kwargs, policy):
    """``fn(*args, **kwargs)`` under ``jax.checkpoint``; ``owner`` (a Cell or None) has its
    Parameters passed in explicitly. Eagerly, outside every transform, a plain call."""
    dyn_idx = [i for i, a in enumerate(args) if _is_array_arg(a)]
    if local.frame is None and not any(isinstance(_to_values(args[i]), jax.core.Tracer) for i in dyn_idx):
        return fn(*args, **kwargs)
    params = cell_signature(owner)[1] if isinstance(owner, Cell) else ()
    state = tuple(params) + (ckrandom.rng_state,)
    f, written, parent = pure(fn, state, args, dyn_idx, kwargs)
    out, values = jax.checkpoint(f, policy=_policy(policy))([p.value for p in state],
                                                             [_to_values(args[i]) for i in dyn_idx])
    finish(parent, written, values)
    return out


def recompute(block, *args, policy=None, use_reentrant=True, output_recompute=False, early_stop=True,
              context_fn=None, **kwargs):
    """``block(*args, **kwargs)`` with its activations recomputed in the backward pass, MindSpore's
    ``ms.recompute``. ``block`` is a Cell or a function; ``policy`` (a cellkit addition) is a name
    from :data:`POLICIES` or a member of ``jax.checkpoint_policies``; MindSpore's other options are
    accepted and ignored."""
    if not callable(block):
        raise TypeError(f"recompute: block must be a Cell or a function, got {type(block).__name__}")
    return checkpointed(block, block if isinstance(block, Cell) else None, args, kwargs, policy)
