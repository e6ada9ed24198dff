"""Convolutions (MindSpore's ``conv1d``, ``conv2d``, ``conv3d``) and the computation every
convolution layer and Primitive shares (``convolve``).

Weights are laid out as MindSpore's: ``(out, in / groups, *kernel)``; a
transposed convolution's weight is ``(in, out / groups, *kernel)``.
``pad_mode`` is ``'valid'`` (default for the functions), ``'same'`` (output
``ceil(in / stride)``, the odd extra padding at the end, as MindSpore and
TensorFlow) or ``'pad'`` with explicit ``padding``.

>>> import cellkit as ms
>>> from cellkit import ops
>>> x, w = ms.ops.ones((1, 2, 5)), ms.ops.ones((3, 2, 3))
>>> ops.conv1d(x, w, pad_mode='pad', padding=1)
Array([[[4., 6., 6., 6., 4.],
        [4., 6., 6., 6., 4.],
        [4., 6., 6., 6., 4.]]], dtype=float32)
"""

from __future__ import annotations

import functools
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from ...eager_jit import host_first
from ...tiered_jit import tiered_jit
from ._utils import _v, exporter

__all__ = []
_public = exporter(__all__)

_SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def dimension_numbers(nd, channels_last=False):
    s = _SPATIAL[nd]
    return (f"N{s}C", f"O{s}I", f"N{s}C") if channels_last else (f"NC{s}", f"OI{s}", f"NC{s}")


