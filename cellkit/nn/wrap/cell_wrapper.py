"""Training wrappers: ``WithLossCell``, ``WithEvalCell``, ``WithGradCell``, ``ForwardValueAndGrad``,
``TrainOneStepCell``, ``GradAccumulationCell`` and ``MicroBatchInterleaved`` (``ParameterUpdate`` is in ``nn.layer``).

They use ``auto_prefix=False``, as in MindSpore, so the wrapped Parameters keep
their names (no ``_backbone.``/``network.`` prefix). The training cells
differentiate with ``cellkit.value_and_grad`` and work eagerly, under
``cellkit.jit`` and in ``GRAPH_MODE`` (where each call is one compiled step).
Their ``grad`` attribute is MindSpore's ``GradOperation`` callable, for
subclasses that write their own ``construct``.

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

from ... import ops, parallel_context
from ...cell import Cell
from ...engine import value_and_grad
from ...parameter import Parameter, ParameterTuple
from ..layer.basic import Identity
from ._grad import GradOperation
from .grad_reducer import DistributedGradReducer

__all__ = ["WithLossCell", "WithEvalCell", "WithGradCell", "ForwardValueAndGrad", "TrainOneStepCell",
           "GradAccumulationCell", "MicroBatchInterleaved"]


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


class WithEvalCell(Cell):
    """``(loss_fn(network(data), label), outputs, label)``; ``add_cast_fp32`` casts outputs and label to float32.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> net = nn.Dense(2, 1, weight_init="ones", bias_init="zeros")
    >>> loss, out, label = nn.WithEvalCell(net, nn.L1Loss())(ms.Tensor([[1.0, 2.0]]), ms.Tensor([[1.0]]))
    >>> float(loss), out
    (2.0, Array([[3.]], dtype=float32))
    """

    def __init__(self, network, loss_fn, add_cast_fp32=False):
        super().__init__(auto_prefix=False)
        if not isinstance(add_cast_fp32, bool):
            raise TypeError(f"For 'WithEvalCell', the type of 'add_cast_fp32' should be 'bool', but got type "
                            f"'{type(add_cast_fp32).__name__}'.")
        self._network = network
        self._loss_fn = loss_fn
        self.add_cast_fp32 = add_cast_fp32

    def construct(self, data, label):
        outputs = self._network(data)
        if self.add_cast_fp32:
            label = jnp.asarray(label).astype(jnp.float32)
            outputs = jnp.asarray(outputs).astype(jnp.float32)
        return self._loss_fn(outputs, label), outputs, label


class WithGradCell(Cell):
    """The gradients of ``loss_fn(network(*inputs))`` (or of ``network(*inputs)``) w.r.t. its trainable Parameters.

    ``sens`` (a Tensor or number) scales the gradients, as MindSpore's sensitivity.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> net = nn.Dense(2, 1, weight_init="ones", bias_init="zeros")
    >>> gw, gb = nn.WithGradCell(net, nn.MSELoss())(ms.Tensor([[1.0, 2.0]]), ms.Tensor([[1.0]]))
    >>> gw, gb
    (Array([[4., 8.]], dtype=float32), Array([4.], dtype=float32))
    """

    def __init__(self, network, loss_fn=None, sens=None):
        super().__init__(auto_prefix=False)
        _check_cell("WithGradCell", "network", network)
        self.network = network
        self.loss_fn = loss_fn
        self.weights = ParameterTuple(network.trainable_params())
        self.grad = GradOperation(get_by_list=True, sens_param=sens is not None)
        self.sens = sens
        self.network_with_loss = network if loss_fn is None else WithLossCell(network, loss_fn)
        self.network_with_loss.set_train()

    def construct(self, *inputs):
        if self.sens is None:
            return self.grad(self.network_with_loss, self.weights)(*inputs)
        return self.grad(self.network_with_loss, self.weights)(*inputs, self.sens)


class ForwardValueAndGrad(Cell):
    """``(network(*inputs), gradients)`` in one forward pass; the gradients as :class:`GradOperation` gives them.

    ``get_all``: w.r.t. every input; ``get_by_list``: w.r.t. ``weights``; neither:
    w.r.t. the first input; ``sens_param``: the last input is the sensitivity.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> net = nn.WithLossCell(nn.Dense(2, 1, weight_init="ones", bias_init="zeros"), nn.MSELoss())
    >>> step = nn.ForwardValueAndGrad(net, weights=net.trainable_params(), get_by_list=True)
    >>> loss, (gw, gb) = step(ms.Tensor([[1.0, 2.0]]), ms.Tensor([[1.0]]))
    >>> float(loss), gb
    (4.0, Array([4.], dtype=float32))
    """

    def __init__(self, network, weights=None, get_all=False, get_by_list=False, sens_param=False):
        super().__init__(auto_prefix=False)
        if not (isinstance(network, Cell) or callable(network)):
            raise TypeError(f"For 'ForwardValueAndGrad', the argument 'network' must be cell, function type or "
                            f"method type, but got '{type(network)}'")
        for name, value in (("get_all", get_all), ("get_by_list", get_by_list)):
            if not isinstance(value, bool):
                raise TypeError(f"For 'ForwardValueAndGrad', the type of '{name}' must be bool, but got "
                                f"'{type(value)}'")
        if get_by_list and not isinstance(weights, (ParameterTuple, tuple, list)):
            raise TypeError(f"For 'ForwardValueAndGrad', when 'get_by_list' is set to True, the argument "
                            f"'weights' must be Parameters array, but got '{type(weights)}'")
        self.network = network
        self.weights = weights
        self.get_all = get_all
        self.get_by_list = get_by_list
        self.sens_param = sens_param
        self.grad = GradOperation(get_all=get_all, get_by_list=get_by_list, sens_param=sens_param)

    def construct(self, *inputs):
        return self.grad.value_and_grad(self.network, self.weights)(*inputs)


class TrainOneStepCell(Cell):
    """One training step: the loss, its gradients w.r.t. ``optimizer.parameters``, the update.

    ``construct(*inputs)`` computes ``loss = network(*inputs)`` and the
    gradients of ``sens * loss`` (MindSpore fills the sensitivity with ``sens``;
    a non-scalar loss is summed), passes them through ``grad_reducer``, calls
    ``optimizer(grads)`` and returns the loss computed *before* the update.
    With ``return_grad=True`` it returns ``(loss, {parameter name: gradient})``.
    Like MindSpore it does not call ``set_train()``: do so on the network if it
    has Dropout or BatchNorm.

    Attributes, as MindSpore's: ``network``, ``optimizer``, ``weights`` (the
    optimizer's Parameters), ``grad`` (``GradOperation(get_by_list=True,
    sens_param=True)``: ``self.grad(self.network, self.weights)(*inputs,
    sens)``), ``grad_no_sens``, ``sens``, ``sense_flag``, ``grad_reducer``
    (``nn.Identity()``; a ``DistributedGradReducer`` in data parallel),
    ``reducer_flag``. A subclass may write its own ``construct`` with them, as
    MindSpore's docs do:

    >>> import cellkit as ms
    >>> from cellkit import nn, ops
    >>> class ClippedStep(nn.TrainOneStepCell):
    ...     def construct(self, *inputs):
    ...         loss = self.network(*inputs)
    ...         sens = ops.fill(loss.dtype, loss.shape, self.sens)
    ...         grads = self.grad(self.network, self.weights)(*inputs, sens)
    ...         grads = self.grad_reducer(tuple(ops.clip_by_value(g, -0.5, 0.5) for g in grads))
    ...         self.optimizer(grads)
    ...         return loss
    >>> net = nn.Dense(2, 1, weight_init="zeros", bias_init="zeros")
    >>> step = ClippedStep(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 1.0))
    >>> float(step(ms.Tensor([[1.0, 1.0]]), ms.Tensor([[3.0]]))), net.bias.asnumpy()
    (9.0, array([0.5], dtype=float32))

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

    # Not an attribute of MindSpore 2.10's TrainOneStepCell (its loss-scale subclass has it), but
    # training cells written from the model zoo's use it without defining it: a shared HyperMap.
    hyper_map = ops.HyperMap()

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
        self.network.set_grad()
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        self.grad = GradOperation(get_by_list=True, sens_param=True)
        self.grad_no_sens = GradOperation(get_by_list=True)
        self.sense_flag = sens is not None
        self.sens = 1.0 if sens is None else sens
        self.return_grad = return_grad
        self.weights_name = tuple(p.name for p in self.weights)
        # In data-parallel mode jit over the globally sharded batch already gives the whole batch's
        # gradients; the reducer only applies MindSpore's gradients_mean=False (a sum over devices).
        self.parallel_mode = parallel_context.get_auto_parallel_context("parallel_mode")
        self.reducer_flag = parallel_context.data_parallel()
        self.grad_reducer = Identity()
        if self.reducer_flag:
            self.mean = parallel_context.get_auto_parallel_context("gradients_mean")
            self.degree = parallel_context.get_auto_parallel_context("device_num")
            self.grad_reducer = DistributedGradReducer(self.weights, self.mean, self.degree)
        self.use_graceful_exit = False

    def _reduce(self, grads):
        if type(self.grad_reducer) is Identity:  # the default: skip one Cell call per step
            return grads
        return self.grad_reducer(grads)

    def construct(self, *inputs):
        loss, grads = value_and_grad(self.network, None, self.weights)(*inputs)
        if self.sens != 1.0:
            grads = tuple(jax.tree.map(lambda g: g * jnp.asarray(self.sens, g.dtype), g) for g in grads)
        grads = self._reduce(grads)
        self.optimizer(grads)
        if self.return_grad:
            return loss, dict(zip(self.weights_name, grads))
        return loss


