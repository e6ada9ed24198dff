"""``DistributedGradReducer``: MindSpore's all-reduce of the gradients across data-parallel devices.

In cellkit data parallelism is ``jax.sharding``: the batch is one global array
sharded over the devices, and the gradients ``jit`` computes from it are
already the gradients of the global batch (XLA inserts the all-reduce). So
the reducer returns the gradients unchanged when ``mean`` is True (the mean
over devices of per-device means is the global mean); with ``mean=False``
MindSpore returns the *sum* over ``degree`` devices, and so the gradients are
multiplied by ``degree``.

>>> import cellkit as ms
>>> from cellkit import nn
>>> w = ms.Parameter(ms.Tensor([1.0]), name="w")
>>> nn.DistributedGradReducer([w])((ms.Tensor([0.5]),))
(Array([0.5], dtype=float32),)
>>> nn.DistributedGradReducer([w], mean=False, degree=4)((ms.Tensor([0.5]),))
(Array([2.], dtype=float32),)
"""

from __future__ import annotations

import jax.numpy as jnp

from ...cell import Cell

__all__ = ["DistributedGradReducer"]


class DistributedGradReducer(Cell):
    """``DistributedGradReducer(parameters, mean=None, degree=None, fusion_type=1, group='hccl_world_group')``.

    ``mean=None`` means True; ``degree=None`` means 1 (no scaling);
    ``fusion_type`` and ``group`` are accepted and unused.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> w = ms.Parameter(ms.Tensor([1.0]), name="w")
    >>> nn.DistributedGradReducer([w], mean=True, degree=8)((ms.Tensor([0.5]),))
    (Array([0.5], dtype=float32),)
    """

    def __init__(self, parameters, mean=None, degree=None, fusion_type=1, group="hccl_world_group"):
        super().__init__(auto_prefix=False)
        if mean is not None and not isinstance(mean, bool):
            raise TypeError(f"For 'DistributedGradReducer', 'mean' must be a bool or None, but got "
                            f"{type(mean).__name__}.")
        if degree is not None and (isinstance(degree, bool) or not isinstance(degree, int) or degree <= 0):
            raise ValueError(f"For 'DistributedGradReducer', 'degree' must be a positive int or None, but got "
                             f"{degree!r}.")
        self.mean = True if mean is None else mean
        self.degree = 1 if degree is None else degree
        self.fusion_type = fusion_type
        self.group = group
        self.n_parameters = len(tuple(parameters))

    def construct(self, grads):
        if self.mean or self.degree == 1:
            return tuple(grads)
        return tuple(g * jnp.asarray(self.degree, jnp.result_type(g)) for g in grads)
