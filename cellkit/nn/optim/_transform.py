"""``elementwise``: an optax transformation from a per-Parameter update rule (for MindSpore's kernels optax lacks).

``elementwise(fields, rule)`` keeps, for every Parameter, one state array per
entry of ``fields`` (``{name: init(param) -> array}``) and a step ``count``;
``rule(g, w, t, **slots)`` gets the gradient, the weight, the step ``t``
(float32, from 1) and the current slots and returns ``(new weight, {name: new
slot})``. The transformation's update is ``new weight - w``. It works under
``optax.partition`` (parameter groups), whose masked leaves it skips.

>>> import jax.numpy as jnp
>>> from cellkit.nn.optim._transform import elementwise
>>> tx = elementwise({"acc": jnp.zeros_like}, lambda g, w, t, acc: (w - g / t, {"acc": acc + g}))
>>> params = (jnp.array([1.0, 2.0], jnp.float32),)
>>> state = tx.init(params)
>>> updates, state = tx.update((jnp.array([1.0, 1.0], jnp.float32),), state, params)
>>> updates[0], state.acc[0], state.count
(Array([-1., -1.], dtype=float32), Array([1., 1.], dtype=float32), Array(1, dtype=int32))
"""

from __future__ import annotations

import collections

import jax
import jax.numpy as jnp

from ...startup import lazy_module

optax = lazy_module("optax")

__all__ = ["elementwise"]

_STATES = {}


def _state_class(fields):
    key = tuple(fields)
    if key not in _STATES:
        _STATES[key] = collections.namedtuple("ElementwiseState", ("count",) + key)
    return _STATES[key]


def elementwise(fields, rule) -> optax.GradientTransformation:
    """See the module docstring."""
    names = tuple(fields)
    State = _state_class(names)

    def init_fn(params):
        slots = [jax.tree.map(lambda p, f=fields[n]: jnp.asarray(f(p)), params) for n in names]
        return State(jnp.zeros([], jnp.int32), *slots)

    def update_fn(updates, state, params=None):
        if params is None:
            raise ValueError("this optimizer's update needs the parameters")
        count = optax.safe_increment(state.count)
        t = count.astype(jnp.float32)
        slots = [getattr(state, n) for n in names]

        def one(g, w, *current):
            new_w, new_slots = rule(g, w, t, **dict(zip(names, current)))
            return (new_w - w).astype(w.dtype), tuple(new_slots[n].astype(c.dtype) for n, c in zip(names, current))

        outs = jax.tree.map(one, updates, params, *slots)
        deltas = jax.tree.map(lambda _, o: o[0], updates, outs)
        new_slots = [jax.tree.map(lambda _, o, k=k: o[1][k], updates, outs) for k in range(len(names))]
        return deltas, State(count, *new_slots)

    return optax.GradientTransformation(init_fn, update_fn)
