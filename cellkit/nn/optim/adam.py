"""Adam and its weight-decay variants: ``Adam``, ``AdamWeightDecay`` (MindSpore) and ``AdamW`` (= optax.adamw).

MindSpore's two Adam kernels differ from ``optax.adam``, so they are one small
optax transformation, :func:`scale_by_mindspore_adam`; ``AdamW`` is
``optax.adamw`` itself.

>>> import cellkit as ms
>>> from cellkit import nn
>>> w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
>>> opt = nn.Adam([w], learning_rate=0.1)
>>> _ = opt((ms.Tensor([0.1, -0.2]),))
>>> w.asnumpy().round(4)
array([0.9, 2.1], dtype=float32)
>>> [name for name, _ in opt.parameters_and_names()]
['global_step', 'learning_rate', 'w', 'beta1_power', 'beta2_power', 'moment1.w', 'moment2.w']
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...startup import lazy_module
from ._checks import check_bool, check_float
from .optimizer import Optimizer

optax = lazy_module("optax")

__all__ = ["Adam", "AdamWeightDecay", "AdamW", "scale_by_mindspore_adam", "add_beta_powers"]


def add_beta_powers(opt, betas, shape):
    """MindSpore's ``beta1_power`` (and ``beta2_power``): 1 at first, times the float32 beta after each step."""
    for i, beta in enumerate(betas, 1):
        b = np.float32(beta)
        opt.add_state(f"beta{i}_power", np.ones(shape, np.float32), rule=lambda old, *_, b=b: old * b)


def scale_by_mindspore_adam(b1=0.9, b2=0.999, eps=1e-8, *, bias_correction=True, nesterov=False,
                            amsgrad=False) -> optax.GradientTransformation:
    """MindSpore's Adam direction as an optax transformation (to be followed by a learning-rate scale).

    ::

        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g**2
        vhat = max(vhat, v)                  (amsgrad; the denominator then uses vhat)
        c = sqrt(1 - b2**t) / (1 - b1**t)    (bias_correction; else c = 1)
        n = b1 * m + (1 - b1) * g            (nesterov; else n = m)
        update = c * n / (sqrt(v) + eps)

    ``t`` is the step, starting at 1. With the bias correction folded into one
    factor, ``eps`` is added to the uncorrected ``sqrt(v)``: this is
    ``optax.scale_by_adam`` with the step-dependent ``eps / sqrt(1 - b2**t)``.
    MindSpore's ``AdamWeightDecay`` has no bias correction at all. The state is
    ``optax.ScaleByAdamState`` (``optax.ScaleByAmsgradState`` with amsgrad).

    >>> import jax.numpy as jnp
    >>> import optax
    >>> from cellkit.nn.optim.adam import scale_by_mindspore_adam
    >>> tx = optax.chain(scale_by_mindspore_adam(eps=0.1), optax.scale(-0.1))
    >>> params = jnp.array([1.0, 2.0], jnp.float32)
    >>> updates, state = tx.update(jnp.array([0.1, -0.2], jnp.float32), tx.init(params), params)
    >>> updates.round(4)
    Array([-0.0031,  0.0059], dtype=float32)
    """

    def init_fn(params):
        mu = optax.tree.zeros_like(params)
        nu = optax.tree.zeros_like(params)
        count = jnp.zeros([], jnp.int32)
        if amsgrad:
            return optax.ScaleByAmsgradState(count=count, mu=mu, nu=nu, nu_max=optax.tree.zeros_like(params))
        return optax.ScaleByAdamState(count=count, mu=mu, nu=nu)

    def update_fn(updates, state, params=None):
        del params
        mu = optax.tree.update_moment(updates, state.mu, b1, 1)
        nu = optax.tree.update_moment_per_elem_norm(updates, state.nu, b2, 2)
        count = optax.safe_increment(state.count)
        numerator = jax.tree.map(lambda m, g: b1 * m + (1.0 - b1) * g, mu, updates) if nesterov else mu
        if amsgrad:
            nu_max = jax.tree.map(jnp.maximum, state.nu_max, nu)
            denominator = nu_max
        else:
            denominator = nu

        corrections = {}   # dtype -> sqrt(1 - b2**t) / (1 - b1**t): made once, not once per Parameter

        def direction(n, v):
            if bias_correction:
                dtype = jnp.promote_types(n.dtype, jnp.float32)
                if dtype not in corrections:
                    t = count.astype(dtype)
                    corrections[dtype] = jnp.sqrt(1.0 - b2 ** t) / (1.0 - b1 ** t)
                n = n * corrections[dtype]
            return (n / (jnp.sqrt(v) + eps)).astype(v.dtype)

        new = jax.tree.map(direction, numerator, denominator)
        if amsgrad:
            return new, optax.ScaleByAmsgradState(count=count, mu=mu, nu=nu, nu_max=nu_max)
        return new, optax.ScaleByAdamState(count=count, mu=mu, nu=nu)

    return optax.GradientTransformation(init_fn, update_fn)