def transposed_kernel(w, group):
    """An (in, out/g, *k) transposed-conv weight as the (out, in/g, *k) kernel of the equivalent
    forward convolution: groups regrouped, in/out swapped, spatially flipped."""
    cin, cout_g = w.shape[0], w.shape[1]
    k = w.reshape((group, cin // group, cout_g) + w.shape[2:]).swapaxes(1, 2)
    k = k.reshape((group * cout_g, cin // group) + w.shape[2:])
    return jax.lax.rev(k, tuple(range(2, w.ndim)))   # (not jnp.flip: its own jit compiles under an eager grad)


def transpose_pads(mode, k_eff, stride, pads):
    """Padding of the dilated input that gives MindSpore's transposed-convolution output along one axis.

    'same' and 'valid' are ``jax.lax.conv_transpose``'s 'SAME' and 'VALID';
    'pad' with (lo, hi) crops the full transposed output by lo and hi.
    """
    if mode == "pad":
        return (k_eff - 1 - pads[0], k_eff - 1 - pads[1])
    if mode == "same":
        pad_len = k_eff + stride - 2
        lo = k_eff - 1 if stride > k_eff - 1 else int(np.ceil(pad_len / 2))
    else:
        pad_len = k_eff + stride - 2 + max(k_eff - stride, 0)
        lo = k_eff - 1
    return (lo, pad_len - lo)


# inline=True: one compiled computation per eager call, but inlined into an enclosing trace;
# kept as a nested call, it made the demo CNN's jitted train step ~15% slower on CPU.
@host_first
@functools.partial(tiered_jit, inline=True, static_argnames=("strides", "padding", "dilation", "group", "dims",
                                                         "lhs_dilation", "transposed", "output_padding", "one_d"))
def convolve(x, w, b, *, strides, padding, dilation, group, dims=None, lhs_dilation=None, transposed=False,
             output_padding=None, one_d=False):
    """Every convolution's computation, compiled once per configuration and shape.

    ``one_d``: ``x`` is (N, C, L) and ``w`` MindSpore's 4-D (out, in/g, 1, k)
    Conv1d weight. ``transposed``: ``w`` is a transposed-conv weight and
    ``lhs_dilation`` the stride. ``output_padding`` appends zeros at the end
    of each spatial axis after the bias, as MindSpore does.
    """
    if one_d:
        x = x[:, :, None, :]
    nd = w.ndim - 2
    dims = dims or dimension_numbers(nd)
    if transposed:
        w = transposed_kernel(w, group)
    y = jax.lax.conv_general_dilated(x, w, strides, padding, lhs_dilation=lhs_dilation, rhs_dilation=dilation,
                                     dimension_numbers=dims, feature_group_count=group)
    if b is not None:
        y = y + (b if dims[0][-1] == "C" else b.reshape((1, -1) + (1,) * nd))
    if output_padding is not None and any(output_padding):
        y = jnp.pad(y, ((0, 0), (0, 0)) + tuple((0, p) for p in output_padding))
    return y[:, :, 0, :] if one_d else y


def _tuple(value, n, arg, what):
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = (int(value),) * n
    if not isinstance(value, (tuple, list)) or len(value) != n or not all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in value):
        raise ValueError(f"For '{what}', '{arg}' must be an int or a tuple of {n} ints, but got {value!r}.")
    return tuple(int(v) for v in value)


def conv_padding(pad_mode, padding, nd, what):
    """``'SAME'``, ``'VALID'`` or ((lo, hi), ...) from MindSpore's ``pad_mode`` and ``padding``.

    ``padding`` is an int, ``nd`` ints (each used on both sides) or ``2 * nd``
    ints (lo, hi per axis).
    """
    if not isinstance(pad_mode, str) or pad_mode.lower() not in ("same", "valid", "pad"):
        raise ValueError(f"For '{what}', 'pad_mode' must be one of ['same', 'valid', 'pad'], "
                         f"but got {pad_mode!r}.")
    mode = pad_mode.lower()
    if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
        pairs = ((int(padding),) * 2,) * nd
    elif isinstance(padding, (tuple, list)) and len(padding) == nd:
        pairs = tuple((int(p), int(p)) for p in padding)
    elif isinstance(padding, (tuple, list)) and len(padding) == 2 * nd:
        pairs = tuple((int(padding[2 * i]), int(padding[2 * i + 1])) for i in range(nd))
    else:
        raise ValueError(f"For '{what}', 'padding' must be an int or a tuple of {nd} or {2 * nd} ints, "
                         f"but got {padding!r}.")
    if any(p < 0 for pair in pairs for p in pair):
        raise ValueError(f"For '{what}', 'padding' must be non-negative, but got {padding!r}.")
    if mode != "pad":
        if any(p for pair in pairs for p in pair):
            raise ValueError(f"For '{what}', 'padding' must be 0 when 'pad_mode' is '{mode}', but got {padding!r}.")
        return mode.upper()
    return pairs


def _conv(nd, what, input, weight, bias, stride, pad_mode, padding, dilation, groups):  # noqa: A002
    x, w = jnp.asarray(_v(input)), jnp.asarray(_v(weight))
    if x.ndim != nd + 2 or w.ndim != nd + 2:
        raise ValueError(f"For '{what}', the input and the weight must be {nd + 2}-D, but got input {x.shape} "
                         f"and weight {w.shape}.")
    groups = _tuple(groups, 1, "groups", what)[0]
    if groups < 1 or x.shape[1] % groups or w.shape[0] % groups or x.shape[1] // groups != w.shape[1]:
        raise ValueError(f"For '{what}', the input's channels ({x.shape[1]}) must be weight.shape[1] * groups "
                         f"({w.shape[1]} * {groups}) and out_channels ({w.shape[0]}) divisible by groups.")
    b = None if bias is None else jnp.asarray(_v(bias))
    if b is not None and b.shape != (w.shape[0],):
        raise ValueError(f"For '{what}', given a weight of shape {w.shape}, the bias must have shape "
                         f"({w.shape[0]},), but got {b.shape}.")
    return convolve(x, w, b, strides=_tuple(stride, nd, "stride", what), dilation=_tuple(dilation, nd, "dilation", what),
                    padding=conv_padding(pad_mode, padding, nd, what), group=groups)


@_public
def conv1d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1, groups=1):  # noqa: A002
    """1-D convolution: ``input`` (N, C_in, L), ``weight`` (C_out, C_in / groups, k)."""
    return _conv(1, "conv1d", input, weight, bias, stride, pad_mode, padding, dilation, groups)


@_public
def conv2d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1, groups=1):  # noqa: A002
    """2-D convolution: ``input`` (N, C_in, H, W), ``weight`` (C_out, C_in / groups, kh, kw).

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> ops.conv2d(ms.ops.ones((1, 1, 4, 4)), ms.ops.ones((2, 1, 3, 3)), stride=2, pad_mode='same').shape
    (1, 2, 2, 2)
    """
    return _conv(2, "conv2d", input, weight, bias, stride, pad_mode, padding, dilation, groups)


@_public
def conv3d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1, groups=1):  # noqa: A002
    """3-D convolution: ``input`` (N, C_in, D, H, W), ``weight`` (C_out, C_in / groups, kd, kh, kw)."""
    return _conv(3, "conv3d", input, weight, bias, stride, pad_mode, padding, dilation, groups)


