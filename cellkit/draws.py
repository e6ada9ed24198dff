"""jax.random's standard draws of any size through one compiled executable per distribution.

``jax.random.normal(key, shape)`` compiles one executable per shape: building a
model with a hundred weight shapes compiles a hundred random programs (each
threefry hash and inverse error function takes a few hundred milliseconds to
compile). With JAX's partitionable threefry (the default), element ``i`` of a
draw depends only on the key and ``i``, so a draw of any size is the
concatenation of fixed-size chunks: :func:`standard` computes chunk ``j`` from
the counters ``j * CHUNK ...`` with one executable per (distribution, dtype),
and gives the same numbers as ``jax.random`` (the distribution's own shift and
scale are applied by the caller, on the host).

Supported: threefry keys in partitionable mode, float32 and float64; anything
else returns None and the caller draws with ``jax.random`` itself.

>>> import jax, numpy as np
>>> key = jax.random.key(0)
>>> z = standard("normal", key, (3, 5), np.dtype(np.float32))
>>> bool(np.array_equal(z, np.asarray(jax.random.normal(key, (3, 5), np.float32))))
True
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .host_keys import partitionable_threefry
from .tiered_jit import eager_options_jit

__all__ = ["standard", "CHUNK"]

CHUNK = 1 << 16


def _threefry():
    try:
        from jax._src.random.threefry2x32 import threefry2x32_p
    except ImportError:
        try:
            from jax._src.prng import threefry2x32_p
        except ImportError:   # another jax: the caller draws with jax.random
            return None
    return threefry2x32_p


def _supported(key, dtype) -> bool:
    return (np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.float64)) and _threefry() is not None
            and partitionable_threefry(key))


def _bits(k1, k2, start, dtype):
    """jax's partitionable random bits for the flat indices ``start .. start + CHUNK - 1`` (``start``:
    its high and low 32 bits, as jax's ``iota_2x32_shape`` counts)."""
    lo = start[1] + lax.iota(np.uint32, CHUNK)
    hi = start[0] + (lo < start[1]).astype(np.uint32)
    b1, b2 = _threefry().bind(k1, k2, hi, lo)
    if np.dtype(dtype).itemsize == 8:
        return (b1.astype(np.uint64) << np.uint64(32)) | b2.astype(np.uint64)
    return b1 ^ b2


def _uniform(bits, dtype, lo, hi):
    """jax.random.uniform's map of bits onto [lo, hi)."""
    finfo = jnp.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    uint = bits.dtype
    float_bits = lax.shift_right_logical(bits, jnp.array(nbits - nmant, uint))
    float_bits = lax.bitwise_or(float_bits, jnp.asarray(np.array(1.0, dtype).view(uint), dtype=uint))
    floats = lax.bitcast_convert_type(float_bits, dtype) - jnp.array(1.0, dtype)
    return lax.max(lo, floats * (hi - lo) + lo)


@functools.partial(eager_options_jit, static_argnums=(0, 1))   # (the same bits as XLA's defaults: tested)
def _chunk(kind, dtype, k1, k2, start, lower, upper):
    bits = _bits(k1, k2, start, dtype)
    sqrt2 = np.array(np.sqrt(2), dtype)
    if kind == "uniform":
        return _uniform(bits, dtype, jnp.array(0.0, dtype), jnp.array(1.0, dtype))
    if kind == "normal":
        lo = jnp.array(np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype))
        return lax.mul(sqrt2, lax.erf_inv(_uniform(bits, dtype, lo, jnp.array(1.0, dtype))))
    lower, upper = lower.astype(dtype), upper.astype(dtype)   # truncated normal
    a, b = lax.erf(lower / sqrt2), lax.erf(upper / sqrt2)
    out = sqrt2 * lax.erf_inv(_uniform(bits, dtype, a, b))
    return jnp.clip(out, lax.nextafter(lower, jnp.array(np.inf, dtype)),
                    lax.nextafter(upper, jnp.array(-np.inf, dtype)))


def standard(kind, key, shape, dtype, lower=-2.0, upper=2.0):
    """A NumPy array: ``jax.random.normal(key, shape, dtype)`` (``kind`` "normal"), ``uniform`` on
    [0, 1) or ``truncated_normal(key, lower, upper, ...)``; None where unsupported."""
    dtype = np.dtype(dtype)
    if not _supported(key, dtype):
        return None
    k1, k2 = np.asarray(jax.random.key_data(key)).astype(np.uint32).ravel()[:2]
    n = math.prod(shape)
    bounds = np.asarray(lower, dtype), np.asarray(upper, dtype)
    parts = []
    for j in range(-(-n // CHUNK)):
        start = j * CHUNK
        origin = np.array([start >> 32, start & 0xFFFFFFFF], np.uint32)
        parts.append(_chunk(kind, dtype, k1, k2, origin, *bounds))
    flat = np.concatenate([np.asarray(p) for p in parts]) if parts else np.zeros(0, dtype)
    return flat[:n].reshape(shape)