def _f32(x) -> float:
    """``x`` rounded to float32: MindSpore keeps beta1/beta2 in float32 Tensors, and so ``1 - beta2``
    and ``1 - beta2**t`` carry the same rounding (which cancels in Adam's first step)."""
    return float(np.float32(x))


def _check_betas(owner, beta1, beta2, eps):
    beta1 = check_float(owner, "beta1", beta1, minimum=0.0, exclusive_min=True, maximum=1.0, exclusive_max=True)
    beta2 = check_float(owner, "beta2", beta2, minimum=0.0, exclusive_min=True, maximum=1.0, exclusive_max=True)
    eps = check_float(owner, "eps", eps, minimum=0.0, exclusive_min=True)
    return beta1, beta2, eps


class Adam(Optimizer):
    """Adam with MindSpore's ``P.Adam`` formula (``t`` from 1; ``g`` after loss scaling and coupled decay)::

        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g**2
        lr_t = lr * sqrt(1 - beta2**t) / (1 - beta1**t)
        w = w - lr_t * m / (sqrt(v) + eps)            nesterov: (beta1 * m + (1 - beta1) * g) instead of m

    Difference from ``optax.adam``: MindSpore folds the bias correction into
    the learning rate, so ``eps`` is added to the *uncorrected* ``sqrt(v)``
    (optax: ``m_hat / (sqrt(v_hat) + eps)``); the two agree only while ``eps``
    is negligible. Its Nesterov variant also differs from ``optax.adam(nesterov=True)``.
    ``weight_decay`` is coupled L2 added to the gradient (Parameters named
    ``*beta*``/``*gamma*`` skipped), not AdamW. With ``use_amsgrad=True`` the
    denominator uses ``vhat = max(vhat, v)`` (``ApplyAdamWithAmsgradV2``; it
    has no Nesterov variant, so ``use_nesterov`` is then ignored, as in MindSpore).

    State: ``moment1.<param>``, ``moment2.<param>`` (and ``vhat.<param>``);
    ``beta1_power``/``beta2_power`` (``beta**global_step``, kept as MindSpore
    keeps them, for checkpoints; the update uses the step count). The
    betas are rounded to float32, as MindSpore stores them.

    Args:
        params: Parameters or parameter groups.
        learning_rate: see :class:`Optimizer` (default 1e-3).
        beta1, beta2: in (0, 1) (defaults 0.9, 0.999).
        eps: > 0 (default 1e-8).
        use_locking: accepted and ignored.
        use_nesterov, use_amsgrad: see above.
        weight_decay, loss_scale: as for :class:`Optimizer`.
        use_lazy, use_offload (keywords): accepted; the update is the same.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
    >>> opt = nn.Adam([w], learning_rate=0.1, eps=0.1)
    >>> _ = opt((ms.Tensor([0.1, -0.2]),))
    >>> w.asnumpy().round(4)
    array([0.9969, 2.0059], dtype=float32)
    """

    _slot_names = {"mu": "moment1", "nu": "moment2", "nu_max": "vhat"}
    _ms_kernels = {"opt": "Adam", "sparse_opt": "FusedSparseAdam"}
    _power_shape = ()  # MindSpore's beta1_power/beta2_power: 0-d in Adam, (1,) in LazyAdam

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, use_locking=False,
                 use_nesterov=False, weight_decay=0.0, loss_scale=1.0, use_amsgrad=False, **kwargs):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        bad = set(kwargs) - {"use_lazy", "use_offload"}
        if bad:
            raise KeyError(f"For 'Adam', invalid keys are passed as kwargs, supported keys are 'use_lazy' and "
                           f"'use_offload', but got {sorted(bad)}.")
        self.use_lazy = check_bool(self.cls_name, "use_lazy", kwargs.get("use_lazy", False))
        self.use_offload = check_bool(self.cls_name, "use_offload", kwargs.get("use_offload", False))
        if self.use_lazy and self.use_offload:
            raise ValueError("For 'Adam', 'use_lazy' and 'use_offload' can not both be True.")
        self.beta1, self.beta2, self.eps = _check_betas(self.cls_name, beta1, beta2, eps)
        self.use_locking = check_bool(self.cls_name, "use_locking", use_locking)
        self.use_nesterov = check_bool(self.cls_name, "use_nesterov", use_nesterov)
        self.use_amsgrad = check_bool(self.cls_name, "use_amsgrad", use_amsgrad)
        if use_amsgrad and (self.use_lazy or self.use_offload):
            raise ValueError("For lazy Adam and Adam with offload, there is no parameter named 'use_amsgrad'.")
        if self.use_amsgrad:
            self._init_kernels(opt="ApplyAdamWithAmsgradV2")
        add_beta_powers(self, (self.beta1, self.beta2), self._power_shape)
        self.init_optax()

    def update_rule(self, learning_rate, weight_decay, decay_mask):
        return optax.chain(
            scale_by_mindspore_adam(_f32(self.beta1), _f32(self.beta2), self.eps,
                                    nesterov=self.use_nesterov and not self.use_amsgrad, amsgrad=self.use_amsgrad),
            optax.scale_by_learning_rate(learning_rate))


