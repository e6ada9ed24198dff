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

from ... import ops
from ...cell import Cell
from ...suggest import did_you_mean

__all__ = ["ReLU", "ReLU6", "GELU", "SiLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "LeakyReLU",
           "Softplus", "get_activation"]


class ReLU(Cell):
    """``max(x, 0)`` elementwise (MindSpore's ``nn.ReLU()``; no arguments).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.ReLU()(ms.Tensor([-1., 0., 2.]))
    Array([0., 0., 2.], dtype=float32)
    """

    def construct(self, x):
        return ops.relu(x)


class ReLU6(Cell):
    """``min(max(x, 0), 6)`` elementwise.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.ReLU6()(ms.Tensor([-1., 3., 7.]))
    Array([0., 3., 6.], dtype=float32)
    """

    def construct(self, x):
        return ops.relu6(x)


class GELU(Cell):
    """GELU (MindSpore's ``nn.GELU(approximate=True)``).

    Args:
        approximate (bool): default ``True``, the tanh approximation
            ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`` (PyTorch's default
            is the exact form); ``False`` gives ``0.5 x (1 + erf(x / sqrt(2)))``.

    The repr is ``GELU()`` either way, as in MindSpore.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.GELU()(ms.Tensor([1.0])), nn.GELU(approximate=False)(ms.Tensor([1.0]))
    (Array([0.841192], dtype=float32), Array([0.8413447], dtype=float32))
    """

    def __init__(self, approximate=True):
        super().__init__()
        self.approximate = approximate

    def construct(self, x):
        return jax.nn.gelu(ops.function._utils._v(x), approximate=self.approximate)


class SiLU(Cell):
    """``x * sigmoid(x)`` elementwise (``nn.SiLU()``; no arguments).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.SiLU()(ms.Tensor([0., 1.]))
    Array([0.       , 0.7310586], dtype=float32)
    """

    def construct(self, x):
        return ops.silu(x)


class Sigmoid(Cell):
    """``1 / (1 + exp(-x))`` elementwise (``nn.Sigmoid()``; no arguments).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Sigmoid()(ms.Tensor([0.]))
    Array([0.5], dtype=float32)
    """

    def construct(self, x):
        return ops.sigmoid(x)


class Tanh(Cell):
    """``tanh(x)`` elementwise (``nn.Tanh()``; no arguments).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Tanh()(ms.Tensor([0.]))
    Array([0.], dtype=float32)
    """

    def construct(self, x):
        return ops.tanh(x)


class Softmax(Cell):
    """Softmax over ``axis`` (``nn.Softmax(axis=-1)``).

    Args:
        axis (int or tuple[int]): default ``-1``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Softmax()(ms.Tensor([[0., 0.], [0., 0.]]))
    Array([[0.5, 0.5],
           [0.5, 0.5]], dtype=float32)
    """

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        return ops.softmax(x, self.axis)


class LogSoftmax(Cell):
    """Log-softmax over ``axis`` (``nn.LogSoftmax(axis=-1)``).

    Args:
        axis (int): default ``-1``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.LogSoftmax()(ms.Tensor([0., 0.]))
    Array([-0.6931472, -0.6931472], dtype=float32)
    """

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        return ops.log_softmax(x, self.axis)


class LeakyReLU(Cell):
    """``x if x > 0 else alpha * x`` (``nn.LeakyReLU(alpha=0.2)``).

    Args:
        alpha (float): slope for negative inputs; default ``0.2``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.LeakyReLU()(ms.Tensor([-1., 1.]))
    Array([-0.2,  1. ], dtype=float32)
    """

    def __init__(self, alpha=0.2):
        super().__init__()
        self.alpha = alpha

    def construct(self, x):
        return ops.leaky_relu(x, self.alpha)


class Softplus(Cell):
    """``log(1 + exp(x))`` elementwise.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Softplus()(ms.Tensor([0.]))
    Array([0.6931472], dtype=float32)
    """

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
        raise KeyError(f"unknown activation {name!r}{did_you_mean(str(name).lower(), _ACTIVATIONS) or ';'} "
                       f"known: {', '.join(sorted(_ACTIVATIONS))}")
    return cls()
