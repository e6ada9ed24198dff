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

from ... import draws, host_ops
from ...eager_jit import eager_jit
from ... import dtype as mstype
from ...random import next_key
from ...tensor import default_int_dtype, host_to_device
from ._utils import _v
from .array_func import canonical

# Stateful, host-side or transform ops: eager calls run op by op (see cellkit.eager_jit).
EAGER_JIT = False
__all__ = ["dropout", "dropout2d", "dropout3d", "bernoulli_mask", "rand", "rand_like", "randn",
           "randn_like", "uniform", "standard_normal", "normal", "randint", "randint_like", "shuffle",
           "randperm", "multinomial", "bernoulli", "random_categorical", "laplace", "standard_laplace",
           "gamma", "poisson", "random_gamma", "random_poisson", "choice_with_mask",
           "multinomial_with_replacement"]


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


def _check_p(p, what):
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{what}: the drop probability p must be a float in [0, 1], got {p!r}")


def bernoulli_mask(keep_prob, shape):
    """A bool mask of ``shape``, each element True with probability ``keep_prob``.

    ``jax.random.bernoulli``'s, which is ``uniform(key, shape) < keep_prob`` in the default float type:
    an eager call on the CPU backend compares :mod:`cellkit.draws`' uniform floats on the host (the
    same bits, no compilation per shape) until the same shape has been drawn ``host_ops.HOT`` times."""
    key, shape = next_key(), tuple(shape)
    if isinstance(keep_prob, float):
        dtype = np.dtype(jax.dtypes.canonicalize_dtype(np.float64))   # (a Python float's, as JAX reads p)
        unit = _host_draw("uniform", key, shape, dtype, counted_as="bernoulli")
        if unit is not None:
            return host_to_device(unit < dtype.type(keep_prob))
    return jax.random.bernoulli(key, keep_prob, shape)


@eager_jit   # (a pure function of the input and the mask: one executable, or the host, per signature)
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
    return np.float32 if dtype is None else canonical(dtype)


_drawn = {}   # (kind, shape, dtype) -> eager draws made by cellkit.draws


def _host_draw(kind, key, shape, dtype, counted_as=None):
    """:func:`cellkit.draws.standard`'s NumPy array for an eager call on the CPU backend, until the same
    (``counted_as`` or ``kind``, shape, dtype) has been drawn ``host_ops.HOT`` times; else None."""
    signature = (counted_as or kind, shape, np.dtype(dtype))
    calls = _drawn.get(signature, 0)
    if calls >= host_ops.HOT or isinstance(key, jax.core.Tracer) or not host_ops.ready():
        return None
    out = draws.standard(kind, key, shape, dtype)
    if out is not None:
        if len(_drawn) > 4096:
            _drawn.clear()
        _drawn[signature] = calls + 1
    return out


def _standard(kind, key, shape, dtype):
    """``jax.random.normal`` / ``uniform`` (on [0, 1)) for ``key``. An eager call on the CPU backend
    takes the same numbers from :mod:`cellkit.draws` (one executable per distribution, not one per
    shape), until the same shape has been drawn ``host_ops.HOT`` times: then ``jax.random``'s own
    executable for it is compiled, which is faster per call."""
    out = _host_draw(kind, key, shape, dtype)
    if out is not None:
        return host_to_device(out)
    return (jax.random.normal if kind == "normal" else jax.random.uniform)(key, shape, dtype)


def rand(*size, dtype=None, seed=None):
    """Uniform [0, 1) samples of ``size``."""
    return _standard("uniform", next_key(), _size(size), _float(dtype))


def rand_like(input, seed=None, *, dtype=None):  # noqa: A002
    """Uniform [0, 1) samples shaped like ``input``."""
    x = _v(input)
    return _standard("uniform", next_key(), x.shape, _float(dtype or x.dtype))


def randn(*size, dtype=None, seed=None):
    """Standard normal samples of ``size``."""
    return _standard("normal", next_key(), _size(size), _float(dtype))


def randn_like(input, seed=None, *, dtype=None):  # noqa: A002
    """Standard normal samples shaped like ``input``."""
    x = _v(input)
    return _standard("normal", next_key(), x.shape, _float(dtype or x.dtype))


