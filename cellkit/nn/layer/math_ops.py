"""Math layers of MindSpore's ``nn/layer/math.py``: ``ReduceLogSumExp``, ``Range``, ``LGamma``, ``DiGamma``,
``IGamma``, ``LBeta``, ``MatMul``, ``Moments``, ``MatInverse``, ``MatDet``.

They hold no Parameters. The special functions are ``jax.scipy.special``'s (MindSpore evaluates
the same functions with its own series); ``MatInverse`` and ``MatDet`` go through the Cholesky
factor as MindSpore's do, so they expect symmetric positive-definite matrices.

>>> import cellkit as ms
>>> from cellkit import nn
>>> nn.MatMul(transpose_x2=True)(ms.ops.ones((2, 3)), ms.ops.ones((4, 3))).shape
(2, 4)
>>> nn.Range(1, 7, 2)()
Array([1, 3, 5], dtype=int32)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np

from ...cell import Cell
from ...ops.function._utils import _v

__all__ = ["ReduceLogSumExp", "Range", "LGamma", "DiGamma", "IGamma", "LBeta", "MatMul", "Moments", "MatInverse",
           "MatDet"]


def _float_input(cell, x, arg="x"):
    x = jnp.asarray(_v(x))
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise TypeError(f"For '{cell.cls_name}', the type of '{arg}' must be a float Tensor (float16 or float32), "
                        f"but got {x.dtype}.")
    return x


def _same_dtype(cell, a, b, names):
    if a.dtype != b.dtype:
        raise TypeError(f"For '{cell.cls_name}', '{names[1]}' must have the dtype of '{names[0]}' ({a.dtype}), "
                        f"but got {b.dtype}.")


def _axes(axis):
    return tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)


def _squeeze(y, axis):
    """MindSpore's ``Squeeze(axis)`` after a keep-dims reduction: ``()`` squeezes every axis of length 1."""
    if axis:
        return jnp.squeeze(y, tuple(a % y.ndim for a in axis))
    return jnp.squeeze(y, tuple(i for i, n in enumerate(y.shape) if n == 1))


class ReduceLogSumExp(Cell):
    """``log(sum(exp(x), axis))``, computed stably (MindSpore 2.10's ``nn.ReduceLogSumExp``).

    ``axis`` an int, tuple or list (``()``: every axis); ``keep_dims`` default ``False``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.ReduceLogSumExp(1)(ms.Tensor([[0., 0.]]))
    Array([0.6931472], dtype=float32)
    """

    def __init__(self, axis, keep_dims=False):
        super().__init__()
        if not isinstance(axis, (int, tuple, list)) or isinstance(axis, bool):
            raise TypeError(f"For 'ReduceLogSumExp', the 'axis' must be int, list or tuple, but got "
                            f"{type(axis).__name__}.")
        if not isinstance(keep_dims, bool):
            raise TypeError(f"For 'ReduceLogSumExp', the 'keep_dims' must be bool, but got "
                            f"{type(keep_dims).__name__}.")
        self.axis, self.keep_dims = axis, keep_dims

    def construct(self, x):
        x = jnp.asarray(_v(x))
        axis = _axes(self.axis)
        return jax.nn.logsumexp(x, axis=axis if axis else None, keepdims=self.keep_dims)


class Range(Cell):
    """The constant ``arange(start, limit, delta)``: int32 for int arguments, float32 otherwise (``nn.Range``).

    ``construct()`` takes no input. ``limit=None`` counts from 0 to ``start``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Range(3)()
    Array([0, 1, 2], dtype=int32)
    >>> nn.Range(0., 1., 0.25)()
    Array([0.  , 0.25, 0.5 , 0.75], dtype=float32)
    """

    def __init__(self, start, limit=None, delta=1):
        super().__init__()
        if delta == 0:
            raise ValueError("For 'Range', the 'delta' can not be zero.")
        data = np.arange(start, limit, delta)
        self._data = data.astype(np.float32 if data.dtype == np.float64 else np.int32)

    def construct(self):
        return jnp.asarray(self._data)


