"""Pooling layers: ``MaxPool2d``, ``AvgPool2d``, ``AdaptiveAvgPool2d``.

MindSpore 2.10's defaults, which differ from PyTorch's: ``kernel_size=1``,
``stride=1`` (not ``stride=kernel_size``) and ``pad_mode='valid'``. Inputs are
(N, C, H, W) or (C, H, W).

>>> import cellkit as ms
>>> from cellkit import nn
>>> x = ms.ops.ones((1, 3, 6, 6))
>>> nn.MaxPool2d(2, 2)(x).shape, nn.AvgPool2d(3, 2, 'same')(x).shape
((1, 3, 3, 3), (1, 3, 3, 3))
>>> nn.AdaptiveAvgPool2d((2, 1))(x).shape
(1, 3, 2, 1)
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from ...cell import Cell
from ...eager_jit import host_first
from ...ops.function._utils import _v
from ...ops.function.pooling_func import adaptive_matrix as _adaptive_matrix
from ...ops.function.pooling_func import avg_pool_core, max_pool_core
from ...tiered_jit import tiered_jit
from .._checks import check_bool, data_format_of, is_int, non_negative_int, pad_mode_of

__all__ = ["MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"]


def _int_or_tuple(value, arg, what):
    """MindSpore's pooling check: a positive int or a tuple of positive ints (a 1-tuple unwrapped)."""
    error = f"For '{what}', the '{arg}' must be an positive int number or a tuple, but got {value!r}"
    if is_int(value):
        if value <= 0:
            raise ValueError(error)
        return int(value)
    if not isinstance(value, tuple) or not value or not all(is_int(v) and v > 0 for v in value):
        raise ValueError(error)
    return value[0] if len(value) == 1 else value


def _hw(value, arg, what):
    """(h, w) from an int or a 2-tuple."""
    if is_int(value):
        return (value, value)
    if len(value) != 2:
        raise ValueError(f"For {what}, the length of {arg} must be equal to 2, but got {len(value)}.")
    return tuple(value)


def _sym_padding(padding, what):
    """(ph, pw) from an int or a 1- or 2-tuple/list of non-negative ints."""
    if is_int(padding):
        p = non_negative_int(padding, "padding", what)
        return (p, p)
    if isinstance(padding, (tuple, list)):
        vals = tuple(non_negative_int(p, "padding item", what) for p in padding)
        if len(vals) == 1:
            return vals * 2
        if len(vals) == 2:
            return vals
        raise ValueError(f"For {what}, the padding must be a int or tuple/list contains 1 or 2 int, "
                         f"but got tuple/list with length:{len(vals)}.")
    raise TypeError(f"For '{what}', 'padding' must be an int or a tuple of ints, but got {type(padding).__name__}.")


class _PoolNd(Cell):
    """kernel_size, stride, pad_mode and data_format, checked as MindSpore does."""

    def __init__(self, kernel_size, stride, pad_mode, data_format="NCHW"):
        super().__init__()
        name = self.cls_name
        if not isinstance(pad_mode, str):
            raise TypeError(f"For '{name}', 'pad_mode' must be a str, but got {type(pad_mode).__name__}.")
        self.pad_mode = pad_mode_of(pad_mode, ("valid", "same", "pad"), name).upper()
        self.format = data_format_of(data_format, ("NCHW", "NHWC"), name)
        self.kernel_size = _int_or_tuple(kernel_size, "kernel_size", name)
        self.stride = _int_or_tuple(stride, "stride", name)
        self._k = _hw(self.kernel_size, "kernel_size", name)
        self._s = _hw(self.stride, "stride", name)

    def _check_input(self, x):
        shape = tuple(jnp.shape(x))
        if len(shape) not in (3, 4):
            raise ValueError(f"{self.cls_name}: expected an input of shape (N, C, H, W) or (C, H, W), "
                             f"got {shape}")

    def extend_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}"


