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


_PAD_MODES = {"CONSTANT": "constant", "REFLECT": "reflect", "SYMMETRIC": "symmetric"}


@_public
def stft(x, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="REFLECT",
         normalized=False, onesided=None, return_complex=None):
    """The short-time Fourier transform of a signal (L,) or a batch (B, L): (..., freq, frames).

    Frames of ``n_fft`` points every ``hop_length`` (``n_fft // 4``), times ``window`` (ones of
    ``win_length``, centred in ``n_fft``); ``center`` pads ``n_fft // 2`` on both sides with
    ``pad_mode`` (``"CONSTANT"``, ``"REFLECT"``, ``"SYMMETRIC"``). ``onesided`` keeps the
    ``n_fft // 2 + 1`` non-negative frequencies (the default for real input and window);
    ``return_complex=False`` gives the real and imaginary parts on a last axis of 2.

    >>> import cellkit as ms
    >>> ms.ops.stft(ms.ops.ones((2, 16)), 8, return_complex=True).shape
    (2, 5, 9)
    """
    sig = jnp.asarray(_v(x))
    if sig.ndim not in (1, 2):
        raise ValueError(f"Expected a 1-D tensor or a 2-D tensor, but got {sig.ndim}")
    if not isinstance(n_fft, int) or n_fft <= 0:
        raise ValueError(f"For 'stft', n_fft must be a positive int, got {n_fft!r}")
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if not 0 < win_length <= n_fft:
        raise ValueError(f"For 'stft', the win_length must be in (0,{n_fft}], but got {win_length}.")
    if not isinstance(hop, int) or hop <= 0:
        raise ValueError(f"For 'stft', hop_length must be a positive int, got {hop!r}")
    win = jnp.ones((win_length,), jnp.float32) if window is None else jnp.asarray(_v(window))
    if win.shape != (win_length,):
        raise ValueError(f"For 'stft', window must have win_length={win_length} points, got {tuple(win.shape)}")
    is_complex = jnp.iscomplexobj(sig) or jnp.iscomplexobj(win)
    onesided = not is_complex if onesided is None else onesided
    return_complex = is_complex if return_complex is None else return_complex
    if center:
        if pad_mode not in _PAD_MODES:
            raise ValueError(f"For 'Pad', the 'mode' must be str and must be in '{list(_PAD_MODES)}', "
                             f"but got '{pad_mode}'.")
        pad = n_fft // 2
        sig = jnp.pad(sig, [(0, 0)] * (sig.ndim - 1) + [(pad, pad)], mode=_PAD_MODES[pad_mode])
    if sig.shape[-1] < n_fft:
        raise ValueError(f"For 'stft', the signal ({sig.shape[-1]} points after padding) is shorter than n_fft={n_fft}")
    left = (n_fft - win_length) // 2
    win = jnp.pad(win, (left, n_fft - win_length - left))
    n_frames = 1 + (sig.shape[-1] - n_fft) // hop
    frames = sig[..., jnp.arange(n_frames)[:, None] * hop + jnp.arange(n_fft)[None, :]] * win
    if not jnp.iscomplexobj(frames) and frames.dtype != jnp.float64:
        frames = frames.astype(jnp.float32)
    spec = jnp.fft.fft(frames, axis=-1)
    if onesided:
        spec = spec[..., :n_fft // 2 + 1]
    if normalized:
        spec = spec * (n_fft ** -0.5)
    spec = jnp.swapaxes(spec, -1, -2)
    return spec if return_complex else jnp.stack([spec.real, spec.imag], axis=-1)
