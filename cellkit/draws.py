"""jax.random's standard draws of any size, bit for bit, with at most one compiled executable per distribution.

``jax.random.normal(key, shape)`` compiles one executable per shape: building a
model with a hundred weight shapes compiles a hundred random programs (each
threefry hash takes about 50 ms to compile, the inverse error function half
that). With JAX's partitionable threefry (the default), element ``i`` of a draw
depends only on the key and ``i``, so :func:`standard` computes a draw of any
size in chunks of ``CHUNK`` elements:

- ``uniform``: the random bits with NumPy (:func:`cellkit.host_keys.threefry2x32`:
  32-bit integer arithmetic, which NumPy computes exactly as XLA does), and the
  floats in [0, 1) they make (shifts, a bit cast and a subtraction of 1, also
  exact), so it compiles nothing; a draw of :data:`HOST_UNIFORM` elements or more
  (a large layer's weights) is made as the others below, with the same bits;
- ``normal`` and ``truncated_normal``: one executable per (distribution, dtype)
  makes a chunk from the key and the chunk's first index (JAX's threefry
  primitive, the same uniform floats, XLA's own inverse error function), so the
  bits are ``jax.random``'s; the hash runs there too, fused, about three times
  faster than NumPy's (a ResNet-18's 11 million weights: 30-60 ms less). A later
  process reads the executable back whole, without tracing or lowering it
  (:mod:`cellkit.stored_executables`).

The distribution's own shift and scale are applied by the caller, on the host.

Supported: threefry keys in partitionable mode, float32 and float64; anything
else returns None and the caller draws with ``jax.random`` itself.

>>> import jax, numpy as np
>>> key = jax.random.key(0)
>>> z = standard("normal", key, (3, 5), np.dtype(np.float32))
>>> bool(np.array_equal(z, np.asarray(jax.random.normal(key, (3, 5), np.float32))))
True
"""

from __future__ import annotations

import collections
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from . import tiered_jit
from .host_keys import partitionable_threefry, threefry2x32
from .stored_executables import StoredJit
from .tiered_jit import eager_options_jit

try:   # (jax.extend.random's own name; importing jax.extend loads Pallas, ~13 ms of every import)
    from jax._src.random.threefry2x32 import threefry2x32_p as _THREEFRY
except ImportError:   # another jax
    from jax.extend.random import threefry2x32_p as _THREEFRY

__all__ = ["standard", "CHUNK", "HOST_UNIFORM"]

CHUNK = 1 << 16
# A uniform draw this large or more is made by its executable: NumPy's hash takes about 0.5 ms a chunk,
# the executable a third of that, so its one compilation per process pays from about this size on.
HOST_UNIFORM = 8 * CHUNK
_AHEAD = 4   # chunks dispatched ahead of the one being read (all at once, a large draw's arrays pile up)


def _supported(key, dtype) -> bool:
    return (np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.float64)) and partitionable_threefry(key))


def _bits(k1, k2, start, count, dtype):
    """jax's partitionable random bits for the flat indices ``start .. start + count - 1``, on the host
    (threefry is 32-bit integer arithmetic, which NumPy computes as XLA does)."""
    index = np.arange(start, start + count, dtype=np.uint64)
    b1, b2 = threefry2x32(k1, k2, (index >> np.uint64(32)).astype(np.uint32), index.astype(np.uint32))
    if np.dtype(dtype).itemsize == 8:
        return (b1.astype(np.uint64) << np.uint64(32)) | b2.astype(np.uint64)
    return np.bitwise_xor(b1, b2, out=b1)


def _unit(bits, dtype, out=None):
    """jax.random.uniform's floats in [0, 1) of ``bits`` (exact: shifts, a bit cast, a subtraction of 1),
    written into ``out`` when given."""
    finfo = np.finfo(dtype)
    uint = bits.dtype
    bits >>= uint.type(finfo.bits - finfo.nmant)   # (in place: the bits are this call's own)
    bits |= np.array(1.0, dtype).view(uint)
    return np.subtract(bits.view(dtype), np.array(1.0, dtype), out=out)


