"""Padding layers (MindSpore 2.10's ``nn.layer.padding`` and ``nn.Pad``).

``ConstantPad1d/2d/3d``, ``ZeroPad2d``, ``ReflectionPad1d/2d/3d``,
``ReplicationPad1d/2d/3d`` take PyTorch-ordered padding (last axis first:
``(left, right, top, bottom, front, back)``), or one int for every side.
``Pad`` takes TensorFlow-ordered ``paddings``, one ``(before, after)`` pair
per axis, with ``mode`` ``'CONSTANT'``, ``'REFLECT'`` or ``'SYMMETRIC'``.

>>> import cellkit as ms
>>> from cellkit import nn
>>> x = ms.Tensor([[[1., 2., 3.]]])
>>> nn.ConstantPad1d((1, 2), 0.5)(x)
Array([[[0.5, 1. , 2. , 3. , 0.5, 0.5]]], dtype=float32)
>>> nn.Pad(((0, 0), (0, 0), (1, 1)), mode='SYMMETRIC')(x)
Array([[[1., 1., 2., 3., 3.]]], dtype=float32)
"""

from __future__ import annotations

import numbers

import jax.numpy as jnp

from ...cell import Cell
from ...ops.function._utils import _v
from ...ops.function.sampling_func import pad_pairs, torch_pairs

__all__ = ["Pad", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d",
           "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d"]


def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


class _PadNd(Cell):
    """PyTorch-ordered padding of the last ``_dims`` axes."""

    _dims = 1
    _mode = "constant"
    _exact = False     # the padding tuple must have exactly 2 * _dims items (else at most)

    def __init__(self, padding, value=0):
        super().__init__()
        name = self.cls_name
        n = 2 * self._dims
        if _is_int(padding):
            padding = (int(padding),) * n
        if not isinstance(padding, tuple):
            raise TypeError(f"For '{name}', the type of parameter 'padding' must be in [int, tuple], "
                            f"but got {type(padding)}")
        if len(padding) % 2 or not all(_is_int(p) for p in padding):
            raise ValueError(f"For '{name}', 'padding' must be ints, an even number of them, but got {padding}")
        if (self._exact and len(padding) != n) or len(padding) > n:
            raise ValueError(f"For '{name}', the length of parameter 'padding' with tuple type must "
                             f"{'equal to' if self._exact else 'be no more than'} {n}, but got {len(padding)}")
        if self._mode != "constant" and any(p < 0 for p in padding):
            raise ValueError(f"For '{name}' every element in 'padding' must be >= 0, but got {padding}.")
        if self._mode == "constant" and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise TypeError(f"For '{name}', the type of parameter 'value' must be in [int, float], "
                            f"but got {type(value)}")
        self.padding = padding
        self.value = value

    def construct(self, x):
        x = jnp.asarray(_v(x))
        if self._mode != "constant" and x.ndim not in (self._dims + 1, self._dims + 2):
            raise ValueError(f"For '{self.cls_name}', the input must have {self._dims + 1} or {self._dims + 2} "
                             f"dims, but got {x.ndim}.")
        return pad_pairs(x, torch_pairs(self.padding, x.ndim, self.cls_name), self._mode, self.value,
                         self.cls_name)

    def extend_repr(self):
        return f"padding={self.padding}" + (f", value={self.value}" if self._mode == "constant" else "")


def _make(name, dims, mode, exact=False, doc=""):
    attrs = {"_dims": dims, "_mode": mode, "_exact": exact, "__doc__": doc, "__module__": __name__}
    if mode != "constant":
        attrs["__init__"] = lambda self, padding: _PadNd.__init__(self, padding)
    elif name == "ZeroPad2d":
        attrs["__init__"] = lambda self, padding: _PadNd.__init__(self, padding, 0)
    else:
        attrs["__init__"] = lambda self, padding, value: _PadNd.__init__(self, padding, value)
    cls = type(name, (_PadNd,), attrs)
    cls.__init__.__qualname__ = f"{name}.__init__"
    return cls


ConstantPad1d = _make("ConstantPad1d", 1, "constant", exact=True,
                      doc="Pad the last axis with ``value``: ``padding`` an int or ``(left, right)``.\n\n>>> import cellkit as ms\n>>> from cellkit import nn\n>>> nn.ConstantPad1d((1, 2), 0.5)(ms.ops.ones((1, 2, 3))).shape\n(1, 2, 6)\n")
ConstantPad2d = _make("ConstantPad2d", 2, "constant",
                      doc="Pad the last two axes with ``value``: ``(left, right, top, bottom)`` or an int.\n\n>>> import cellkit as ms\n>>> from cellkit import nn\n>>> nn.ConstantPad2d(1, 0.5)(ms.ops.ones((1, 2, 3))).shape\n(1, 4, 5)\n")
ConstantPad3d = _make("ConstantPad3d", 3, "constant",
                      doc="Pad the last three axes with ``value``: up to 6 ints, last axis first, or an int.\n\n>>> import cellkit as ms\n>>> from cellkit import nn\n>>> nn.ConstantPad3d(1, 0.5)(ms.ops.ones((1, 2, 3, 4))).shape\n(1, 4, 5, 6)\n")
