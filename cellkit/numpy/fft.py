"""``mindspore.numpy.fft``: the discrete Fourier transforms at NumPy's signatures.

Each name calls cellkit's ``ops`` transform of that name (``a`` is ``input``, ``axis``/``axes``
are ``dim``), as MindSpore's module calls ``mindspore.ops``: integers and float16 are computed
as float32/complex64, float64 stays 64-bit.

>>> import cellkit as ms, cellkit.numpy as mnp
>>> mnp.fft.fft(ms.Tensor([1., 0., 0., 0.]))
Array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)
>>> mnp.fft.fftfreq(4)
Array([ 0.  ,  0.25, -0.5 , -0.25], dtype=float32)
"""

from __future__ import absolute_import

from .. import ops
from ._registry import install as _install

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftshift", "ifftshift", "fftfreq", "rfftfreq"]


def _op(name):
    def impl(*args):
        return getattr(ops, name)(*args)
    return impl


_ONE = "a, n=None, axis=-1, norm=None"
_TWO = "a, s=None, axes=(-2, -1), norm=None"
_N = "a, s=None, axes=None, norm=None"

_TABLE = {name: (_ONE, _op(name)) for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")}
_TABLE.update({name: (_TWO, _op(name)) for name in ("fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2")})
_TABLE.update({name: (_N, _op(name)) for name in ("fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn")})
_TABLE.update({"fftshift": ("x, axes=None", _op("fftshift")), "ifftshift": ("x, axes=None", _op("ifftshift")),
              "fftfreq": ("n, d=1.0, dtype=None", _op("fftfreq")),
              "rfftfreq": ("n, d=1.0, dtype=None", _op("rfftfreq"))})

_install(_TABLE, globals(), doc="MindSpore's ``mindspore.numpy.fft.{name}({params})`` (``ops.{name}``){note}.")
