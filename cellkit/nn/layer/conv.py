"""Convolutions in MindSpore's layout: ``Conv1d``, ``Conv2d``, ``Conv2dTranspose``.

Inputs are NCHW (NCW for ``Conv1d``). Weights are laid out as MindSpore 2.10
stores them, so its checkpoints load unchanged:

* ``Conv2d``: ``(out_channels, in_channels / group, kh, kw)``;
* ``Conv1d``: ``(out_channels, in_channels / group, 1, k)`` — 4-D, because
  MindSpore runs a 1-D convolution as a 2-D one over ``x[:, :, None, :]``;
* ``Conv2dTranspose``: ``(in_channels, out_channels / group, kh, kw)``.

``pad_mode`` is ``'same'`` by default (output size ``ceil(in / stride)``, the
odd extra pixel of padding at the bottom/right, as MindSpore and TensorFlow
do), ``'valid'``, or ``'pad'`` with an explicit ``padding`` (an int, or
``(top, bottom, left, right)``). ``has_bias`` is False by default.

>>> import cellkit as ms
>>> from cellkit import nn
>>> conv = nn.Conv2d(3, 8, 3)
>>> conv.weight.shape
(8, 3, 3, 3)
>>> nn.Conv2d(3, 8, 3, weight_init='ones')(ms.ops.ones((1, 3, 16, 10))).shape
(1, 8, 16, 10)
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ... import dtype as mstype
from ... import ops
from ...cell import Cell
from ...ops.function._utils import _v
from ...ops.function.conv_func import convolve as _convolve
from ...ops.function.conv_func import transpose_pads as _transpose_pads
from .._checks import check_bool, data_format_of, init_repr, is_int, non_negative_int, pad_mode_of, pair, positive_int
from .._init_util import default_bias_init, default_weight_init, make_param

__all__ = ["Conv1d", "Conv2d", "Conv2dTranspose"]

_PAD_MODES = ("same", "valid", "pad")


def _padding4(padding, what):
    """``padding`` as MindSpore keeps it (an int or a 4-tuple), validated."""
    if is_int(padding):
        return non_negative_int(padding, "padding", what)
    if isinstance(padding, (tuple, list)):
        if len(padding) != 4:
            raise ValueError(f"For '{what}', 'padding' must be an int or a tuple of 4 ints "
                             f"(top, bottom, left, right), but got {tuple(padding)!r}.")
        return tuple(non_negative_int(p, "padding item", what) for p in padding)
    raise TypeError(f"For '{what}', the type of 'padding' must be int or tuple(int), "
                    f"but got {type(padding).__name__}.")


def _pads(padding):
    """(top, bottom, left, right) from an int or a 4-tuple."""
    return (padding,) * 4 if is_int(padding) else tuple(padding)


class _Conv(Cell):
    """Shared constructor, checks and repr of the convolution layers."""

    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation,
                 group, has_bias, weight_init, bias_init, data_format="NCHW", dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        self.kernel_size = pair(kernel_size, "kernel_size", name)
        self.stride = pair(stride, "stride", name)
        self.dilation = pair(dilation, "dilation", name)
        self.in_channels = positive_int(in_channels, "in_channels", name)
        self.out_channels = positive_int(out_channels, "out_channels", name)
        self.group = positive_int(group, "group", name)
        if self.in_channels % self.group or self.out_channels % self.group:
            raise ValueError(f"For '{name}', 'in_channels' ({in_channels}) and 'out_channels' "
                             f"({out_channels}) must both be divisible by 'group' ({group}).")
        self.pad_mode = pad_mode
        self._mode = pad_mode_of(pad_mode, _PAD_MODES, name)
        self.padding = _padding4(padding, name)
        if self._mode != "pad" and any(_pads(self.padding)):
            raise ValueError(f"For '{name}', 'padding' must be 0 (or (0, 0, 0, 0)) when 'pad_mode' is "
                             f"'{pad_mode}'; set pad_mode='pad' to pad explicitly, but got "
                             f"padding={self.padding!r}.")
        self.has_bias = check_bool(has_bias, "has_bias", name)
        self.data_format = data_format_of(data_format, ("NCHW", "NHWC"), name)
        ks = self.kernel_size
        if self._transposed:
            shape = (self.in_channels, self.out_channels // self.group) + ks
        elif self.data_format == "NHWC":
            shape = (self.out_channels,) + ks + (self.in_channels // self.group,)
        else:
            shape = (self.out_channels, self.in_channels // self.group) + ks
        if weight_init is None:
            weight_init = default_weight_init()
        self.weight_init = init_repr(weight_init)
        self.weight = make_param(weight_init, shape, dtype, "weight", what=name)
        self.bias_init = init_repr(bias_init)
        self.bias = None
        if self.has_bias:
            if bias_init is None:
                bias_init = default_bias_init(shape)
                self.bias_init = init_repr(bias_init)
            self.bias = make_param(bias_init, (self.out_channels,), dtype, "bias", what=name)

    def _check_input(self, x, ndim=4, layout="NCHW"):
        shape = tuple(jnp.shape(x))
        channel_axis = -1 if self.data_format == "NHWC" else 1
        if len(shape) != ndim or shape[channel_axis] != self.in_channels:
            spatial = ", ".join("*" * (ndim - 2))
            want = (f"(N, {spatial}, {self.in_channels})" if self.data_format == "NHWC"
                    else f"(N, {self.in_channels}, {spatial})")
            raise ValueError(f"{self.cls_name}: expected an input of shape {want} ({layout}), "
                             f"got {shape}")

    def _primitives(self, data_format):
        # MindSpore's Conv1d/Conv2d keep their Primitives as attributes, which subclasses call
        # (e.g. a weight-standardised convolution: ``self.conv2d(x, w)``).
        self.conv2d = ops.Conv2D(out_channel=self.out_channels, kernel_size=self.kernel_size, mode=1,
                                 pad_mode=self.pad_mode, pad=self.padding, stride=self.stride,
                                 dilation=self.dilation, group=self.group, data_format=data_format)
        self.bias_add = ops.BiasAdd(data_format=data_format)

    def _bias_value(self):
        return None if self.bias is None else self.bias.value

    def extend_repr(self):
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
                f"padding={self.padding}, dilation={self.dilation}, group={self.group}, "
                f"has_bias={self.has_bias}, weight_init={self.weight_init}, "
                f"bias_init={self.bias_init}, format={self.data_format}")


def _conv_padding(mode, padding):
    if mode == "same":
        return "SAME"
    if mode == "valid":
        return "VALID"
    t, b, left, r = _pads(padding)
    return ((t, b), (left, r))


class Conv2d(_Conv):
    """2-D convolution over an (N, C, H, W) input (MindSpore 2.10's ``nn.Conv2d``).

    Args:
        in_channels (int): input channels C_in.
        out_channels (int): output channels C_out.
        kernel_size (int or tuple[int, int]): kernel height and width.
        stride (int or tuple[int, int]): default ``1``.
        pad_mode (str): ``'same'`` (default), ``'valid'`` or ``'pad'``.
        padding (int or tuple of 4 ints): ``(top, bottom, left, right)``,
            only with ``pad_mode='pad'``; default ``0``.
        dilation (int or tuple[int, int]): default ``1``.
        group (int): channel groups; default ``1``.
        has_bias (bool): default ``False``.
        weight_init: default ``None``, i.e. ``HeUniform(negative_slope=sqrt(5))``;
            any initializer name, Initializer, number or Tensor.
        bias_init: default ``None``, i.e. ``Uniform(1/sqrt(fan_in))``.
        data_format (str): ``'NCHW'`` (default) or ``'NHWC'`` (weight then
            ``(out, kh, kw, in/group)``).
        dtype: the Parameters' dtype; default ``float32``.

    Parameters: ``weight`` ``(out_channels, in_channels/group, kh, kw)`` and,
    with ``has_bias``, ``bias`` ``(out_channels,)``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> net = nn.Conv2d(1, 1, 2, stride=2, has_bias=True, weight_init='ones', bias_init=0.5)
    >>> net(ms.ops.ones((1, 1, 3, 4)))   # 'same': ceil(in / stride); the odd padding row at the bottom
    Array([[[[4.5, 4.5],
             [2.5, 2.5]]]], dtype=float32)
    >>> nn.Conv2d(1, 2, 3, pad_mode='pad', padding=(1, 1, 0, 0), weight_init='ones')
    Conv2d(input_channels=1, output_channels=2, kernel_size=(3, 3), stride=(1, 1), pad_mode=pad, padding=(1, 1, 0, 0), dilation=(1, 1), group=1, has_bias=False, weight_init=ones, bias_init=None, format=NCHW)
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0,
                 dilation=1, group=1, has_bias=False, weight_init=None, bias_init=None,
                 data_format="NCHW", dtype=mstype.float32):
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation,
                         group, has_bias, weight_init, bias_init, data_format, dtype)
        self._primitives(self.data_format)

    def construct(self, x):
        self._check_input(x, 4, self.data_format)
        dims = ("NHWC", "OHWI", "NHWC") if self.data_format == "NHWC" else ("NCHW", "OIHW", "NCHW")
        return _convolve(_v(x), self.weight.value, self._bias_value(), strides=self.stride,
                         padding=_conv_padding(self._mode, self.padding), dilation=self.dilation,
                         group=self.group, dims=dims)


