"""Discrete Fourier transforms (MindSpore's ``ops.fft`` family) over ``jax.numpy.fft``.

Every transform has MindSpore's signature — ``(input, n=None, dim=-1, norm=None)`` for the
one-dimensional ones, ``(input, s=None, dim=(-2, -1), norm=None)`` for the ``*2`` ones and
``(input, s=None, dim=None, norm=None)`` for the ``*n`` ones — and its dtype rule: float64
and complex128 inputs stay 64-bit, every other input (integers, float16, float32) is
computed as float32/complex64. ``norm`` is ``"backward"`` (the default), ``"forward"`` or
``"ortho"``.

>>> import cellkit as ms
>>> ms.ops.fft(ms.Tensor([1., 0., 0., 0.]))
Array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)
>>> ms.ops.irfft(ms.ops.rfft(ms.Tensor([1., 2., 3., 4.])))
Array([1., 2., 3., 4.], dtype=float32)
>>> ms.ops.fftshift(ms.Tensor([0, 1, 2, 3, 4], ms.int32))
Array([3, 4, 0, 1, 2], dtype=int32)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ._utils import _v, exporter

__all__ = []
_public = exporter(__all__)

_NORMS = (None, "backward", "forward", "ortho")
_DUAL = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _input(name, x):
    x = _v(x)
    if not isinstance(x, (jax.Array, np.ndarray)):
        raise TypeError(f"ops.{name}: input must be a Tensor, got {type(x).__name__}")
    x = jnp.asarray(x)
    if x.dtype in (jnp.float64, jnp.complex128, jnp.complex64):
        return x
    return x.astype(jnp.float32)


def _norm(name, norm):
    if norm not in _NORMS:
        raise ValueError(f"ops.{name}: norm must be 'backward', 'forward' or 'ortho', got {norm!r}")
    return norm


def _dims(name, x, dim):
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    for d in dims:
        if not isinstance(d, int) or not -x.ndim <= d < x.ndim:
            raise ValueError(f"ops.{name}: dim must be in [{-x.ndim}, {x.ndim}), got {dim!r}")
    if len({d % x.ndim for d in dims}) != len(dims):
        raise ValueError(f"ops.{name}: dim must not repeat an axis, got {dim!r}")
    return dims


def _sizes(name, s, dims, what="s"):
    if s is None:
        return None
    s = (s,) if isinstance(s, int) else tuple(s)
    if any(not isinstance(v, int) or v <= 0 for v in s):
        raise ValueError(f"ops.{name}: the argument[{what}] must be greater than 0, got {s!r}")
    if dims is not None and len(s) != len(dims):
        raise ValueError(f"ops.{name}: {what} and dim must have the same length, got {s!r} and {dims!r}")
    return s


def _rfft(x, n=None, axis=-1, norm=None):
    if jnp.iscomplexobj(x):  # MindSpore: the non-negative half of the complex transform
        out = jnp.fft.fft(x, n=n, axis=axis, norm=norm)
        return jax.lax.slice_in_dim(out, 0, out.shape[axis] // 2 + 1, axis=axis)
    return jnp.fft.rfft(x, n=n, axis=axis, norm=norm)


def _rfftn(x, s=None, axes=None, norm=None):
    if jnp.iscomplexobj(x):
        out = jnp.fft.fftn(x, s=s, axes=axes, norm=norm)
        last = (axes[-1] if axes is not None else -1)
        return jax.lax.slice_in_dim(out, 0, out.shape[last] // 2 + 1, axis=last)
    return jnp.fft.rfftn(x, s=s, axes=axes, norm=norm)


def _hfftn(x, s=None, axes=None, norm=None):
    return jnp.fft.irfftn(jnp.conj(x), s=s, axes=axes, norm=_DUAL[norm])


def _ihfftn(x, s=None, axes=None, norm=None):
    return jnp.conj(jnp.fft.rfftn(x, s=s, axes=axes, norm=_DUAL[norm]))


def _make_1d(name, jfn, doc):
    def op(input, n=None, dim=-1, norm=None):  # noqa: A002
        x = _input(name, input)
        (d,) = _dims(name, x, dim)
        size = _sizes(name, n, (d,), "n")
        return jfn(x, n=None if size is None else size[0], axis=d, norm=_norm(name, norm))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"{doc} along ``dim`` (``n`` points: cropped or zero-padded)."
    return op


def _make_nd(name, jfn, doc, default_dim):
    def op(input, s=None, dim=default_dim, norm=None):  # noqa: A002
        x = _input(name, input)
        dims = None if dim is None else _dims(name, x, dim)
        size = _sizes(name, s, dims)
        if dims is None and size is not None:
            dims = tuple(range(x.ndim - len(size), x.ndim))
        return jfn(x, s=size, axes=dims, norm=_norm(name, norm))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"{doc} over the axes ``dim`` (``s`` points per axis: cropped or zero-padded)."
    return op


_ONE_D = {
    "fft": (jnp.fft.fft, "The discrete Fourier transform"),
    "ifft": (jnp.fft.ifft, "The inverse discrete Fourier transform"),
    "rfft": (_rfft, "The Fourier transform of a real input (the non-negative frequencies)"),
    "irfft": (jnp.fft.irfft, "The inverse of ``rfft``: a real signal of ``n`` points (default ``2 (m - 1)``)"),
    "hfft": (jnp.fft.hfft, "The Fourier transform of a Hermitian-symmetric signal given by its first half (real)"),
    "ihfft": (jnp.fft.ihfft, "The inverse of ``hfft``: the first half of a Hermitian spectrum of a real input"),
}
_N_D = {
    "fft": (jnp.fft.fftn, "The discrete Fourier transform"),
    "ifft": (jnp.fft.ifftn, "The inverse discrete Fourier transform"),
    "rfft": (_rfftn, "The Fourier transform of a real input (the last axis halved)"),
    "irfft": (jnp.fft.irfftn, "The inverse of ``rfftn``: a real signal"),
    "hfft": (_hfftn, "The Fourier transform of a Hermitian-symmetric signal (real output)"),
    "ihfft": (_ihfftn, "The inverse of ``hfftn``"),
}

for _name, (_fn, _doc) in _ONE_D.items():
    globals()[_name] = _public(_make_1d(_name, _fn, _doc))
for _name, (_fn, _doc) in _N_D.items():
    globals()[_name + "2"] = _public(_make_nd(_name + "2", _fn, _doc, (-2, -1)))
    globals()[_name + "n"] = _public(_make_nd(_name + "n", _fn, _doc, None))


def _shift(name, jfn):
    def op(input, dim=None):  # noqa: A002
        x = _v(input)
        if not isinstance(x, (jax.Array, np.ndarray)):
            raise TypeError(f"ops.{name}: input must be a Tensor, got {type(x).__name__}")
        x = jnp.asarray(x)
        dims = None if dim is None else _dims(name, x, dim) if x.ndim else ()
        return jfn(x, axes=dims)
    op.__name__ = op.__qualname__ = name
    return op


fftshift = _public(_shift("fftshift", jnp.fft.fftshift))
fftshift.__doc__ = "The zero frequency moved to the centre of the axes ``dim`` (all by default); the dtype is kept."
ifftshift = _public(_shift("ifftshift", jnp.fft.ifftshift))
ifftshift.__doc__ = "The inverse of ``fftshift``."


def _freq(name, jfn):
    def op(n, d=1.0, dtype=None):
        if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
            raise ValueError(f"ops.{name}: n must be a positive int, got {n!r}")
        if not isinstance(d, (int, float)) or isinstance(d, bool):
            raise TypeError(f"ops.{name}: d must be a number, got {type(d).__name__}")
        return jfn(n, d).astype(jnp.float32 if dtype is None else dtype)
    op.__name__ = op.__qualname__ = name
    return op


fftfreq = _public(_freq("fftfreq", jnp.fft.fftfreq))
fftfreq.__doc__ = "The sample frequencies of an ``n``-point ``fft`` with spacing ``d`` (float32 by default)."
rfftfreq = _public(_freq("rfftfreq", jnp.fft.rfftfreq))
rfftfreq.__doc__ = "The sample frequencies of an ``n``-point ``rfft`` with spacing ``d`` (float32 by default)."


def fft_with_size(x, *, signal_ndim, inverse, real, norm, onesided, signal_sizes):
    """MindSpore's ``FFTWithSize`` Primitive: the transform over the last ``signal_ndim`` axes."""
    x = _input("FFTWithSize", x)
    if not 1 <= signal_ndim <= min(3, x.ndim):
        raise ValueError(f"FFTWithSize: signal_ndim must be in [1, {min(3, x.ndim)}], got {signal_ndim}")
    axes = tuple(range(x.ndim - signal_ndim, x.ndim))
    norm = _norm("FFTWithSize", norm)
    if not real:
        return (jnp.fft.ifftn if inverse else jnp.fft.fftn)(x, axes=axes, norm=norm)
    if not inverse:
        return (jnp.fft.rfftn if onesided else jnp.fft.fftn)(x, axes=axes, norm=norm)
    if not onesided:
        return jnp.real(jnp.fft.ifftn(x, axes=axes, norm=norm))
    s = tuple(signal_sizes) if signal_sizes else None
    if s is not None and len(s) != signal_ndim:
        raise ValueError(f"FFTWithSize: signal_sizes must be empty or have signal_ndim={signal_ndim} sizes, got {s}")
    return jnp.fft.irfftn(x, s=s, axes=axes, norm=norm)
