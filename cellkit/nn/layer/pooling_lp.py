"""More pooling layers: ``LPPool1d``/``LPPool2d`` (power-average), ``MaxUnpool1d``/``2d``/``3d`` (the inverse of
max pooling with indices) and ``AdaptiveMaxPool3d``.

>>> import cellkit as ms
>>> from cellkit import nn
>>> nn.LPPool1d(norm_type=2, kernel_size=2)(ms.Tensor([[[3., 4., 0., 0.]]]))
Array([[[5., 0.]]], dtype=float32)
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from ...cell import Cell
from ...ops.function._utils import _v
from ...ops.function.pooling_func import adaptive_max_core, avg_pool1d, avg_pool2d, output_size_of
from .._checks import check_bool, is_int

__all__ = ["LPPool1d", "LPPool2d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "AdaptiveMaxPool3d"]


class _LPPool(Cell):
    _nd = 1

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def construct(self, x):
        what = f"lp_pool{self._nd}d"
        if not isinstance(self.norm_type, (float, int)) or isinstance(self.norm_type, bool):
            raise TypeError(f"For {what}, the type of 'norm_type' must be float or int, but got "
                            f"{type(self.norm_type)}")
        p = float(self.norm_type)
        if p == 0:
            raise ValueError(f"For {what}, the value of 'norm_type' can not be 0.")
        x = jnp.asarray(_v(x))
        k = self.kernel_size
        if self._nd == 2 and not isinstance(k, tuple):
            k = (k, k)
        stride = k if self.stride is None else self.stride
        if self._nd == 1:
            squeeze = x.ndim == 2
            out = avg_pool1d(jnp.power(x, p)[None] if squeeze else jnp.power(x, p), k, stride, 0, self.ceil_mode)
            out = jnp.asarray(_v(out))
            out = out[0] if squeeze else out
            size = k
        else:
            out = jnp.asarray(_v(avg_pool2d(jnp.power(x, p), k, stride, 0, self.ceil_mode)))
            size = k[0] * k[1]
        return jnp.power(jnp.sign(out) * jax.nn.relu(jnp.abs(out)) * size, 1.0 / p)


class LPPool1d(_LPPool):
    """``(sum over the window of x ** p) ** (1 / p)`` over (N, C, L) or (C, L) (MindSpore 2.10's ``nn.LPPool1d``).

    Args: ``norm_type`` (p, a non-zero int or float), ``kernel_size`` (int), ``stride`` (default
    ``None``: ``kernel_size``), ``ceil_mode`` (default ``False``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.LPPool1d(1, 2)(ms.Tensor([[1., 2., 3., 4.]]))
    Array([[3., 7.]], dtype=float32)
    """

    _nd = 1


class LPPool2d(_LPPool):
    """``(sum over the window of x ** p) ** (1 / p)`` over (N, C, H, W) (MindSpore 2.10's ``nn.LPPool2d``).

    ``kernel_size`` an int or a pair; ``stride`` (default ``None``: ``kernel_size``) and
    ``ceil_mode`` (default ``False``) as :class:`LPPool1d`.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.LPPool2d(2, 2)(ms.ops.ones((1, 1, 2, 4)))
    Array([[[[2., 2.]]]], dtype=float32)
    """

    _nd = 2


def _geometry(value, nd, arg, what):
    if is_int(value):
        return (int(value),) * nd
    if isinstance(value, (tuple, list)) and len(value) == nd and all(is_int(v) for v in value):
        return tuple(int(v) for v in value)
    raise ValueError(f"For '{what}', '{arg}' must be an int or a tuple of {nd} ints, but got {value!r}.")


class _MaxUnpool(Cell):
    _nd = 1

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        stride = kernel_size if stride is None else stride
        self.kernel_size = _geometry(kernel_size, self._nd, "kernel_size", self.cls_name)
        self.stride = _geometry(stride, self._nd, "stride", self.cls_name)
        self.padding = _geometry(padding, self._nd, "padding", self.cls_name)

    def construct(self, x, indices, output_size=None):
        nd = self._nd
        if output_size is not None:
            if not isinstance(output_size, tuple):
                raise ValueError(f"For {self.cls_name}, output_size must be tuple, but type {type(output_size)}.")
            if not output_size:
                raise ValueError(f"For {self.cls_name}, the length of output_size must be positive, but got 0.")
        x = jnp.asarray(_v(x))
        idx = jnp.asarray(_v(indices))
        if x.ndim not in (nd + 1, nd + 2):
            raise ValueError(f"For {self.cls_name}, the input must be {nd + 1}-D or {nd + 2}-D, but got shape "
                             f"{x.shape}.")
        if idx.shape != x.shape:
            raise ValueError(f"For {self.cls_name}, 'indices' must have the shape of 'x' {x.shape}, but got "
                             f"{idx.shape}.")
        if not jnp.issubdtype(idx.dtype, jnp.integer):
            raise TypeError(f"For {self.cls_name}, 'indices' must be an int Tensor, but got {idx.dtype}.")
        unbatched = x.ndim == nd + 1
        if unbatched:
            x, idx = x[None], idx[None]
        if output_size:
            spatial = tuple(output_size[-nd:])
        else:
            spatial = tuple((n - 1) * s - 2 * p + k for n, s, p, k in
                            zip(x.shape[2:], self.stride, self.padding, self.kernel_size))
        n, c = x.shape[:2]
        flat = jnp.zeros((n, c, math.prod(spatial)), x.dtype)
        rows = jnp.arange(n)[:, None, None]
        cols = jnp.arange(c)[None, :, None]
        flat = flat.at[rows, cols, idx.reshape(n, c, -1)].set(x.reshape(n, c, -1), mode="drop")
        out = flat.reshape((n, c) + spatial)
        return out[0] if unbatched else out


class MaxUnpool1d(_MaxUnpool):
    """Put each value of ``x`` at its index from ``MaxPool1d(return_indices=True)`` (``nn.MaxUnpool1d``).

    Defaults: ``stride=None`` (``kernel_size``), ``padding=0``. Default output length
    ``(L - 1) * stride - 2 * padding + kernel_size``, or ``output_size``
    (a tuple whose last entry is the length). Other positions are 0.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.MaxUnpool1d(2)(ms.Tensor([[[5., 7.]]]), ms.Tensor([[[1, 2]]], ms.int32))
    Array([[[0., 5., 7., 0.]]], dtype=float32)
    """

    _nd = 1


class MaxUnpool2d(_MaxUnpool):
    """The 2-D :class:`MaxUnpool1d` over (N, C, H, W) or (C, H, W) (MindSpore 2.10's ``nn.MaxUnpool2d``).

    Defaults: ``stride=None`` (``kernel_size``), ``padding=0``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.MaxUnpool2d(2)(ms.Tensor([[[[9.]]]]), ms.Tensor([[[[3]]]], ms.int32)).reshape(-1)
    Array([0., 0., 0., 9.], dtype=float32)
    """

    _nd = 2


class MaxUnpool3d(_MaxUnpool):
    """The 3-D :class:`MaxUnpool1d` over (N, C, D, H, W) or (C, D, H, W) (MindSpore 2.10's ``nn.MaxUnpool3d``).

    Defaults: ``stride=None`` (``kernel_size``), ``padding=0``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.MaxUnpool3d(2)(ms.Tensor([[[[[1.]]]]]), ms.Tensor([[[[[0]]]]], ms.int32)).shape
    (1, 1, 2, 2, 2)
    """

    _nd = 3


class AdaptiveMaxPool3d(Cell):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) to ``output_size`` (MindSpore 2.10's ``nn.AdaptiveMaxPool3d``).

    With ``return_indices`` (default ``False``) also the flat D*H*W index of each maximum.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.AdaptiveMaxPool3d(1)(ms.ops.arange(8.).reshape(1, 1, 2, 2, 2)).reshape(-1)
    Array([7.], dtype=float32)
    """

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size_of(output_size, 3, "AdaptiveMaxPool3d")
        self.return_indices = check_bool(return_indices, "return_indices", "AdaptiveMaxPool3d")

    def construct(self, input):  # noqa: A002
        x = jnp.asarray(_v(input))
        if x.ndim not in (4, 5):
            raise ValueError(f"For AdaptiveMaxPool3d, the input must be 4-D or 5-D, but got shape {x.shape}.")
        return adaptive_max_core(x, output_size=self.output_size, return_indices=self.return_indices)
