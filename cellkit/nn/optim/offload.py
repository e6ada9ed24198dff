"""``AdamOffload`` (MindSpore keeps its moments in host memory) and the optimizers that have no meaning in JAX.

>>> import cellkit as ms
>>> from cellkit import nn
>>> w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
>>> opt = nn.AdamOffload([w], learning_rate=0.1)
>>> _ = opt((ms.Tensor([0.1, -0.2]),))
>>> w.asnumpy().round(4)
array([0.9, 2.1], dtype=float32)
"""

from __future__ import annotations

from ..wrap.unsupported import unsupported_cell
from .adam import Adam

__all__ = ["AdamOffload", "AdaSumByGradWrapCell", "AdaSumByDeltaWeightWrapCell", "thor"]


class AdamOffload(Adam):
    """MindSpore's ``AdamOffload``: :class:`Adam`'s update (``AdamNoUpdateParam``) with the moments placed in
    host memory. JAX places arrays itself, so here it is :class:`Adam` with the same arguments and defaults
    (``learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, use_locking=False, use_nesterov=False,
    weight_decay=0.0, loss_scale=1.0``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> w = ms.Parameter(ms.Tensor([1.0]), name="w")
    >>> [p.name for p in nn.AdamOffload([w]).get_parameters()]
    ['global_step', 'learning_rate', 'w', 'beta1_power', 'beta2_power', 'moment1.w', 'moment2.w']
    """

    _power_shape = (1,)
    _ms_kernels = {"opt": "AdamNoUpdateParam"}

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, use_locking=False,
                 use_nesterov=False, weight_decay=0.0, loss_scale=1.0):
        super().__init__(params, learning_rate, beta1, beta2, eps, use_locking, use_nesterov, weight_decay,
                         loss_scale)


_ADASUM = ("combines the updates of the devices pairwise across a communication group (AdaSum); under "
           "cellkit.jit a data-parallel batch sharded over a mesh already gives the global mean gradient, so "
           "call the optimizer directly (nn.DistributedGradReducer is the identity there)")
AdaSumByGradWrapCell = unsupported_cell("AdaSumByGradWrapCell", "nn.AdaSumByGradWrapCell " + _ADASUM + ".",
                                        __name__)
AdaSumByDeltaWeightWrapCell = unsupported_cell("AdaSumByDeltaWeightWrapCell",
                                               "nn.AdaSumByDeltaWeightWrapCell " + _ADASUM + ".", __name__)


def thor(net, learning_rate, damping, momentum, weight_decay=0.0, loss_scale=1.0, batch_size=32,
         use_nesterov=False, decay_filter=None, split_indices=None, enable_clip_grad=False,
         frequency=100):
    """MindSpore's THOR second-order optimizer needs its ``DenseThor``/``Conv2dThor`` layers and Ascend kernels;
    cellkit has neither: ``NotImplementedError`` (use ``nn.Momentum``, or an optax second-order method such
    as ``optax.lbfgs`` on ``cellkit.engine.pure``).

    >>> from cellkit import nn
    >>> nn.thor(None, 0.1, 0.01, 0.9)
    Traceback (most recent call last):
    ...
    NotImplementedError: nn.thor needs MindSpore's DenseThor/Conv2dThor layers and Ascend kernels; use nn.Momentum (or an optax second-order method such as optax.lbfgs).
    """
    raise NotImplementedError("nn.thor needs MindSpore's DenseThor/Conv2dThor layers and Ascend kernels; use "
                              "nn.Momentum (or an optax second-order method such as optax.lbfgs).")
