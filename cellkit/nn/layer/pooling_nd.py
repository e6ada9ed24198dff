"""1-D and 3-D pooling and adaptive max pooling: ``MaxPool1d``, ``MaxPool3d``, ``AvgPool1d``,
``AvgPool3d``, ``AdaptiveAvgPool1d``, ``AdaptiveAvgPool3d``, ``AdaptiveMaxPool1d``, ``AdaptiveMaxPool2d``.

MindSpore 2.10's defaults (``kernel_size=1``, ``stride=1``, ``pad_mode='valid'``)
and rules, over the N-d computations of ``ops.function.pooling_func`` that
``MaxPool2d``/``AvgPool2d`` share. Inputs may be unbatched.

>>> import cellkit as ms
>>> from cellkit import nn
>>> nn.MaxPool1d(2, 2)(ms.Tensor([[[1., 3., 2., 5.]]]))
Array([[[3., 5.]]], dtype=float32)
>>> nn.AvgPool3d(2, 2)(ms.ops.ones((1, 1, 4, 4, 4))).shape
(1, 1, 2, 2, 2)
"""

from __future__ import annotations

import jax.numpy as jnp

from ...cell import Cell
from ...ops.function._utils import _v
from ...ops.function.pooling_func import (adaptive_avg_core, adaptive_max_core, avg_pool_core, max_pool_core,
                                          output_size_of)
from .._checks import check_bool, is_int, pad_mode_of

__all__ = ["MaxPool1d", "MaxPool3d", "AvgPool1d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool3d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d"]


def _geometry(value, nd, arg, what, minimum=1):
    """An int or a tuple of ``nd`` ints (a 1-tuple is unwrapped), as MindSpore's pooling checks."""
    error = f"For '{what}', the '{arg}' must be an positive int number or a tuple, but got {value!r}"
    if is_int(value):
        if value < minimum:
            raise ValueError(error)
        return (int(value),) * nd
    if not isinstance(value, tuple) or not value or not all(is_int(v) and v >= minimum for v in value):
        raise ValueError(error)
    if len(value) == 1:
        return (int(value[0]),) * nd
    if len(value) != nd:
        raise ValueError(f"For '{what}', '{arg}' must be an int or a tuple of {nd} ints, but got {value!r}.")
    return tuple(int(v) for v in value)


class _Pool(Cell):
    _nd = 1

    def __init__(self, kernel_size, stride, pad_mode, padding):
        super().__init__()
        name = self.cls_name
        if not isinstance(pad_mode, str):
            raise TypeError(f"For '{name}', 'pad_mode' must be a str, but got {type(pad_mode).__name__}.")
        self.pad_mode = pad_mode_of(pad_mode, ("valid", "same", "pad"), name).upper()
        self.kernel_size, self.stride = kernel_size, stride
        self._k = _geometry(kernel_size, self._nd, "kernel_size", name)
        self._s = _geometry(stride, self._nd, "stride", name)
        self._p = _geometry(padding, self._nd, "padding", name, minimum=0)
        if self.pad_mode != "PAD" and any(self._p):
            raise ValueError(f"For '{name}', 'padding' must be 0 when 'pad_mode' is not 'pad', but got "
                             f"padding={padding!r} and pad_mode={pad_mode!r}.")
        self.padding = padding

    def _batched(self, x):
        x = jnp.asarray(_v(x))
        nd = self._nd
        if x.ndim not in (nd + 1, nd + 2):
            raise ValueError(f"For '{self.cls_name}', the input must be {nd + 1}-D or {nd + 2}-D, "
                             f"but got shape {x.shape}.")
        return (x[None], True) if x.ndim == nd + 1 else (x, False)

    def extend_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}"


class _MaxPool(_Pool):
    def __init__(self, kernel_size, stride, pad_mode, padding, dilation, return_indices, ceil_mode):
        super().__init__(kernel_size, stride, pad_mode, padding)
        name = self.cls_name
        self.return_indices = check_bool(return_indices, "return_indices", name)
        self.ceil_mode = check_bool(ceil_mode, "ceil_mode", name)
        self._d = _geometry(dilation, self._nd, "dilation", name)
        if self.pad_mode != "PAD" and (any(d != 1 for d in self._d) or return_indices or ceil_mode):
            raise ValueError(f"For {name}, the parameter 'padding', 'dilation', 'return_indices', 'ceil_mode' can not "
                             f"be set to non-default value when pad_mode is not 'pad', but got pad_mode:{pad_mode}.")
        if any(2 * p > k for p, k in zip(self._p, self._k)):
            raise ValueError(f"For {name}, pads should be less equal to the half of ksize, but got kernel_size "
                             f"{self._k} and padding {self._p}.")
        self.dilation = dilation

    def construct(self, x):
        x, added = self._batched(x)
        out = max_pool_core(x, mode=self.pad_mode, k=self._k, s=self._s, d=self._d, padding=self._p,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)
        if added:
            return tuple(o[0] for o in out) if isinstance(out, tuple) else out[0]
        return out


