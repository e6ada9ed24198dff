"""Pipeline-parallel wrappers in one process: ``PipelineCell``, ``PipelineGradReducer``, ``VirtualDatasetCellTriple``.

MindSpore splits a pipeline-parallel network into stages on different devices
and feeds them micro-batches. In one JAX program the micro-batches run one
after the other in the same computation (XLA schedules them), which gives
the same values: ``PipelineCell`` returns the sum of the network's outputs
over the micro-batches, and ``PipelineGradReducer`` divides the (already
accumulated) gradients by ``scale_sense``.

>>> import cellkit as ms
>>> from cellkit import nn
>>> net = nn.WithLossCell(nn.Dense(1, 1, weight_init="ones", bias_init="zeros"), nn.L1Loss())
>>> float(nn.PipelineCell(net, 2)(ms.Tensor([[1.0], [2.0]]), ms.Tensor([[0.0], [0.0]])))
3.0
"""

from __future__ import annotations

import jax.numpy as jnp

from ...cell import Cell
from ...parameter import Parameter
from .cell_wrapper import _sum_over_micro_batches

__all__ = ["PipelineCell", "PipelineGradReducer", "VirtualDatasetCellTriple"]


class PipelineCell(Cell):
    """``nn.PipelineCell(network, micro_size, stage_config=None, segment_config=None)``: splits every input
    into ``micro_size`` equal slices along axis 0 and returns the sum of ``network``'s outputs on them.

    ``stage_config`` (``{cell name: stage}``) sets ``pipeline_stage`` on the
    named sub-Cells as MindSpore does (a ``KeyError`` for a name not found);
    the stages, like ``segment_config``, only place work on devices and do
    not change the result.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.PipelineCell(nn.Dense(1, 1), 0)
    Traceback (most recent call last):
    ...
    ValueError: For 'PipelineCell', the argument 'micro_size' must be large than 0, but got 0.
    """

    def __init__(self, network, micro_size, stage_config=None, segment_config=None):
        super().__init__(auto_prefix=False)
        if not isinstance(network, Cell):
            raise TypeError(f"For 'PipelineCell', the argument 'network' must cell type, but got the type : "
                            f"{type(network)}.")
        if isinstance(micro_size, bool) or not isinstance(micro_size, int):
            raise TypeError(f"For 'PipelineCell', the argument 'micro_size' must be integer, but got the type : "
                            f"{type(micro_size)}.")
        if micro_size <= 0:
            raise ValueError(f"For 'PipelineCell', the argument 'micro_size' must be large than 0, but got "
                             f"{micro_size}.")
        self.network = network
        self.micro_size = micro_size
        self.segment_config = segment_config
        if stage_config:
            cells = dict(network.cells_and_names())
            missing = {k: v for k, v in stage_config.items() if k not in cells or not k}
            if missing:
                raise KeyError(f"For 'PipelineCell', the argument 'stage_config' : {missing} is not found in "
                               f"'network'; sub-Cells: {[n for n in cells if n]}")
            for name, stage in stage_config.items():
                cells[name].pipeline_stage = stage

    def construct(self, *inputs):
        return _sum_over_micro_batches(self.network, inputs, self.micro_size)


class PipelineGradReducer(Cell):
    """``nn.PipelineGradReducer(parameters, scale_sense=1.0, opt_shard=None)``: ``grads / scale_sense``.

    MindSpore accumulates the micro-batches' gradients into ``accu_grads``
    buffers between the pipeline stages and returns them divided by
    ``scale_sense``; here the gradient of a :class:`PipelineCell` already is
    that sum, so no buffer is kept. ``scale_sense`` is a Parameter (assign to
    it to change the scale).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> w = ms.Parameter(ms.Tensor([1.0]), name="w")
    >>> nn.PipelineGradReducer([w], scale_sense=2.0)((ms.Tensor([3.0]),))
    (Array([1.5], dtype=float32),)
    """

    def __init__(self, parameters, scale_sense=1.0, opt_shard=None):
        super().__init__(auto_prefix=False)
        self.parameters = tuple(parameters)
        self.scale_sense = Parameter(jnp.asarray(scale_sense, jnp.float32), name="scale_sense",
                                     requires_grad=False)
        self.opt_shard = opt_shard

    def construct(self, grads):
        if len(grads) != len(self.parameters):
            raise ValueError(f"For 'PipelineGradReducer', got {len(grads)} gradients for "
                             f"{len(self.parameters)} Parameters.")
        scale = self.scale_sense.value
        return tuple(g / scale.astype(jnp.result_type(g)) for g in grads)


class VirtualDatasetCellTriple(Cell):
    """``nn.VirtualDatasetCellTriple(backbone)``: calls ``backbone(a, b, c)`` (MindSpore marks the three inputs
    as the data-parallel dataset; here a batch is sharded by the ``jit`` call that receives it).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> class Add3(nn.Cell):
    ...     def construct(self, a, b, c):
    ...         return a + b + c
    >>> nn.VirtualDatasetCellTriple(Add3())(ms.Tensor([1.0]), ms.Tensor([2.0]), ms.Tensor([3.0]))
    Array([6.], dtype=float32)
    """

    def __init__(self, backbone):
        super().__init__(auto_prefix=False)
        self._backbone = backbone

    def construct(self, a, b, c):
        return self._backbone(a, b, c)
