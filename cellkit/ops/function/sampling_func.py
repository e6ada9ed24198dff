"""Padding, resizing and pixel rearrangement (MindSpore's ``pad``, ``interpolate``/``upsample``,
``pixel_shuffle``, ``pixel_unshuffle``, and the TF-style resizes behind its Primitives).

Resizing is separable: along each spatial axis the output is a fixed
(out, in) interpolation matrix applied to the input (linear, area) or a
gather (nearest), built from the static shapes, so it is exact, jit-friendly
and differentiable. Coordinates follow the MindSpore kernel each mode uses:

* ``nearest`` (3-D/4-D input): ``floor(dst * in / out)`` (``ResizeNearestNeighborV2``);
  5-D: ``floor(dst * scale)``, scale ``1 / scale_factor`` when given;
* ``nearest-exact``: ``floor((dst + 0.5) * in / out)``;
* ``linear``/``bilinear``/``trilinear``: half-pixel centres
  ``(dst + 0.5) * scale - 0.5`` clamped at 0, or with ``align_corners=True``
  ``dst * (in - 1) / (out - 1)``;
* ``area``: adaptive average pooling.

>>> import cellkit as ms
>>> from cellkit import ops
>>> x = ms.Tensor([[[1., 2., 3.]]])
>>> ops.interpolate(x, size=(6,), mode='nearest')
Array([[[1., 1., 2., 2., 3., 3.]]], dtype=float32)
>>> ops.pad(x, (1, 2), value=9.)
Array([[[9., 1., 2., 3., 9., 9.]]], dtype=float32)
"""

from __future__ import annotations

import math
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from ._utils import _v, exporter

__all__ = []
_public = exporter(__all__)

