"""Basic layers: ``Dense``, ``Flatten``, ``Dropout``, ``ParameterUpdate``.

>>> import cellkit as ms
>>> from cellkit import nn
>>> d = nn.Dense(3, 4)
>>> d
Dense(input_channels=3, output_channels=4, has_bias=True)
>>> d.weight.shape, d(ms.ops.ones((2, 3))).shape
((4, 3), (2, 4))
"""

from __future__ import annotations

import jax.numpy as jnp

from .. import dtype as mstype
from .. import ops
from ..cell import Cell
from ..parameter import Parameter
from ._init_util import default_bias_init, default_weight_init, make_param
from .activation import get_activation

__all__ = ["Dense", "Flatten", "Dropout", "ParameterUpdate", "Identity"]


def check_last_dim(cell, x, expected, what="in_channels"):
    """A clear error when an input's last dimension does not fit the layer."""
    shape = jnp.shape(x)
    if not shape or shape[-1] != expected:
        raise ValueError(f"{cell.cls_name}: expected an input whose last dimension is {expected} "
                         f"({what}), got shape {tuple(shape)}")


class Dense(Cell):
    """Fully connected layer ``y = activation(x @ weight.T + bias)``.

    MindSpore's layout and defaults: ``weight`` is (out_channels, in_channels),
    initialised with ``HeUniform(sqrt(5))``; ``bias`` (out_channels,) with
    U(-1/sqrt(in_channels), 1/sqrt(in_channels)); ``has_bias=True``;
    ``activation`` a name ('relu', ...) or a Cell. Inputs of any rank ≥ 1 are
    accepted (the last axis is the feature axis).
    """

    def __init__(self, in_channels, out_channels, weight_init=None, bias_init=None, has_bias=True,
                 activation=None, dtype=mstype.float32, *, weight_sharding=None, bias_sharding=None):
        super().__init__()
        self.in_channels = int(in_channels)
        self.out_channels = int(out_channels)
        self.has_bias = bool(has_bias)
        shape = (self.out_channels, self.in_channels)
        self.weight = make_param(default_weight_init() if weight_init is None else weight_init,
                                 shape, dtype, "weight", what="Dense")
        self.weight.sharding = weight_sharding
        self.bias = None
        if self.has_bias:
            self.bias = make_param(default_bias_init(shape) if bias_init is None else bias_init,
                                   (self.out_channels,), dtype, "bias", what="Dense")
            self.bias.sharding = bias_sharding
        self.activation = get_activation(activation) if isinstance(activation, str) else activation
        if activation is not None and not isinstance(self.activation, Cell):
            raise TypeError(f"Dense: activation must be a name or a Cell, got {type(activation).__name__}")

    def construct(self, x):
        check_last_dim(self, x, self.in_channels)
        y = ops.matmul(x, self.weight.value.T)
        if self.bias is not None:
            y = y + self.bias.value
        if self.activation is not None:
            y = self.activation(y)
        return y

    def extend_repr(self):
        s = f"input_channels={self.in_channels}, output_channels={self.out_channels}, has_bias={self.has_bias}"
        if self.activation is not None:
            s += f", activation={self.activation!r}"
        return s


class Flatten(Cell):
    """Flatten dimensions ``start_dim..end_dim`` (by default all but the batch axis)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def construct(self, x):
        return ops.flatten(x, start_dim=self.start_dim, end_dim=self.end_dim)


class Identity(Cell):
    """Returns its input."""

    def construct(self, x):
        return x


class Dropout(Cell):
    """Zero elements with probability ``p`` (or ``1 - keep_prob``) while training.

    Like every Cell it starts with ``training=False``: call ``set_train()`` to
    make it drop. Each call draws a fresh mask from the random stream, also
    inside ``cellkit.jit``.
    """

    def __init__(self, keep_prob=0.5, p=None, dtype=mstype.float32):
        super().__init__()
        p = 1.0 - keep_prob if p is None else p
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p < 1.0:
            raise ValueError(f"Dropout: p must be a float in [0, 1), got {p!r}")
        self.p = float(p)

    def construct(self, x):
        if not self.training or self.p == 0.0:
            return x
        return ops.dropout(x, p=self.p)

    def extend_repr(self):
        return f"p={self.p}"


class ParameterUpdate(Cell):
    """Assign its input to ``param`` (same shape) and return it.

    >>> import numpy as np
    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> p = ms.Parameter(ms.Tensor(np.zeros((2,)), ms.float32), name="p")
    >>> _ = nn.ParameterUpdate(p)(ms.Tensor([1., 2.]))
    >>> p.asnumpy()
    array([1., 2.], dtype=float32)
    """

    def __init__(self, param):
        super().__init__(auto_prefix=False)
        if not isinstance(param, Parameter):
            raise TypeError(f"ParameterUpdate: param must be a Parameter, got {type(param).__name__}")
        self._param = param

    def construct(self, x):
        return ops.assign(self._param, x)