def _to_nchw(x, fmt):
    """(x as NCHW, a function restoring the input's layout and rank)."""
    unbatched = x.ndim == 3
    if unbatched:
        x = x[None]
    nhwc = fmt == "NHWC"
    if nhwc:
        x = jnp.transpose(x, (0, 3, 1, 2))

    def restore(y):
        if nhwc:
            y = jnp.transpose(y, (0, 2, 3, 1))
        return y[0] if unbatched else y
    return x, restore


def _dilation_item(value, what):
    if not is_int(value) or value < 1:
        raise ValueError(f"For {what}, the 'dilation' must be a positive int, but got {value!r}.")
    return int(value)


class MaxPool2d(_PoolNd):
    """2-D max pooling (MindSpore 2.10's ``nn.MaxPool2d``).

    Args:
        kernel_size (int or tuple[int, int]): window; default ``1``.
        stride (int or tuple[int, int]): default ``1``.
        pad_mode (str): ``'valid'`` (default), ``'same'`` (TensorFlow/XLA
            SAME, padded with -inf) or ``'pad'``; case-insensitive.
        padding (int or tuple[int, int]): symmetric -inf padding with
            ``pad_mode='pad'``, at most half the kernel; default ``0``.
        dilation (int or tuple[int, int]): with ``pad_mode='pad'``; default ``1``.
        return_indices (bool): with ``pad_mode='pad'``, also return the flat
            index (in the unpadded H*W plane) of each maximum; default ``False``.
        ceil_mode (bool): with ``pad_mode='pad'``, round the output size up
            (PyTorch's rule); default ``False``.
        data_format (str): ``'NCHW'`` (default) or ``'NHWC'``.

    ``padding``, ``dilation``, ``return_indices`` and ``ceil_mode`` must keep
    their defaults unless ``pad_mode='pad'``, as in MindSpore. Indices are
    Int64 with ``jax_enable_x64`` on, else Int32.

    >>> import numpy as np
    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> x = ms.Tensor(np.arange(16.).reshape(1, 1, 4, 4), ms.float32)
    >>> nn.MaxPool2d(2, 2)(x)
    Array([[[[ 5.,  7.],
             [13., 15.]]]], dtype=float32)
    >>> out, idx = nn.MaxPool2d(3, 2, pad_mode='pad', padding=1, return_indices=True)(x)
    >>> idx.tolist()
    [[[[5, 7], [13, 15]]]]
    >>> nn.MaxPool2d(kernel_size=(2, 3), stride=2, pad_mode='same')
    MaxPool2d(kernel_size=(2, 3), stride=2, pad_mode=SAME)
    """

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1,
                 return_indices=False, ceil_mode=False, data_format="NCHW"):
        super().__init__(kernel_size, stride, pad_mode, data_format)
        name = self.cls_name
        self.return_indices = check_bool(return_indices, "return_indices", name)
        self.ceil_mode = check_bool(ceil_mode, "ceil_mode", name)
        self.use_pad = self.pad_mode == "PAD"
        if self.use_pad:
            if self.format == "NHWC":
                raise ValueError(f"For '{name}, the 'NHWC' format are not support when 'pad_mode' is 'pad'.")
            self.padding = _sym_padding(padding, name)
            if is_int(dilation):
                self._d = (_dilation_item(dilation, name),) * 2
            elif isinstance(dilation, tuple) and len(dilation) in (1, 2):
                d = tuple(_dilation_item(v, name) for v in dilation)
                self._d = d * 2 if len(d) == 1 else d
            else:
                raise ValueError(f"For {name}, the 'dilation' must be an int or a tuple of 1 or 2 ints, "
                                 f"but got {dilation!r}.")
            for k, p in zip(self._k, self.padding):
                if 2 * p > k:
                    raise ValueError(f"For {name}, pads should be less equal to the half of ksize, but got "
                                     f"kernel_size {self._k} and padding {self.padding}.")
        else:
            if padding != 0 or dilation != 1 or return_indices or ceil_mode:
                raise ValueError(f"For MaxPool2d, the parameter 'padding', 'dilation', 'return_indices', "
                                 f"'ceil_mode' can not be set to non-default value when pad_mode is not 'pad', "
                                 f"but got pad_mode:{pad_mode}.")
            self.padding = 0
            self._d = (1, 1)
        self.dilation = dilation

    def construct(self, x):
        x = _v(x)
        self._check_input(x)
        return _max_pool(x, fmt=self.format, mode=self.pad_mode, k=self._k, s=self._s, d=self._d,
                         padding=self.padding if self.use_pad else (0, 0), ceil_mode=self.ceil_mode,
                         return_indices=self.return_indices)


