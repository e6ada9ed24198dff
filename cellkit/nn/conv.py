"""Convolutions in MindSpore's layout: NCHW inputs, weight (out, in / group, *kernel).

``pad_mode`` is 'same' by default (output size ``ceil(in / stride)``, extra
padding at the end, as MindSpore and TensorFlow do), 'valid', or 'pad' with
explicit ``padding``; ``has_bias=False`` by default.

>>> import cellkit as ms
>>> from cellkit import nn
>>> conv = nn.Conv2d(3, 64, 3)
>>> conv.weight.shape, conv(ms.ops.ones((1, 3, 16, 50))).shape
((64, 3, 3, 3), (1, 64, 16, 50))
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import dtype as mstype
from ..cell import Cell
from ..ops.functional import _v
from ._init_util import default_bias_init, default_weight_init, make_param

__all__ = ["Conv1d", "Conv2d"]


def _tuple(value, n, what):
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    if len(value) != n:
        raise ValueError(f"{what} must be an int or a tuple of {n} ints, got {value!r}")
    return value


def _padding(pad_mode, padding, n, what):
    pad_mode = pad_mode.lower()
    if pad_mode == "same":
        return "SAME"
    if pad_mode == "valid":
        return "VALID"
    if pad_mode != "pad":
        raise ValueError(f"{what}: pad_mode must be 'same', 'valid' or 'pad', got {pad_mode!r}")
    if isinstance(padding, int):
        return [(padding, padding)] * n
    padding = tuple(padding)
    if len(padding) == n:
        return [(p, p) for p in padding]
    if len(padding) == 2 * n:
        return [(padding[2 * i], padding[2 * i + 1]) for i in range(n)]
    raise ValueError(f"{what}: padding must be an int or a tuple of {n} or {2 * n} ints, got {padding!r}")


class _Conv(Cell):
    _n = 2
    _dims = ("NCHW", "OIHW", "NCHW")

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0,
                 dilation=1, group=1, has_bias=False, weight_init=None, bias_init=None,
                 data_format="NCHW", dtype=mstype.float32):
        super().__init__()
        n, name = self._n, type(self).__name__
        if in_channels % group or out_channels % group:
            raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels ({out_channels}) "
                             f"must both divide by group ({group})")
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.kernel_size = _tuple(kernel_size, n, f"{name}: kernel_size")
        self.stride = _tuple(stride, n, f"{name}: stride")
        self.dilation = _tuple(dilation, n, f"{name}: dilation")
        self.pad_mode, self.padding = pad_mode, padding
        self._pad = _padding(pad_mode, padding, n, name)
        self.group, self.has_bias, self.format = int(group), bool(has_bias), data_format
        shape = (self.out_channels, self.in_channels // self.group) + self.kernel_size
        self.weight = make_param(default_weight_init() if weight_init is None else weight_init,
                                 shape, dtype, "weight", what=name)
        self.bias = None
        if self.has_bias:
            self.bias = make_param(default_bias_init(shape) if bias_init is None else bias_init,
                                   (self.out_channels,), dtype, "bias", what=name)

    def _check_input(self, x):
        shape = jnp.shape(x)
        if len(shape) != self._n + 2 or shape[1] != self.in_channels:
            raise ValueError(f"{self.cls_name}: expected an input of shape (N, {self.in_channels}, "
                             f"{', '.join('*' * self._n)}) ({self._dims[0]}), got {tuple(shape)}")

    def construct(self, x):
        self._check_input(x)
        y = jax.lax.conv_general_dilated(
            _v(x), self.weight.value, self.stride, self._pad, rhs_dilation=self.dilation,
            dimension_numbers=self._dims, feature_group_count=self.group)
        if self.bias is not None:
            y = y + self.bias.value.reshape((1, -1) + (1,) * self._n)
        return y

    def extend_repr(self):
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
                f"padding={self.padding}, dilation={self.dilation}, group={self.group}, "
                f"has_bias={self.has_bias}, format={self.format}")


class Conv2d(_Conv):
    """2-D convolution over (N, C, H, W)."""


class Conv1d(_Conv):
    """1-D convolution over (N, C, W)."""
    _n = 1
    _dims = ("NCH", "OIH", "NCH")
