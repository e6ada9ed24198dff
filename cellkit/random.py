"""The global random stream: a PRNG key held as state, like a Parameter.

``set_seed(s)`` resets the key; every random op and initializer splits it and
writes the new key back. Because the key is a Parameter, ``cellkit.jit``
treats it like any captured Parameter: it enters the compiled function as an
input and the split key is written back, so a jitted Dropout draws a fresh mask
on each call and the same sequence after the same ``set_seed``.

>>> import cellkit as ms
>>> ms.set_seed(0)
>>> a = ms.ops.rand(2)
>>> ms.set_seed(0)
>>> bool((a == ms.ops.rand(2)).all())
True
"""

from __future__ import annotations

import random as _pyrandom
import secrets

import jax
import numpy as np

from .parameter import Parameter

__all__ = ["set_seed", "get_seed", "next_key", "rng_state"]

_seed = [None]


class _SeedKey:
    """Lazily made key (creating a key at import would start JAX's backend)."""

    __cellkit_lazy__ = True
    shape = ()

    @property
    def dtype(self):
        return jax.random.key(0).dtype

    def init_data(self):
        seed = _seed[0] if _seed[0] is not None else secrets.randbits(32)
        return jax.random.key(seed)


rng_state = Parameter(_SeedKey(), name="cellkit.rng_state", requires_grad=False)


def set_seed(seed: int) -> None:
    """Seed cellkit's random stream, and NumPy's and Python's global generators (as MindSpore does).

    >>> import cellkit as ms
    >>> ms.set_seed(1)
    >>> ms.get_seed()
    1
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"set_seed: seed must be an int, got {type(seed).__name__} {seed!r}")
    if seed < 0:
        raise ValueError(f"set_seed: seed must be a non-negative int, got {seed!r}")
    seed = int(seed)
    _seed[0] = seed
    np.random.seed(seed % 2**32)
    _pyrandom.seed(seed)
    rng_state._write(jax.random.key(seed))


def get_seed():
    """The last seed given to ``set_seed`` (None if it was never called)."""
    return _seed[0]


def next_key(num: int | None = None):
    """Split the stream: return one fresh key (or ``num`` of them) and advance it.

    >>> import cellkit as ms
    >>> ms.set_seed(3)
    >>> ms.random.next_key().shape, ms.random.next_key(4).shape
    ((), (4,))
    """
    keys = jax.random.split(rng_state.value, 2 if num is None else num + 1)
    rng_state._write(keys[0])
    return keys[1] if num is None else keys[1:]