class AdamWeightDecay(Optimizer):
    """MindSpore's ``AdamWeightDecay``: Adam without bias correction, decoupled weight decay, eps 1e-6::

        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g**2
        w = w - lr * (m / (sqrt(v) + eps) + weight_decay * w)

    There is **no bias correction**, so the first step is about
    ``lr / sqrt(1 - beta2)`` ≈ 3.16·lr per coordinate (``optax.adamw`` moves by
    lr). The decay is decoupled and multiplied by lr (as in ``optax.adamw``),
    skipping Parameters named ``*beta*``/``*gamma*`` unless groups say
    otherwise. There is no ``loss_scale``. The betas are rounded to float32, as
    MindSpore stores them. State: ``moments1`` (``adam_m.<param>``), ``moments2`` (``adam_v.<param>``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
    >>> opt = nn.AdamWeightDecay([w], learning_rate=0.1)
    >>> _ = opt((ms.Tensor([0.1, -0.2]),))
    >>> w.asnumpy().round(4)
    array([0.6839, 2.3162], dtype=float32)
    """

    _slot_names = {"mu": "moments1=adam_m", "nu": "moments2=adam_v"}
    _decoupled_weight_decay = True
    _ms_kernels = {"fused_opt": "AdamWeightDecay"}
    use_fused_opt = True

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        self.beta1, self.beta2, self.eps = _check_betas(self.cls_name, beta1, beta2, eps)
        self.init_optax()

    def update_rule(self, learning_rate, weight_decay, decay_mask):
        parts = [scale_by_mindspore_adam(_f32(self.beta1), _f32(self.beta2), self.eps, bias_correction=False)]
        if weight_decay > 0:
            parts.append(optax.add_decayed_weights(weight_decay, decay_mask))
        parts.append(optax.scale_by_learning_rate(learning_rate))
        return optax.chain(*parts)


class AdamW(Optimizer):
    """AdamW, decoupled weight decay with bias correction: exactly ``optax.adamw`` (a cellkit extra).

    ::

        m_hat = m / (1 - beta1**t),  v_hat = v / (1 - beta2**t)
        w = w - lr * (m_hat / (sqrt(v_hat) + eps) + weight_decay * w)

    MindSpore 2.10 has no ``nn.AdamW`` (``mint.optim.AdamW`` exists but has no
    CPU kernel); the arguments follow ``nn.Adam``'s names and
    ``mint.optim.AdamW``'s default ``weight_decay=0.01``. The decay skips
    Parameters named ``*beta*``/``*gamma*`` unless groups say otherwise.
    State: ``moment1.<param>``, ``moment2.<param>``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
    >>> opt = nn.AdamW([w], learning_rate=0.1, weight_decay=0.0)
    >>> _ = opt((ms.Tensor([0.1, -0.2]),))
    >>> w.asnumpy().round(4)
    array([0.9, 2.1], dtype=float32)
    """

    _slot_names = {"mu": "moment1", "nu": "moment2"}
    _decoupled_weight_decay = True

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=1e-2):
        super().__init__(learning_rate, params, weight_decay)
        self.beta1, self.beta2, self.eps = _check_betas(self.cls_name, beta1, beta2, eps)
        self.init_optax()

    def update_rule(self, learning_rate, weight_decay, decay_mask):
        return optax.adamw(learning_rate, b1=self.beta1, b2=self.beta2, eps=self.eps,
                           weight_decay=weight_decay, mask=decay_mask)
