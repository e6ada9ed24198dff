"""Fourier-transform Primitives (MindSpore's ``FFTWithSize``).

>>> import cellkit as ms
>>> from cellkit.ops import operations as P
>>> P.FFTWithSize(signal_ndim=1, inverse=False, real=True)(ms.Tensor([1., 1., 1., 1.]))
Array([4.+0.j, 0.+0.j, 0.+0.j], dtype=complex64)
"""

from __future__ import annotations

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


# Name: (op, constructor arguments with MindSpore's defaults[, check])
PRIMITIVES = {
    "FFTWithSize": (fft_with_size, {"signal_ndim": REQUIRED, "inverse": REQUIRED, "real": REQUIRED,
                                    "norm": "backward", "onesided": True, "signal_sizes": ()}, _check),
}
install_primitives(globals(), __all__, PRIMITIVES)
