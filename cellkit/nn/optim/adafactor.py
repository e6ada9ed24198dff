"""``AdaFactor``: MindSpore 2.10's ``nn.AdaFactor`` (factored second moments, relative step size).

>>> import cellkit as ms
>>> from cellkit import nn
>>> w = ms.Parameter(ms.Tensor([[1.0, 2.0], [3.0, 4.0]]), name="w")
>>> opt = nn.AdaFactor([w])
>>> _ = opt((ms.Tensor([[0.1, 0.2], [0.3, 0.4]]),))
>>> [p.name for p in opt.get_parameters()][3:]
['exp_avg.w', 'exp_avg_sq_row_w', 'exp_avg_sq_col_w']
"""

from __future__ import annotations

import collections
import numbers

import jax.numpy as jnp

from ...startup import lazy_module
from ._checks import check_bool, check_float, check_type_float
from .optimizer import Optimizer

optax = lazy_module("optax")

__all__ = ["AdaFactor"]

AdaFactorState = collections.namedtuple("AdaFactorState",
                                        ("count", "exp_avg", "exp_avg_sq_row", "exp_avg_sq_col", "exp_avg_sq"))


def _rms(x):
    return jnp.sqrt(jnp.mean(jnp.square(x)))


def _adafactor(opt, learning_rate) -> optax.GradientTransformation:
    """The update of ``opt`` (an :class:`AdaFactor`) as an optax transformation; unused state is ``None``."""
    eps1, eps2 = (jnp.float32(e) for e in opt.eps)
    clip, beta1, decay = jnp.float32(opt.clip_threshold), jnp.float32(opt.beta1), jnp.float32(opt.decay_rate)
    wd = jnp.float32(opt._adafactor_weight_decay)
    first_moment = opt.beta1 > 0
    sq_dtype = jnp.float16 if opt.compression else None

    def live(p):
        return p is not None and not isinstance(p, optax.MaskedNode)

    def init_fn(params):
        def per(p, kind):
            if not live(p):
                return None
            factored = p.ndim >= 2
            if kind == "exp_avg":
                return jnp.zeros_like(p) if first_moment else None
            if kind == "row":
                return jnp.zeros(p.shape[:-1], p.dtype) if factored else None
            if kind == "col":
                return jnp.zeros(p.shape[:-2] + p.shape[-1:], p.dtype) if factored else None
            return None if factored else jnp.zeros(p.shape, sq_dtype or p.dtype)
        return AdaFactorState(jnp.zeros([], jnp.int32),
                              *(tuple(per(p, k) for p in params) for k in ("exp_avg", "row", "col", "sq")))

    def update_fn(updates, state, params=None):
        if params is None:
            raise ValueError("AdaFactor's update needs the parameters")
        count = optax.safe_increment(state.count)
        step = count.astype(jnp.float32)
        if opt.relative_step and opt._scale_lr:
            min_step = 1e-6 * step if opt.warmup_init else jnp.float32(1e-2)
            lr = jnp.minimum(min_step, 1.0 / jnp.sqrt(step))
        else:
            lr = learning_rate
        beta2t = 1.0 - step ** (-decay)
        out = [[], [], [], [], []]
        for g, w, m, row, col, sq in zip(updates, params, *state[1:]):
            if not live(w):
                for k, v in enumerate((g, m, row, col, sq)):
                    out[k].append(v)
                continue
            g32, w32 = g.astype(jnp.float32), w.astype(jnp.float32)
            lr_w = lr * jnp.maximum(eps2, _rms(w32)) if opt._scale_parameter else lr
            u = g32 * g32 + eps1
            if w.ndim >= 2:
                row = beta2t * row.astype(jnp.float32) + (1.0 - beta2t) * jnp.mean(u, axis=-1)
                col = beta2t * col.astype(jnp.float32) + (1.0 - beta2t) * jnp.mean(u, axis=-2)
                r = 1.0 / jnp.sqrt(row / jnp.mean(row, axis=-1, keepdims=True))
                u = r[..., None] * (1.0 / jnp.sqrt(col[..., None, :])) * g32
            else:
                sq = beta2t * sq.astype(jnp.float32) + (1.0 - beta2t) * u
                u = g32 / jnp.sqrt(sq)
            u = u / jnp.maximum(_rms(u) / clip, 1.0) * lr_w
            if first_moment:
                m = beta1 * m.astype(jnp.float32) + (1.0 - beta1) * u
                u = m
            new_w = w32 - wd * lr_w * w32 if opt._adafactor_weight_decay else w32
            new_w = new_w - u
            out[0].append((new_w - w32).astype(w.dtype))
            for k, (new, old) in enumerate(((m, state.exp_avg), (row, state.exp_avg_sq_row),
                                            (col, state.exp_avg_sq_col), (sq, state.exp_avg_sq)), start=1):
                old_leaf = old[len(out[k])]
                out[k].append(None if new is None else new.astype(old_leaf.dtype))
        return tuple(out[0]), AdaFactorState(count, *(tuple(o) for o in out[1:]))

    return optax.GradientTransformation(init_fn, update_fn)


