"""``SGD``: stochastic gradient descent with momentum, dampening and Nesterov (MindSpore's ``nn.SGD``).

>>> import cellkit as ms
>>> from cellkit import nn
>>> w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
>>> opt = nn.SGD([w], learning_rate=0.1, momentum=0.9)
>>> for _ in range(2):
...     _ = opt((ms.Tensor([0.1, -0.2]),))
>>> w.asnumpy().round(4)
array([0.971, 2.058], dtype=float32)
"""

from __future__ import annotations

import jax.numpy as jnp

from ...startup import lazy_module
from ._checks import check_bool, check_float
from .optimizer import Optimizer, add_momentum

optax = lazy_module("optax")

__all__ = ["SGD"]


class SGD(Optimizer):
    """SGD, PyTorch/MindSpore semantics, as ``optax.sgd``.

    With ``g`` the gradient after loss scaling and (coupled) weight decay::

        v = g                                  on the first step
        v = momentum * v + (1 - dampening) * g afterwards
        w = w - lr * v                          (nesterov: w - lr * (g + momentum * v))

    With ``momentum == 0`` this is ``w -= lr * g`` (dampening has no effect, as
    in MindSpore). Without dampening it is exactly ``optax.sgd(lr, momentum,
    nesterov)``; dampening, which optax lacks, is an
    ``optax.scale_by_schedule`` that scales ``g`` by ``1 - dampening`` from the
    second step on, in front of it. State, as MindSpore names it: ``momentum``
    (a float32 Parameter; the update uses the value given at construction),
    ``accum.<param>`` (the velocity; zeros that no step reads with ``momentum
    == 0``) and ``stat.<param>`` (1 before the first step, then 0; always 1 with ``momentum == 0``).

    Args:
        params: Parameters or parameter groups.
        learning_rate: see :class:`Optimizer` (default 0.1).
        momentum, dampening: floats >= 0.
        weight_decay: coupled L2 (default 0.0).
        nesterov: needs ``momentum > 0`` and ``dampening == 0``.
        loss_scale: gradients are divided by it.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
    >>> opt = nn.SGD([w], learning_rate=0.1, weight_decay=0.01)
    >>> opt((ms.Tensor([0.1, -0.2]),))
    (True,)
    >>> w.asnumpy().round(4)
    array([0.989, 2.018], dtype=float32)
    """

    _slot_names = {"trace": "accum"}
    _ms_kernels = {"opt": "SGD"}

    def __init__(self, params, learning_rate=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, loss_scale=1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self._momentum = check_float(self.cls_name, "momentum", momentum, minimum=0.0)
        self.dampening = check_float(self.cls_name, "dampening", dampening, minimum=0.0)
        self.nesterov = check_bool(self.cls_name, "nesterov", nesterov)
        if nesterov and (self._momentum <= 0.0 or self.dampening != 0.0):
            raise ValueError(f"For 'SGD', if 'nesterov' is true, 'momentum' must be > 0.0 and 'dampening' must "
                             f"equal to 0.0, but got 'momentum' {self._momentum}, 'dampening' {self.dampening}.")
        add_momentum(self, self._momentum)
        if self._momentum == 0.0:  # MindSpore keeps a velocity of zeros that no step changes
            self.add_state("accum", jnp.zeros_like, per_param=True)
        self.init_optax()
        # 1 until the first step with a velocity (MindSpore's kernel leaves it at 1 with momentum 0).
        self.add_state("stat", jnp.ones_like, per_param=True,
                       rule=(lambda old, *_: jnp.zeros_like(old)) if self._momentum else None)
        kernels = self.opt
        self.opt = tuple(kernels for _ in self.parameters)  # MindSpore: one SGD kernel per Parameter

    def update_rule(self, learning_rate, weight_decay, decay_mask):
        if self._momentum == 0.0:  # no velocity: the trace would be the gradient itself
            return optax.sgd(learning_rate)
        sgd = optax.sgd(learning_rate, momentum=self._momentum, nesterov=self.nesterov)
        if self.dampening != 0.0:
            keep = 1.0 - self.dampening
            return optax.chain(optax.scale_by_schedule(lambda count: jnp.where(count == 0, 1.0, keep)), sgd)
        return sgd
