"""``Momentum``: heavy-ball momentum (MindSpore's ``nn.Momentum``, ``ApplyMomentum``).

>>> import cellkit as ms
>>> from cellkit import nn
>>> w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
>>> opt = nn.Momentum([w], learning_rate=0.1, momentum=0.9)
>>> for _ in range(2):
...     _ = opt((ms.Tensor([0.1, -0.2]),))
>>> w.asnumpy().round(4), opt.moments[0].asnumpy().round(4)
(array([0.971, 2.058], dtype=float32), array([ 0.19, -0.38], dtype=float32))
"""

from __future__ import annotations

import warnings

from ...startup import lazy_module
from ._checks import check_bool, check_float
from .optimizer import Optimizer, add_momentum

optax = lazy_module("optax")

__all__ = ["Momentum"]


class Momentum(Optimizer):
    """Momentum SGD: ``v = momentum * v + g``, ``w = w - lr * v`` (= ``optax.sgd(lr, momentum)``).

    ``g`` is the gradient after loss scaling and (coupled) weight decay. State:
    ``momentum`` (a float32 Parameter, as in MindSpore; the update uses the
    value given at construction), ``moments.<param>`` (none with
    ``momentum == 0``, where it would only copy the gradient).

    ``use_nesterov=True``: MindSpore documents ``w -= lr * (g + momentum * v)``
    but its CPU kernel (2.10) ignores the flag and applies plain momentum;
    cellkit trains the same weights as MindSpore, so the flag is accepted and
    ignored, with a warning. Use ``SGD(momentum=..., nesterov=True)`` for
    Nesterov momentum.

    Args:
        params: Parameters or parameter groups.
        learning_rate: see :class:`Optimizer` (required).
        momentum: float >= 0 (required).
        weight_decay, loss_scale: as for :class:`Optimizer`.
        use_nesterov: see above.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
    >>> opt = nn.Momentum([w], 0.1, 0.9, weight_decay=0.01)
    >>> _ = opt((ms.Tensor([0.1, -0.2]),))
    >>> w.asnumpy().round(4)
    array([0.989, 2.018], dtype=float32)
    """

    _slot_names = {"trace": "moments"}
    _ms_kernels = {"opt": "ApplyMomentum"}

    def __init__(self, params, learning_rate, momentum, weight_decay=0.0, loss_scale=1.0, use_nesterov=False):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self._momentum = check_float(self.cls_name, "momentum", momentum, minimum=0.0)
        add_momentum(self, self._momentum)
        self.use_nesterov = check_bool(self.cls_name, "use_nesterov", use_nesterov)
        if use_nesterov:
            warnings.warn("Momentum(use_nesterov=True): MindSpore 2.10's CPU kernel ignores use_nesterov and so "
                          "does cellkit (plain momentum is applied); use SGD(momentum=..., nesterov=True) for "
                          "Nesterov momentum", stacklevel=2)
        self.init_optax()

    def update_rule(self, learning_rate, weight_decay, decay_mask):
        # momentum == 0: the trace would be the gradient itself, so none is kept.
        return optax.sgd(learning_rate, momentum=self._momentum or None)

    @property
    def params(self):
        """The Parameters (MindSpore's Momentum keeps ``params``, the same ``ParameterTuple`` as ``parameters``)."""
        return self.parameters