class AdaFactor(Optimizer):
    """Adafactor as MindSpore 2.10 computes it (``nn.AdaFactor(params, learning_rate=None, eps=(1e-30, 1e-3),
    clip_threshold=1.0, decay_rate=0.8, beta1=0.9, weight_decay=0.0, scale_parameter=True,
    relative_step=True, warmup_init=False, compression=False, loss_scale=1.0)``)::

        t = global_step + 1;  beta2t = 1 - t**(-decay_rate)
        lr = min(1e-2 (warmup_init: 1e-6 t), 1 / sqrt(t))      relative_step, else the learning rate
        lr_w = lr * max(eps[1], rms(w))                          scale_parameter, else lr
        u = g**2 + eps[0]
        matrices (ndim >= 2): R = beta2t R + (1 - beta2t) mean(u, -1);  C likewise over axis -2
                              u = g / sqrt(R / mean(R)) / sqrt(C)
        vectors:              V = beta2t V + (1 - beta2t) u;  u = g / sqrt(V)
        u = u / max(1, rms(u) / clip_threshold) * lr_w
        beta1 > 0:            m = beta1 m + (1 - beta1) u;  u = m
        w = w - weight_decay * lr_w * w - u

    State (MindSpore's names): ``exp_avg.<param>`` (when ``beta1 > 0``),
    ``exp_avg_sq_row_<param>`` and ``exp_avg_sq_col_<param>`` for matrices,
    ``exp_avg_sq_<param>`` for vectors (float16 with ``compression``).
    MindSpore also keeps placeholders of shape ``(1,)`` for the other slots and
    an ``afactor_step`` equal to ``global_step``; these do no work and are not
    kept. ``relative_step`` needs ``learning_rate=None``; a learning rate that
    is not a number (list, schedule) turns ``scale_parameter`` off, as in
    MindSpore. As in MindSpore, ``loss_scale`` is checked but the gradients
    are not divided by it, and ``weight_decay`` (in ``[0, 1)``) applies to
    every Parameter, decoupled.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> w = ms.Parameter(ms.Tensor([3.0, 4.0]), name="w")
    >>> opt = nn.AdaFactor([w], learning_rate=0.1, relative_step=False, scale_parameter=False, beta1=0.0)
    >>> _ = opt((ms.Tensor([1.0, -1.0]),))
    >>> w.asnumpy()
    array([2.9, 4.1], dtype=float32)
    """

    _slot_names = {"exp_avg": "exp_avg", "exp_avg_sq_row": "exp_avg_sq_row_{}",
                   "exp_avg_sq_col": "exp_avg_sq_col_{}", "exp_avg_sq": "exp_avg_sq_{}"}
    _scalar_slots = frozenset({"exp_avg_sq_row", "exp_avg_sq_col"})
    _decoupled_weight_decay = True
    _scales_gradients = False

    def __init__(self, params, learning_rate=None, eps=(1e-30, 1e-3), clip_threshold=1.0, decay_rate=0.8,
                 beta1=0.9, weight_decay=0.0, scale_parameter=True, relative_step=True, warmup_init=False,
                 compression=False, loss_scale=1.0):
        if learning_rate is not None and relative_step:
            raise ValueError("For 'AdaFactor', cannot combine a manual learning_rate with relative_step=True, "
                             f"got learning_rate={learning_rate!r}.")
        if warmup_init and not relative_step:
            raise ValueError("For 'AdaFactor', warmup_init=True requires relative_step=True.")
        if learning_rate is None and not relative_step:
            raise ValueError("For 'AdaFactor', learning_rate must be given when relative_step=False.")
        if learning_rate is None:
            learning_rate = 0.0
        if beta1 is None:
            beta1 = 0.0
        self._scale_lr = isinstance(learning_rate, numbers.Real) and not isinstance(learning_rate, bool)
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        owner = self.cls_name
        if not isinstance(eps, (list, tuple)):
            raise TypeError(f"For '{owner}', the type of 'eps' should be 'list' or 'tuple', but got "
                            f"'{type(eps).__name__}'.")
        if len(eps) != 2:
            raise ValueError(f"For '{owner}', 'eps' must have 2 values (eps1, eps2), but got {len(eps)}.")
        for i, e in enumerate(eps):
            check_type_float(owner, f"eps{i}", e)
            check_float(owner, f"eps{i}", e, minimum=0.0)
        check_type_float(owner, "clip_threshold", clip_threshold)
        check_float(owner, "clip_threshold", clip_threshold, minimum=0.0)
        check_type_float(owner, "decay_rate", decay_rate)
        check_float(owner, "decay_rate", decay_rate, minimum=0.0, exclusive_min=True, maximum=1.0,
                    exclusive_max=True)
        check_float(owner, "weight_decay", weight_decay, minimum=0.0, maximum=1.0, exclusive_max=True)
        for name, value in (("scale_parameter", scale_parameter), ("relative_step", relative_step),
                            ("compression", compression), ("warmup_init", warmup_init)):
            check_bool(owner, name, value)
        check_float(owner, "beta1", beta1, minimum=0.0)
        self.eps = tuple(float(e) for e in eps)
        self.clip_threshold, self.decay_rate, self.beta1 = float(clip_threshold), float(decay_rate), float(beta1)
        self._adafactor_weight_decay = float(weight_decay)
        self.scale_parameter, self.relative_step = scale_parameter, relative_step
        self.warmup_init, self.compression = warmup_init, compression
        self._scale_parameter = scale_parameter and self._scale_lr
        self.init_optax()
        self._init_kernels(fused_ada_factor=("FusedAdaFactor", (), {}))

    # MindSpore's descriptive attributes.
    scale_lr = property(lambda self: self._scale_lr, doc="False when the learning rate is a schedule.")
    use_first_moment = property(lambda self: self.beta1 > 0, doc="True when ``beta1 > 0`` (``exp_avg`` is kept).")
    weight_decay_flag = property(lambda self: bool(self._adafactor_weight_decay), doc="``weight_decay != 0``.")
    use_fused_ada_factor = property(lambda self: self.target == "CPU", doc="MindSpore's CPU kernel choice.")
    supports_flat_params = property(lambda self: False)
    supports_memory_efficient_fp16 = property(lambda self: True)

    def init_ada_factor_state(self, beta1):
        """MindSpore builds the state here during ``__init__``; cellkit builds it with the optax state."""
        raise RuntimeError(f"{self.cls_name}: the state is created in __init__ (exp_avg, exp_avg_sq_row_*, ...); "
                           "build a new AdaFactor to start from fresh state.")

    def update_rule(self, learning_rate, weight_decay, decay_mask):
        return _adafactor(self, learning_rate)
