"""Optimizer Primitives that update Parameters in place (MindSpore's ``P.Adam``, ``ApplyMomentum``, ``SGD``,
``AdamWeightDecay``).

The update is written with ``Parameter.assign_value`` (the one write path, recorded by ``jit``
and ``grad``), and the new values are returned, as MindSpore does.

>>> import cellkit as ms
>>> from cellkit.ops import operations as P
>>> var, m, v = (ms.Parameter(ms.Tensor([1.0]), name=n) for n in ("var", "m", "v"))
>>> _ = P.Adam()(var, m, v, 0.9, 0.999, 0.1, 0.9, 0.999, 1e-8, ms.Tensor([0.5]))
>>> round(float(var.value[0]), 4), round(float(m.value[0]), 4)
(0.9699, 0.95)
"""

from __future__ import annotations

import jax.numpy as jnp

from ...parameter import Parameter
from ..function._utils import _v
from ..primitive import install_primitives

__all__ = []


def _state(name, x):
    if not isinstance(x, Parameter):
        raise TypeError(f"For 'Adam', '{name}' must be a Parameter (it is updated in place), got {type(x).__name__}")
    return x


def _adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad, *, use_locking, use_nesterov):
    var, m, v = _state("var", var), _state("m", m), _state("v", v)
    g = jnp.asarray(_v(grad))
    if g.shape != tuple(var.shape):
        raise ValueError(f"For 'Adam', 'grad' must have the shape of 'var' {tuple(var.shape)}, got {g.shape}")
    b1, b2, b1p, b2p, lr, eps = (jnp.asarray(_v(a), var.dtype) for a in (beta1, beta2, beta1_power, beta2_power,
                                                                          lr, epsilon))
    new_m = b1 * m.value + (1 - b1) * g
    new_v = b2 * v.value + (1 - b2) * g * g
    step = lr * jnp.sqrt(1 - b2p) / (1 - b1p)
    direction = b1 * new_m + (1 - b1) * g if use_nesterov else new_m
    new_var = var.value - step * direction / (jnp.sqrt(new_v) + eps)
    for p, new in ((m, new_m), (v, new_v), (var, new_var)):
        p.assign_value(new.astype(p.dtype))
    return var.value, m.value, v.value


def _param(what, name, x):
    if not isinstance(x, Parameter):
        raise TypeError(f"For '{what}', '{name}' must be a Parameter (it is updated in place), got {type(x).__name__}")
    return x


def _write(x, new):
    """Store ``new`` into ``x`` when it is a Parameter (MindSpore updates those in place)."""
    if isinstance(x, Parameter):
        x.assign_value(new.astype(x.dtype))


def _apply_momentum(variable, accumulation, learning_rate, gradient, momentum, *, use_nesterov, use_locking,
                    gradient_scale):
    """``accum = momentum * accum + gradient_scale * grad``; ``var -= lr * accum`` (Nesterov:
    ``var -= lr * (gradient_scale * grad + momentum * accum)``). Returns the new ``variable``."""
    var = _param("ApplyMomentum", "variable", variable)
    acc = _param("ApplyMomentum", "accumulation", accumulation)
    g = jnp.asarray(_v(gradient), var.dtype) * gradient_scale
    lr, mom = (jnp.asarray(_v(a), var.dtype) for a in (learning_rate, momentum))
    new_acc = mom * acc.value + g
    step = g + mom * new_acc if use_nesterov else new_acc
    acc.assign_value(new_acc.astype(acc.dtype))
    var.assign_value((var.value - lr * step).astype(var.dtype))
    return var.value


def _sgd(parameters, gradient, learning_rate, accum, momentum, stat, *, dampening, weight_decay, nesterov):
    """MindSpore's ``SGD`` kernel: weight decay into the gradient; with momentum, ``accum`` restarts at the
    gradient where ``stat`` > 0 (and ``stat`` becomes 0), else ``accum = momentum * accum + (1 - dampening) *
    grad``; the step is ``accum`` (Nesterov: ``grad + momentum * accum``). Returns the new ``parameters``."""
    p = _param("SGD", "parameters", parameters)
    g = jnp.asarray(_v(gradient), p.dtype)
    if weight_decay > 0:
        g = g + weight_decay * p.value
    lr, mom = (jnp.asarray(_v(a), p.dtype) for a in (learning_rate, momentum))
    acc, st = jnp.asarray(_v(accum), p.dtype), jnp.asarray(_v(stat), p.dtype)
    new_acc = jnp.where(st > 0, g, mom * acc + (1 - dampening) * g)
    step = jnp.where(mom > 0, g + mom * new_acc if nesterov else new_acc, g)
    new_acc = jnp.where(mom > 0, new_acc, acc)
    _write(accum, new_acc)
    _write(stat, jnp.where(mom > 0, jnp.zeros_like(st), st))
    p.assign_value((p.value - lr * step).astype(p.dtype))
    return p.value


def _adam_weight_decay(var, m, v, lr, beta1, beta2, epsilon, decay, gradient, *, use_locking):
    """``m, v`` as Adam's (no bias correction); ``var -= lr * (m / (sqrt(v) + eps) + decay * var)``.
    Returns the new ``(var, m, v)`` (MindSpore's CPU kernel leaves its outputs uninitialised)."""
    var, m, v = (_param("AdamWeightDecay", n, x) for n, x in (("var", var), ("m", m), ("v", v)))
    g = jnp.asarray(_v(gradient), var.dtype)
    lr, b1, b2, eps, wd = (jnp.asarray(_v(a), var.dtype) for a in (lr, beta1, beta2, epsilon, decay))
    new_m = b1 * m.value + (1 - b1) * g
    new_v = b2 * v.value + (1 - b2) * g * g
    new_var = var.value - lr * (new_m / (jnp.sqrt(new_v) + eps) + wd * var.value)
    for p, new in ((m, new_m), (v, new_v), (var, new_var)):
        p.assign_value(new.astype(p.dtype))
    return var.value, m.value, v.value


def _check(use_locking, use_nesterov):
    for label, flag in (("use_locking", use_locking), ("use_nesterov", use_nesterov)):
        if not isinstance(flag, bool):
            raise TypeError(f"For 'Adam', '{label}' must be a bool, got {type(flag).__name__}")


# Name: (op, constructor arguments with MindSpore's defaults[, check])
PRIMITIVES = {
    "Adam": (_adam, {"use_locking": False, "use_nesterov": False}, _check),
    "ApplyMomentum": (_apply_momentum, {"use_nesterov": False, "use_locking": False, "gradient_scale": 1.0}),
    "SGD": (_sgd, {"dampening": 0.0, "weight_decay": 0.0, "nesterov": False}),
    "AdamWeightDecay": (_adam_weight_decay, {"use_locking": False}),
}
install_primitives(globals(), __all__, PRIMITIVES)
