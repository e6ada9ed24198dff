"""The 3-D convolutions and the 1-D transposed one: ``Conv3d``, ``Conv3dTranspose``, ``Conv1dTranspose``
(MindSpore 2.10's constructors, defaults, Parameter names and shapes).

* ``Conv3d``: weight ``(out, in / group, kd, kh, kw)``; ``padding`` an int or
  ``(head, tail, top, bottom, left, right)``; input (N, C, D, H, W).
* ``Conv3dTranspose``: weight ``(in, out / group, kd, kh, kw)``, ``output_padding``.
* ``Conv1dTranspose``: weight ``(in, out / group, 1, k)`` (4-D, as MindSpore
  runs it as a 2-D transposed convolution); input (N, C, L).

They share ``ops.function.conv_func.convolve`` with ``Conv1d``/``Conv2d``/
``Conv2dTranspose`` and the functional ``ops.conv*``.

>>> import cellkit as ms
>>> from cellkit import nn
>>> conv = nn.Conv3d(2, 4, 3, stride=2, has_bias=True)
>>> conv.weight.shape, conv(ms.ops.ones((1, 2, 5, 6, 7))).shape
((4, 2, 3, 3, 3), (1, 4, 3, 3, 4))
>>> nn.Conv1dTranspose(2, 4, 3, stride=2)(ms.ops.ones((1, 2, 5))).shape
(1, 4, 10)
"""

from __future__ import annotations

import jax.numpy as jnp

from ... import dtype as mstype
from ...cell import Cell
from ...ops.function._utils import _v
from ...ops.function.conv_func import convolve, transpose_pads
from .._checks import check_bool, init_repr, is_int, non_negative_int, pad_mode_of, positive_int
from .._init_util import default_bias_init, default_weight_init, make_param

__all__ = ["Conv3d", "Conv3dTranspose", "Conv1dTranspose"]


def _ints(value, n, arg, what, positive=True):
    check = positive_int if positive else non_negative_int
    if is_int(value):
        return (check(value, arg, what),) * n
    if isinstance(value, tuple) and len(value) == n:
        return tuple(check(v, f"{arg} item", what) for v in value)
    raise ValueError(f"For '{what}', '{arg}' must be an int or a tuple of {n} ints, but got {value!r}.")