class LGamma(Cell):
    """``log|Gamma(x)|`` elementwise (MindSpore 2.10's ``nn.LGamma``); ``+inf`` at the poles 0, -1, -2, ...

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> [round(float(v), 4) for v in nn.LGamma()(ms.Tensor([1., 3.]))]
    [0.0, 0.6931]
    """

    def construct(self, x):
        x = _float_input(self, x)
        pole = (x <= 0) & (x == jnp.floor(x))
        return jnp.where(pole, jnp.inf, jsp.gammaln(jnp.where(pole, 1, x))).astype(x.dtype)


class DiGamma(Cell):
    """The digamma function ``d/dx log Gamma(x)`` elementwise (``nn.DiGamma``); NaN at 0, -1, -2, ...

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> round(float(nn.DiGamma()(ms.Tensor([1.]))[0]), 4)   # minus the Euler-Mascheroni constant
    -0.5772
    """

    def construct(self, x):
        x = _float_input(self, x)
        pole = (x <= 0) & (x == jnp.floor(x))
        return jnp.where(pole, jnp.nan, jsp.digamma(jnp.where(pole, 1, x))).astype(x.dtype)


class IGamma(Cell):
    """The regularised lower incomplete gamma function ``P(a, x)`` (MindSpore 2.10's ``nn.IGamma``).

    ``construct(a, x)``; ``a`` and ``x`` broadcast; NaN where ``a < 0`` or ``x < 0``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> [round(float(v), 4) for v in nn.IGamma()(ms.Tensor([1., 2.]), ms.Tensor([0., 1.]))]
    [0.0, 0.2642]
    """

    def construct(self, a, x):
        a = _float_input(self, a, "a")
        x = _float_input(self, x, "x")
        _same_dtype(self, a, x, ("a", "x"))
        a, x = jnp.broadcast_arrays(a, x)
        bad = (a < 0) | (x < 0)
        out = jsp.gammainc(jnp.where(bad, 1, a), jnp.where(bad, 1, x))
        return jnp.where(bad, jnp.nan, jnp.where(x == 0, 0, out)).astype(a.dtype)


class LBeta(Cell):
    """``log|Beta(x, y)|`` = lgamma(x) + lgamma(y) - lgamma(x + y), computed stably (``nn.LBeta``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> round(float(nn.LBeta()(ms.Tensor([1.]), ms.Tensor([2.]))[0]), 4)
    -0.6931
    """

    def construct(self, x, y):
        x = _float_input(self, x)
        y = _float_input(self, y, "y")
        _same_dtype(self, x, y, ("x", "y"))
        x, y = jnp.broadcast_arrays(x, y)
        return jsp.betaln(x, y).astype(x.dtype)


class MatMul(Cell):
    """Matrix product with broadcasting batch axes and 1-D operands (MindSpore 2.10's ``nn.MatMul``).

    ``transpose_x1``/``transpose_x2`` (default ``False``) transpose the last two axes of an
    operand of rank >= 2 first.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.MatMul()(ms.Tensor([1., 2.]), ms.Tensor([3., 4.]))
    Array(11., dtype=float32)
    """

    def __init__(self, transpose_x1=False, transpose_x2=False):
        super().__init__()
        for arg, value in (("transpose_x1", transpose_x1), ("transpose_x2", transpose_x2)):
            if not isinstance(value, bool):
                raise TypeError(f"For 'MatMul', the '{arg}' must be bool, but got {type(value).__name__}.")
        self.transpose_x1, self.transpose_x2 = transpose_x1, transpose_x2

    def construct(self, x1, x2):
        a, b = jnp.asarray(_v(x1)), jnp.asarray(_v(x2))
        if a.ndim >= 2 and self.transpose_x1:
            a = jnp.swapaxes(a, -1, -2)
        if b.ndim >= 2 and self.transpose_x2:
            b = jnp.swapaxes(b, -1, -2)
        col = a.shape[-1]
        row = b.shape[0] if b.ndim == 1 else b.shape[-2]
        if col != row:
            raise ValueError(f"For 'MatMul', the column of matrix dimensions of 'x1' must be equal to the row of "
                             f"matrix dimensions of 'x2', but got 'x1_col' {col} and 'x2_row' {row}.")
        try:
            return jnp.matmul(a, b)
        except (TypeError, ValueError) as err:
            raise ValueError(f"For 'MatMul', the batch axes of 'x1' {a.shape} and 'x2' {b.shape} do not "
                             f"broadcast.") from err