def conv2d_primitive(x, w, *, out_channel, kernel_size, mode, pad_mode, pad, stride, dilation, group,
                     data_format):
    """MindSpore's ``Conv2D`` Primitive: ``pad`` an int or (top, bottom, left, right)."""
    del mode
    w = jnp.asarray(_v(w))
    nchw = data_format == "NCHW"
    if w.shape[0] != out_channel:
        raise ValueError(f"For 'Conv2D', the weight's first axis must be out_channel={out_channel}, "
                         f"but got weight shape {w.shape}.")
    pads = pad if isinstance(pad, (tuple, list)) else (pad,) * 4
    stride = _tuple(stride, 2, "stride", "Conv2D") if not (isinstance(stride, tuple) and len(stride) == 4) \
        else tuple(stride[2:])
    dilation = _tuple(dilation, 2, "dilation", "Conv2D") if not (isinstance(dilation, tuple) and len(dilation) == 4) \
        else tuple(dilation[2:])
    return convolve(jnp.asarray(_v(x)), w, None, strides=stride, dilation=dilation, group=int(group),
                    padding=conv_padding(pad_mode, tuple(pads), 2, "Conv2D"),
                    dims=None if nchw else ("NHWC", "OHWI", "NHWC"))


def conv2d_backprop_input(dout, w, input_size, *, out_channel, kernel_size, pad_mode, pad, pad_list, mode,
                          stride, dilation, group, data_format):
    """MindSpore's ``Conv2DBackpropInput`` (``Conv2DTranspose``): the gradient of ``Conv2D`` with
    respect to its input of shape ``input_size``, at ``dout``."""
    del out_channel, kernel_size, mode
    w = jnp.asarray(_v(w))
    dout = jnp.asarray(_v(dout))
    shape = tuple(int(s) for s in np.asarray(_v(input_size)).tolist())
    pads = pad_list if pad_list else (pad if isinstance(pad, (tuple, list)) else (pad,) * 4)
    stride = tuple(stride[2:]) if isinstance(stride, tuple) and len(stride) == 4 else _tuple(stride, 2, "stride",
                                                                                             "Conv2DTranspose")
    dilation = tuple(dilation[2:]) if isinstance(dilation, tuple) and len(dilation) == 4 else _tuple(
        dilation, 2, "dilation", "Conv2DTranspose")
    padding = conv_padding(pad_mode, tuple(pads), 2, "Conv2DTranspose")
    dims = None if data_format == "NCHW" else ("NHWC", "OHWI", "NHWC")

    def forward(x):
        return convolve(x, w, None, strides=stride, padding=padding, dilation=dilation, group=int(group), dims=dims)

    _, vjp = jax.vjp(forward, jnp.zeros(shape, dout.dtype))
    return vjp(dout)[0]


def _unfold_args(kernel_size, dilation, padding, stride, what):
    return (_tuple(kernel_size, 2, "kernel_size", what), _tuple(dilation, 2, "dilation", what),
            _tuple(padding, 2, "padding", what), _tuple(stride, 2, "stride", what))


@_public
def unfold(input, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002
    """Sliding blocks (im2col): (N, C, H, W) -> (N, C * kh * kw, L), channels ordered (c, row, col).

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> ops.unfold(ms.ops.ones((2, 3, 4, 5)), 2, padding=1, stride=2).shape
    (2, 12, 9)
    """
    x = jnp.asarray(_v(input))
    if x.ndim != 4:
        raise ValueError(f"For 'unfold', the input must be 4-D (N, C, H, W), but got shape {x.shape}.")
    k, d, p, s = _unfold_args(kernel_size, dilation, padding, stride, "unfold")
    patches = jax.lax.conv_general_dilated_patches(x, k, s, tuple((v, v) for v in p), rhs_dilation=d,
                                                   dimension_numbers=("NCHW", "OIHW", "NCHW"),
                                                   precision=jax.lax.Precision.HIGHEST)
    return patches.reshape(patches.shape[:2] + (-1,))


@_public
def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002
    """The adjoint of :func:`unfold` (col2im): (N, C * kh * kw, L) -> (N, C, H, W), overlaps summed.

    ``output_size`` is (H, W), a tuple or a 2-element Tensor.

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> ops.fold(ops.unfold(ms.ops.ones((1, 1, 3, 3)), 2), (3, 3), 2)[0, 0]
    Array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]], dtype=float32)
    """
    cols = jnp.asarray(_v(input))
    size = tuple(int(v) for v in np.asarray(_v(output_size)).reshape(-1).tolist())
    k, d, p, s = _unfold_args(kernel_size, dilation, padding, stride, "fold")
    if cols.ndim != 3 or len(size) != 2 or cols.shape[1] % (k[0] * k[1]):
        raise ValueError(f"For 'fold', the input must be (N, C * {k[0]} * {k[1]}, L) and output_size two ints, "
                         f"but got input shape {cols.shape} and output_size {size}.")
    n, c = cols.shape[0], cols.shape[1] // (k[0] * k[1])
    _, vjp = jax.vjp(lambda x: unfold(x, k, d, p, s), jnp.zeros((n, c) + size, cols.dtype))
    return vjp(cols)[0]
