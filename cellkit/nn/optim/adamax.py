"""``AdaMax`` (``ApplyAdaMax``), ``LazyAdam`` (Adam's dense update) and ``Lamb`` (= ``optax.lamb``).

>>> import cellkit as ms
>>> from cellkit import nn
>>> w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
>>> opt = nn.AdaMax([w], learning_rate=0.1)
>>> _ = opt((ms.Tensor([0.1, -0.2]),))
>>> w.asnumpy().round(4)
array([0.9, 2.1], dtype=float32)
"""

from __future__ import annotations

import jax.numpy as jnp

from ...startup import lazy_module
from ._checks import check_bool, check_float, check_type_float
from ._transform import elementwise
from .adam import Adam, _f32, add_beta_powers
from .optimizer import Optimizer

optax = lazy_module("optax")

__all__ = ["AdaMax", "LazyAdam", "Lamb"]


def _betas(owner, beta1, beta2, eps):
    for name, value in (("beta1", beta1), ("beta2", beta2), ("eps", eps)):
        check_type_float(owner, name, value)
    check_float(owner, "beta1", beta1, minimum=0.0, exclusive_min=True, maximum=1.0, exclusive_max=True)
    check_float(owner, "beta2", beta2, minimum=0.0, exclusive_min=True, maximum=1.0, exclusive_max=True)
    check_float(owner, "eps", eps, minimum=0.0, exclusive_min=True)
    return beta1, beta2, eps


class AdaMax(Optimizer):
    """AdaMax::

        m = beta1 * m + (1 - beta1) * g
        v = max(beta2 * v, |g|)
        w -= lr / (1 - beta1**t) * m / (v + eps)

    (``optax.adamax`` adds ``eps`` inside the max instead.) State:
    ``moment1.<param>``, ``moment2.<param>``, ``beta1_power`` (``beta1**global_step``,
    kept for checkpoints).

    Arguments and defaults (MindSpore's): ``learning_rate=0.001``, ``beta1=0.9``, ``beta2=0.999``,
    ``eps=1e-08``, ``weight_decay=0.0``, ``loss_scale=1.0``; ``weight_decay`` and
    ``loss_scale`` as for
    :class:`Optimizer`.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> w = ms.Parameter(ms.Tensor([1.0]), name="w")
    >>> [p.name for p in nn.AdaMax([w]).get_parameters()]
    ['global_step', 'learning_rate', 'w', 'beta1_power', 'moment1.w', 'moment2.w']
    """

    _slot_names = {"moment1": "moment1", "moment2": "moment2"}
    _ms_kernels = {"opt": "ApplyAdaMax"}

    def __init__(self, params, learning_rate=0.001, beta1=0.9, beta2=0.999, eps=1e-08, weight_decay=0.0,
                 loss_scale=1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.beta1, self.beta2, self.eps = _betas(self.cls_name, beta1, beta2, eps)
        add_beta_powers(self, (self.beta1,), (1,))
        self.init_optax()

    def update_rule(self, learning_rate, weight_decay, decay_mask):
        b1, b2, eps, lr = _f32(self.beta1), _f32(self.beta2), _f32(self.eps), learning_rate

        def rule(g, w, t, moment1, moment2):
            m = b1 * moment1 + (1 - b1) * g
            v = jnp.maximum(b2 * moment2, jnp.abs(g))
            return w - lr / (1 - jnp.float32(b1) ** t) * m / (v + eps), {"moment1": m, "moment2": v}

        return elementwise({"moment1": jnp.zeros_like, "moment2": jnp.zeros_like}, rule)


class LazyAdam(Adam):
    """MindSpore's ``LazyAdam``: with dense gradients (all cellkit has) its update is :class:`Adam`'s.

    State: ``moment1.<param>``, ``moment2.<param>``, ``beta1_power``/``beta2_power`` (shape ``(1,)``).
    ``weight_decay`` must be a float.

    Arguments and defaults (MindSpore's): ``learning_rate=0.001``, ``beta1=0.9``, ``beta2=0.999``,
    ``eps=1e-08``, ``use_locking=False``, ``use_nesterov=False``, ``weight_decay=0.0``, ``loss_scale=1.0``;
    ``weight_decay`` and
    ``loss_scale`` as for :class:`Optimizer`.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
    >>> opt = nn.LazyAdam([w], learning_rate=0.1)
    >>> _ = opt((ms.Tensor([0.1, -0.2]),))
    >>> w.asnumpy().round(4)
    array([0.9, 2.1], dtype=float32)
    """

    _ms_kernels = {"opt": "Adam", "sparse_opt": "FusedSparseLazyAdam"}
    _power_shape = (1,)

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, use_locking=False,
                 use_nesterov=False, weight_decay=0.0, loss_scale=1.0):
        _betas("LazyAdam", beta1, beta2, eps)
        check_type_float("LazyAdam", "weight_dacay", weight_decay)
        super().__init__(params, learning_rate, beta1, beta2, eps, use_locking, use_nesterov, weight_decay,
                         loss_scale)


class Lamb(Optimizer):
    """LAMB: Adam's bias-corrected direction plus decoupled weight decay, scaled by the trust ratio ``||w|| / ||r||``.

    ::

        r = m_hat / (sqrt(v_hat) + eps) + weight_decay * w      (decay for the decayed Parameters)
        w -= lr * (||w|| / ||r|| if both are > 0 else 1) * r

    This is ``optax.lamb(lr, beta1, beta2, eps, weight_decay=..., mask=...)``
    (MindSpore 2.10's CPU build has no LAMB kernel to compare with). There is
    no ``loss_scale``. State: ``moments1`` (``lamb_m.<param>``), ``moments2`` (``lamb_v.<param>``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> w = ms.Parameter(ms.Tensor([3.0, 4.0]), name="w")
    >>> opt = nn.Lamb([w], learning_rate=0.1)
    >>> _ = opt((ms.Tensor([1.0, 1.0]),))
    >>> w.asnumpy().round(4)
    array([2.6464, 3.6464], dtype=float32)
    """

    _slot_names = {"mu": "moments1=lamb_m", "nu": "moments2=lamb_v"}
    _decoupled_weight_decay = True

    @property
    def params(self):
        """The Parameters (MindSpore's Lamb keeps ``params``, the same ``ParameterTuple`` as ``parameters``)."""
        return self.parameters

    @property
    def device_ascend(self):
        """False: the update runs on XLA, never MindSpore's Ascend kernels."""
        return False

    def __init__(self, params, learning_rate, beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        self.beta1, self.beta2, self.eps = _betas(self.cls_name, beta1, beta2, eps)
        self.init_optax()

    def update_rule(self, learning_rate, weight_decay, decay_mask):
        return optax.lamb(learning_rate, b1=_f32(self.beta1), b2=_f32(self.beta2), eps=self.eps,
                          weight_decay=weight_decay, mask=decay_mask)
