"""The Adagrad family: ``Adagrad``, ``ProximalAdagrad``, ``Adadelta`` and ``FTRL`` (MindSpore's ``nn`` optimizers).

>>> import cellkit as ms
>>> from cellkit import nn
>>> w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
>>> opt = nn.Adagrad([w], accum=0.5, learning_rate=0.1)
>>> _ = opt((ms.Tensor([0.1, -0.2]),))
>>> w.asnumpy().round(4), [p.name for p in opt.accum]
(array([0.986 , 2.0272], dtype=float32), ['accum.w'])
"""

from __future__ import annotations

import warnings

import jax.numpy as jnp

from ...startup import lazy_module
from ._checks import check_bool, check_float, check_type_float
from ._transform import elementwise
from .optimizer import Optimizer

optax = lazy_module("optax")

__all__ = ["Adagrad", "ProximalAdagrad", "Adadelta", "FTRL"]


def _construct_grads(self, grads):
    """One step with the gradients ``grads`` (MindSpore's name for this optimizer's argument)."""
    return Optimizer.construct(self, grads)


class Adagrad(Optimizer):
    """Adagrad (``ApplyAdagrad``): ``accum += g**2``, ``w -= lr * g / sqrt(accum)``; ``accum`` starts at ``accum``.

    = ``optax.adagrad(lr, initial_accumulator_value=accum, eps=0)``. ``g`` is
    the gradient after loss scaling and (coupled) weight decay. State:
    ``accum.<param>``. ``update_slots=False`` documents an accumulator that is
    not updated, but MindSpore 2.10's CPU kernel updates it all the same;
    cellkit trains the same weights as MindSpore, so the flag is accepted and
    ignored, with a warning.

    Arguments and defaults (MindSpore's): ``accum=0.1``, ``learning_rate=0.001``, ``update_slots=True``,
    ``loss_scale=1.0``, ``weight_decay=0.0``; ``weight_decay`` and
    ``loss_scale`` as for
    :class:`Optimizer`.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> w = ms.Parameter(ms.Tensor([1.0]), name="w")
    >>> opt = nn.Adagrad([w], accum=0.0, learning_rate=0.1)
    >>> _ = opt((ms.Tensor([2.0]),))
    >>> w.asnumpy(), opt.accum[0].asnumpy()
    (array([0.9], dtype=float32), array([4.], dtype=float32))
    """

    construct = _construct_grads

    _slot_names = {"sum_of_squares": "accum"}
    _ms_kernels = {"opt": "ApplyAdagrad"}

    def __init__(self, params, accum=0.1, learning_rate=0.001, update_slots=True, loss_scale=1.0,
                 weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        check_type_float(self.cls_name, "accum", accum)
        self.accum_init = check_float(self.cls_name, "accum", accum, minimum=0.0)
        self.update_slots = check_bool(self.cls_name, "update_slots", update_slots)
        if not update_slots:
            warnings.warn("Adagrad(update_slots=False): MindSpore 2.10's CPU kernel updates the accumulator all "
                          "the same, and so does cellkit", stacklevel=2)
        self.init_optax()

    def update_rule(self, learning_rate, weight_decay, decay_mask):
        return optax.chain(optax.scale_by_rss(initial_accumulator_value=self.accum_init, eps=0.0),
                           optax.scale_by_learning_rate(learning_rate))


def _check_l1_l2(owner, accum, l1, l2, use_locking):
    for name, value in (("accum", accum), ("l1", l1), ("l2", l2)):
        check_type_float(owner, name, value)
        check_float(owner, name, value, minimum=0.0)
    check_bool(owner, "use_locking", use_locking)


class ProximalAdagrad(Optimizer):
    """Proximal Adagrad (``ApplyProximalAdagrad``), with the adaptive rate ``lr_t = lr / sqrt(accum)``::

        accum += g**2
        prox = w - lr_t * g
        w = sign(prox) / (1 + lr_t * l2) * max(|prox| - lr_t * l1, 0)

    State: ``accum.<param>`` (starting at ``accum``).

    Arguments and defaults (MindSpore's): ``accum=0.1``, ``learning_rate=0.001``, ``l1=0.0``, ``l2=0.0``,
    ``use_locking=False``, ``loss_scale=1.0``, ``weight_decay=0.0``; ``weight_decay`` and
    ``loss_scale``
    as for :class:`Optimizer`.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> w = ms.Parameter(ms.Tensor([1.0]), name="w")
    >>> opt = nn.ProximalAdagrad([w], accum=0.0, learning_rate=0.1, l1=1.0)
    >>> _ = opt((ms.Tensor([2.0]),))
    >>> w.asnumpy().round(4)
    array([0.85], dtype=float32)
    """

    construct = _construct_grads

    _slot_names = {"accum": "accum"}
    _ms_kernels = {"opt": "ApplyProximalAdagrad", "sparse_opt": "SparseApplyProximalAdagrad"}

    def __init__(self, params, accum=0.1, learning_rate=0.001, l1=0.0, l2=0.0, use_locking=False, loss_scale=1.0,
                 weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        _check_l1_l2(self.cls_name, accum, l1, l2, use_locking)
        self.accum_init, self.l1, self.l2, self.use_locking = accum, l1, l2, use_locking
        self.init_optax()

    def update_rule(self, learning_rate, weight_decay, decay_mask):
        l1, l2, lr = self.l1, self.l2, learning_rate

        def rule(g, w, t, accum):
            accum = accum + g * g
            lr_t = lr / jnp.sqrt(accum)
            prox = w - lr_t * g
            return jnp.sign(prox) / (1 + lr_t * l2) * jnp.maximum(jnp.abs(prox) - lr_t * l1, 0.0), {"accum": accum}

        return elementwise({"accum": lambda p: jnp.full_like(p, self.accum_init)}, rule)


class Adadelta(Optimizer):
    """Adadelta (``ApplyAdadelta``) = ``optax.adadelta(lr, rho, epsilon)``::

        accum = rho * accum + (1 - rho) * g**2
        update = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * g
        accum_update = rho * accum_update + (1 - rho) * update**2
        w -= lr * update

    State: ``accum.<param>``, ``accum_update.<param>``.

    Arguments and defaults (MindSpore's): ``learning_rate=1.0``, ``rho=0.9``, ``epsilon=1e-06``,
    ``loss_scale=1.0``, ``weight_decay=0.0``; ``weight_decay`` and
    ``loss_scale`` as for
    :class:`Optimizer`.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> w = ms.Parameter(ms.Tensor([1.0]), name="w")
    >>> opt = nn.Adadelta([w])
    >>> _ = opt((ms.Tensor([0.5]),))
    >>> w.asnumpy().round(5), [p.name for p in opt.accum_update]
    (array([0.99684], dtype=float32), ['accum_update.w'])
    """

    construct = _construct_grads

    _slot_names = {"e_g": "accum", "e_x": "accum_update"}
    _ms_kernels = {"opt": "ApplyAdadelta"}

    def __init__(self, params, learning_rate=1.0, rho=0.9, epsilon=1e-6, loss_scale=1.0, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        check_type_float(self.cls_name, "rho", rho)
        check_type_float(self.cls_name, "epsilon", epsilon)
        self.rho = check_float(self.cls_name, "rho", rho, minimum=0.0, maximum=1.0)
        self.epsilon = check_float(self.cls_name, "epsilon", epsilon, minimum=0.0)
        self.init_optax()

    def update_rule(self, learning_rate, weight_decay, decay_mask):
        return optax.adadelta(learning_rate, rho=self.rho, eps=self.epsilon)


class FTRL(Optimizer):
    """FTRL-proximal (``ApplyFtrl``)::

        accum' = accum + g**2
        linear += g - (accum'**(-lr_power) - accum**(-lr_power)) / lr * w
        w = (l1 - linear) / (accum'**(-lr_power) / lr + 2 * l2)   if |linear| > l1, else 0
        accum = accum'

    The ``l1`` term is MindSpore 2.10's CPU kernel's (its documentation, like
    TensorFlow, writes ``sign(linear) * l1 - linear``, which shrinks towards
    0 from both sides); cellkit trains the same weights as MindSpore, and
    warns when ``l1 > 0``.
    A fixed learning rate only (MindSpore refuses lists, schedules and group
    rates); weight decay applies to every Parameter unless grouped. State:
    ``moments.<param>`` (the accumulator, from ``initial_accum``) and
    ``linear.<param>``.

    Arguments and defaults (MindSpore's): ``initial_accum=0.1``, ``learning_rate=0.001``, ``lr_power=-0.5``,
    ``l1=0.0``, ``l2=0.0``, ``use_locking=False``, ``loss_scale=1.0``, ``weight_decay=0.0``;
    ``weight_decay`` and
    ``loss_scale`` as for :class:`Optimizer`.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> w = ms.Parameter(ms.Tensor([1.0]), name="w")
    >>> opt = nn.FTRL([w], initial_accum=1.0, learning_rate=1.0)
    >>> _ = opt((ms.Tensor([1.0]),))
    >>> w.asnumpy().round(4), opt.linear[0].asnumpy().round(4)
    (array([-0.4142], dtype=float32), array([0.5858], dtype=float32))
    """

    construct = _construct_grads

    _slot_names = {"moments": "moments", "linear": "linear"}
    _ms_kernels = {"opt": "ApplyFtrl", "sparse_opt": "SparseApplyFtrl"}

    def __init__(self, params, initial_accum=0.1, learning_rate=0.001, lr_power=-0.5, l1=0.0, l2=0.0,
                 use_locking=False, loss_scale=1.0, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale=loss_scale)
        owner = self.cls_name
        dynamic = self._groups[0][1] != "fixed"
        if dynamic or self.is_group_lr:
            raise ValueError(f"For 'FTRL', dynamic learning rate and group learning rate are currently not "
                             f"supported in FTRL, they should all be false, but got dynamic learning rate {dynamic} "
                             f"and group learning rate {self.is_group_lr}.")
        for name, value in (("initial_accum", initial_accum), ("learning_rate", learning_rate),
                            ("lr_power", lr_power), ("l1", l1), ("l2", l2)):
            check_type_float(owner, name, value)
        check_float(owner, "initial_accum", initial_accum, minimum=0.0)
        if lr_power > 0:
            raise ValueError(f"For 'FTRL', the argument 'lr_power' must <= 0.0, but got {lr_power}.")
        check_float(owner, "l1", l1, minimum=0.0)
        check_float(owner, "l2", l2, minimum=0.0)
        self.use_locking = check_bool(owner, "use_locking", use_locking)
        self.initial_accum, self.lr_power, self.l1, self.l2, self.lr = initial_accum, lr_power, l1, l2, learning_rate
        if l1 > 0:
            warnings.warn("FTRL(l1 > 0): the l1 term is MindSpore 2.10's CPU kernel's, "
                          "(l1 - linear), not the documented sign(linear) * l1 - linear",
                          stacklevel=2)
        if not self.is_group:
            self.decay_flags = tuple(True for _ in self.parameters)
        self.init_optax()

    def update_rule(self, learning_rate, weight_decay, decay_mask):
        l1, l2, p, lr = self.l1, self.l2, -self.lr_power, learning_rate

        def rule(g, w, t, moments, linear):
            new_accum = moments + g * g
            new_pow = jnp.power(new_accum, p)
            linear = linear + g - (new_pow - jnp.power(moments, p)) / lr * w
            quadratic = new_pow / lr + 2 * l2
            new_w = jnp.where(jnp.abs(linear) > l1, (l1 - linear) / quadratic, 0.0)
            return new_w, {"moments": new_accum, "linear": linear}

        return elementwise({"moments": lambda q: jnp.full_like(q, self.initial_accum), "linear": jnp.zeros_like},
                           rule)