class MaxPool1d(_MaxPool):
    """1-D max pooling of (N, C, L) or (C, L) (MindSpore 2.10's ``nn.MaxPool1d``).

    Defaults (MindSpore 2.10's): ``kernel_size=1``, ``stride=1``, ``pad_mode='valid'``,
    ``padding=0``, ``dilation=1``, ``return_indices=False``, ``ceil_mode=False``.

    Args as ``MaxPool2d``'s, each an int; ``padding``, ``dilation``,
    ``return_indices`` and ``ceil_mode`` need ``pad_mode='pad'``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> out, idx = nn.MaxPool1d(3, 2, 'pad', padding=1, return_indices=True)(ms.Tensor([[[1., 3., 2., 5.]]]))
    >>> out.tolist(), idx.tolist()
    ([[[3.0, 5.0]]], [[[1, 3]]])
    """

    _nd = 1

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__(kernel_size, stride, pad_mode, padding, dilation, return_indices, ceil_mode)


class MaxPool3d(_MaxPool):
    """3-D max pooling of (N, C, D, H, W) or (C, D, H, W) (MindSpore 2.10's ``nn.MaxPool3d``).

    Defaults (MindSpore 2.10's): ``kernel_size=1``, ``stride=1``, ``pad_mode='valid'``,
    ``padding=0``, ``dilation=1``, ``return_indices=False``, ``ceil_mode=False``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.MaxPool3d(2, 2)(ms.ops.ones((2, 4, 4, 4))).shape
    (2, 2, 2, 2)
    """

    _nd = 3

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__(kernel_size, stride, pad_mode, padding, dilation, return_indices, ceil_mode)


class _AvgPool(_Pool):
    def __init__(self, kernel_size, stride, pad_mode, padding, ceil_mode, count_include_pad, divisor_override):
        super().__init__(kernel_size, stride, pad_mode, padding)
        name = self.cls_name
        self.ceil_mode = check_bool(ceil_mode, "ceil_mode", name)
        self.count_include_pad = check_bool(count_include_pad, "count_include_pad", name)
        if divisor_override is not None and (not is_int(divisor_override) or divisor_override <= 0):
            raise ValueError(f"For '{name}', the 'divisor_override' must be > 0, but got {divisor_override}.")
        self.divisor_override = divisor_override
        self._include_pad = self.count_include_pad and self._counts_padding()

    def _counts_padding(self):
        return True

    def construct(self, x):
        x, added = self._batched(x)
        y = avg_pool_core(x, mode=self.pad_mode, k=self._k, s=self._s, padding=self._p, ceil_mode=self.ceil_mode,
                          include_pad=self._include_pad, divisor_override=self.divisor_override)
        return y[0] if added else y


class AvgPool1d(_AvgPool):
    """1-D average pooling of (N, C, L) or (C, L) (MindSpore 2.10's ``nn.AvgPool1d``).

    Defaults (MindSpore 2.10's): ``kernel_size=1``, ``stride=1``, ``pad_mode='valid'``,
    ``padding=0``, ``ceil_mode=False``, ``count_include_pad=True``.

    As in MindSpore, with every option at its default ``'same'`` divides by
    the real cells of a window (TensorFlow's rule); once ``pad_mode='pad'``,
    ``padding``, ``ceil_mode`` or ``count_include_pad=False`` is given, padded
    cells count when ``count_include_pad``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.AvgPool1d(3, 1, 'same')(ms.Tensor([[[3., 6., 9.]]]))
    Array([[[4.5, 6. , 7.5]]], dtype=float32)
    """

    _nd = 1

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False, count_include_pad=True):
        self._expanded = (str(pad_mode).upper() == "PAD" or padding != 0 or bool(ceil_mode)
                          or not count_include_pad)
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, count_include_pad, None)

    def _counts_padding(self):
        return self._expanded


