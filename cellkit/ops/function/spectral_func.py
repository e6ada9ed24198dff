"""Window functions (MindSpore's ``ops/function/spectral_func.py`` and ``math_func``'s windows):
``hann_window``, ``hamming_window``, ``bartlett_window``, ``blackman_window``, ``kaiser_window``.

A periodic window of length ``L`` is the symmetric window of length ``L + 1`` without its last
point (for spectral analysis); ``periodic=False`` gives the symmetric one. A length of 1 gives
``[1.]``; the result is float32 unless ``dtype`` says otherwise. MindSpore 2.10's
``bartlett_window`` and ``blackman_window`` take the length as a 0-d int Tensor; here every
window takes an int or a 0-d int Tensor.

>>> import cellkit as ms
>>> ms.ops.hann_window(4)
Array([0. , 0.5, 1. , 0.5], dtype=float32)
>>> ms.ops.bartlett_window(ms.Tensor(5, ms.int32), periodic=False)
Array([0. , 0.5, 1. , 0.5, 0. ], dtype=float32)
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np

from ._utils import _v, exporter

__all__ = []
_public = exporter(__all__)


def _length(name, window_length):
    n = _v(window_length)
    if isinstance(n, (jax.Array, np.ndarray)) and n.ndim == 0 and jnp.issubdtype(n.dtype, jnp.integer):
        n = int(n)
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"For '{name}', 'window_length' must be a non-negative integer, but got {type(n)}")
    if n < 0:
        raise ValueError(f"For '{name}', 'window_length' must be a non-negative integer, but got {n}")
    return n


def _window(name, window_length, periodic, dtype, shape):
    """``shape(n, m)``: the symmetric window's values at points ``n`` of ``m`` (``m - 1`` intervals)."""
    length = _length(name, window_length)
    if not isinstance(periodic, bool):
        raise TypeError(f"For '{name}', 'periodic' must be a bool, but got {type(periodic).__name__}")
    dtype = jnp.float32 if dtype is None else dtype
    if length <= 1:
        return jnp.ones((length,), dtype)
    m = length + 1 if periodic else length
    n = jnp.arange(length, dtype=jnp.float32 if jnp.dtype(dtype) != jnp.float64 else jnp.float64)
    return shape(n, m).astype(dtype)


def _cosine(coeffs):
    def shape(n, m):
        return sum(((-1) ** k) * a * jnp.cos(2 * math.pi * k * n / (m - 1)) for k, a in enumerate(coeffs))
    return shape


@_public
def hann_window(window_length, periodic=True, *, dtype=None):
    """The Hann window ``0.5 - 0.5 cos(2 pi n / (N - 1))``."""
    return _window("hann_window", window_length, periodic, dtype, _cosine((0.5, 0.5)))


@_public
def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None):
    """The generalised Hamming window ``alpha - beta cos(2 pi n / (N - 1))``."""
    return _window("hamming_window", window_length, periodic, dtype, _cosine((alpha, beta)))


@_public
def blackman_window(window_length, periodic=True, *, dtype=None):
    """The Blackman window ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``."""
    return _window("blackman_window", window_length, periodic, dtype, _cosine((0.42, 0.5, 0.08)))


@_public
def bartlett_window(window_length, periodic=True, *, dtype=None):
    """The triangular Bartlett window ``1 - |2 n / (N - 1) - 1|``."""
    return _window("bartlett_window", window_length, periodic, dtype,
                   lambda n, m: 1.0 - jnp.abs(2.0 * n / (m - 1) - 1.0))


@_public
def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None):
    """The Kaiser window ``I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta)``."""
    def shape(n, m):
        r = 2.0 * n / (m - 1) - 1.0
        return jss.i0e(beta * jnp.sqrt(jnp.clip(1.0 - r * r, 0.0))) * jnp.exp(
            beta * jnp.sqrt(jnp.clip(1.0 - r * r, 0.0)) - beta) / jss.i0e(jnp.asarray(beta, n.dtype))
    return _window("kaiser_window", window_length, periodic, dtype, shape)