def _max_pool(x, *, fmt, mode, k, s, d, padding, ceil_mode, return_indices):
    """MaxPool2d's computation: the shared N-d max pooling, on NCHW."""
    x, restore = _to_nchw(x, fmt)
    out = max_pool_core(x, mode=mode, k=k, s=s, d=d, padding=padding, ceil_mode=ceil_mode,
                        return_indices=return_indices)
    return tuple(map(restore, out)) if return_indices and mode == "PAD" else restore(out)


class AvgPool2d(_PoolNd):
    """2-D average pooling (MindSpore 2.10's ``nn.AvgPool2d``).

    Args:
        kernel_size (int or tuple[int, int]): window; default ``1``.
        stride (int or tuple[int, int]): default ``1``.
        pad_mode (str): ``'valid'`` (default), ``'same'`` or ``'pad'``;
            case-insensitive.
        padding (int or tuple[int, int]): symmetric zero padding ``(ph, pw)``
            with ``pad_mode='pad'``; default ``0``.
        ceil_mode (bool): round the output size up (PyTorch's rule); default ``False``.
        count_include_pad (bool): count padded cells in the divisor; default ``True``.
        divisor_override (int): divide every window by this instead; default ``None``.
        data_format (str): ``'NCHW'`` (default) or ``'NHWC'``.

    The divisor follows MindSpore exactly: with every option at its default,
    ``'same'`` divides by the number of real (unpadded) cells in the window,
    TensorFlow style. Once any of ``padding``, ``ceil_mode``,
    ``count_include_pad=False`` or ``divisor_override`` is given (or with
    ``pad_mode='pad'``), MindSpore switches to its 3-D kernel, and then padded
    cells count when ``count_include_pad`` is True, also for ``'same'``; cells
    of a ceil-mode window that lie beyond the padding never count.

    >>> import numpy as np
    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> x = ms.Tensor(np.arange(25.).reshape(1, 1, 5, 5), ms.float32)
    >>> nn.AvgPool2d(3, 1, 'same')(x)[0, 0, 0, 0]    # mean of the 2x2 real corner
    Array(3., dtype=float32)
    >>> nn.AvgPool2d(3, 2, 'pad', padding=1)(x)[0, 0, 0, 0]    # 12 / 9
    Array(1.3333334, dtype=float32)
    >>> nn.AvgPool2d(kernel_size=3, stride=2, pad_mode='pad', padding=1)
    AvgPool2d(kernel_size=3, stride=2, pad_mode=PAD)
    """

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None, data_format="NCHW"):
        super().__init__(kernel_size, stride, pad_mode, data_format)
        name = self.cls_name
        self.ceil_mode = check_bool(ceil_mode, "ceil_mode", name)
        self.count_include_pad = check_bool(count_include_pad, "count_include_pad", name)
        if divisor_override is not None and (not is_int(divisor_override) or divisor_override <= 0):
            raise ValueError(f"For '{name}', the 'divisor_override' must be > 0, but got {divisor_override}.")
        self.divisor_override = divisor_override
        self.padding = _sym_padding(padding, name)
        if self.pad_mode != "PAD" and any(self.padding):
            raise ValueError(f"For '{name}', the 'padding' must be 0 when 'pad_mode' is not 'pad', but got "
                             f"padding={padding!r} and pad_mode={pad_mode!r}.")
        self._expanded = (self.pad_mode == "PAD" or self.ceil_mode or not self.count_include_pad
                          or divisor_override is not None)
        if self._expanded and self.format == "NHWC":
            raise ValueError(f"For '{name}', the 'NHWC' format is not supported with pad_mode='pad', "
                             "ceil_mode, count_include_pad=False or divisor_override.")

    def construct(self, x):
        x = _v(x)
        self._check_input(x)
        return _avg_pool(x, fmt=self.format, mode=self.pad_mode, k=self._k, s=self._s, padding=self.padding,
                         ceil_mode=self.ceil_mode, include_pad=self._expanded and self.count_include_pad,
                         divisor_override=self.divisor_override)


