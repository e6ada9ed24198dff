"""Tensor-operation layers of MindSpore's ``nn/layer/basic.py``: ``Tril``, ``Triu``, ``OneHot``, ``Roll``,
``Norm``, ``ClipByNorm``, ``MatrixDiag``, ``MatrixDiagPart``, ``MatrixSetDiag``, ``L1Regularizer``.

They hold no Parameters; each is the JAX expression of MindSpore 2.10's layer.

>>> import cellkit as ms
>>> from cellkit import nn
>>> nn.Tril()(ms.ops.ones((2, 2)))
Array([[1., 0.],
       [1., 1.]], dtype=float32)
>>> nn.OneHot(depth=3)(ms.Tensor([0, 2], ms.int32))
Array([[1., 0., 0.],
       [0., 0., 1.]], dtype=float32)
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from ... import dtype as mstype
from ...cell import Cell
from ...ops.function._utils import _v
from .._checks import is_int

__all__ = ["Tril", "Triu", "OneHot", "Roll", "Norm", "ClipByNorm", "MatrixDiag", "MatrixDiagPart", "MatrixSetDiag",
           "L1Regularizer"]


def _jdtype(dtype):
    return mstype.get_dtype(dtype).dtype


def _rank_at_least(cell, x, rank, arg="x"):
    x = jnp.asarray(_v(x))
    if x.ndim < rank:
        raise ValueError(f"For '{cell.cls_name}', the rank of '{arg}' must be at least {rank}, but got "
                         f"shape {x.shape}.")
    return x


class Tril(Cell):
    """The lower triangle of the last two axes, the ``k``-th diagonal and below (MindSpore 2.10's ``nn.Tril``).

    ``construct(x, k=0)``; the output keeps ``x``'s dtype.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Tril()(ms.Tensor([[1., 2.], [3., 4.]]), 1)
    Array([[1., 2.],
           [3., 4.]], dtype=float32)
    """

    _fn = staticmethod(jnp.tril)

    def construct(self, x, k=0):
        x = _rank_at_least(self, x, 2)
        if not is_int(k):
            raise TypeError(f"For '{self.cls_name}', 'k' must be an int, but got {type(k).__name__}.")
        return self._fn(x, int(k))


class Triu(Tril):
    """The upper triangle of the last two axes, the ``k``-th diagonal and above (MindSpore 2.10's ``nn.Triu``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Triu()(ms.Tensor([[1., 2.], [3., 4.]]))
    Array([[1., 2.],
           [0., 4.]], dtype=float32)
    """

    _fn = staticmethod(jnp.triu)


class OneHot(Cell):
    """One-hot encoding of integer ``indices`` (MindSpore 2.10's ``nn.OneHot``).

    Defaults: ``axis=-1``, ``depth=1``, ``on_value=1.0``, ``off_value=0.0``, ``dtype=float32``.
    The new axis of length ``depth`` is put at ``axis``; an index outside [0, depth) gives a row of
    ``off_value``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.OneHot(axis=0, depth=2, on_value=5.0, off_value=-1.0)(ms.Tensor([1, 0, 1], ms.int32))
    Array([[-1.,  5., -1.],
           [ 5., -1.,  5.]], dtype=float32)
    """

    def __init__(self, axis=-1, depth=1, on_value=1.0, off_value=0.0, dtype=mstype.float32):
        super().__init__()
        if not is_int(axis):
            raise TypeError(f"For 'OneHot', 'axis' must be an int, but got {type(axis).__name__}.")
        if not is_int(depth):
            raise TypeError(f"For 'OneHot', 'depth' must be an int, but got {type(depth).__name__}.")
        if depth < 0:
            raise ValueError(f"For 'OneHot', 'depth' must be non-negative, but got {depth}.")
        self.axis, self.depth, self.dtype = int(axis), int(depth), dtype
        self.on_value, self.off_value = on_value, off_value

    def construct(self, indices):
        idx = jnp.asarray(_v(indices))
        if not jnp.issubdtype(idx.dtype, jnp.integer):
            raise TypeError(f"For 'OneHot', 'indices' must be an int32 or int64 Tensor, but got {idx.dtype}.")
        axis = self.axis
        if not -idx.ndim - 1 <= axis <= idx.ndim:
            raise ValueError(f"For 'OneHot', 'axis' must be in [{-idx.ndim - 1}, {idx.ndim}], but got {axis}.")
        axis = axis % (idx.ndim + 1)
        shape = [1] * (idx.ndim + 1)
        shape[axis] = self.depth
        hot = jnp.expand_dims(idx, axis) == jnp.arange(self.depth).reshape(shape)
        dt = _jdtype(self.dtype)
        return jnp.where(hot, jnp.asarray(_v(self.on_value), dt), jnp.asarray(_v(self.off_value), dt))


class Roll(Cell):
    """Roll ``x`` by ``shift`` along ``axis`` (ints or equally long lists) (MindSpore 2.10's ``nn.Roll``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Roll(shift=1, axis=0)(ms.Tensor([0., 1., 2., 3.]))
    Array([3., 0., 1., 2.], dtype=float32)
    """

    def __init__(self, shift, axis):
        super().__init__()
        for arg, value in (("shift", shift), ("axis", axis)):
            if not isinstance(value, (int, tuple, list)) or isinstance(value, bool):
                raise TypeError(f"For 'Roll', the '{arg}' must be int, tuple or list, but got "
                                f"{type(value).__name__}.")
        self.shift = list(shift) if isinstance(shift, (tuple, list)) else [shift]
        self.axis = list(axis) if isinstance(axis, (tuple, list)) else [axis]
        if len(self.shift) != len(self.axis):
            raise ValueError(f"For 'Roll', the shape of 'shift' and the shape of 'axis' must be the same, but got "
                             f"the length of 'shift' {len(self.shift)} and the length of 'axis' {len(self.axis)}.")

    def construct(self, input_x):
        x = jnp.asarray(_v(input_x))
        for a in self.axis:
            if not -x.ndim <= a < x.ndim:
                raise ValueError(f"For 'Roll', 'axis' must be in [{-x.ndim}, {x.ndim}), but got {a}.")
        return jnp.roll(x, tuple(self.shift), tuple(self.axis))


class Norm(Cell):
    """The L2 norm ``sqrt(sum(x ** 2, axis))`` (MindSpore 2.10's ``nn.Norm``).

    Defaults: ``axis=()`` (every axis), ``keep_dims=False``. Without ``keep_dims`` the reduced
    axes are squeezed (with ``axis=()`` every axis of length 1, as MindSpore's ``Squeeze(())``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Norm(axis=1)(ms.Tensor([[3., 4.], [6., 8.]]))
    Array([ 5., 10.], dtype=float32)
    """

    def __init__(self, axis=(), keep_dims=False):
        super().__init__()
        if not isinstance(keep_dims, bool):
            raise TypeError(f"For 'Norm', the 'keep_dims' must be bool, but got {type(keep_dims).__name__}.")
        self.axis, self.keep_dims = axis, keep_dims

    def construct(self, x):
        x = jnp.asarray(_v(x))
        axis = tuple(self.axis) if isinstance(self.axis, (tuple, list)) else (self.axis,)
        reduce = axis if axis else None
        y = jnp.sqrt(jnp.sum(jnp.square(x), axis=reduce, keepdims=True))
        if self.keep_dims:
            return y
        squeeze = tuple(a % y.ndim for a in axis) if axis else tuple(i for i, n in enumerate(y.shape) if n == 1)
        return jnp.squeeze(y, squeeze)

    def extend_repr(self):
        return f"axis={self.axis}, keep_dims={self.keep_dims}"


def _l2(x, axis):
    sq = jnp.sum(jnp.square(x), axis=axis, keepdims=True)
    pos = sq > 0
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, sq, 1)), sq)     # a zero gradient at 0, not NaN


class ClipByNorm(Cell):
    """Scale ``x`` so that its L2 norm over ``axis`` is at most ``clip_norm`` (MindSpore 2.10's ``nn.ClipByNorm``).

    ``construct(x, clip_norm)`` returns ``x * clip_norm / max(norm(x, axis), clip_norm)``; default
    ``axis=None`` (every axis).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.ClipByNorm()(ms.Tensor([3., 4.]), ms.Tensor(1.0))
    Array([0.6, 0.8], dtype=float32)
    """

    def __init__(self, axis=None):
        super().__init__()
        if axis is not None and not isinstance(axis, (int, tuple, list)):
            raise TypeError(f"For 'ClipByNorm', 'axis' must be None, an int or a tuple of ints, but got "
                            f"{type(axis).__name__}.")
        self.axis = tuple(axis) if isinstance(axis, list) else axis

    def construct(self, x, clip_norm):
        x = jnp.asarray(_v(x))
        c = jnp.asarray(_v(clip_norm))
        axis = None if self.axis is None or self.axis == () else self.axis
        dt = jnp.result_type(x.dtype, jnp.float32) if not jnp.issubdtype(x.dtype, jnp.floating) else x.dtype
        x = x.astype(dt)
        c = c.astype(dt)
        return x * c / jnp.maximum(_l2(x, axis), c)


class MatrixDiag(Cell):
    """A batch of diagonal matrices from the last axis of ``x``: (..., n) -> (..., n, n) (``nn.MatrixDiag``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.MatrixDiag()(ms.Tensor([1., 2.]))
    Array([[1., 0.],
           [0., 2.]], dtype=float32)
    """

    def construct(self, input_x):
        x = _rank_at_least(self, input_x, 1, "input_x")
        n = x.shape[-1]
        return x[..., None, :] * jnp.eye(n, dtype=x.dtype)


class MatrixDiagPart(Cell):
    """The main diagonals of a batch of matrices: (..., m, n) -> (..., min(m, n)) (``nn.MatrixDiagPart``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.MatrixDiagPart()(ms.Tensor([[1., 2.], [3., 4.]]))
    Array([1., 4.], dtype=float32)
    """

    def construct(self, input_x):
        x = _rank_at_least(self, input_x, 2, "input_x")
        return jnp.diagonal(x, axis1=-2, axis2=-1)


class MatrixSetDiag(Cell):
    """``input_x`` with its main diagonals replaced by ``diagonal`` (..., min(m, n)) (``nn.MatrixSetDiag``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.MatrixSetDiag()(ms.ops.zeros((2, 2)), ms.Tensor([5., 6.]))
    Array([[5., 0.],
           [0., 6.]], dtype=float32)
    """

    def construct(self, input_x, diagonal):
        x = _rank_at_least(self, input_x, 2, "input_x")
        d = jnp.asarray(_v(diagonal))
        m, n = x.shape[-2:]
        want = x.shape[:-2] + (min(m, n),)
        if d.shape != want:
            raise ValueError(f"For 'MatrixSetDiag', 'diagonal' must have shape {want} for 'input_x' of shape "
                             f"{x.shape}, but got {d.shape}.")
        eye = jnp.eye(m, n, dtype=bool)
        full = jnp.zeros(x.shape, x.dtype)
        k = min(m, n)
        full = full.at[..., jnp.arange(k), jnp.arange(k)].set(d.astype(x.dtype))
        return jnp.where(eye, full, x)


class L1Regularizer(Cell):
    """``scale * sum(abs(weights))`` (MindSpore 2.10's ``nn.L1Regularizer``); ``scale`` a positive finite number.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.L1Regularizer(0.5)(ms.Tensor([[1., -2.], [-3., 4.]]))
    Array(5., dtype=float32)
    """

    def __init__(self, scale):
        super().__init__()
        if not isinstance(scale, (int, float)) or isinstance(scale, bool):
            raise TypeError(f"For 'L1Regularizer', the 'scale' must be int or float, but got "
                            f"{type(scale).__name__}.")
        if math.isinf(scale) or math.isnan(scale):
            raise ValueError(f"For 'L1Regularizer', the 'scale' can not be INF or NAN, but got {scale}.")
        if scale <= 0:
            raise ValueError(f"For 'L1Regularizer', the 'scale' must be greater than 0, but got {scale}.")
        self.scale = float(scale)

    def construct(self, weights):
        w = jnp.asarray(_v(weights))
        if not (jnp.issubdtype(w.dtype, jnp.number)):
            raise TypeError(f"For 'L1Regularizer', 'weights' must be a number Tensor, but got {w.dtype}.")
        s = jnp.sum(jnp.abs(w))
        dt = jnp.result_type(s.dtype, jnp.float32)
        return jnp.asarray(self.scale, dt) * s.astype(dt)
