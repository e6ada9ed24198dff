"""Loss scaling: ``TrainOneStepWithLossScaleCell``, ``DynamicLossScaleUpdateCell``, ``FixedLossScaleUpdateCell``.

The loss is scaled by ``scale_sense`` before differentiation, the gradients
unscaled after it; if any gradient is not finite the step is an *overflow*: the
optimizer is skipped (its weights and state keep their values) and an update
cell lowers the scale. Each call returns ``(loss, overflow, scale)``, the scale
read after the update cell ran, as MindSpore does. Works eagerly and inside
``jit`` (there the skip is a select of old and new values).

>>> import cellkit as ms
>>> from cellkit import nn
>>> net = nn.Dense(2, 1, weight_init="ones", bias_init="zeros")
>>> manager = nn.DynamicLossScaleUpdateCell(loss_scale_value=2.0 ** 10, scale_factor=2, scale_window=1)
>>> step = nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, nn.MSELoss()),
...                                         nn.SGD(net.trainable_params(), 0.01), manager)
>>> loss, overflow, scale = step(ms.Tensor([[1.0, 2.0]]), ms.Tensor([[1.0]]))
>>> bool(overflow), float(scale)
(False, 2048.0)
>>> loss, overflow, scale = step(ms.Tensor([[1e30, 2.0]]), ms.Tensor([[1.0]]))
>>> bool(overflow), float(scale), net.weight.asnumpy()
(True, 1024.0, array([[0.96, 0.92]], dtype=float32))
"""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp

from ... import ops
from ...cell import Cell
from ...engine import value_and_grad
from ...parameter import Parameter
from .cell_wrapper import TrainOneStepCell

__all__ = ["DynamicLossScaleUpdateCell", "FixedLossScaleUpdateCell", "TrainOneStepWithLossScaleCell"]


def _value(x):
    return x.value if isinstance(x, Parameter) else jnp.asarray(x)


class DynamicLossScaleUpdateCell(Cell):
    """Lowers the loss scale on overflow, raises it after ``scale_window`` steps without one.

    ``construct(loss_scale, overflow)`` (``loss_scale`` the Parameter to update)::

        scale = max(scale / scale_factor, 1)             on overflow
        scale = scale * scale_factor                     if cur_iter - last_overflow_iter >= scale_window
                                                         (and no overflow)
        last_overflow_iter = cur_iter                    on overflow or after raising
        cur_iter += 1

    returns ``overflow``. State: ``cur_iter`` (Parameter
    ``current_iterator_step``, from 1) and ``last_overflow_iter``
    (``last_overflow_iterator_step``, from 0), int32 scalars.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> cell = nn.DynamicLossScaleUpdateCell(loss_scale_value=8.0, scale_factor=2, scale_window=2)
    >>> scale = ms.Parameter(ms.Tensor(8.0), name="scale_sense")
    >>> for overflow in (False, False, True):
    ...     _ = cell(scale, ms.Tensor(overflow))
    ...     print(float(scale.asnumpy()), int(cell.cur_iter.asnumpy()))
    8.0 2
    16.0 3
    8.0 4
    """

    def __init__(self, loss_scale_value, scale_factor, scale_window):
        super().__init__()
        for name, value in (("loss_scale_value", loss_scale_value), ("scale_factor", scale_factor),
                            ("scale_window", scale_window)):
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"For 'DynamicLossScaleUpdateCell', '{name}' must be a number, but got "
                                f"{type(value).__name__}.")
        self.scale_window = jnp.asarray(scale_window, jnp.int32)
        self.scale_factor = jnp.asarray(scale_factor, jnp.float32)
        self.loss_scale_value = loss_scale_value
        self.cur_iter = Parameter(jnp.asarray(1, jnp.int32), name="current_iterator_step", requires_grad=False)
        self.last_overflow_iter = Parameter(jnp.asarray(0, jnp.int32), name="last_overflow_iterator_step",
                                            requires_grad=False)
        self.minimum_loss_scale = jnp.asarray(1.0, jnp.float32)

    def get_loss_scale(self):
        """The initial loss scale."""
        return self.loss_scale_value

    def construct(self, loss_scale, overflow):
        overflow_b = jnp.asarray(_value(overflow)).astype(bool)
        scale = _value(loss_scale)
        factor = self.scale_factor.astype(scale.dtype)
        lowered = jnp.where(overflow_b, jnp.maximum(scale / factor, self.minimum_loss_scale.astype(scale.dtype)),
                            scale)
        cur, last = self.cur_iter.value, self.last_overflow_iter.value
        should_inc = self.scale_window <= cur - last
        ops.assign(self.last_overflow_iter, jnp.where(overflow_b | should_inc, cur, last))
        ops.assign(loss_scale, jnp.where(should_inc & ~overflow_b, lowered * factor, lowered))
        ops.assign(self.cur_iter, cur + 1)
        return overflow


class FixedLossScaleUpdateCell(Cell):
    """A loss scale that never changes: ``construct(loss_scale, overflow)`` returns ``overflow``.

    >>> from cellkit import nn
    >>> nn.FixedLossScaleUpdateCell(128.0).get_loss_scale()
    128.0
    """

    def __init__(self, loss_scale_value):
        super().__init__()
        self.loss_scale_value = loss_scale_value

    def get_loss_scale(self):
        """The loss scale."""
        return self.loss_scale_value

    def construct(self, _, overflow):
        return overflow


