"""Activation Cells (ReLU, GELU, SiLU, Sigmoid, Tanh, Softmax, LogSoftmax, ...) and ``get_activation``.

>>> import cellkit as ms
>>> from cellkit import nn
>>> nn.ReLU()(ms.Tensor([-1., 2.]))
Array([0., 2.], dtype=float32)
>>> nn.get_activation('gelu')
GELU()
"""

from __future__ import annotations

import jax

from .. import ops
from ..cell import Cell

__all__ = ["ReLU", "ReLU6", "GELU", "SiLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "LeakyReLU",
           "Softplus", "get_activation"]


class ReLU(Cell):
    """max(x, 0)."""

    def construct(self, x):
        return ops.relu(x)


class ReLU6(Cell):
    """min(max(x, 0), 6)."""

    def construct(self, x):
        return ops.relu6(x)


class GELU(Cell):
    """GELU; ``approximate=True`` (MindSpore's default) uses the tanh approximation."""

    def __init__(self, approximate=True):
        super().__init__()
        self.approximate = approximate

    def construct(self, x):
        return jax.nn.gelu(ops.functional._v(x), approximate=self.approximate)


class SiLU(Cell):
    """x * sigmoid(x)."""

    def construct(self, x):
        return ops.silu(x)


class Sigmoid(Cell):
    """1 / (1 + exp(-x))."""

    def construct(self, x):
        return ops.sigmoid(x)


class Tanh(Cell):
    """tanh(x)."""

    def construct(self, x):
        return ops.tanh(x)


class Softmax(Cell):
    """Softmax over ``axis`` (default -1)."""

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        return ops.softmax(x, self.axis)


class LogSoftmax(Cell):
    """Log-softmax over ``axis`` (default -1)."""

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        return ops.log_softmax(x, self.axis)


class LeakyReLU(Cell):
    """x if x > 0 else alpha * x (default alpha 0.2)."""

    def __init__(self, alpha=0.2):
        super().__init__()
        self.alpha = alpha

    def construct(self, x):
        return ops.leaky_relu(x, self.alpha)


class Softplus(Cell):
    """log(1 + exp(x))."""

    def construct(self, x):
        return ops.softplus(x)


_ACTIVATIONS = {
    "relu": ReLU, "relu6": ReLU6, "gelu": GELU, "silu": SiLU, "swish": SiLU, "sigmoid": Sigmoid,
    "tanh": Tanh, "softmax": Softmax, "logsoftmax": LogSoftmax, "log_softmax": LogSoftmax,
    "leakyrelu": LeakyReLU, "softplus": Softplus,
}


def get_activation(name, prim_name=None):
    """The activation Cell for a name ('relu', 'gelu', ...); None gives None."""
    if name is None:
        return None
    cls = _ACTIVATIONS.get(str(name).lower())
    if cls is None:
        raise KeyError(f"unknown activation {name!r}; known: {', '.join(sorted(_ACTIVATIONS))}")
    return cls()