def uniform(shape, minval, maxval, seed=None, dtype=np.float32):
    """Uniform samples in ``[minval, maxval)`` (integers when ``dtype`` is an int type)."""
    dtype = np.dtype(dtype)
    lo, hi = _v(minval), _v(maxval)
    if dtype.kind in "iu":
        return jax.random.randint(next_key(), tuple(shape), lo, hi, dtype)
    return jax.random.uniform(next_key(), tuple(shape), dtype, lo, hi)


def standard_normal(shape, seed=None):
    """Standard normal samples of ``shape``."""
    return _standard("normal", next_key(), tuple(shape), np.float32)


def normal(shape, mean, stddev, seed=None):
    """Normal samples with the given (broadcast) ``mean`` and ``stddev``."""
    return _v(mean) + _v(stddev) * jax.random.normal(next_key(), tuple(shape), np.float32)


def _check_int(value, what):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    return int(value)


def randint(low, high, size, seed=None, *, dtype=None):
    """Integers in ``[low, high)`` (Int64 by default)."""
    low, high = _check_int(low, "randint: low"), _check_int(high, "randint: high")
    if low >= high:
        raise ValueError(f"randint: low must be less than high, got {low} >= {high}")
    dtype = canonical(dtype if dtype is not None else default_int_dtype())
    return jax.random.randint(next_key(), tuple(size), low, high, dtype)


def randint_like(input, low, high, seed=None, *, dtype=None):  # noqa: A002
    """Integers in ``[low, high)`` shaped like ``input`` (with ``input``'s int dtype unless given)."""
    x = _v(input)
    dtype = np.dtype(dtype) if dtype is not None else np.dtype(x.dtype)
    if dtype.kind not in "iu":
        raise ValueError(f"randint_like: the dtype must be an int type, got {dtype}; pass dtype=")
    return randint(low, high, x.shape, dtype=dtype)


def shuffle(x, seed=None):
    """``x`` with its first axis randomly permuted."""
    return jax.random.permutation(next_key(), _v(x), axis=0)


def randperm(n, seed=0, offset=0, dtype=mstype.int64):
    """A random permutation of ``0..n-1`` (Int64 by default)."""
    n = _check_int(int(_v(n)) if not isinstance(n, int) else n, "randperm: n")
    return jax.random.permutation(next_key(), n).astype(canonical(dtype))


def multinomial(input, num_samples, replacement=True, seed=None):  # noqa: A002
    """Int32 category indices drawn from the (unnormalised) probabilities in the last axis of ``input``."""
    probs = jnp.asarray(_v(input))
    if not replacement and num_samples > probs.shape[-1]:
        raise ValueError(f"multinomial: without replacement num_samples ({num_samples}) must not exceed the "
                         f"number of categories ({probs.shape[-1]})")
    logits = jnp.log(probs)
    if replacement:
        out = jax.random.categorical(next_key(), logits, shape=(num_samples,) + probs.shape[:-1])
        out = jnp.moveaxis(out, 0, -1)
    else:
        gumbel = jax.random.gumbel(next_key(), probs.shape)
        out = jnp.argsort(-(logits + gumbel), axis=-1)[..., :num_samples]
    return out.astype(np.int32)


def random_categorical(logits, num_sample, seed=0, dtype=mstype.int64):
    """``num_sample`` category indices per row of the 2-D ``logits``: shape (batch, num_sample)."""
    logits = jnp.asarray(_v(logits))
    out = jax.random.categorical(next_key(), logits, shape=(num_sample,) + logits.shape[:-1])
    return jnp.moveaxis(out, 0, -1).astype(canonical(dtype))


def bernoulli(input, p=0.5, seed=None):  # noqa: A002
    """0/1 draws shaped and typed like ``input``, each 1 with probability ``p`` (a float or tensor)."""
    x = jnp.asarray(_v(input))
    p = jnp.asarray(_v(p), np.float32)
    return jax.random.bernoulli(next_key(), p, x.shape).astype(x.dtype)


def laplace(shape, mean, lambda_param, seed=None):
    """Laplace samples with location ``mean`` and scale ``lambda_param`` (broadcast with ``shape``)."""
    mean, scale = jnp.asarray(_v(mean), np.float32), jnp.asarray(_v(lambda_param), np.float32)
    out_shape = jnp.broadcast_shapes(tuple(shape), mean.shape, scale.shape)
    return jax.random.laplace(next_key(), out_shape, np.float32) * scale + mean