class Conv1d(_Conv):
    """1-D convolution over an (N, C, L) input (MindSpore 2.10's ``nn.Conv1d``).

    MindSpore runs it as a 2-D convolution over ``x[:, :, None, :]``, so the
    weight is 4-D, ``(out_channels, in_channels/group, 1, kernel_size)``, and
    the repr shows 2-D geometry (``kernel_size=(1, k)``,
    ``padding=(0, 0, p, p)``).

    Args:
        in_channels (int), out_channels (int), kernel_size (int): as for Conv2d,
            but ``kernel_size``, ``stride``, ``padding`` and ``dilation`` must be ints.
        stride (int): default ``1``.
        pad_mode (str): ``'same'`` (default), ``'valid'`` or ``'pad'``.
        padding (int): left and right padding with ``pad_mode='pad'``; default ``0``.
        dilation (int): default ``1``.
        group (int): default ``1``.
        has_bias (bool): default ``False``.
        weight_init: default ``None`` (``HeUniform(sqrt(5))``); a 3-D Tensor
            ``(out, in/group, k)`` is accepted and gets the unit axis added, as
            in MindSpore.
        bias_init: default ``None`` (``Uniform(1/sqrt(fan_in))``).
        dtype: default ``float32``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> conv = nn.Conv1d(2, 4, 3, pad_mode='pad', padding=1, weight_init='ones')
    >>> conv.weight.shape, conv(ms.ops.ones((5, 2, 7))).shape
    ((4, 2, 1, 3), (5, 4, 7))
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0,
                 dilation=1, group=1, has_bias=False, weight_init=None, bias_init=None,
                 dtype=mstype.float32):
        name = self.cls_name
        for arg, value in (("kernel_size", kernel_size), ("stride", stride), ("dilation", dilation)):
            if not is_int(value):
                raise TypeError(f"For '{name}', '{arg}' must be an int, but got {type(value).__name__} {value!r}.")
            positive_int(value, arg, name)
        if not is_int(padding):
            raise TypeError(f"For '{name}', 'padding' must be an int, but got {type(padding).__name__} {padding!r}.")
        non_negative_int(padding, "padding", name)
        if weight_init is not None and not isinstance(weight_init, (str, int, float)) and np.ndim(weight_init) == 3:
            weight_init = jnp.expand_dims(jnp.asarray(_v(weight_init)), 2)
        super().__init__(in_channels, out_channels, (1, kernel_size), (1, stride), pad_mode, padding,
                         (1, dilation), group, has_bias, weight_init, bias_init, "NCHW", dtype)
        self.padding = (0, 0, int(padding), int(padding))
        self._primitives("NCHW")

    def construct(self, x):
        self._check_input(x, 3, "NCW")
        return _convolve(_v(x), self.weight.value, self._bias_value(), strides=self.stride,
                         padding=_conv_padding(self._mode, self.padding), dilation=self.dilation,
                         group=self.group, one_d=True)


class Conv2dTranspose(_Conv):
    """2-D transposed convolution ("deconvolution") over (N, C, H, W) (MindSpore 2.10).

    The weight is ``(in_channels, out_channels/group, kh, kw)``. The output
    height (and likewise width), with ``k_eff = (k - 1) * dilation + 1``:

    * ``'same'`` (default): ``H * stride``;
    * ``'valid'``: ``H * stride + max(k_eff - stride, 0)``;
    * ``'pad'`` with ``(top, bottom, left, right)``:
      ``H * stride - (top + bottom) + k_eff - stride``.

    For ``group == 1`` this equals ``jax.lax.conv_transpose(x, weight, stride,
    padding, rhs_dilation=dilation, dimension_numbers=('NCHW', 'OIHW', 'NCHW'),
    transpose_kernel=True)``; groups split the channels.

    Args:
        in_channels (int), out_channels (int), kernel_size (int or pair).
        stride (int or pair): default ``1``.
        pad_mode (str): ``'same'`` (default), ``'valid'`` or ``'pad'``.
        padding (int or 4-tuple): default ``0``; only with ``pad_mode='pad'``.
        output_padding (int or pair): default ``0``. As in MindSpore it only
            appends that many rows/columns of zeros at the bottom/right, after
            the bias is added; it needs ``pad_mode='pad'`` and must be below
            ``max(stride, dilation)``.
        dilation (int or pair): default ``1``.
        group (int): default ``1``.
        has_bias (bool): default ``False``.
        weight_init: default ``None`` (``HeUniform(sqrt(5))``, with fan_in
            ``(out/group) * kh * kw`` from the transposed layout).
        bias_init: default ``None`` (``Uniform(1/sqrt(fan_in))``).
        dtype: default ``float32``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> net = nn.Conv2dTranspose(3, 8, 4, stride=2, weight_init='ones')
    >>> net.weight.shape, net(ms.ops.ones((1, 3, 16, 10))).shape
    ((3, 8, 4, 4), (1, 8, 32, 20))
    """

    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0,
                 output_padding=0, dilation=1, group=1, has_bias=False, weight_init=None, bias_init=None,
                 dtype=mstype.float32):
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation,
                         group, has_bias, weight_init, bias_init, "NCHW", dtype)
        name = self.cls_name
        if is_int(output_padding):
            op = (output_padding, output_padding)
        elif isinstance(output_padding, tuple) and len(output_padding) == 2 and all(map(is_int, output_padding)):
            op = output_padding
        else:
            raise TypeError(f"For '{name}', 'output_padding' must be an int or a tuple of 2 ints, "
                            f"but got {output_padding!r}.")
        for i, axis in enumerate(("h", "w")):
            limit = max(self.stride[i], self.dilation[i])
            if not 0 <= op[i] < limit:
                raise ValueError(f"For '{name}', output_padding[{i}] must be in range of [0, "
                                 f"max(stride_{axis}, dilation_{axis})) = [0, {limit}), but got {op[i]}.")
        if any(op) and self._mode != "pad":
            raise ValueError(f"For '{name}', when output_padding is not zero, pad_mode must be 'pad', "
                             f"but got pad_mode={pad_mode!r}.")
        self.output_padding = output_padding
        self._output_padding = tuple(int(v) for v in op)

    def construct(self, x):
        self._check_input(x, 4, "NCHW")
        t, b, left, r = _pads(self.padding)
        pads = []
        for i, (lo, hi) in enumerate(((t, b), (left, r))):
            k_eff = (self.kernel_size[i] - 1) * self.dilation[i] + 1
            pads.append(_transpose_pads(self._mode, k_eff, self.stride[i], (lo, hi)))
        return _convolve(_v(x), self.weight.value, self._bias_value(), strides=(1, 1), padding=tuple(pads),
                         dilation=self.dilation, group=self.group, lhs_dilation=self.stride,
                         transposed=True, output_padding=self._output_padding)
