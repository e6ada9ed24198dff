"""Fourier-transform and window Primitives (MindSpore's ``FFTWithSize``, ``HammingWindow``,
``BartlettWindow``, ``BlackmanWindow``; the windows take the length as a Tensor).

>>> import cellkit as ms
>>> from cellkit.ops import operations as P
>>> P.FFTWithSize(signal_ndim=1, inverse=False, real=True)(ms.Tensor([1., 1., 1., 1.]))
Array([4.+0.j, 0.+0.j, 0.+0.j], dtype=complex64)
"""

from __future__ import annotations

import jax.numpy as jnp

from ..function import spectral_func as S
from ..function._utils import _v
from ..function.fft_func import _NORMS, fft_with_size
from ..primitive import REQUIRED, install_primitives

__all__ = []


def _check(signal_ndim, inverse, real, norm, onesided, signal_sizes):
    if not isinstance(signal_ndim, int) or isinstance(signal_ndim, bool):
        raise TypeError(f"FFTWithSize: signal_ndim must be an int, got {type(signal_ndim).__name__}")
    for label, flag in (("inverse", inverse), ("real", real), ("onesided", onesided)):
        if not isinstance(flag, bool):
            raise TypeError(f"FFTWithSize: {label} must be a bool, got {type(flag).__name__}")
    if norm not in _NORMS[1:]:
        raise ValueError(f"FFTWithSize: norm must be 'backward', 'forward' or 'ortho', got {norm!r}")


def _window(name, fn, rank):
    def call(length, *, periodic, dtype, **kwargs):
        n = jnp.asarray(_v(length))
        if n.ndim != rank:
            raise ValueError(f"For primitive[{name}], the length dim must be equal to {rank}, but got {n.ndim}.")
        return fn(n.reshape(()), periodic, **kwargs, dtype=dtype)
    call.__name__ = fn.__name__
    return call


# Name: (op, constructor arguments with MindSpore's defaults[, check])
PRIMITIVES = {
    "FFTWithSize": (fft_with_size, {"signal_ndim": REQUIRED, "inverse": REQUIRED, "real": REQUIRED,
                                    "norm": "backward", "onesided": True, "signal_sizes": ()}, _check),
    "HammingWindow": (_window("HammingWindow", S.hamming_window, 1),
                      {"periodic": True, "alpha": 0.54, "beta": 0.46, "dtype": jnp.float32}),
    "BartlettWindow": (_window("BartlettWindow", S.bartlett_window, 0), {"periodic": True, "dtype": jnp.float32}),
    "BlackmanWindow": (_window("BlackmanWindow", S.blackman_window, 0), {"periodic": True, "dtype": jnp.float32}),
}
install_primitives(globals(), __all__, PRIMITIVES)
