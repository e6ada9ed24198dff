"""Dense-like layers of MindSpore's ``nn/layer/dense.py`` and ``basic.py``: ``BiDense`` (bilinear) and ``Linear``.

>>> import cellkit as ms
>>> from cellkit import nn
>>> nn.Linear(3, 2)
Linear(input_features=3, output_features=2, has_bias=True)
>>> nn.BiDense(2, 3, 4)(ms.ops.ones((5, 2)), ms.ops.ones((5, 3))).shape
(5, 4)
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from ... import dtype as mstype
from ...cell import Cell
from ...initializer import Uniform
from ...ops.function._utils import _v
from .._checks import check_bool, positive_int
from .._init_util import default_bias_init, default_weight_init, make_param

__all__ = ["BiDense", "Linear"]


def _last_dim(cell, x, expected, arg, what):
    if not x.shape or x.shape[-1] != expected:
        raise ValueError(f"For '{cell.cls_name}', the last dimension of '{arg}' must be {expected} ({what}), "
                         f"but got shape {tuple(x.shape)}.")


class BiDense(Cell):
    """Bilinear layer ``y[..., o] = x1 @ weight[o] @ x2 + bias[o]`` (MindSpore 2.10's ``nn.BiDense``).

    Args:
        in1_channels, in2_channels (int): features of ``input1`` and ``input2``.
        out_channels (int): output features.
        weight_init: default ``None``, i.e. U(±1/sqrt(in1_channels)); shape
            (out_channels, in1_channels, in2_channels).
        bias_init: default ``None``, i.e. U(±1/sqrt(in1_channels)).
        has_bias (bool): default ``True``.
        dtype: default ``float32``.

    ``input1`` (*, in1_channels) and ``input2`` (*, in2_channels) share their leading axes.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> net = nn.BiDense(2, 2, 1, weight_init='ones', bias_init='zeros')
    >>> net(ms.Tensor([[1., 2.]]), ms.Tensor([[3., 4.]]))
    Array([[21.]], dtype=float32)
    """

    def __init__(self, in1_channels, in2_channels, out_channels, weight_init=None, bias_init=None, has_bias=True,
                 dtype=mstype.float32):
        super().__init__()
        self.in1_channels = positive_int(in1_channels, "in1_channels", "BiDense")
        self.in2_channels = positive_int(in2_channels, "in2_channels", "BiDense")
        self.out_channels = positive_int(out_channels, "out_channels", "BiDense")
        self.has_bias = check_bool(has_bias, "has_bias", "BiDense")
        bound = 1 / math.sqrt(self.in1_channels)
        self.weight = make_param(Uniform(bound) if weight_init is None else weight_init,
                                 (self.out_channels, self.in1_channels, self.in2_channels), dtype, "weight",
                                 what="BiDense")
        self.bias = None
        if self.has_bias:
            self.bias = make_param(Uniform(bound) if bias_init is None else bias_init, (self.out_channels,), dtype,
                                   "bias", what="BiDense")

    def construct(self, input1, input2):
        x1, x2 = jnp.asarray(_v(input1)), jnp.asarray(_v(input2))
        _last_dim(self, x1, self.in1_channels, "input1", "in1_channels")
        _last_dim(self, x2, self.in2_channels, "input2", "in2_channels")
        if x1.shape[:-1] != x2.shape[:-1]:
            raise ValueError(f"For '{self.cls_name}', 'input1' and 'input2' must have the same leading axes, but "
                             f"got shapes {x1.shape} and {x2.shape}.")
        y = jnp.einsum("...i,oij,...j->...o", x1, self.weight.value, x2)
        return y if self.bias is None else y + self.bias.value

    def extend_repr(self):
        s = f"in1_channels={self.in1_channels}, in2_channels={self.in2_channels}, output_channels={self.out_channels}"
        if self.has_bias:
            s += f", has_bias={self.has_bias}"
        return s


class Linear(Cell):
    """``y = x @ weight.T + bias`` with PyTorch-style arguments (MindSpore 2.10's ``nn.Linear``).

    Args:
        in_features, out_features (int): input and output features.
        bias (bool): default ``True``.
        weight_init: default ``None``, i.e. ``HeUniform(sqrt(5))``; shape (out_features, in_features).
        bias_init: default ``None``, i.e. U(±1/sqrt(in_features)).
        dtype: default ``None``, i.e. ``float32``.

    Parameters ``weight`` and ``bias``, as ``nn.Dense``'s.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Linear(2, 1, weight_init='ones', bias_init='zeros')(ms.Tensor([[1., 2.]]))
    Array([[3.]], dtype=float32)
    """

    def __init__(self, in_features, out_features, bias=True, weight_init=None, bias_init=None, dtype=None):
        super().__init__()
        self.in_features = positive_int(in_features, "in_features", "Linear")
        self.out_features = positive_int(out_features, "out_features", "Linear")
        self.has_bias = check_bool(bias, "has_bias", "Linear")
        dtype = mstype.float32 if dtype is None else dtype
        shape = (self.out_features, self.in_features)
        self.weight = make_param(default_weight_init() if weight_init is None else weight_init, shape, dtype,
                                 "weight", what="Linear")
        self.bias = None
        if self.has_bias:
            self.bias = make_param(default_bias_init(shape) if bias_init is None else bias_init,
                                   (self.out_features,), dtype, "bias", what="Linear")

    def construct(self, x):
        x = jnp.asarray(_v(x))
        _last_dim(self, x, self.in_features, "x", "in_features")
        y = jnp.matmul(x, self.weight.value.T)
        return y if self.bias is None else y + self.bias.value

    def extend_repr(self):
        s = f"input_features={self.in_features}, output_features={self.out_features}"
        if self.has_bias:
            s += f", has_bias={self.has_bias}"
        return s
