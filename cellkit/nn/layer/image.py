"""Resampling layers: ``Upsample``, ``PixelShuffle``, ``PixelUnshuffle`` and ``Unfold`` (image patches).

>>> import cellkit as ms
>>> from cellkit import nn
>>> nn.Upsample(size=(4,), mode='linear', align_corners=True)(ms.Tensor([[[0., 3.]]]))
Array([[[0., 1., 2., 3.]]], dtype=float32)
>>> nn.PixelShuffle(2)(ms.ops.ones((1, 4, 2, 2))).shape
(1, 1, 4, 4)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...cell import Cell
from ...ops.function._utils import _v
from ...ops.function.sampling_func import interpolate, pixel_shuffle, pixel_unshuffle
from .._checks import is_int, positive_int

__all__ = ["Upsample", "PixelShuffle", "PixelUnshuffle", "Unfold"]


class Upsample(Cell):
    """``ops.interpolate`` as a layer (MindSpore 2.10's ``nn.Upsample``), same arguments and defaults.

    Defaults (MindSpore 2.10's): ``size=None``, ``scale_factor=None``, ``mode='nearest'``,
    ``align_corners=None``, ``recompute_scale_factor=None``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Upsample(scale_factor=2.0, mode='area')(ms.ops.ones((1, 1, 2, 2))).shape
    (1, 1, 4, 4)
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size = size
        self.scale_factor = scale_factor
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def construct(self, x):
        return interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                           self.recompute_scale_factor)


class PixelShuffle(Cell):
    """(*, C r², H, W) -> (*, C, H r, W r) (MindSpore 2.10's ``nn.PixelShuffle``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.PixelShuffle(2)(ms.ops.ones((1, 8, 3, 3))).shape
    (1, 2, 6, 6)
    """

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = positive_int(upscale_factor, "upscale_factor", self.cls_name)

    def construct(self, input):  # noqa: A002
        return pixel_shuffle(input, self.upscale_factor)


class PixelUnshuffle(Cell):
    """(*, C, H r, W r) -> (*, C r², H, W) (MindSpore 2.10's ``nn.PixelUnshuffle``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.PixelUnshuffle(2)(ms.ops.ones((1, 2, 6, 6))).shape
    (1, 8, 3, 3)
    """

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = positive_int(downscale_factor, "downscale_factor", self.cls_name)

    def construct(self, input):  # noqa: A002
        return pixel_unshuffle(input, self.downscale_factor)


def _nhwc_arg(value, arg, what):
    if not isinstance(value, (tuple, list)) or len(value) != 4 or value[0] != 1 or value[3] != 1:
        raise ValueError(f"For '{what}' the format of '{arg}s' must be [1, {arg}_row, {arg}_col, 1], "
                         f"but got {value}.")
    if not (is_int(value[1]) and is_int(value[2])) or value[1] < 1 or value[2] < 1:
        raise ValueError(f"For '{what}' the {arg}_row and {arg}_col in '{arg}s' must be an positive integer "
                         f"number, but got {arg}_row is {value[1]}, {arg}_col is {value[2]}")
    return int(value[1]), int(value[2])


class Unfold(Cell):
    """Image patches (MindSpore 2.10's ``nn.Unfold``, TensorFlow's ``extract_image_patches``).

    Args:
        ksizes, strides, rates: ``[1, row, col, 1]`` each.
        padding (str): ``'valid'`` (default) or ``'same'``.

    Input (N, C, H, W); output (N, kh * kw * C, out_h, out_w), the channel
    axis ordered (row, col, channel) as TensorFlow orders a patch.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Unfold([1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1])(ms.ops.ones((1, 3, 4, 4))).shape
    (1, 12, 3, 3)
    """

    def __init__(self, ksizes, strides, rates, padding="valid"):
        super().__init__()
        name = self.cls_name
        self.ksizes = _nhwc_arg(ksizes, "ksize", name)
        self.strides = _nhwc_arg(strides, "stride", name)
        self.rates = _nhwc_arg(rates, "rate", name)
        if not isinstance(padding, str) or padding.lower() not in ("valid", "same"):
            raise ValueError(f"For '{name}', 'padding' must be 'valid' or 'same', but got {padding!r}.")
        self.padding = padding.lower()

    def construct(self, input_x):
        x = jnp.asarray(_v(input_x))
        if x.ndim != 4:
            raise ValueError(f"For '{self.cls_name}', the input must be 4-D (N, C, H, W), but got {x.shape}.")
        return _extract_patches(x, ksizes=self.ksizes, strides=self.strides, rates=self.rates,
                                padding=self.padding.upper())


def _extract_patches(x, *, ksizes, strides, rates, padding):
    patches = jax.lax.conv_general_dilated_patches(x, ksizes, strides, padding, rhs_dilation=rates,
                                                   dimension_numbers=("NCHW", "OIHW", "NCHW"),
                                                   precision=jax.lax.Precision.HIGHEST)
    n, _, oh, ow = patches.shape
    c = x.shape[1]
    # (N, C * kh * kw, ...) channel-major -> (N, kh * kw * C, ...) as TensorFlow orders a patch
    patches = patches.reshape(n, c, ksizes[0] * ksizes[1], oh, ow).swapaxes(1, 2)
    return patches.reshape(n, -1, oh, ow)
