"""Training with loss scaling: the scale-update Cells and the one-step Cell that skips overflowing steps.

MindSpore's ``nn.DynamicLossScaleUpdateCell``, ``nn.FixedLossScaleUpdateCell`` and
``nn.TrainOneStepWithLossScaleCell``, used by :func:`cellkit.amp.build_train_network`
(``cellkit.amp`` takes ``cellkit.nn``'s own when it has them).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..cell import Cell
from ..engine import value_and_grad
from ..ops.function.parameter_func import assign
from ..parameter import Parameter

__all__ = ["DynamicLossScaleUpdateCell", "FixedLossScaleUpdateCell", "TrainOneStepWithLossScaleCell"]


class DynamicLossScaleUpdateCell(Cell):
    """``construct(loss_scale, overflow)``: on overflow divide ``loss_scale`` (a Parameter) by
    ``scale_factor`` (not below 1); after ``scale_window`` steps without one multiply it."""

    def __init__(self, loss_scale_value, scale_factor, scale_window):
        super().__init__()
        self.scale_window = int(scale_window)
        self.scale_factor = float(scale_factor)
        self.loss_scale_value = loss_scale_value
        self.cur_iter = Parameter(np.array(1, np.int32), name="current_iterator_step")
        self.last_overflow_iter = Parameter(np.array(0, np.int32), name="last_overflow_iterator_step")

    def get_loss_scale(self):
        return self.loss_scale_value

    def construct(self, loss_scale, overflow):
        scale = loss_scale.value
        factor = jnp.asarray(self.scale_factor, scale.dtype)
        on_overflow = jnp.where(overflow, jnp.maximum(scale * (1 / factor), jnp.ones((), scale.dtype)), scale)
        cur, last = self.cur_iter.value, self.last_overflow_iter.value
        should_inc = self.scale_window <= cur - last
        assign(self.last_overflow_iter, jnp.where(overflow | should_inc, cur, last))
        assign(loss_scale, jnp.where(should_inc & ~overflow, on_overflow * factor, on_overflow))
        assign(self.cur_iter, cur + 1)
        return overflow


class FixedLossScaleUpdateCell(Cell):
    """A scale that never changes: ``construct`` returns ``overflow``."""

    def __init__(self, loss_scale_value):
        super().__init__()
        self.loss_scale_value = loss_scale_value

    def get_loss_scale(self):
        return self.loss_scale_value

    def construct(self, _, overflow):
        return overflow


def _state_params(optimizer):
    seen, out = set(), []
    for p in list(optimizer.get_parameters()) + list(getattr(optimizer, "parameters", ())):
        if id(p) not in seen:
            seen.add(id(p))
            out.append(p)
    return out


class TrainOneStepWithLossScaleCell(Cell):
    """One step with the loss scaled by ``scale_sense`` (an update Cell, or a Tensor of shape
    () or (1,)): gradients of ``scale * loss``, divided by the scale; when any is not finite
    the optimizer's state is left as it was. Returns ``(loss, overflow, scale used)``."""

    def __init__(self, network, optimizer, scale_sense):
        super().__init__(auto_prefix=False)
        self.network = network
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        self.loss_scaling_manager = None
        if isinstance(scale_sense, Cell):
            self.loss_scaling_manager = scale_sense
            value = np.asarray(scale_sense.get_loss_scale(), np.float32)
        elif isinstance(scale_sense, (jax.Array, np.ndarray)):
            if tuple(scale_sense.shape) not in ((), (1,)):
                raise ValueError("For 'TrainOneStepWithLossScaleCell', the shape of 'scale_sense' must be (1,) or (), "
                                 f"but got {scale_sense.shape}.")
            value = np.asarray(scale_sense)
        else:
            raise TypeError("For 'TrainOneStepWithLossScaleCell', the 'scale_sense' must be Cell or Tensor, but got "
                            f"'scale_sense' type: {type(scale_sense)}.")
        self.scale_sense = Parameter(value, name="scale_sense")

    def set_sense_scale(self, sens):
        """Set the scale (with a Tensor ``scale_sense``)."""
        self.scale_sense.set_data(sens)

    def construct(self, *inputs):
        scale = self.scale_sense.value

        def scaled(*xs):
            loss = self.network(*xs)
            return jnp.sum(loss * scale.astype(loss.dtype)), loss

        (_, loss), grads = value_and_grad(scaled, None, self.weights, has_aux=True)(*inputs)
        inv = 1 / scale
        grads = tuple(jax.tree.map(lambda g: g * inv.astype(g.dtype), g) for g in grads)
        finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(leaf)) for leaf in jax.tree.leaves(grads)]))
        cond = jnp.logical_not(finite)
        overflow = cond
        if self.loss_scaling_manager is not None:
            overflow = self.loss_scaling_manager(self.scale_sense, cond)
        state = _state_params(self.optimizer)
        before = [p.value for p in state]
        self.optimizer(grads)
        for p, old in zip(state, before):
            assign(p, jnp.where(overflow, old, p.value))
        return loss, cond, scale
