"""The few MindSpore Primitive classes the tutorials use, as small callables.

A Primitive is configured at construction and called like a function.
Primitives compare equal when their class and configuration are equal, so two
Cells holding equal Primitives have equal structure (and share compilations).

>>> import cellkit as ms
>>> ms.set_seed(0)
>>> out, mask = ms.ops.Dropout2D(keep_prob=0.8)(ms.ops.ones((1, 3, 2, 2)))
>>> mask.dtype, mask.shape
(dtype('bool'), (1, 3, 2, 2))
"""

from __future__ import annotations

import jax.numpy as jnp

from . import functional as F
from .random_ops import _apply_mask, _channel_dropout, bernoulli_mask

__all__ = ["Primitive", "Dropout", "Dropout2D", "Dropout3D", "Assign", "MatMul", "ReLU", "Softmax",
           "ReduceSum", "ReduceMean", "Cast", "Reshape", "Transpose", "Concat", "Add", "Mul", "Sub",
           "Shape", "Squeeze", "ExpandDims"]


class Primitive:
    """Base class: subclasses store their configuration with ``super().__init__(**config)``."""

    def __init__(self, **config):
        self._config = config
        for k, v in config.items():
            setattr(self, k, v)

    def __eq__(self, other):
        return type(self) is type(other) and self._config == other._config

    def __hash__(self):
        return hash((type(self), tuple(sorted((k, repr(v)) for k, v in self._config.items()))))

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._config.items())
        return f"Prim[{type(self).__name__}]({args})" if args else f"Prim[{type(self).__name__}]"

    def __call__(self, *args):
        raise NotImplementedError


def _check_keep(keep_prob, what, allow_zero):
    ok = isinstance(keep_prob, (int, float)) and not isinstance(keep_prob, bool)
    lo_ok = keep_prob >= 0 if allow_zero else keep_prob > 0
    if not ok or not lo_ok or keep_prob > 1:
        rng = "[0.0, 1.0]" if allow_zero else "(0.0, 1.0]"
        raise ValueError(f"{what}: keep_prob must be a float in {rng}, got {keep_prob!r}")


class Dropout(Primitive):
    """Elementwise dropout returning ``(output, mask)``; the mask has the input's dtype."""

    def __init__(self, keep_prob=0.5, Seed0=0, Seed1=0):  # noqa: N803
        _check_keep(keep_prob, "Dropout", allow_zero=False)
        super().__init__(keep_prob=keep_prob, Seed0=Seed0, Seed1=Seed1)

    def __call__(self, x):
        x = F._v(x)
        if not jnp.issubdtype(x.dtype, jnp.floating):
            raise TypeError(f"Dropout: the input must be a float tensor, got {x.dtype}")
        mask = bernoulli_mask(self.keep_prob, x.shape)
        return _apply_mask(x, mask, self.keep_prob), mask.astype(x.dtype)


class Dropout2D(Primitive):
    """Channel dropout of an (N, C, H, W) input: ``(output, mask)``, a bool mask of the input's shape."""

    def __init__(self, keep_prob=0.5):
        _check_keep(keep_prob, "Dropout2D", allow_zero=True)
        super().__init__(keep_prob=keep_prob)

    def __call__(self, x):
        return _channel_dropout(x, 1.0 - self.keep_prob, 4, "Dropout2D")


class Dropout3D(Primitive):
    """Channel dropout of an (N, C, D, H, W) input: ``(output, mask)``."""

    def __init__(self, keep_prob=0.5):
        _check_keep(keep_prob, "Dropout3D", allow_zero=True)
        super().__init__(keep_prob=keep_prob)

    def __call__(self, x):
        return _channel_dropout(x, 1.0 - self.keep_prob, 5, "Dropout3D")


class Assign(Primitive):
    """``Assign()(variable, value)``: ``ops.assign``."""

    def __call__(self, variable, value):
        return F.assign(variable, value)


class MatMul(Primitive):
    """Matrix product with optional transposes."""

    def __init__(self, transpose_a=False, transpose_b=False):
        super().__init__(transpose_a=transpose_a, transpose_b=transpose_b)

    def __call__(self, a, b):
        a, b = F._v(a), F._v(b)
        if self.transpose_a:
            a = jnp.swapaxes(a, -1, -2)
        if self.transpose_b:
            b = jnp.swapaxes(b, -1, -2)
        return jnp.matmul(a, b)


class _Simple(Primitive):
    fn = None

    def __call__(self, *args):
        return type(self).fn(*args, **self._config)


class ReLU(_Simple):
    fn = staticmethod(F.relu)


class Softmax(_Simple):
    fn = staticmethod(F.softmax)

    def __init__(self, axis=-1):
        super().__init__(axis=axis)


class ReduceSum(Primitive):
    def __init__(self, keep_dims=False):
        super().__init__(keep_dims=keep_dims)

    def __call__(self, x, axis=()):
        return F.sum(x, dim=None if axis == () else axis, keepdim=self.keep_dims)


class ReduceMean(Primitive):
    def __init__(self, keep_dims=False):
        super().__init__(keep_dims=keep_dims)

    def __call__(self, x, axis=()):
        return F.mean(x, axis=None if axis == () else axis, keep_dims=self.keep_dims)


class Cast(_Simple):
    fn = staticmethod(F.cast)


class Reshape(_Simple):
    fn = staticmethod(F.reshape)


class Transpose(_Simple):
    fn = staticmethod(F.transpose)


class Concat(Primitive):
    def __init__(self, axis=0):
        super().__init__(axis=axis)

    def __call__(self, tensors):
        return F.concat(tensors, self.axis)


class Add(_Simple):
    fn = staticmethod(F.add)


class Mul(_Simple):
    fn = staticmethod(F.mul)


class Sub(_Simple):
    fn = staticmethod(F.sub)


class Shape(_Simple):
    fn = staticmethod(F.shape)


class Squeeze(Primitive):
    def __init__(self, axis=()):
        super().__init__(axis=axis)

    def __call__(self, x):
        return F.squeeze(x, self.axis if self.axis != () else None)


class ExpandDims(_Simple):
    fn = staticmethod(F.expand_dims)