_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def torch_pairs(padding, ndim, what="pad"):
    """``(left, right, top, bottom, ...)`` (last axis first) as one ``(lo, hi)`` pair per axis."""
    if isinstance(padding, (list, tuple)) is False and hasattr(padding, "tolist"):
        padding = padding.tolist()
    if not isinstance(padding, (list, tuple)) or not all(isinstance(p, numbers.Integral) for p in padding):
        raise TypeError(f"For '{what}', 'padding' must be a tuple or list of ints, but got {padding!r}.")
    if len(padding) % 2 or len(padding) // 2 > ndim:
        raise ValueError(f"For '{what}', the length of 'padding' must be even and at most 2 * input.ndim "
                         f"({2 * ndim}), but got {len(padding)}.")
    pairs = [(0, 0)] * ndim
    for i in range(len(padding) // 2):
        pairs[ndim - 1 - i] = (int(padding[2 * i]), int(padding[2 * i + 1]))
    return pairs


def pad_pairs(x, pairs, mode="constant", value=0, what="pad"):
    """``x`` padded by one ``(lo, hi)`` pair per axis; negative constant padding crops."""
    if mode == "constant":
        for axis, (lo, hi) in enumerate(pairs):
            if x.shape[axis] + lo + hi <= 0:
                raise ValueError(f"For '{what}', the padded size of axis {axis} must be positive, but "
                                 f"{x.shape[axis]} + {lo} + {hi} <= 0.")
        if all(lo >= 0 and hi >= 0 for lo, hi in pairs):
            return jnp.pad(x, pairs, constant_values=jnp.asarray(value, x.dtype))
        return jax.lax.pad(x, jnp.asarray(value, x.dtype), [(lo, hi, 0) for lo, hi in pairs])
    if any(lo < 0 or hi < 0 for lo, hi in pairs):
        raise ValueError(f"For '{what}', padding must be non-negative in mode '{mode}', but got {pairs}.")
    if mode == "reflect":
        for axis, (lo, hi) in enumerate(pairs):
            if max(lo, hi) >= x.shape[axis] and (lo or hi):
                raise ValueError(f"For '{what}', reflect padding ({lo}, {hi}) must be smaller than the size "
                                 f"{x.shape[axis]} of axis {axis}.")
    return jnp.pad(x, pairs, mode=_PAD_MODES.get(mode, mode))


@_public
def pad(input_x, padding, mode="constant", value=None):
    """Pad ``input_x``: ``padding`` is ``(left, right, top, bottom, front, back)``, last axis first.

    ``mode``: ``'constant'`` (``value``, default 0; negative padding crops),
    ``'reflect'``, ``'replicate'`` or ``'circular'``.

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> ops.pad(ms.Tensor([[1., 2., 3.]]), (2, 1), mode='reflect')
    Array([[3., 2., 1., 2., 3., 2.]], dtype=float32)
    """
    x = jnp.asarray(_v(input_x))
    if mode not in _PAD_MODES:
        raise ValueError(f"For 'pad', 'mode' must be one of {list(_PAD_MODES)}, but got {mode!r}.")
    if value is not None and mode != "constant":
        raise ValueError(f"For 'pad', 'value' is only used with mode 'constant', but mode is {mode!r}.")
    return pad_pairs(x, torch_pairs(padding, x.ndim), mode, 0 if value is None else value)


# --- resizing -----------------------------------------------------------------------------------------

def _source(out_size, in_size, scale, how):
    """Source coordinates of the ``out_size`` output positions along one axis."""
    dst = np.arange(out_size, dtype=np.float64)
    if how == "align_corners":
        return dst * ((in_size - 1) / (out_size - 1) if out_size > 1 else 0.0)
    if how == "half_pixel":
        return np.maximum((dst + 0.5) * scale - 0.5, 0.0)
    return dst * scale                                        # 'asymmetric' (TF's legacy)


def linear_matrix(out_size, in_size, scale=None, how="half_pixel"):
    """The (out, in) matrix of linear interpolation along one axis."""
    scale = in_size / out_size if scale is None else scale
    src = np.clip(_source(out_size, in_size, scale, how), 0, in_size - 1)
    lo = np.floor(src).astype(np.int64)
    hi = np.minimum(lo + 1, in_size - 1)
    frac = src - lo
    m = np.zeros((out_size, in_size))
    np.add.at(m, (np.arange(out_size), lo), 1 - frac)
    np.add.at(m, (np.arange(out_size), hi), frac)
    return m


def nearest_index(out_size, in_size, scale=None, how="asymmetric"):
    """Source indices of nearest-neighbour resizing along one axis."""
    scale = in_size / out_size if scale is None else scale
    dst = np.arange(out_size, dtype=np.float64)
    if how == "align_corners":
        src = np.floor(dst * ((in_size - 1) / (out_size - 1) if out_size > 1 else 0.0) + 0.5)
    elif how == "half_pixel":
        src = np.floor((dst + 0.5) * scale)
    else:
        src = np.floor(dst * np.float32(scale))
    return np.minimum(src, in_size - 1).astype(np.int32)


def area_matrix(out_size, in_size):
    """The (out, in) matrix of adaptive average pooling along one axis."""
    m = np.zeros((out_size, in_size))
    for i in range(out_size):
        start, end = (i * in_size) // out_size, -(-((i + 1) * in_size) // out_size)
        m[i, start:end] = 1.0 / (end - start)
    return m


def apply_axes(x, axes, per_axis):
    """Apply ``per_axis(axis_index, size)`` -> ('matrix', M) or ('index', idx) along each of ``axes``."""
    for i, axis in enumerate(axes):
        kind, op = per_axis(i, x.shape[axis])
        if kind == "index":
            x = jnp.take(x, jnp.asarray(op), axis=axis)
        else:
            m = jnp.asarray(op, dtype=x.dtype if jnp.issubdtype(x.dtype, jnp.floating) else jnp.float32)
            x = jnp.moveaxis(jnp.tensordot(m, x, axes=((1,), (axis,))), 0, axis).astype(x.dtype)
    return x


_INTERP_RANKS = {"nearest": (3, 4, 5), "linear": (3,), "bilinear": (4,), "trilinear": (5,), "area": (3, 4, 5),
                 "nearest-exact": (3, 4)}
_ALIGN_OK = ("linear", "bilinear", "trilinear")
_SCALE_OK = {("nearest", 5), ("area", 3), ("area", 4), ("area", 5), ("trilinear", 5)}


def _spatial(value, n, arg):
    if isinstance(value, list):
        value = tuple(value)
    if isinstance(value, tuple):
        if len(value) != n:
            raise ValueError(f"For 'interpolate', 'input' and '{arg}' must have the same spatial dimensions, "
                             f"but got 'input' is {n}D, '{arg}' is {len(value)}D")
        return value
    return (value,) * n


@_public
def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,  # noqa: A002
                recompute_scale_factor=None):
    """Resize the spatial axes of an (N, C, ...) ``input`` to ``size`` or by ``scale_factor``.

    Modes and ranks as MindSpore 2.10: ``'nearest'`` (3-5-D), ``'linear'``
    (3-D), ``'bilinear'`` (4-D), ``'trilinear'`` (5-D), ``'area'`` (3-5-D),
    ``'nearest-exact'`` (3-4-D). ``scale_factor`` is accepted for
    ``'nearest'`` 5-D, ``'trilinear'`` and ``'area'``, or anywhere with
    ``recompute_scale_factor=True`` (then ``size = floor(in * scale_factor)``).
    ``'bicubic'`` is not provided (see docs/differences.md).

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> ops.interpolate(ms.Tensor([[[0., 2.]]]), size=(4,), mode='linear', align_corners=True)
    Array([[[0.       , 0.6666667, 1.3333334, 2.       ]]], dtype=float32)
    """
    x = jnp.asarray(_v(input))
    if mode == "bicubic":
        raise NotImplementedError("For 'interpolate', mode 'bicubic' is not provided by cellkit; use 'bilinear' "
                                  "or jax.image.resize(..., method='cubic') (different border handling).")
    if not isinstance(mode, str) or mode not in _INTERP_RANKS:
        raise ValueError(f"For 'interpolate', 'mode' must be in '{list(_INTERP_RANKS) + ['bicubic']}', "
                         f"but got {mode}")
    rank, n = x.ndim, x.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("For 'interpolate', 'size' and 'scale_factor' cannot be set simultaneously")
    if size is None and scale_factor is None:
        raise ValueError("For 'interpolate', 'size' and 'scale_factor' cannot be both empty")
    if rank not in _INTERP_RANKS[mode]:
        raise ValueError(f"For 'interpolate', {mode} only support '{list(_INTERP_RANKS[mode])}'D, but got {rank}D")
    if size is not None:
        size = _spatial(size, n, "size")
        if not all(isinstance(s, numbers.Integral) and s > 0 for s in size):
            raise ValueError(f"For 'interpolate', 'size' must be positive ints, but got {size}")
        size = tuple(int(s) for s in size)
    else:
        scale_factor = _spatial(scale_factor, n, "scale_factor")
        if not all(isinstance(s, (int, float)) and s > 0 for s in scale_factor):
            raise ValueError(f"For 'interpolate', 'scale_factor' must be positive numbers, but got {scale_factor}")
    if mode == "area" and size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        if size is not None:
            raise ValueError("For 'interpolate', it is incorrect to set 'recompute_scale_factor' to True after "
                             "specifying an explicit 'size'.")
        size = tuple(int(math.floor(x.shape[i + 2] * s)) for i, s in enumerate(scale_factor))
        scale_factor = None
    elif scale_factor is not None:
        if (mode, rank) not in _SCALE_OK:
            raise ValueError(f"For 'interpolate', 'scale_factor' option cannot currently be set with the mode = "
                             f"{mode} and dim = {rank}D.")
        size = tuple(int(math.floor(x.shape[i + 2] * s)) for i, s in enumerate(scale_factor))
    if align_corners is not None and mode not in _ALIGN_OK:
        raise ValueError(f"For 'interpolate', 'align_corners' option cannot currently be set with the mode = "
                         f"{mode}, and dim = {rank}D")
    how = "align_corners" if align_corners else "half_pixel"
    scales = [None if scale_factor is None else 1.0 / s for s in (scale_factor or (None,) * n)]

    def per_axis(i, in_size):
        out = size[i]
        if mode == "nearest":
            return "index", nearest_index(out, in_size, scales[i] if rank == 5 else None)
        if mode == "nearest-exact":
            return "index", nearest_index(out, in_size, None, "half_pixel")
        if mode == "area":
            return "matrix", area_matrix(out, in_size)
        return "matrix", linear_matrix(out, in_size, scales[i], how)

    return apply_axes(x, range(2, rank), per_axis)