class AvgPool3d(_AvgPool):
    """3-D average pooling of (N, C, D, H, W) or (C, D, H, W) (MindSpore 2.10's ``nn.AvgPool3d``).

    Defaults (MindSpore 2.10's): ``kernel_size=1``, ``stride=1``, ``pad_mode='valid'``,
    ``padding=0``, ``ceil_mode=False``, ``count_include_pad=True``, ``divisor_override=None``.

    Padded cells (also those of ``'same'``) count in the divisor when
    ``count_include_pad``; ``divisor_override`` replaces it.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.AvgPool3d(2, 1, 'pad', padding=1)(ms.ops.ones((1, 1, 1, 1, 1)))[0, 0, 0]
    Array([[0.125, 0.125],
           [0.125, 0.125]], dtype=float32)
    """

    _nd = 3

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, count_include_pad, divisor_override)


class _Adaptive(Cell):
    _nd = 1
    _ranks = (3,)

    def _input(self, x):
        x = jnp.asarray(_v(x))
        if x.ndim not in self._ranks:
            raise ValueError(f"For {self.cls_name}, the input must has {' or '.join(map(str, self._ranks))} dim, "
                             f"but got {x.ndim}.")
        return x


class _Adaptive1d(_Adaptive):
    """MindSpore runs these as a regular pooling with stride L // out, so L must be a multiple of out."""

    def __init__(self, output_size):
        super().__init__()
        if not is_int(output_size) or output_size < 1:
            raise ValueError(f"For '{self.cls_name}', 'output_size' must be a positive int, but got "
                             f"{output_size!r}.")
        self.output_size = int(output_size)

    def _input(self, x):
        x = super()._input(x)
        width = x.shape[-1]
        if width < self.output_size or width % self.output_size:
            raise ValueError(f"For {self.cls_name}, the input's last dimension must be a multiple of (and at least) "
                             f"output size {self.output_size}, but got {width}.")
        return x


class AdaptiveAvgPool1d(_Adaptive1d):
    """Average pooling of (N, C, L) to ``output_size`` (MindSpore 2.10's ``nn.AdaptiveAvgPool1d``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.AdaptiveAvgPool1d(2)(ms.Tensor([[[1., 3., 5., 7.]]]))
    Array([[[2., 6.]]], dtype=float32)
    """

    def construct(self, input):  # noqa: A002
        return adaptive_avg_core(self._input(input), output_size=(self.output_size,))


class AdaptiveMaxPool1d(_Adaptive1d):
    """Max pooling of (N, C, L) to ``output_size`` (MindSpore 2.10's ``nn.AdaptiveMaxPool1d``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.AdaptiveMaxPool1d(2)(ms.Tensor([[[0., 5., 1., 7., 2., 3., 9., 4.]]]))
    Array([[[7., 9.]]], dtype=float32)
    """

    def construct(self, x):
        return adaptive_max_core(self._input(x), output_size=(self.output_size,), return_indices=False)


class AdaptiveAvgPool3d(_Adaptive):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) to ``output_size`` (None keeps an axis).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.AdaptiveAvgPool3d((1, None, 2))(ms.ops.ones((1, 2, 3, 4, 5))).shape
    (1, 2, 1, 4, 2)
    """

    _ranks = (4, 5)

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size_of(output_size, 3, self.cls_name)

    def construct(self, input):  # noqa: A002
        return adaptive_avg_core(self._input(input), output_size=self.output_size)


class AdaptiveMaxPool2d(_Adaptive):
    """Max pooling of (N, C, H, W) or (C, H, W) to ``output_size`` (MindSpore 2.10's ``nn.AdaptiveMaxPool2d``).

    With ``return_indices`` it also returns the flat H*W index of each maximum.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.AdaptiveMaxPool2d((1, 2))(ms.Tensor([[[1., 2., 3.], [4., 5., 6.]]]))
    Array([[[5., 6.]]], dtype=float32)
    """

    _ranks = (3, 4)

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size_of(output_size, 2, self.cls_name)
        self.return_indices = check_bool(return_indices, "return_indices", self.cls_name)

    def construct(self, input):  # noqa: A002
        return adaptive_max_core(self._input(input), output_size=self.output_size,
                                 return_indices=self.return_indices)

