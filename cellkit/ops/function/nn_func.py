"""Activations and other neural-network functions (MindSpore's ``ops/function/nn_func.py``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ._utils import _v, exporter, install_renames

__all__ = []
_public = exporter(__all__)

# name: (JAX function, MindSpore signature) — the op is that function, with Parameters accepted.
RENAMES = {
    "sigmoid": (jax.nn.sigmoid, "(input)"),
    "softplus": (jax.nn.softplus, "(input)"),
    "silu": (jax.nn.silu, "(input)"),
    "relu6": (jax.nn.relu6, "(x)"),
}
install_renames(globals(), __all__, RENAMES)


@_public
def relu(input, inplace=False):  # noqa: A002
    """max(input, 0)."""
    return jax.nn.relu(_v(input))


@_public
def softmax(input, axis=-1, *, dtype=None):  # noqa: A002
    """Softmax over ``axis``."""
    x = _v(input)
    if dtype is not None:
        x = x.astype(np.dtype(dtype))
    return jax.nn.softmax(x, axis=axis)


@_public
def log_softmax(logits, axis=-1):
    """Log-softmax over ``axis``."""
    return jax.nn.log_softmax(_v(logits), axis=axis)


@_public
def gelu(input_x, approximate="none"):
    """GELU; ``approximate='tanh'`` for the tanh approximation."""
    return jax.nn.gelu(_v(input_x), approximate=approximate == "tanh")


@_public
def leaky_relu(input, alpha=0.2):  # noqa: A002
    """Leaky ReLU with slope ``alpha`` (MindSpore's default 0.2)."""
    return jax.nn.leaky_relu(_v(input), alpha)
