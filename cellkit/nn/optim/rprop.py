"""``Rprop`` (resilient propagation) and ``ASGD`` (averaged SGD), MindSpore's per-element rules.

>>> import cellkit as ms
>>> from cellkit import nn
>>> w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
>>> opt = nn.Rprop([w], learning_rate=0.1)
>>> for _ in range(2):
...     _ = opt((ms.Tensor([0.1, -0.2]),))
>>> w.asnumpy().round(4), opt.step_size[0].asnumpy().round(4)
(array([0.78, 2.22], dtype=float32), array([0.12, 0.12], dtype=float32))
"""

from __future__ import annotations

import jax.numpy as jnp

from ._checks import check_float, check_type_float
from ._transform import elementwise
from .optimizer import Optimizer

__all__ = ["Rprop", "ASGD"]


class Rprop(Optimizer):
    """Rprop::

        s = etaplus if g * prev > 0, etaminus if < 0, else 1
        step = clip(step * s, *step_sizes)              (step starts at lr)
        g = 0 where s == etaminus
        w -= sign(g) * step;  prev = g

    State: ``prev.<param>``, ``step_size.<param>``.

    Arguments and defaults (MindSpore's): ``learning_rate=0.1``, ``etas=(0.5, 1.2)``, ``step_sizes=(1e-06,
    50.0)``, ``weight_decay=0.0``; ``weight_decay`` and
    ``loss_scale`` as for :class:`Optimizer`.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
    >>> [p.name for p in nn.Rprop([w]).get_parameters()]
    ['global_step', 'learning_rate', 'w', 'prev.w', 'step_size.w']
    """

    _slot_names = {"prev": "prev", "step_size": "step_size"}
    _ms_kernels = {"sign": "Sign", "fill": "FillV2", "assign": "Assign", "cast": "Cast", "select": "Select",
                   "ones_like": "OnesLike"}

    def __init__(self, params, learning_rate=0.1, etas=(0.5, 1.2), step_sizes=(1e-6, 50.), weight_decay=0.):
        super().__init__(learning_rate, params, weight_decay)
        if not isinstance(etas, tuple):
            raise TypeError(f"For Rprop, etas must be a tuple, but got {type(etas)}.")
        if len(etas) != 2:
            raise ValueError(f"For Rprop, etas must be a tuple with the size of 2, but got {len(etas)}.")
        if not isinstance(step_sizes, tuple):
            raise TypeError(f"For Rprop, step_sizes must be a tuple, but got {type(step_sizes)}.")
        if len(step_sizes) != 2:
            raise ValueError(f"For Rprop, step_sizes must be a tuple with the size of 2, but got {len(step_sizes)}.")
        if step_sizes[0] > step_sizes[1]:
            raise ValueError(f"For Rprop, maximal step size should not be less than minimal step size, but got "
                             f"{step_sizes[0]} > {step_sizes[1]}.")
        check_float(self.cls_name, "etaminus", etas[0], minimum=0.0, exclusive_min=True, maximum=1.0,
                    exclusive_max=True)
        check_type_float(self.cls_name, "etaplus", etas[1])
        if etas[1] <= 1.0:
            raise ValueError(f"For Rprop, etaplus must be greater than 1.0, but got etaplus {etas[1]}.")
        check_type_float(self.cls_name, "min_step_sizes", step_sizes[0])
        check_type_float(self.cls_name, "max_step_sizes", step_sizes[1])
        self.etaminus, self.etaplus = etas
        self.step_size_min, self.step_size_max = step_sizes
        self.init_optax()

    def update_rule(self, learning_rate, weight_decay, decay_mask):
        minus, plus = jnp.float32(self.etaminus), jnp.float32(self.etaplus)
        lo, hi, lr = self.step_size_min, self.step_size_max, learning_rate

        def rule(g, w, t, prev, step_size):
            step = jnp.where(t == 1, jnp.ones_like(step_size) * lr, step_size)
            s = jnp.sign(g * prev)
            s = jnp.where(s > 0, plus, jnp.where(s < 0, minus, 1.0)).astype(w.dtype)
            step = jnp.clip(step * s, lo, hi)
            g = jnp.where(s == minus, 0.0, g)
            return w - jnp.sign(g) * step, {"prev": g, "step_size": step}

        return elementwise({"prev": jnp.zeros_like, "step_size": jnp.zeros_like}, rule)


class ASGD(Optimizer):
    """Averaged SGD (MindSpore's ``ASGD``), ``t`` the step from 1::

        eta = lr                                   (at t = 1)
        w = w * (1 - lambd * eta) - eta * g
        ax = ax + (w - ax) * mu  if mu != 1 else w
        eta = lr / (1 + lambd * lr * t) ** alpha
        mu = 1 / max(1, t - t0)

    State: ``mu_<param>``, ``eta_<param>`` (float32 scalars), ``ax_.<param>``.

    Arguments and defaults (MindSpore's): ``learning_rate=0.1``, ``lambd=0.0001``, ``alpha=0.75``,
    ``t0=1000000.0``, ``weight_decay=0.0``; ``weight_decay`` and
    ``loss_scale`` as for
    :class:`Optimizer`.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> w = ms.Parameter(ms.Tensor([1.0]), name="w")
    >>> [p.name for p in nn.ASGD([w]).get_parameters()]
    ['global_step', 'learning_rate', 'w', 'mu_w', 'eta_w', 'ax_.w']
    """

    _slot_names = {"mu": "mu_{}", "eta": "eta_{}", "ax": "ax_.{}"}
    _ms_kernels = {"pow": "Pow", "maximum": "Maximum", "assign": "Assign", "assignsub": "AssignSub", "cast": "Cast",
                   "squeeze": "Squeeze"}

    @property
    def lens(self):
        """The number of Parameters (MindSpore's ASGD keeps it as ``lens``)."""
        return len(self.parameters)
    _scalar_slots = frozenset({"mu", "eta"})

    def __init__(self, params, learning_rate=0.1, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        for name, value in (("lambd", lambd), ("alpha", alpha), ("t0", t0)):
            check_type_float(self.cls_name, name, value)
        self.lambd, self.alpha, self.t0 = lambd, alpha, t0
        self.init_optax()

    def update_rule(self, learning_rate, weight_decay, decay_mask):
        lambd, alpha, t0, lr = self.lambd, self.alpha, jnp.float32(self.t0), learning_rate

        def rule(g, w, t, mu, eta, ax):
            eta = jnp.where(t == 1, lr, eta)
            new_w = w * (1.0 - lambd * eta) - eta * g
            ax = jnp.where(mu != 1, ax + (new_w - ax) * mu, new_w)
            eta = lr / jnp.power(1.0 + lambd * lr * t, alpha)
            mu = 1.0 / jnp.maximum(1.0, t - t0)
            return new_w, {"mu": mu, "eta": eta, "ax": ax}

        return elementwise({"mu": lambda p: jnp.ones((), jnp.float32), "eta": lambda p: jnp.zeros((), jnp.float32),
                            "ax": jnp.zeros_like}, rule)
