"""Neural-network Primitives (MindSpore's ``ops/operations/nn_ops.py``): one table line each.

>>> import cellkit as ms
>>> ms.set_seed(0)
>>> out, mask = ms.ops.Dropout2D(keep_prob=0.8)(ms.ops.ones((1, 3, 2, 2)))
>>> mask.dtype, mask.shape
(dtype('bool'), (1, 3, 2, 2))
"""

from __future__ import annotations

import functools

import jax.numpy as jnp

from ..function._utils import _v
from ..function.random_func import _apply_mask, _channel_dropout, bernoulli_mask
from ..primitive import install_primitives

__all__ = []


def _check_keep(what, allow_zero, keep_prob, **_):
    ok = isinstance(keep_prob, (int, float)) and not isinstance(keep_prob, bool)
    lo_ok = keep_prob >= 0 if allow_zero else keep_prob > 0
    if not ok or not lo_ok or keep_prob > 1:
        rng = "[0.0, 1.0]" if allow_zero else "(0.0, 1.0]"
        raise ValueError(f"{what}: keep_prob must be a float in {rng}, got {keep_prob!r}")


def _dropout(x, *, keep_prob, Seed0, Seed1):  # noqa: N803 - MindSpore's argument names
    """Elementwise dropout returning ``(output, mask)``; the mask has the input's dtype."""
    x = _v(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise TypeError(f"Dropout: the input must be a float tensor, got {x.dtype}")
    mask = bernoulli_mask(keep_prob, x.shape)
    return _apply_mask(x, mask, keep_prob), mask.astype(x.dtype)


def _dropout_nd(ndim, what):
    """Channel dropout of an (N, C, ...) input with ``ndim`` dimensions: ``(output, bool mask)``."""
    def call(x, *, keep_prob):
        return _channel_dropout(x, 1.0 - keep_prob, ndim, what)
    call.__name__ = what.lower()
    return call


# Name: (op, constructor arguments with MindSpore's defaults[, check])
PRIMITIVES = {
    "Dropout": (_dropout, {"keep_prob": 0.5, "Seed0": 0, "Seed1": 0},
                functools.partial(_check_keep, "Dropout", False)),
    "Dropout2D": (_dropout_nd(4, "Dropout2D"), {"keep_prob": 0.5}, functools.partial(_check_keep, "Dropout2D", True)),
    "Dropout3D": (_dropout_nd(5, "Dropout3D"), {"keep_prob": 0.5}, functools.partial(_check_keep, "Dropout3D", True)),
}
install_primitives(globals(), __all__, PRIMITIVES)
