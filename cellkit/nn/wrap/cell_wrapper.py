"""Training wrappers: ``WithLossCell`` (network + loss) and ``TrainOneStepCell`` (one optimizer step).

Both use ``auto_prefix=False``, as in MindSpore, so the wrapped Parameters keep
their names (no ``_backbone.``/``network.`` prefix). ``TrainOneStepCell``
differentiates with ``cellkit.value_and_grad`` and works eagerly, under
``cellkit.jit`` and in ``GRAPH_MODE`` (where each call is one compiled step).

>>> import numpy as np
>>> import cellkit as ms
>>> from cellkit import nn
>>> ms.set_seed(0)
>>> net = nn.Dense(3, 1)
>>> train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
...                             nn.SGD(net.trainable_params(), learning_rate=0.1))
>>> x = ms.Tensor(np.ones((4, 3)), ms.float32)
>>> y = ms.Tensor(np.zeros((4, 1)), ms.float32)
>>> losses = [float(train(x, y)) for _ in range(20)]
>>> losses[-1] < losses[0] / 100
True
"""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp

from ...cell import Cell
from ...engine import value_and_grad

__all__ = ["WithLossCell", "TrainOneStepCell"]


class WithLossCell(Cell):
    """``loss_fn(backbone(data), label)``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> net = nn.Dense(2, 1, weight_init="ones", bias_init="zeros")
    >>> with_loss = nn.WithLossCell(net, nn.L1Loss())
    >>> with_loss(ms.Tensor([[1.0, 2.0]]), ms.Tensor([[1.0]]))
    Array(2., dtype=float32)
    >>> [p.name for p in with_loss.trainable_params()], with_loss.backbone_network is net
    (['weight', 'bias'], True)
    """

    def __init__(self, backbone, loss_fn):
        super().__init__(auto_prefix=False)
        if not isinstance(backbone, Cell):
            raise TypeError(f"WithLossCell: backbone must be a Cell, got {type(backbone).__name__}")
        if not callable(loss_fn):
            raise TypeError(f"WithLossCell: loss_fn must be a Cell or callable, got {type(loss_fn).__name__}")
        self._backbone = backbone
        self._loss_fn = loss_fn

    def construct(self, data, label):
        out = self._backbone(data)
        return self._loss_fn(out, label)

    @property
    def backbone_network(self) -> Cell:
        """The wrapped network."""
        return self._backbone


class TrainOneStepCell(Cell):
    """One training step: the loss, its gradients w.r.t. ``optimizer.parameters``, the update.

    ``construct(*inputs)`` computes ``loss = network(*inputs)`` and the
    gradients of ``sens * loss`` (MindSpore fills the sensitivity with ``sens``;
    a non-scalar loss is summed), calls ``optimizer(grads)`` and returns the
    loss computed *before* the update. With ``return_grad=True`` it returns
    ``(loss, {parameter name: gradient})``. Like MindSpore it does not call
    ``set_train()``: do so on the network if it has Dropout or BatchNorm.

    Args:
        network: a Cell returning the loss (usually a :class:`WithLossCell`).
        optimizer: an Optimizer (or any Cell with a ``parameters`` tuple).
        sens: the sensitivity, a non-zero number; None (MindSpore 2.10's
            default) means 1.0.
        return_grad: also return the gradients by parameter name.

    >>> import numpy as np
    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> net = nn.Dense(2, 1, weight_init="zeros", bias_init="zeros")
    >>> step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
    ...                            nn.SGD(net.trainable_params(), 0.5), return_grad=True)
    >>> loss, grads = step(ms.Tensor([[1.0, 1.0]]), ms.Tensor([[1.0]]))
    >>> float(loss), sorted(grads), net.bias.asnumpy()
    (1.0, ['bias', 'weight'], array([1.], dtype=float32))
    """

    def __init__(self, network, optimizer, sens=None, return_grad=False):
        super().__init__(auto_prefix=False)
        if not isinstance(network, Cell):
            raise TypeError(f"TrainOneStepCell: network must be a Cell, got {type(network).__name__}")
        if not hasattr(optimizer, "parameters"):
            raise TypeError("TrainOneStepCell: optimizer must be an Optimizer (a Cell with a 'parameters' "
                            f"tuple), got {type(optimizer).__name__}")
        if sens is not None and (isinstance(sens, bool) or not isinstance(sens, numbers.Number)):
            raise TypeError(f"TrainOneStepCell: sens must be a number or None, got {type(sens).__name__}")
        if sens is not None and sens == 0:
            raise ValueError("The input argument of 'sens' can not be 0.")
        if not isinstance(return_grad, bool):
            raise TypeError(f"TrainOneStepCell: return_grad must be a bool, got {type(return_grad).__name__}")
        self.network = network
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        self.sens = 1.0 if sens is None else sens
        self.return_grad = return_grad
        self.weights_name = tuple(p.name for p in self.weights)

    def construct(self, *inputs):
        loss, grads = value_and_grad(self.network, None, self.weights)(*inputs)
        if self.sens != 1.0:
            grads = tuple(jax.tree.map(lambda g: g * jnp.asarray(self.sens, g.dtype), g) for g in grads)
        self.optimizer(grads)
        if self.return_grad:
            return loss, dict(zip(self.weights_name, grads))
        return loss