def _counters(start):
    """The flat indices ``start .. start + CHUNK - 1`` as jax.random's two uint32 counters (high, low) of
    each 64-bit index, from ``start``'s own (uint32 ``(high, low)``)."""
    low = start[1] + lax.iota(np.uint32, CHUNK)
    return start[0] + (low < start[1]).astype(np.uint32), low   # (a carry where the low word wrapped)


@functools.partial(eager_options_jit, static_argnums=(0,))   # (the same bits as XLA's defaults: tested)
def _chunk_jit(kind, key, start, lower, upper):
    """``jax.random.normal``, ``uniform`` or ``truncated_normal`` (``kind``, in ``lower``'s dtype) of the key's raw data
    ``key`` (uint32 ``(k1, k2)``), at the ``CHUNK`` flat indices from ``start`` (uint32 ``(high, low)``)."""
    dtype = lower.dtype
    b1, b2 = _THREEFRY.bind(key[0], key[1], *_counters(start))
    if dtype.itemsize == 8:
        bits = lax.shift_left(b1.astype(np.uint64), np.uint64(32)) | b2.astype(np.uint64)
    else:
        bits = b1 ^ b2
    finfo, uint = jnp.finfo(dtype), bits.dtype   # (the floats in [0, 1) of _unit)
    bits = lax.shift_right_logical(bits, np.array(finfo.bits - finfo.nmant, uint)) | np.array(1.0, dtype).view(uint)
    unit = lax.bitcast_convert_type(bits, dtype) - np.array(1.0, dtype)
    if kind == "uniform":
        return unit
    sqrt2 = np.array(np.sqrt(2), dtype)
    if kind == "normal":   # jax maps the floats onto [nextafter(-1, 0), 1): times 2 (exact), plus the low end
        lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
        return lax.mul(sqrt2, lax.erf_inv(lax.max(lo, unit * np.array(2.0, dtype) + lo)))
    lower, upper = lower.astype(dtype), upper.astype(dtype)   # truncated normal
    a, b = lax.erf(lower / sqrt2), lax.erf(upper / sqrt2)
    out = sqrt2 * lax.erf_inv(lax.max(a, unit * (b - a) + a))
    return jnp.clip(out, lax.nextafter(lower, jnp.array(np.inf, dtype)),
                    lax.nextafter(upper, jnp.array(-np.inf, dtype)))


# (read back whole from the persistent cache folder in a fresh process, with no trace or lowering: about 25 ms)
_chunk = StoredJit(_chunk_jit, "cellkit.draws.chunk", static_argnums=(0,), sources=(__file__, tiered_jit.__file__))


def standard(kind, key, shape, dtype, lower=-2.0, upper=2.0):
    """A NumPy array: ``jax.random.normal(key, shape, dtype)`` (``kind`` "normal"), ``uniform`` on
    [0, 1) or ``truncated_normal(key, lower, upper, ...)``; None where unsupported."""
    dtype = np.dtype(dtype)
    if not _supported(key, dtype):
        return None
    data = np.asarray(jax.random.key_data(key)).astype(np.uint32).ravel()[:2]
    n = math.prod(shape)
    flat = np.empty(n, dtype)
    if kind == "uniform" and n < HOST_UNIFORM:
        for start in range(0, n, CHUNK):
            count = min(CHUNK, n - start)
            _unit(_bits(data[0], data[1], start, count, dtype), dtype, out=flat[start:start + count])
        return flat.reshape(shape)
    bounds = np.asarray(lower, dtype), np.asarray(upper, dtype)

    def read(start, out):
        count = min(CHUNK, n - start)
        flat[start:start + count] = np.asarray(out)[:count]   # (a last chunk cut short)
    # _AHEAD chunks are asked for before one is read: XLA computes while the next ones are dispatched.
    pending = collections.deque()
    for start in range(0, n, CHUNK):
        pending.append((start, _chunk(kind, data, np.array([start >> 32, start & 0xFFFFFFFF], np.uint32), *bounds)))
        if len(pending) > _AHEAD:
            read(*pending.popleft())
    while pending:
        read(*pending.popleft())
    return flat.reshape(shape)