@_public
def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None,  # noqa: A002
             recompute_scale_factor=None):
    """The same as :func:`interpolate` (MindSpore's alias)."""
    return interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor)


def resize_nearest_tf(x, size, align_corners=False, half_pixel_centers=False):
    """TF-style nearest resize of the last two axes (``ResizeNearestNeighbor``)."""
    how = "align_corners" if align_corners else ("half_pixel" if half_pixel_centers else "asymmetric")
    x = jnp.asarray(_v(x))
    size = tuple(int(s) for s in np.asarray(_v(size)).tolist())
    return apply_axes(x, (x.ndim - 2, x.ndim - 1), lambda i, n: ("index", nearest_index(size[i], n, None, how)))


def resize_bilinear_tf(x, size, align_corners=False, half_pixel_centers=False):
    """TF-style bilinear resize of the last two axes (``ResizeBilinearV2``)."""
    how = "align_corners" if align_corners else ("half_pixel" if half_pixel_centers else "asymmetric")
    x = jnp.asarray(_v(x))
    size = tuple(int(s) for s in np.asarray(_v(size)).tolist())
    return apply_axes(x, (x.ndim - 2, x.ndim - 1), lambda i, n: ("matrix", linear_matrix(size[i], n, None, how)))


# --- pixel rearrangement -------------------------------------------------------------------------------

