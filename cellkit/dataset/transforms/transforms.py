"""General data transforms (``mindspore.dataset.transforms``): callables on NumPy arrays.

Random transforms draw from a generator seeded by ``cellkit.dataset.config``; in a
``map`` each row gets its own generator, derived from the seed, the epoch and the
row's position, so a pipeline's draws do not depend on worker scheduling.

>>> import numpy as np
>>> import cellkit as ms
>>> from cellkit.dataset import transforms
>>> transforms.OneHot(3)(np.array([0, 2]))
array([[1, 0, 0],
       [0, 0, 1]])
>>> transforms.Compose([transforms.TypeCast(ms.float32), lambda x: x * 2])(np.array([1, 2]))
array([2., 4.], dtype=float32)
"""

from __future__ import annotations

import numbers

import numpy as np

from ... import dtype as mstype
from .. import config

__all__ = ["TensorOperation", "RandomTensorOperation", "Compose", "TypeCast", "OneHot", "Duplicate", "Fill",
           "PadEnd", "Slice", "Concatenate", "RandomApply", "RandomChoice", "RandomOrder"]


class TensorOperation:
    """A transform: ``op(*columns)`` returns the new column (or a tuple of them)."""

    def __call__(self, *args):
        return self.apply(None, *args)

    def apply(self, rng, *args):
        raise NotImplementedError


class RandomTensorOperation(TensorOperation):
    """A transform that draws: ``apply(rng, *columns)``; a plain call draws from its own generator."""

    def __call__(self, *args):
        if not hasattr(self, "_rng"):
            self._rng = np.random.default_rng(config.get_seed())
        return self.apply(self._rng, *args)


def _is_random(op) -> bool:
    return isinstance(op, RandomTensorOperation) or getattr(op, "random", False)


def apply_op(op, rng, values: tuple) -> tuple:
    """Apply one transform to a tuple of columns, passing ``rng`` to those that draw."""
    out = op.apply(rng, *values) if isinstance(op, TensorOperation) else op(*values)
    return out if isinstance(out, tuple) else (out,)


def _np_dtype(data_type):
    if isinstance(data_type, mstype.Type):
        return np.dtype(mstype.dtype_to_nptype(data_type))
    return np.dtype(data_type)


class Compose(RandomTensorOperation):
    """Apply ``transforms`` in order."""

    def __init__(self, transforms):
        if not isinstance(transforms, (list, tuple)) or not transforms or not all(callable(t) for t in transforms):
            raise TypeError("Compose: transforms must be a non-empty list of callables")
        self.transforms = list(transforms)
        self.random = any(_is_random(t) for t in self.transforms)

    def apply(self, rng, *args):
        for t in self.transforms:
            args = apply_op(t, rng, args)
        return args if len(args) > 1 else args[0]


class TypeCast(TensorOperation):
    """Cast to ``data_type`` (a cellkit/MindSpore dtype or a NumPy one)."""

    def __init__(self, data_type):
        self.dtype = _np_dtype(data_type)

    def apply(self, rng, x):
        return np.asarray(x).astype(self.dtype)


class OneHot(TensorOperation):
    """One-hot encode integer labels into ``num_classes`` columns, with optional label smoothing."""

    def __init__(self, num_classes, smoothing_rate=0.0):
        if isinstance(num_classes, bool) or not isinstance(num_classes, numbers.Integral) or num_classes <= 0:
            raise ValueError(f"OneHot: num_classes must be a positive int, got {num_classes!r}")
        if not 0.0 <= smoothing_rate <= 1.0:
            raise ValueError(f"OneHot: smoothing_rate must be in [0, 1], got {smoothing_rate!r}")
        self.num_classes, self.smoothing_rate = int(num_classes), float(smoothing_rate)

    def apply(self, rng, x):
        x = np.asarray(x)
        if x.size and (x.min() < 0 or x.max() >= self.num_classes):
            raise RuntimeError(f"OneHot: labels must be in [0, {self.num_classes - 1}], got {x.tolist()}")
        out = (x[..., None] == np.arange(self.num_classes)).astype(x.dtype)
        if self.smoothing_rate:
            out = out * (1 - self.smoothing_rate) + self.smoothing_rate / self.num_classes
        return out