class Moments(Cell):
    """``(mean, variance)`` of ``x`` over ``axis`` (population variance) (MindSpore 2.10's ``nn.Moments``).

    Defaults: ``axis=None`` (every axis), ``keep_dims=None`` (``False``). float16 inputs are
    computed in float32 and returned as float16.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Moments(axis=0)(ms.Tensor([1., 3.]))
    (Array(2., dtype=float32), Array(1., dtype=float32))
    """

    def __init__(self, axis=None, keep_dims=None):
        super().__init__()
        axis = () if axis is None else axis
        if isinstance(axis, tuple):
            for i, item in enumerate(axis):
                if not isinstance(item, int) or isinstance(item, bool):
                    raise TypeError(f"For 'Moments', the 'axis[{i}]' must be int, but got {type(item).__name__}.")
        elif not isinstance(axis, int) or isinstance(axis, bool):
            raise TypeError(f"For 'Moments', the 'axis' must be int or tuple, but got {type(axis).__name__}.")
        keep_dims = False if keep_dims is None else keep_dims
        if not isinstance(keep_dims, bool):
            raise TypeError(f"For 'Moments', the 'keep_dims' must be bool, but got {type(keep_dims).__name__}.")
        self.axis, self.keep_dims = axis, keep_dims

    def construct(self, x):
        x = _float_input(self, x, "input x")
        dtype = x.dtype
        if dtype == jnp.float16:
            x = x.astype(jnp.float32)
        axis = _axes(self.axis)
        red = axis if axis else None
        mean = jnp.mean(x, axis=red, keepdims=True)
        var = jnp.mean(jnp.square(x - jax.lax.stop_gradient(mean)), axis=red, keepdims=True)
        if not self.keep_dims:
            mean, var = _squeeze(mean, axis), _squeeze(var, axis)
        return mean.astype(dtype), var.astype(dtype)


def _chol(cell, a):
    a = _float_input(cell, a, "input_a")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"For '{cell.cls_name}', 'input_a' must be a batch of square matrices, but got shape "
                         f"{a.shape}.")
    return jnp.linalg.cholesky(a)


class MatInverse(Cell):
    """The inverse of symmetric positive-definite matrices, through their Cholesky factor (``nn.MatInverse``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.MatInverse()(ms.Tensor([[4., 0.], [0., 2.]])).round(4)
    Array([[0.25, 0.  ],
           [0.  , 0.5 ]], dtype=float32)
    """

    def construct(self, a):
        low = _chol(self, a)
        eye = jnp.broadcast_to(jnp.eye(low.shape[-1], dtype=low.dtype), low.shape)
        inv_low = jax.scipy.linalg.solve_triangular(low, eye, lower=True)
        return jnp.swapaxes(inv_low, -1, -2) @ inv_low


class MatDet(Cell):
    """The determinant of symmetric positive-definite matrices: ``prod(diag(L)) ** 2`` (``nn.MatDet``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> round(float(nn.MatDet()(ms.Tensor([[4., 0.], [0., 2.]]))), 4)
    8.0
    """

    def construct(self, a):
        low = _chol(self, a)
        return jnp.square(jnp.prod(jnp.diagonal(low, axis1=-2, axis2=-1), axis=-1))
