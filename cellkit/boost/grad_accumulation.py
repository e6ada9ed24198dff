"""``mindspore.boost.grad_accumulation``: accumulate gradients over several steps, then update.

>>> import numpy as np
>>> import cellkit as ms
>>> from cellkit import nn
>>> from cellkit.boost import GradientAccumulation
>>> net = nn.Dense(2, 1, weight_init="ones", bias_init="zeros")
>>> acc = GradientAccumulation(2, nn.SGD(net.trainable_params(), learning_rate=1.0))
>>> grads = tuple(ms.Tensor(np.ones(p.shape, np.float32)) for p in net.trainable_params())
>>> _ = acc(ms.Tensor(0.0), grads)        # first step: accumulated, no update
>>> net.weight.asnumpy().tolist()
[[1.0, 1.0]]
>>> _ = acc(ms.Tensor(0.0), grads)        # second step: the mean gradient is applied
>>> net.weight.asnumpy().tolist()
[[0.0, 0.0]]
"""

from .. import ops
from ..cell import Cell
from ..dtype import int32
from ..ops import composite as C
from ..parameter import Parameter
from ..tensor import Tensor

__all__ = ["GradientAccumulation", "gradient_accumulation_op", "gradient_clear_op"]

gradient_accumulation_op = C.MultitypeFuncGraph("gradient_accumulation_op")
gradient_clear_op = C.MultitypeFuncGraph("gradient_clear_op")


@gradient_accumulation_op.register("Int64", "Tensor", "Tensor")
def _cumulative_grad(accumulation_step, cumulative_grad, grad):
    ops.assign_add(cumulative_grad, grad / accumulation_step)
    return cumulative_grad


@gradient_clear_op.register("Tensor")
def _clear_grad(cumulative_grad):
    ops.assign(cumulative_grad, ops.zeros_like(cumulative_grad))
    return cumulative_grad


class GradientAccumulation(Cell):
    """Sum ``grads / max_accumulation_step`` for ``max_accumulation_step`` calls, then run
    ``optimizer`` on the sum and clear it (MindSpore's ``boost.GradientAccumulation``)."""

    def __init__(self, max_accumulation_step, optimizer):
        super().__init__()
        self._max_accumulation_step = max_accumulation_step
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        self.hyper_map = C.HyperMap()
        self._grad_accumulation = self.weights.clone(prefix="grad_accumulation", init="zeros")
        self._accumulation_step = Parameter(Tensor(0, dtype=int32), name="accumulation_step")

    def construct(self, loss, grads):
        loss = ops.depend(loss, self.hyper_map(ops.partial(gradient_accumulation_op, self._max_accumulation_step),
                                               self._grad_accumulation, grads))
        self._accumulation_step += 1
        if self._accumulation_step >= self._max_accumulation_step:
            loss = ops.depend(loss, self.optimizer(self._grad_accumulation))
            ops.assign(self._accumulation_step, ops.zeros_like(self._accumulation_step))
        if self._accumulation_step == 0:
            loss = ops.depend(loss, self.hyper_map(ops.partial(gradient_clear_op), self._grad_accumulation))
        return loss