def _not_finite(grads):
    flags = [~jnp.isfinite(g).all() for g in jax.tree_util.tree_leaves(grads)]
    return jnp.stack(flags).any() if flags else jnp.asarray(False)


class TrainOneStepWithLossScaleCell(TrainOneStepCell):
    """One training step with loss scaling; returns ``(loss, overflow, scale)``.

    ``scale_sense``: a Tensor of shape ``()`` or ``(1,)`` (a fixed scale,
    changed with :meth:`set_sense_scale`) or an update Cell
    (:class:`DynamicLossScaleUpdateCell`, :class:`FixedLossScaleUpdateCell`),
    whose ``get_loss_scale()`` starts the Parameter ``scale_sense``. The
    overflow check is "some gradient is not finite" (MindSpore's INFNAN mode);
    override :meth:`get_overflow_status` to change it.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> net = nn.Dense(1, 1, weight_init="ones", bias_init="zeros")
    >>> step = nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, nn.MSELoss()),
    ...                                         nn.SGD(net.trainable_params(), 0.1), ms.Tensor(8.0))
    >>> loss, overflow, scale = step(ms.Tensor([[1.0]]), ms.Tensor([[0.0]]))
    >>> float(loss), bool(overflow), float(scale), net.weight.asnumpy()
    (1.0, False, 8.0, array([[0.8]], dtype=float32))
    """

    # MindSpore's operator attributes, which subclasses' construct methods use.
    reduce_sum = ops.ReduceSum(keep_dims=False)
    reduce_all = ops.ReduceAll(keep_dims=False)
    less_equal = ops.LessEqual()
    equal = ops.Equal()
    logic_not = ops.LogicalNot()
    allreduce = ops.AllReduce()
    enable_allfinite = True
    enable_tuple_broaden = True
    ascend_910a_target = False
    ascend_910b_target = False

    def __init__(self, network, optimizer, scale_sense):
        super().__init__(network, optimizer, sens=None)
        self.base = jnp.asarray(1, jnp.float32)
        self.base0 = jnp.asarray(0, jnp.int32)
        self.is_distributed = self.parallel_mode != "stand_alone"
        self.gpu_target = jax.default_backend() == "gpu"
        self.loss_scaling_manager = None
        if isinstance(scale_sense, Cell):
            self.loss_scaling_manager = scale_sense
            self.scale_sense = Parameter(jnp.asarray(scale_sense.get_loss_scale(), jnp.float32),
                                         name="scale_sense", requires_grad=False)
        elif isinstance(scale_sense, (jax.Array, Parameter)) and not isinstance(scale_sense, bool):
            value = _value(scale_sense)
            if value.shape not in ((1,), ()):
                raise ValueError(f"For 'TrainOneStepWithLossScaleCell', the shape of 'scale_sense' must be (1,) or "
                                 f"(), but got {tuple(value.shape)}.")
            self.scale_sense = Parameter(value, name="scale_sense", requires_grad=False)
        else:
            raise TypeError(f"For 'TrainOneStepWithLossScaleCell', the 'scale_sense' must be Cell or Tensor, but "
                            f"got 'scale_sense' type: {type(scale_sense)}.")

    def construct(self, *inputs):
        scaling_sens = self.scale_sense.value

        def scaled(*args):
            loss = self.network(*args)
            return jnp.sum(loss * scaling_sens.astype(jnp.result_type(loss))), loss

        (_, loss), grads = value_and_grad(scaled, None, self.weights, has_aux=True)(*inputs)
        grads = tuple(g * (1.0 / scaling_sens).astype(g.dtype).reshape(()) for g in grads)
        grads = self._reduce(grads)
        status, grads = self.start_overflow_check(None, grads)
        cond = self.get_overflow_status(status, grads)
        overflow = self.process_loss_scale(cond)
        self._step_unless(overflow, grads)
        return loss, cond, self.scale_sense.value

    def _step_unless(self, overflow, grads):
        """``optimizer(grads)`` unless ``overflow``: eagerly a Python branch, traced a select of old and new state."""
        overflow = _value(overflow)
        if not isinstance(overflow, jax.core.Tracer):
            if not bool(overflow.reshape(-1)[0]):
                self.optimizer(grads)
            return
        params = list(self.optimizer.get_parameters())
        before = [p.value for p in params]
        self.optimizer(grads)
        skip = overflow.reshape(-1)[0]
        for p, old in zip(params, before):
            ops.assign(p, jnp.where(skip, old, p.value))

    def set_sense_scale(self, sens):
        """Set the loss scale (a Tensor)."""
        if not isinstance(sens, (jax.Array, Parameter)):
            raise TypeError(f"For 'TrainOneStepWithLossScaleCell', the type of 'sens' must be Tensor, but got "
                            f"{type(sens)}")
        ops.assign(self.scale_sense, _value(sens).astype(self.scale_sense.dtype).reshape(self.scale_sense.shape))

    def start_overflow_check(self, pre_cond, compute_input):
        """``(status, compute_input)``; the status is unused (there are no float-status registers to clear)."""
        return jnp.zeros((8,), jnp.int32), compute_input

    def get_overflow_status(self, status, compute_output):
        """True when some gradient has an inf or NaN."""
        return _not_finite(compute_output)

    def process_loss_scale(self, overflow):
        """Run the update cell (if any) on ``scale_sense``; returns the overflow flag."""
        if self.loss_scaling_manager is not None:
            return self.loss_scaling_manager(self.scale_sense, overflow)
        return overflow
