"""``RMSProp`` (MindSpore's ``nn.RMSProp``, ``ApplyRMSProp``/``ApplyCenteredRMSProp``).

>>> import cellkit as ms
>>> from cellkit import nn
>>> w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
>>> opt = nn.RMSProp([w], learning_rate=0.1)
>>> _ = opt((ms.Tensor([0.1, -0.2]),))
>>> w.asnumpy().round(4)
array([0.9895, 2.021 ], dtype=float32)
"""

from __future__ import annotations

import jax.numpy as jnp

from ...startup import lazy_module
from ._checks import check_bool, check_float
from .optimizer import Optimizer

optax = lazy_module("optax")

__all__ = ["RMSProp"]


class RMSProp(Optimizer):
    """RMSProp with MindSpore's formula::

        ms  = decay * ms + (1 - decay) * g**2        ms starts at 1.0 (not 0)
        centered: mg = decay * mg + (1 - decay) * g; denom = sqrt(ms - mg**2 + epsilon)
        else:     denom = sqrt(ms + epsilon)         epsilon inside the sqrt
        mom = momentum * mom + lr * g / denom        lr inside the momentum trace
        w   = w - mom

    This is ``optax.rmsprop(lr, decay, eps=epsilon, initial_scale=1.0,
    eps_in_sqrt=True, centered=centered, momentum=momentum)``. optax's defaults
    differ (``initial_scale=0``, eps outside the sqrt, eps 1e-8), which changes
    the first steps a lot. ``g`` is the gradient after loss scaling and
    (coupled) weight decay. State, under MindSpore's names: ``ms``
    (``mean_square.<param>``), ``moment`` (``moment.<param>``; with
    ``momentum == 0`` the step taken, which MindSpore stores and never reads
    back) and, when centered, ``mg`` (``mean_grad.<param>``).

    Args:
        params: Parameters or parameter groups.
        learning_rate: see :class:`Optimizer` (default 0.1).
        decay: float >= 0 (default 0.9).
        momentum: float >= 0 (default 0.0).
        epsilon: float > 0 (default 1e-10).
        use_locking: accepted and ignored.
        centered: centred RMSProp (default False).
        loss_scale, weight_decay: as for :class:`Optimizer`.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
    >>> opt = nn.RMSProp([w], 0.1, centered=True, momentum=0.9)
    >>> [name for name, _ in opt.parameters_and_names()]
    ['global_step', 'learning_rate', 'w', 'mean_grad.w', 'mean_square.w', 'moment.w']
    """

    _slot_names = {"mu": "mg=mean_grad", "nu": "ms=mean_square", "trace": "moment"}

    def __init__(self, params, learning_rate=0.1, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False,
                 centered=False, loss_scale=1.0, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.decay = check_float(self.cls_name, "decay", decay, minimum=0.0)
        self.momentum = check_float(self.cls_name, "momentum", momentum, minimum=0.0)
        self.epsilon = check_float(self.cls_name, "epsilon", epsilon, minimum=0.0, exclusive_min=True)
        self.use_locking = check_bool(self.cls_name, "use_locking", use_locking)
        self.centered = check_bool(self.cls_name, "centered", centered)
        self._init_kernels(opt="ApplyCenteredRMSProp" if self.centered else "ApplyRMSProp")
        self.init_optax()
        if not self.momentum:  # MindSpore stores the step taken (w_old - w_new) in 'moment'
            self.add_state("moment", jnp.zeros_like, per_param=True, rule=lambda old, w_old, w_new: w_old - w_new)

    def update_rule(self, learning_rate, weight_decay, decay_mask):
        return optax.rmsprop(learning_rate, decay=self.decay, eps=self.epsilon, initial_scale=1.0,
                             eps_in_sqrt=True, centered=self.centered, momentum=self.momentum or None)