def standard_laplace(shape, seed=None):
    """Laplace(0, 1) samples of ``shape``."""
    return jax.random.laplace(next_key(), _shape(shape), np.float32)


def _shape(shape):
    return tuple(int(s) for s in np.asarray(_v(shape)).reshape(-1)) if not isinstance(shape, tuple) else shape


def gamma(shape, alpha, beta, seed=None):
    """Gamma samples with shape ``alpha`` and rate (inverse scale) ``beta``, broadcast with ``shape``."""
    alpha, beta = jnp.asarray(_v(alpha), np.float32), jnp.asarray(_v(beta), np.float32)
    out_shape = jnp.broadcast_shapes(tuple(shape), alpha.shape, beta.shape)
    return jax.random.gamma(next_key(), jnp.broadcast_to(alpha, out_shape), out_shape, np.float32) / beta


def poisson(shape, mean, seed=None):
    """Poisson counts (Float32) with rate ``mean``, broadcast with ``shape``."""
    mean = jnp.asarray(_v(mean), np.float32)
    out_shape = jnp.broadcast_shapes(tuple(shape), mean.shape)
    return jax.random.poisson(next_key(), mean, out_shape).astype(np.float32)


def random_gamma(shape, alpha, seed=None):
    """Gamma(``alpha``) samples of shape ``shape + alpha.shape``."""
    alpha = jnp.asarray(_v(alpha))
    out_shape = _shape(shape) + alpha.shape
    return jax.random.gamma(next_key(), jnp.broadcast_to(alpha, out_shape), out_shape, alpha.dtype)


def random_poisson(shape, rate, seed=None, dtype=mstype.float32):
    """Poisson counts of shape ``shape + rate.shape`` in ``dtype``."""
    rate = jnp.asarray(_v(rate))
    out_shape = _shape(shape) + rate.shape
    return jax.random.poisson(next_key(), jnp.broadcast_to(rate, out_shape), out_shape).astype(canonical(dtype))


def _truncated_normal(shape, dtype=mstype.float32):
    """Standard normal samples of ``shape`` truncated to ``[-2, 2]``."""
    return jax.random.truncated_normal(next_key(), -2.0, 2.0, _shape(shape), np.dtype(dtype))


def choice_with_mask(input_x, count=256, seed=None):
    """``count`` randomly chosen coordinates of the True elements of the Bool ``input_x``:
    ``(indices (count, ndim) Int32, mask (count,) Bool)``; rows past the number of True
    elements are zeros with mask False. Fixed-size, so it also runs inside ``jit``."""
    x = jnp.asarray(_v(input_x))
    if x.dtype != jnp.bool_:
        raise TypeError(f"choice_with_mask: input_x must be a Bool tensor, got {x.dtype}")
    if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
        raise ValueError(f"choice_with_mask: count must be a positive int, got {count!r}")
    flat = x.reshape(-1)
    score = jnp.where(flat, jax.random.uniform(next_key(), flat.shape), 2.0)
    order = jnp.argsort(score)
    pad = max(count - flat.size, 0)
    order = jnp.concatenate([order, jnp.zeros(pad, order.dtype)])[:count]
    valid = jnp.concatenate([jnp.sort(score) < 2.0, jnp.zeros(pad, bool)])[:count]
    coords = jnp.stack(jnp.unravel_index(order, x.shape), axis=-1).astype(np.int32)
    return jnp.where(valid[:, None], coords, 0), valid


def multinomial_with_replacement(x, seed, offset, numsamples, replacement=False):
    """``numsamples`` Int64 category indices per row of the probabilities ``x`` (MindSpore's older form;
    ``seed``/``offset`` are accepted, the draw uses cellkit's stream)."""
    probs = jnp.asarray(_v(x))
    if not replacement and numsamples > probs.shape[-1]:
        raise ValueError(f"multinomial_with_replacement: numsamples ({numsamples}) must not exceed "
                         f"x.shape[-1] ({probs.shape[-1]}) without replacement")
    return multinomial(probs, numsamples, replacement).astype(canonical(mstype.int64))
