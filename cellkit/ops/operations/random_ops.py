"""Random Primitives (MindSpore's ``ops/operations/random_ops.py``): one table line each.

Every draw splits cellkit's global key stream; the ``seed``/``seed2`` constructor
arguments are accepted and recorded, and ``set_seed`` fixes the sequence.

>>> import cellkit as ms
>>> from cellkit.ops import operations as P
>>> ms.set_seed(0)
>>> P.UniformReal(seed=2)((2, 3)).shape
(2, 3)
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ... import dtype as mstype
from .. import function as F
from ..function._utils import _v
from ..function.array_func import canonical
from ..function.random_func import _shape, _truncated_normal
from ..primitive import install_primitives

__all__ = []
_SEEDS = {"seed": 0, "seed2": 0}


def _uniform_real(shape, *, seed, seed2):
    return F.rand(_shape(shape))


def _standard_normal(shape, *, seed, seed2):
    return F.randn(_shape(shape))


def _uniform_int(shape, minval, maxval, *, seed, seed2):
    return F.uniform(_shape(shape), minval, maxval, dtype=mstype.int32)


def _categorical(logits, num_sample, seed=0, *, dtype):
    return F.random_categorical(logits, num_sample, dtype=dtype)


def _multinomial(x, num_samples, *, seed, seed2, dtype):
    return F.multinomial(x, int(num_samples)).astype(canonical(dtype))


def _randperm(n, *, seed, offset, dtype):
    return F.randperm(int(np.asarray(n)), dtype=dtype)


def _shuffle(x, *, seed, seed2):
    return F.shuffle(x)


def _gamma(shape, alpha, beta, *, seed, seed2):
    return F.gamma(_shape(shape), alpha, beta)


def _poisson(shape, mean, *, seed, seed2):
    return F.poisson(_shape(shape), mean).astype(np.int32)


def _standard_laplace(shape, *, seed, seed2):
    return F.standard_laplace(shape)


def _random_gamma(shape, alpha, *, seed, seed2):
    return F.random_gamma(shape, alpha)


def _random_poisson(shape, rate, *, seed, seed2, dtype):
    return F.random_poisson(shape, rate, dtype=dtype)


def _truncated(shape, *, dtype, seed, seed2):
    return _truncated_normal(shape, dtype)


def _randperm_padded(n, *, max_length, pad, dtype):
    """MindSpore's ``Randperm``: a random permutation of ``0..n-1`` followed by ``pad`` up to ``max_length``."""
    count = int(np.asarray(_v(n)).reshape(-1)[0])
    if not 0 <= count <= max_length:
        raise ValueError(f"For 'Randperm', n must be in [0, max_length={max_length}], but got {count}")
    perm = F.randperm(count, dtype=dtype)
    dtype = canonical(dtype)
    return jnp.concatenate([perm.astype(dtype), jnp.full((max_length - count,), pad, dtype)])


# Name: (op, constructor arguments with MindSpore's defaults[, check])
PRIMITIVES = {
    "UniformReal": (_uniform_real, _SEEDS),
    "StandardNormal": (_standard_normal, _SEEDS),
    "UniformInt": (_uniform_int, _SEEDS),
    "RandomCategorical": (_categorical, {"dtype": mstype.int64}),
    "Multinomial": (_multinomial, {**_SEEDS, "dtype": mstype.int32}),
    "RandpermV2": (_randperm, {"seed": 0, "offset": 0, "dtype": mstype.int64}),
    "Randperm": (_randperm_padded, {"max_length": 1, "pad": -1, "dtype": mstype.int32}),
    "RandomShuffle": (_shuffle, _SEEDS),
    "Gamma": (_gamma, _SEEDS),
    "Poisson": (_poisson, _SEEDS),
    "StandardLaplace": (_standard_laplace, _SEEDS),
    "RandomGamma": (_random_gamma, _SEEDS),
    "RandomPoisson": (_random_poisson, {**_SEEDS, "dtype": mstype.int64}),
    "TruncatedNormal": (_truncated, {"dtype": mstype.float32, **_SEEDS}),
}
install_primitives(globals(), __all__, PRIMITIVES)