@_public
def pixel_shuffle(input, upscale_factor):  # noqa: A002
    """(*, C * r * r, H, W) -> (*, C, H * r, W * r).

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> ops.pixel_shuffle(ms.ops.ones((1, 8, 2, 3)), 2).shape
    (1, 2, 4, 6)
    """
    x = jnp.asarray(_v(input))
    r = int(upscale_factor)
    if x.ndim < 3 or r < 1 or x.shape[-3] % (r * r):
        raise ValueError(f"For 'pixel_shuffle', the input must be at least 3-D with channels divisible by "
                         f"upscale_factor ** 2 = {r * r}, but got shape {x.shape}.")
    *lead, c, h, w = x.shape
    x = x.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    x = x.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


@_public
def pixel_unshuffle(input, downscale_factor):  # noqa: A002
    """(*, C, H * r, W * r) -> (*, C * r * r, H, W).

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> ops.pixel_unshuffle(ms.ops.ones((1, 2, 4, 6)), 2).shape
    (1, 8, 2, 3)
    """
    x = jnp.asarray(_v(input))
    r = int(downscale_factor)
    if x.ndim < 3 or r < 1 or x.shape[-1] % r or x.shape[-2] % r:
        raise ValueError(f"For 'pixel_unshuffle', the input must be at least 3-D with height and width "
                         f"divisible by downscale_factor = {r}, but got shape {x.shape}.")
    *lead, c, h, w = x.shape
    n = len(lead)
    x = x.reshape(*lead, c, h // r, r, w // r, r)
    x = x.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)
