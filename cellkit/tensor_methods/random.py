"""Random methods (``bernoulli``, ``multinomial``): draws split cellkit's key stream (``cellkit.random``).

>>> import cellkit as ms
>>> ms.set_seed(0)
>>> p = ms.Tensor([[0., 1.], [1., 0.]])
>>> p.multinomial(1).tolist(), p.bernoulli().tolist()
([[1], [0]], [[0.0, 1.0], [1.0, 0.0]])
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ..random import next_key
from ._common import arr

# Host-side or stateful methods: eager calls run op by op (see cellkit.eager_jit).
EAGER_JIT = False
__all__ = ["METHODS", "PROPERTIES", "ADAPTERS", "uniform", "normal"]


def _bernoulli(x, p=None, *, generator=None, seed=None):
    prob = x if p is None else arr(p)
    return jax.random.bernoulli(next_key(), prob, x.shape).astype(x.dtype)


def _multinomial(x, num_samples, replacement=True, seed=None, *, generator=None):
    logits = jnp.log(x)
    if replacement:
        draws = jax.random.categorical(next_key(), logits, axis=-1, shape=(num_samples,) + x.shape[:-1])
        return jnp.moveaxis(draws, 0, -1)
    gumbel = jax.random.gumbel(next_key(), x.shape, logits.dtype)
    return jax.lax.top_k(logits + gumbel, num_samples)[1]


def uniform(x, from_=0.0, to=1.0):
    """Values drawn uniformly from [from_, to) in ``x``'s shape and dtype."""
    return jax.random.uniform(next_key(), x.shape, x.dtype, from_, to)


def normal(x, mean=0.0, std=1.0):
    """Values drawn from N(mean, std) in ``x``'s shape and dtype."""
    return mean + std * jax.random.normal(next_key(), x.shape, x.dtype)


METHODS = {
    "bernoulli": _bernoulli,
    "multinomial": _multinomial,
}

PROPERTIES = {}
ADAPTERS = {}