ZeroPad2d = _make("ZeroPad2d", 2, "constant",
                  doc="Pad the last two axes with zeros: ``(left, right, top, bottom)`` or an int.\n\n>>> import cellkit as ms\n>>> from cellkit import nn\n>>> nn.ZeroPad2d((1, 1, 2, 0))(ms.ops.ones((1, 1, 2, 2))).shape\n(1, 1, 4, 4)\n")
ReflectionPad1d = _make("ReflectionPad1d", 1, "reflect",
                        doc="Reflect-pad the last axis of a 2-D or 3-D input (edge not repeated).\n\n>>> import cellkit as ms\n>>> from cellkit import nn\n>>> nn.ReflectionPad1d(1)(ms.Tensor([[[1., 2., 3.]]]))\nArray([[[2., 1., 2., 3., 2.]]], dtype=float32)\n")
ReflectionPad2d = _make("ReflectionPad2d", 2, "reflect",
                        doc="Reflect-pad the last two axes of a 3-D or 4-D input.\n\n>>> import cellkit as ms\n>>> from cellkit import nn\n>>> nn.ReflectionPad2d(1)(ms.ops.ones((1, 1, 3, 3))).shape\n(1, 1, 5, 5)\n")
ReflectionPad3d = _make("ReflectionPad3d", 3, "reflect",
                        doc="Reflect-pad the last three axes of a 4-D or 5-D input.\n\n>>> import cellkit as ms\n>>> from cellkit import nn\n>>> nn.ReflectionPad3d(1)(ms.ops.ones((1, 1, 2, 3, 3))).shape\n(1, 1, 4, 5, 5)\n")
ReplicationPad1d = _make("ReplicationPad1d", 1, "replicate",
                         doc="Repeat the edge values of the last axis of a 2-D or 3-D input.\n\n>>> import cellkit as ms\n>>> from cellkit import nn\n>>> nn.ReplicationPad1d((2, 1))(ms.Tensor([[[1., 2., 3.]]]))\nArray([[[1., 1., 1., 2., 3., 3.]]], dtype=float32)\n")
ReplicationPad2d = _make("ReplicationPad2d", 2, "replicate",
                         doc="Repeat the edge values of the last two axes of a 3-D or 4-D input.\n\n>>> import cellkit as ms\n>>> from cellkit import nn\n>>> nn.ReplicationPad2d(1)(ms.ops.ones((1, 1, 3, 3))).shape\n(1, 1, 5, 5)\n")
ReplicationPad3d = _make("ReplicationPad3d", 3, "replicate",
                         doc="Repeat the edge values of the last three axes of a 4-D or 5-D input.\n\n>>> import cellkit as ms\n>>> from cellkit import nn\n>>> nn.ReplicationPad3d(1)(ms.ops.ones((1, 1, 2, 3, 3))).shape\n(1, 1, 4, 5, 5)\n")


class Pad(Cell):
    """TensorFlow-style padding (MindSpore 2.10's ``nn.Pad``): one ``(before, after)`` pair per axis.

    Args:
        paddings (tuple): a tuple of ``(before, after)`` int pairs, one per
            input axis (all axes).
        mode (str): ``'CONSTANT'`` (zeros, default), ``'REFLECT'`` (edge not
            repeated: padding < size) or ``'SYMMETRIC'`` (edge repeated:
            padding <= size).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Pad(((1, 0), (0, 2)))(ms.ops.ones((1, 2)))
    Array([[0., 0., 0., 0.],
           [1., 1., 0., 0.]], dtype=float32)
    """

    _MODES = {"CONSTANT": "constant", "REFLECT": "reflect", "SYMMETRIC": "symmetric"}

    def __init__(self, paddings, mode="CONSTANT"):
        super().__init__()
        name = self.cls_name
        if not isinstance(mode, str) or mode.upper() not in self._MODES:
            raise ValueError(f"For '{name}', the 'mode' must be in ['CONSTANT', 'REFLECT', 'SYMMETRIC'], "
                             f"but got {mode!r}.")
        if not isinstance(paddings, tuple):
            raise TypeError(f"For '{name}', the type of 'paddings' must be tuple, but got "
                            f"{type(paddings).__name__}.")
        for item in paddings:
            if not (isinstance(item, tuple) and len(item) == 2 and all(_is_int(v) and v >= 0 for v in item)):
                raise ValueError(f"For '{name}', each item of 'paddings' must be a pair of non-negative ints, "
                                 f"but got {item!r}.")
        self.paddings = paddings
        self.mode = mode.upper()

    def construct(self, x):
        x = jnp.asarray(_v(x))
        name = self.cls_name
        if len(self.paddings) != x.ndim:
            raise ValueError(f"For '{name}', the length of 'paddings' must equal the input's rank {x.ndim}, "
                             f"but got {len(self.paddings)}.")
        mode = self._MODES[self.mode]
        if mode == "constant":
            return jnp.pad(x, self.paddings)
        limit = 0 if mode == "reflect" else 1
        for axis, (lo, hi) in enumerate(self.paddings):
            if max(lo, hi) >= x.shape[axis] + limit:
                raise ValueError(f"For '{name}', in mode {self.mode} the padding {(lo, hi)} of axis {axis} must "
                                 f"be {'<' if limit == 0 else '<='} its size {x.shape[axis]}.")
        return jnp.pad(x, self.paddings, mode=mode)

    def extend_repr(self):
        return f"paddings={self.paddings}, mode={self.mode}"