class Duplicate(TensorOperation):
    """Two copies of the column."""

    def apply(self, rng, x):
        return np.array(x, copy=True), np.array(x, copy=True)


class Fill(TensorOperation):
    """The column with every element set to ``fill_value``."""

    def __init__(self, fill_value):
        self.fill_value = fill_value

    def apply(self, rng, x):
        x = np.asarray(x)
        return np.full_like(x, self.fill_value)


class PadEnd(TensorOperation):
    """Pad at the end of each axis to ``pad_shape`` with ``pad_value``; an axis longer than its
    ``pad_shape`` entry is cut to it, as in MindSpore."""

    def __init__(self, pad_shape, pad_value=None):
        self.pad_shape, self.pad_value = list(pad_shape), pad_value

    def apply(self, rng, x):
        x = np.asarray(x)
        if len(self.pad_shape) != x.ndim:
            raise ValueError(f"PadEnd: pad_shape {self.pad_shape} has {len(self.pad_shape)} axes, the input's "
                             f"shape {x.shape} has {x.ndim}")
        x = x[tuple(slice(None) if p is None else slice(0, p) for p in self.pad_shape)]
        widths = [(0, 0 if p is None else p - s) for p, s in zip(self.pad_shape, x.shape)]
        if x.dtype.kind == "U":  # strings: pad with "" by default, widened to hold the pad value
            pad = "" if self.pad_value is None else str(self.pad_value)
            out = np.pad(x.astype(np.result_type(x.dtype, np.array(pad).dtype)), widths, constant_values=pad)
            return out.astype(f"<U{max(1, int(np.char.str_len(out).max(initial=1)))}")
        return np.pad(x, widths, constant_values=0 if self.pad_value is None else self.pad_value)


class Slice(TensorOperation):
    """Index the column with ``slices`` (ints, lists, slice objects, Ellipsis), one per axis."""

    def __init__(self, *slices):
        self.slices = tuple(s if isinstance(s, (int, slice, type(Ellipsis), list)) or s is None else list(s)
                            for s in slices)

    def apply(self, rng, x):
        return np.asarray(x)[self.slices]


class Concatenate(TensorOperation):
    """The column with ``prepend`` before and ``append`` after it along ``axis``."""

    def __init__(self, axis=0, prepend=None, append=None):
        self.axis, self.prepend, self.append = axis, prepend, append

    def apply(self, rng, x):
        parts = [p for p in (self.prepend, x, self.append) if p is not None]
        return np.concatenate([np.asarray(p) for p in parts], axis=self.axis)


class RandomApply(RandomTensorOperation):
    """Apply ``transforms`` in order with probability ``prob``, else nothing."""

    def __init__(self, transforms, prob=0.5):
        self.compose = Compose(transforms)
        if not 0.0 <= prob <= 1.0:
            raise ValueError(f"RandomApply: prob must be in [0, 1], got {prob!r}")
        self.prob = prob

    def apply(self, rng, *args):
        if rng.random() < self.prob:
            return self.compose.apply(rng, *args)
        return args if len(args) > 1 else args[0]


class RandomChoice(RandomTensorOperation):
    """Apply one of ``transforms``, chosen at random."""

    def __init__(self, transforms):
        self.transforms = Compose(transforms).transforms

    def apply(self, rng, *args):
        out = apply_op(self.transforms[int(rng.integers(len(self.transforms)))], rng, args)
        return out if len(out) > 1 else out[0]


class RandomOrder(RandomTensorOperation):
    """Apply ``transforms`` in a random order."""

    def __init__(self, transforms):
        self.transforms = Compose(transforms).transforms

    def apply(self, rng, *args):
        for i in rng.permutation(len(self.transforms)):
            args = apply_op(self.transforms[int(i)], rng, args)
        return args if len(args) > 1 else args[0]
