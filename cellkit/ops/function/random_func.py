"""Random ops: every draw splits cellkit's global key stream (see ``cellkit.random``).

MindSpore's per-op ``seed`` arguments are accepted; reproducibility comes from
``set_seed``, which fixes the whole sequence of draws, eagerly and inside
``cellkit.jit`` alike.

>>> import cellkit as ms
>>> ms.set_seed(0)
>>> x = ms.ops.ones((2, 4))
>>> y = ms.ops.dropout(x, p=0.5)
>>> sorted(set(y.reshape(-1).tolist())) in ([0.0, 2.0], [0.0], [2.0])
True
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...random import next_key
from ...tensor import default_int_dtype
from ._utils import _v

__all__ = ["dropout", "dropout2d", "dropout3d", "bernoulli_mask", "rand", "rand_like", "randn",
           "randn_like", "uniform", "standard_normal", "normal", "randint", "shuffle",
           "randperm", "multinomial"]


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


def _check_p(p, what):
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{what}: the drop probability p must be a float in [0, 1], got {p!r}")


def bernoulli_mask(keep_prob, shape):
    """A bool mask of ``shape``, each element True with probability ``keep_prob``."""
    return jax.random.bernoulli(next_key(), keep_prob, tuple(shape))


def _apply_mask(x, mask, keep_prob):
    if keep_prob == 0:
        return jnp.zeros_like(x)
    out = jnp.where(mask, x / keep_prob if jnp.issubdtype(x.dtype, jnp.inexact) else x * (1 / keep_prob), 0)
    return out.astype(x.dtype)


def dropout(input, p=0.5, training=True, seed=None):  # noqa: A002
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``.

    Returns only the output (MindSpore 2.x); the ``ops.Dropout`` primitive
    returns ``(output, mask)``. With ``training=False`` the input is returned.
    """
    if not training:
        return input
    _check_p(p, "ops.dropout")
    x = _v(input)
    return _apply_mask(x, bernoulli_mask(1.0 - p, x.shape), 1.0 - p)


def _channel_dropout(x, p, ndim, what):
    x = _v(x)
    if x.ndim != ndim:
        raise ValueError(f"{what}: the input must be {ndim}-D (N, C, ...), got shape {tuple(x.shape)}")
    keep = 1.0 - p
    mask = jnp.broadcast_to(bernoulli_mask(keep, x.shape[:2] + (1,) * (ndim - 2)), x.shape)
    return _apply_mask(x, mask, keep), mask


def dropout2d(input, p=0.5, training=True):  # noqa: A002
    """Zero whole channels of an (N, C, H, W) input with probability ``p``."""
    if not training:
        return input
    _check_p(p, "ops.dropout2d")
    return _channel_dropout(input, p, 4, "ops.dropout2d")[0]


def dropout3d(input, p=0.5, training=True):  # noqa: A002
    """Zero whole channels of an (N, C, D, H, W) input with probability ``p``."""
    if not training:
        return input
    _check_p(p, "ops.dropout3d")
    return _channel_dropout(input, p, 5, "ops.dropout3d")[0]


def _float(dtype):
    return np.float32 if dtype is None else np.dtype(dtype)


def rand(*size, dtype=None, seed=None):
    """Uniform [0, 1) samples of ``size``."""
    return jax.random.uniform(next_key(), _size(size), _float(dtype))


def rand_like(input, seed=None, *, dtype=None):  # noqa: A002
    """Uniform [0, 1) samples shaped like ``input``."""
    x = _v(input)
    return jax.random.uniform(next_key(), x.shape, _float(dtype or x.dtype))


def randn(*size, dtype=None, seed=None):
    """Standard normal samples of ``size``."""
    return jax.random.normal(next_key(), _size(size), _float(dtype))


def randn_like(input, seed=None, *, dtype=None):  # noqa: A002
    """Standard normal samples shaped like ``input``."""
    x = _v(input)
    return jax.random.normal(next_key(), x.shape, _float(dtype or x.dtype))


def uniform(shape, minval, maxval, seed=None, dtype=np.float32):
    """Uniform samples in ``[minval, maxval)`` (integers when ``dtype`` is an int type)."""
    dtype = np.dtype(dtype)
    lo, hi = _v(minval), _v(maxval)
    if dtype.kind in "iu":
        return jax.random.randint(next_key(), tuple(shape), lo, hi, dtype)
    return jax.random.uniform(next_key(), tuple(shape), dtype, lo, hi)


def standard_normal(shape, seed=None):
    """Standard normal samples of ``shape``."""
    return jax.random.normal(next_key(), tuple(shape), np.float32)


def normal(shape, mean, stddev, seed=None):
    """Normal samples with the given (broadcast) ``mean`` and ``stddev``."""
    return _v(mean) + _v(stddev) * jax.random.normal(next_key(), tuple(shape), np.float32)


def randint(low, high, size, seed=None, *, dtype=None):
    """Integers in ``[low, high)``."""
    return jax.random.randint(next_key(), tuple(size), low, high,
                              np.dtype(dtype) if dtype is not None else default_int_dtype())


def shuffle(x, seed=None):
    """``x`` with its first axis randomly permuted."""
    return jax.random.permutation(next_key(), _v(x), axis=0)


def randperm(n, seed=0, offset=0, dtype=None):
    """A random permutation of ``0..n-1``."""
    return jax.random.permutation(next_key(), n).astype(np.dtype(dtype) if dtype else default_int_dtype())


def multinomial(input, num_samples, replacement=True, seed=None):  # noqa: A002
    """Sample category indices from (unnormalised) probabilities ``input`` (1-D or 2-D)."""
    probs = _v(input)
    logits = jnp.log(probs)
    batch = probs.shape[:-1]
    if replacement:
        out = jax.random.categorical(next_key(), logits, shape=(num_samples,) + batch)
        out = jnp.moveaxis(out, 0, -1)
    else:
        gumbel = jax.random.gumbel(next_key(), probs.shape)
        out = jnp.argsort(-(logits + gumbel), axis=-1)[..., :num_samples]
    return out.astype(default_int_dtype())