def _check_cell(owner, name, value):
    if not isinstance(value, Cell):
        raise TypeError(f"For '{owner}', the argument '{name}' must cell type, but got the type : {type(value)}.")


def _check_count(owner, name, value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"For '{owner}', the argument '{name}' must be integer, but got the type : {type(value)}.")
    if value <= 0:
        raise ValueError(f"For '{owner}', the argument '{name}' must be large than 0, but got {value}.")


def _micro_batch(inputs, i, n):
    """The ``i``-th of ``n`` equal slices of every input along axis 0."""
    out = []
    for x in inputs:
        x = jnp.asarray(x.value if isinstance(x, Parameter) else x)
        if x.shape[0] % n:
            raise ValueError(f"For micro batch initialization, the 0th dimension shape of input({x.shape[0]}) "
                             f"must be divided by micro size({n})")
        size = x.shape[0] // n
        out.append(x[i * size:(i + 1) * size])
    return out


def _sum_over_micro_batches(network, inputs, n):
    """``network`` run on each of ``n`` slices of the inputs, one after another; the outputs summed."""
    ret = None
    for i in range(n):
        out = network(*_micro_batch(inputs, i, n))
        ret = out if ret is None else ret + out
    return ret


class GradAccumulationCell(Cell):
    """Splits every input into ``micro_size`` slices along axis 0 and returns the sum of ``network``'s outputs.

    Differentiating it accumulates the micro-batches' gradients (MindSpore's
    pipeline gradient accumulation, here in one computation).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> net = nn.WithLossCell(nn.Dense(1, 1, weight_init="ones", bias_init="zeros"), nn.L1Loss())
    >>> float(nn.GradAccumulationCell(net, 2)(ms.Tensor([[1.0], [2.0]]), ms.Tensor([[0.0], [0.0]])))
    3.0
    """

    def __init__(self, network, micro_size):
        super().__init__(auto_prefix=False)
        _check_cell("GradAccumulationCell", "network", network)
        _check_count("GradAccumulationCell", "micro_size", micro_size)
        self.network = network
        self.micro_size = micro_size

    def construct(self, *inputs):
        return _sum_over_micro_batches(self.network, inputs, self.micro_size)


class MicroBatchInterleaved(Cell):
    """Splits every input into ``interleave_num`` slices along axis 0 and returns the sum of ``network``'s outputs.

    MindSpore uses the split to overlap communication with computation; XLA
    schedules that itself, so here it is the sum alone.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> net = nn.WithLossCell(nn.Dense(1, 1, weight_init="ones", bias_init="zeros"), nn.L1Loss())
    >>> float(nn.MicroBatchInterleaved(net, 2)(ms.Tensor([[1.0], [2.0]]), ms.Tensor([[0.0], [0.0]])))
    3.0
    """

    def __init__(self, network, interleave_num=2):
        super().__init__(auto_prefix=False)
        _check_count("MicroBatchInterleaved", "interleave_num", interleave_num)
        self.network = network
        self.interleave_num = interleave_num

    def construct(self, *inputs):
        output = 0.0
        for i in range(self.interleave_num):
            output = output + self.network(*_micro_batch(inputs, i, self.interleave_num))
        return output
