"""Optimizer Primitives that update Parameters in place (MindSpore's ``P.Adam``).

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


def _check(use_locking, use_nesterov):
    for label, flag in (("use_locking", use_locking), ("use_nesterov", use_nesterov)):
        if not isinstance(flag, bool):
            raise TypeError(f"For 'Adam', '{label}' must be a bool, got {type(flag).__name__}")


# Name: (op, constructor arguments with MindSpore's defaults[, check])
PRIMITIVES = {
    "Adam": (_adam, {"use_locking": False, "use_nesterov": False}, _check),
}
install_primitives(globals(), __all__, PRIMITIVES)
