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

import functools
import random as _pyrandom
import secrets

import jax
import numpy as np

from . import host_keys
from .parameter import Parameter

__all__ = ["set_seed", "get_seed", "next_key", "rng_state", "Generator", "default_generator", "manual_seed",
           "seed", "initial_seed", "get_rng_state", "set_rng_state"]

_seed = [None]
_initial = [None]  # the seed the stream started from (``initial_seed``)


class _SeedKey:
    """Lazily made key (creating a key at import would start JAX's backend)."""

    __cellkit_lazy__ = True
    shape = ()

    @property
    def dtype(self):
        return _key(0).dtype

    def init_data(self):
        if _initial[0] is None:
            _initial[0] = _seed[0] if _seed[0] is not None else secrets.randbits(32)
        return _key(_initial[0])


def _key(seed):
    """``jax.random.key(seed)``, made on the host where it can be (no compilation)."""
    key = host_keys.seed_key(seed)
    return jax.random.key(seed) if key is None else key


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
    _initial[0] = seed
    rng_state._write(_key(seed))


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
    state, keys = _split(rng_state.value, num)
    rng_state._write(state)
    return keys


HOST_SPLITS = 256
_host_splits = {}   # num -> splits made on the host so far


def _split(key, num):
    """(the stream's next state, one key or ``num`` keys). A stream's first :data:`HOST_SPLITS`
    splits of each size are made on the host (no compilation; the same keys), later ones by one
    compiled executable, which is faster per call once a loop is hot."""
    count = 2 if num is None else num + 1
    if _host_splits.get(count, 0) < HOST_SPLITS:
        data = host_keys.split_data(key, count)
        if data is not None:
            _host_splits[count] = _host_splits.get(count, 0) + 1
            return host_keys.wrap(data[0]), host_keys.wrap(data[1] if num is None else data[1:])
    return _split_compiled(key, num)


@functools.partial(jax.jit, static_argnums=1)
def _split_compiled(key, num):
    """One executable, not a split and two slices."""
    keys = jax.random.split(key, 2 if num is None else num + 1)
    return keys[0], keys[1] if num is None else keys[1:]


def _check_seed(seed, where):
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise TypeError(f"{where}: seed must be a non-negative int, got {seed!r}")
    return int(seed)


class Generator:
    """A random stream of its own: MindSpore's ``Generator`` (``manual_seed``, ``seed``,
    ``initial_seed``, ``get_state``, ``set_state``) over a JAX key held in a Parameter.

    ``default_generator`` is cellkit's global stream, the one every random op and
    initializer draws from; its state is what ``get_rng_state``/``set_rng_state`` save and
    restore. The state is the key's data (``jax.random.key_data``), a small uint32 Tensor.

    >>> import cellkit as ms
    >>> g = ms.Generator().manual_seed(5)
    >>> state = g.get_state()
    >>> a = g.next_key()
    >>> _ = g.set_state(state)
    >>> bool((ms.ops.stack([g.next_key()]) == ms.ops.stack([a])).all())
    True
    >>> g.initial_seed()
    5
    """

    def __init__(self, _param=None):
        self._param = _param if _param is not None else Parameter(
            _key(0), name=f"cellkit.generator.{id(self)}", requires_grad=False)
        self._initial = None if _param is not None else 0

    def manual_seed(self, seed) -> "Generator":
        seed = _check_seed(seed, "Generator.manual_seed")
        self._set_initial(seed)
        self._param._write(_key(seed))
        return self

    def seed(self) -> int:
        """Seed with a fresh random seed, and return it."""
        seed = secrets.randbits(32)
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed this stream started from (the last ``manual_seed``)."""
        return initial_seed() if self._param is rng_state else self._initial

    def _set_initial(self, seed):
        if self._param is rng_state:
            _initial[0] = seed
        else:
            self._initial = seed

    def get_state(self):
        """The stream's state (a copy): give it to ``set_state`` to draw the same numbers again."""
        return jax.random.key_data(self._param.value)

    def set_state(self, state) -> "Generator":
        data = jax.numpy.asarray(state.value if isinstance(state, Parameter) else state)
        want = jax.random.key_data(self._param.value)
        if data.shape != want.shape or data.dtype != want.dtype:
            raise ValueError(f"Generator.set_state: state must be a {want.dtype} Tensor of shape {want.shape} "
                             f"(from get_state), got {data.dtype} {data.shape}")
        self._param._write(jax.random.wrap_key_data(data))
        return self

    def next_key(self, num: int | None = None):
        """One fresh key (or ``num``), advancing the stream."""
        state, keys = _split(self._param.value, num)
        self._param._write(state)
        return keys

    def __repr__(self):
        return "Generator(default)" if self._param is rng_state else f"Generator(initial_seed={self._initial})"


default_generator = Generator(rng_state)


def manual_seed(seed) -> None:
    """Seed the default generator (cellkit's global stream); NumPy's and Python's are untouched
    (``set_seed`` seeds those too)."""
    default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator with a fresh random seed, and return it."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator started from."""
    rng_state.value  # noqa: B018 (a lazy key picks its seed when first read)
    return _initial[0]


def get_rng_state():
    """The default generator's state (see ``Generator.get_state``)."""
    return default_generator.get_state()


def set_rng_state(state) -> None:
    """Restore the default generator's state from ``get_rng_state()``."""
    default_generator.set_state(state)