def _avg_pool(x, *, fmt, mode, k, s, padding, ceil_mode, include_pad, divisor_override):
    """AvgPool2d's computation: the shared N-d average pooling, on NCHW."""
    x, restore = _to_nchw(x, fmt)
    return restore(avg_pool_core(x, mode=mode, k=k, s=s, padding=padding, ceil_mode=ceil_mode,
                                 include_pad=include_pad, divisor_override=divisor_override))


class AdaptiveAvgPool2d(Cell):
    """Average pooling to a fixed output size (MindSpore 2.10's ``nn.AdaptiveAvgPool2d``).

    Args:
        output_size (int or tuple): ``(H_out, W_out)``; an int is used for
            both, and ``None`` keeps that input dimension.

    Bin ``i`` of an axis of length ``L`` covers ``floor(i*L/o)`` to
    ``ceil((i+1)*L/o)`` (PyTorch's bins). Inputs are (N, C, H, W) or (C, H, W).

    >>> import numpy as np
    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> x = ms.Tensor(np.arange(6.).reshape(1, 1, 2, 3), ms.float32)
    >>> nn.AdaptiveAvgPool2d((1, 2))(x)
    Array([[[[2., 3.]]]], dtype=float32)
    >>> nn.AdaptiveAvgPool2d(3)
    AdaptiveAvgPool2d()
    """

    def __init__(self, output_size):
        super().__init__()
        if is_int(output_size) or output_size is None:
            size = (output_size, output_size)
        elif isinstance(output_size, (tuple, list)) and len(output_size) == 2:
            size = tuple(output_size)
        else:
            raise ValueError(f"For '{self.cls_name}', 'output_size' must be an int or a tuple of two ints "
                             f"(or None), but got {output_size!r}.")
        for s in size:
            if s is not None and (not is_int(s) or s < 1):
                raise ValueError(f"For '{self.cls_name}', 'output_size' items must be positive ints or None, "
                                 f"but got {output_size!r}.")
        self.output_size = size

    def construct(self, input):  # noqa: A002 - MindSpore's argument name
        x = _v(input)
        shape = tuple(jnp.shape(x))
        if len(shape) not in (3, 4):
            raise ValueError(f"{self.cls_name}: expected an input of shape (N, C, H, W) or (C, H, W), "
                             f"got {shape}")
        return _adaptive_avg_pool(x, output_size=self.output_size)


@host_first
@functools.partial(tiered_jit, inline=True, static_argnames=("output_size",))
def _adaptive_avg_pool(x, *, output_size):
    h, w = x.shape[-2:]
    oh = h if output_size[0] is None else output_size[0]
    ow = w if output_size[1] is None else output_size[1]
    dtype = x.dtype if jnp.issubdtype(x.dtype, jnp.inexact) else jnp.float32
    mh = _adaptive_matrix(h, oh).astype(dtype)
    mw = _adaptive_matrix(w, ow).astype(dtype)
    return jnp.einsum("oh,...hw,pw->...op", mh, x.astype(dtype), mw, precision=jax.lax.Precision.HIGHEST)
