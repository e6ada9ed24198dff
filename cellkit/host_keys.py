"""jax.random's threefry keys made and split on the host, bit for bit, without an XLA compilation.

``jax.random.key(seed)`` and ``jax.random.split(key, n)`` run as small XLA
programs, and an eager program pays for compiling each of them (a split costs
about 50 ms to compile, every process) before its first random number. Threefry
is 32-bit integer arithmetic, which NumPy computes exactly as XLA does, so the
global stream's seeding and splitting (:func:`seed_key`, :func:`split`) run here
with NumPy and give the keys ``jax.random`` gives: with the partitionable
threefry (JAX's default), key ``i`` of ``split(key, n)`` is the threefry hash
of the counter ``i``. :func:`split_data` gives the keys' data, which
:func:`wrap` makes keys of (``jax.random.wrap_key_data``, no compilation).

Anything else (another PRNG implementation, the non-partitionable threefry, a
seed outside ``0 .. 2**32 - 1``, a traced key, a staging or batching trace active: not
:func:`concrete_context`) returns None and the caller uses ``jax.random``.

>>> import jax, numpy as np
>>> key = seed_key(42)
>>> bool(np.array_equal(jax.random.key_data(key), jax.random.key_data(jax.random.key(42))))
True
>>> bool(np.array_equal(split_data(key, 3), jax.random.key_data(jax.random.split(jax.random.key(42), 3))))
True
"""

from __future__ import annotations

import jax
import numpy as np

try:
    from jax._src.core import trace_state_clean
except ImportError:   # another jax: jax.random does it all
    def trace_state_clean():
        return False
try:   # the traces of an eager differentiation (jax.jvp, jax.vjp, linearize): they stage nothing themselves
    from jax._src.core import EvalTrace as _EvalTrace, trace_ctx as _trace_ctx
    from jax._src.interpreters.ad import JVPTrace as _JVPTrace, LinearizeTrace as _LinearizeTrace
    _DIFF_TRACES = (_JVPTrace, _LinearizeTrace)
except ImportError:   # another jax: only outside every trace
    _DIFF_TRACES = ()

__all__ = ["seed_key", "split_data", "wrap", "threefry2x32", "partitionable_threefry", "concrete_context"]

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = np.uint32(0x1BD11BDA)


def threefry2x32(k1, k2, x1, x2):
    """The Threefry-2x32 hash (20 rounds) of the uint32 counters ``x1, x2`` under the key ``(k1, k2)``,
    as jax.random computes it; NumPy uint32 arithmetic wraps as XLA's does. (In place on two
    working arrays: a third less time than fresh arrays per step.)"""
    k1, k2 = np.uint32(k1), np.uint32(k2)
    ks = (k1, k2, k1 ^ k2 ^ _PARITY)
    with np.errstate(over="ignore"):
        shape = np.shape(x1)
        a = np.add(np.ravel(x1).astype(np.uint32), ks[0], dtype=np.uint32)
        b = np.add(np.ravel(x2).astype(np.uint32), ks[1], dtype=np.uint32)
        high = np.empty_like(b)
        for group in range(5):
            for rot in _ROTATIONS[group % 2]:
                np.add(a, b, out=a)
                np.left_shift(b, np.uint32(rot), out=high)        # b = rotl(b, rot) ^ a
                np.right_shift(b, np.uint32(32 - rot), out=b)
                np.bitwise_or(b, high, out=b)
                np.bitwise_xor(b, a, out=b)
            np.add(a, ks[(group + 1) % 3], out=a)
            np.add(b, ks[(group + 2) % 3] + np.uint32(group + 1), out=b)
    return a.reshape(shape), b.reshape(shape)


def concrete_context() -> bool:
    """Whether no JAX trace is active but an eager differentiation's (``jvp``, ``vjp``, ``grad`` of
    concrete values): there, as outside every trace, a computation on concrete arrays gives concrete
    arrays, so the host may make them; inside a staging or batching trace it must be staged."""
    if trace_state_clean():
        return True
    if not _DIFF_TRACES:
        return False
    trace = getattr(_trace_ctx, "trace", None)
    while type(trace) in _DIFF_TRACES:
        trace = getattr(trace, "parent_trace", None)
    return type(trace) is _EvalTrace


def _host_ok() -> bool:
    return (concrete_context() and bool(jax.config.jax_threefry_partitionable)
            and jax.config.jax_default_prng_impl == "threefry2x32")


def partitionable_threefry(key) -> bool:
    """Whether ``key`` is a typed threefry2x32 key and JAX's threefry is partitionable: element ``i``
    of a draw or split then depends only on the key and ``i`` (what this module and
    :mod:`cellkit.draws` compute)."""
    return (bool(jax.config.jax_threefry_partitionable) and jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key)
            and str(jax.random.key_impl(key)) == "threefry2x32")


def wrap(data):
    """Threefry keys holding ``data`` (uint32, last axis 2), on the default device."""
    return jax.random.wrap_key_data(jax.device_put(np.ascontiguousarray(data, np.uint32)), impl="threefry2x32")


def seed_key(seed):
    """``jax.random.key(seed)``, made without a compilation; None where the host cannot make it."""
    if not _host_ok() or not 0 <= int(seed) < 2 ** 32:
        return None
    return wrap(np.array([0, int(seed)], np.uint32))


def split_data(key, num):
    """``jax.random.key_data(jax.random.split(key, num))`` as a NumPy array, for a concrete threefry
    key of shape (); None where unsupported."""
    if (isinstance(key, jax.core.Tracer) or getattr(key, "shape", None) != () or not concrete_context()
            or not partitionable_threefry(key)):
        return None
    k1, k2 = np.asarray(jax.random.key_data(key)).astype(np.uint32)
    b1, b2 = threefry2x32(k1, k2, np.zeros(num, np.uint32), np.arange(num, dtype=np.uint32))
    return np.stack([b1, b2], axis=1)