class _ConvNd(Cell):
    """Constructor, checks and repr shared by the layers of this module."""

    _nd = 3
    _transposed = False
    _layout = "NCDHW"

    def __init__(self, in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group,
                 has_bias, weight_init, bias_init, dtype):
        super().__init__()
        name, nd = self.cls_name, self._nd
        self.in_channels = positive_int(in_channels, "in_channels", name)
        self.out_channels = positive_int(out_channels, "out_channels", name)
        self.kernel_size = _ints(kernel_size, nd, "kernel_size", name)
        self.stride = _ints(stride, nd, "stride", name)
        self.dilation = _ints(dilation, nd, "dilation", name)
        self.group = positive_int(group, "group", name)
        if self.in_channels % self.group or self.out_channels % self.group:
            raise ValueError(f"For '{name}', 'in_channels' ({in_channels}) and 'out_channels' ({out_channels}) "
                             f"must both be divisible by 'group' ({group}).")
        self.pad_mode = pad_mode
        self._mode = pad_mode_of(pad_mode, ("same", "valid", "pad"), name)
        pads = _ints(padding, 2 * nd, "padding", name, positive=False) if isinstance(padding, tuple) else \
            (non_negative_int(padding, "padding", name),) * (2 * nd)
        if self._mode != "pad" and any(pads):
            raise ValueError(f"For '{name}', 'padding' must be 0 when 'pad_mode' is '{pad_mode}'; set "
                             f"pad_mode='pad' to pad explicitly, but got padding={padding!r}.")
        self.padding = padding
        self._pads = tuple((pads[2 * i], pads[2 * i + 1]) for i in range(nd))
        self.has_bias = check_bool(has_bias, "has_bias", name)
        ks = self.kernel_size
        shape = ((self.in_channels, self.out_channels // self.group) if self._transposed
                 else (self.out_channels, self.in_channels // self.group)) + ks
        if weight_init is None:
            weight_init = default_weight_init()
        self.weight_init = init_repr(weight_init)
        self.weight = make_param(weight_init, shape, dtype, "weight", what=name)
        self.bias = None
        if self.has_bias:
            if bias_init is None:
                bias_init = default_bias_init(shape)
            self.bias = make_param(bias_init, (self.out_channels,), dtype, "bias", what=name)
        self.bias_init = init_repr(bias_init)

    def _input(self, x, ndim, layout):
        x = jnp.asarray(_v(x))
        if x.ndim != ndim or x.shape[1] != self.in_channels:
            raise ValueError(f"{self.cls_name}: expected an input of shape (N, {self.in_channels}, "
                             f"{', '.join('*' * (ndim - 2))}) ({layout}), got {x.shape}")
        return x

    def _bias(self):
        return None if self.bias is None else self.bias.value

    def _transpose_padding(self):
        return tuple(transpose_pads(self._mode, (k - 1) * d + 1, s, p)
                     for k, d, s, p in zip(self.kernel_size, self.dilation, self.stride, self._pads))

    def extend_repr(self):
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
                f"padding={self.padding}, dilation={self.dilation}, group={self.group}, "
                f"has_bias={self.has_bias}, weight_init={self.weight_init}, bias_init={self.bias_init}, "
                f"format={self._layout}")


def _check_format(data_format, what):
    if data_format != "NCDHW":
        raise ValueError(f"For '{what}', 'data_format' must be 'NCDHW', but got {data_format!r}.")


class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W) (MindSpore 2.10's ``nn.Conv3d``).

    Defaults (MindSpore 2.10's): ``stride=1``, ``pad_mode='same'``, ``padding=0``, ``dilation=1``,
    ``group=1``, ``has_bias=False``, ``weight_init=None``, ``bias_init=None``,
    ``data_format='NCDHW'``, ``dtype=Float32``.

    Args as ``Conv2d``, each geometry argument an int or a 3-tuple, ``padding``
    an int or 6-tuple ``(head, tail, top, bottom, left, right)``;
    ``pad_mode='same'`` by default; ``data_format='NCDHW'`` only.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Conv3d(1, 1, 2, pad_mode='valid', weight_init='ones')(ms.ops.ones((1, 1, 2, 2, 2)))
    Array([[[[[8.]]]]], dtype=float32)
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init=None, bias_init=None, data_format="NCDHW",
                 dtype=mstype.float32):
        _check_format(data_format, "Conv3d")
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group,
                         has_bias, weight_init, bias_init, dtype)

    def construct(self, x):
        x = self._input(x, 5, "NCDHW")
        padding = self._mode.upper() if self._mode != "pad" else self._pads
        return convolve(x, self.weight.value, self._bias(), strides=self.stride, padding=padding,
                        dilation=self.dilation, group=self.group)


class Conv3dTranspose(_ConvNd):
    """3-D transposed convolution (MindSpore 2.10's ``nn.Conv3dTranspose``).

    Defaults (MindSpore 2.10's): ``stride=1``, ``pad_mode='same'``, ``padding=0``, ``dilation=1``,
    ``group=1``, ``output_padding=0``, ``has_bias=False``, ``weight_init=None``, ``bias_init=None``,
    ``data_format='NCDHW'``, ``dtype=Float32``.

    Output depth (likewise height, width), ``k_eff = (k - 1) * dilation + 1``:
    ``'same'``: ``D * stride``; ``'valid'``: ``D * stride + max(k_eff - stride, 0)``;
    ``'pad'``: ``D * stride - (head + tail) + k_eff - stride + output_padding``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> net = nn.Conv3dTranspose(2, 4, 3, stride=2)
    >>> net.weight.shape, net(ms.ops.ones((1, 2, 3, 3, 3))).shape
    ((2, 4, 3, 3, 3), (1, 4, 6, 6, 6))
    """

    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, output_padding=0, has_bias=False, weight_init=None, bias_init=None, data_format="NCDHW",
                 dtype=mstype.float32):
        _check_format(data_format, "Conv3dTranspose")
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group,
                         has_bias, weight_init, bias_init, dtype)
        self.output_padding = _ints(output_padding, 3, "output_padding", self.cls_name, positive=False)
        for i, op in enumerate(self.output_padding):
            limit = max(self.stride[i], self.dilation[i])
            if op >= limit:
                raise ValueError(f"For '{self.cls_name}', output_padding[{i}] must be less than max(stride, "
                                 f"dilation) = {limit}, but got {op}.")

    def construct(self, x):
        x = self._input(x, 5, "NCDHW")
        pads = tuple((lo, hi + op) for (lo, hi), op in zip(self._transpose_padding(), self.output_padding))
        return convolve(x, self.weight.value, self._bias(), strides=(1, 1, 1), padding=pads,
                        dilation=self.dilation, group=self.group, lhs_dilation=self.stride, transposed=True)


class Conv1dTranspose(_ConvNd):
    """1-D transposed convolution over (N, C, L) (MindSpore 2.10's ``nn.Conv1dTranspose``).

    Defaults (MindSpore 2.10's): ``stride=1``, ``pad_mode='same'``, ``padding=0``, ``dilation=1``,
    ``group=1``, ``has_bias=False``, ``weight_init=None``, ``bias_init=None``, ``dtype=Float32``.

    ``kernel_size``, ``stride``, ``padding`` and ``dilation`` are ints; the
    weight is 4-D ``(in, out / group, 1, k)`` and the repr shows 2-D geometry,
    as MindSpore's. Output length as ``Conv2dTranspose``'s width.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Conv1dTranspose(2, 4, 3, pad_mode='pad', padding=1).weight.shape
    (2, 4, 1, 3)
    """

    _nd = 2
    _transposed = True
    _layout = "NCHW"

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init=None, bias_init=None, dtype=mstype.float32):
        name = "Conv1dTranspose"
        for arg, value in (("kernel_size", kernel_size), ("stride", stride), ("padding", padding),
                           ("dilation", dilation)):
            if not is_int(value):
                raise TypeError(f"For '{name}', '{arg}' must be an int, but got {type(value).__name__} {value!r}.")
        if weight_init is not None and not isinstance(weight_init, (str, int, float)) and jnp.ndim(
                _v(weight_init)) == 3:
            weight_init = jnp.expand_dims(jnp.asarray(_v(weight_init)), 2)
        super().__init__(in_channels, out_channels, (1, kernel_size), (1, stride), pad_mode,
                         (0, 0, non_negative_int(padding, "padding", name), padding), (1, dilation), group,
                         has_bias, weight_init, bias_init, dtype)
        self.padding = (0, 0, padding, padding)

    def construct(self, x):
        x = self._input(x, 3, "NCW")
        return convolve(x, self.weight.value, self._bias(), strides=(1, 1), padding=self._transpose_padding(),
                        dilation=self.dilation, group=self.group, lhs_dilation=self.stride, transposed=True,
                        one_d=True)
