"""Triangles, diagonals and bands of matrices (part of MindSpore's ``ops/function/array_func.py``).

>>> import cellkit as ms
>>> ms.ops.tril(ms.ops.ones((2, 2)))
Array([[1., 0.],
       [1., 1.]], dtype=float32)
>>> ms.ops.matrix_diag_part(ms.ops.arange(6.).reshape(2, 3), 1, 0.)
Array([1., 5.], dtype=float32)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ._utils import _v, exporter, install_renames

__all__ = []
_public = exporter(__all__)

RENAMES = {
    "diagflat": (jnp.diagflat, "(input, offset=0)"),
    "diagonal": (jnp.diagonal, "(input, offset=0, dim1=0, dim2=1)"),
}
install_renames(globals(), __all__, RENAMES)


@_public
def tril(input, diagonal=0):  # noqa: A002
    """The lower triangle of the last two axes (the rest zero)."""
    return jnp.tril(_v(input), diagonal)


@_public
def triu(input, diagonal=0):  # noqa: A002
    """The upper triangle of the last two axes (the rest zero)."""
    return jnp.triu(_v(input), diagonal)


@_public
def diag(input):  # noqa: A002
    """A diagonal matrix from a vector (MindSpore's ``diag`` builds; ``diagonal`` reads)."""
    x = _v(input)
    return jnp.diag(x.reshape(-1)).reshape(x.shape + x.shape)


@_public
def diag_embed(input, offset=0, dim1=-2, dim2=-1):  # noqa: A002
    """Place the last axis of ``input`` on the diagonal ``offset`` of the (``dim1``, ``dim2``) planes."""
    x = _v(input)
    length = x.shape[-1]
    n = length + abs(offset)
    idx = jnp.arange(length)
    out = jnp.zeros(x.shape[:-1] + (n, n), x.dtype)
    out = out.at[..., idx + max(-offset, 0), idx + max(offset, 0)].set(x)
    out_ndim = x.ndim + 1
    return jnp.moveaxis(out, (-2, -1), (dim1 % out_ndim, dim2 % out_ndim))


@_public
def matrix_band_part(x, lower, upper):
    """Keep ``lower`` sub-diagonals and ``upper`` super-diagonals (-1 keeps all); zero the rest."""
    x = _v(x)
    m, n = x.shape[-2:]
    i, j = jnp.arange(m)[:, None], jnp.arange(n)[None, :]
    keep = ((lower < 0) | (i - j <= lower)) & ((upper < 0) | (j - i <= upper))
    return jnp.where(keep, x, jnp.zeros((), x.dtype))


def _single_k(k, what):
    try:
        k = np.asarray(_v(k)).reshape(-1).tolist()
    except jax.errors.TracerArrayConversionError:
        raise TypeError(f"{what}: k must be a constant (an int or a concrete tensor), got a traced value") from None
    if len(k) == 2 and k[0] == k[1]:
        k = k[:1]
    if len(k) != 1:
        raise NotImplementedError(f"{what}: cellkit handles one diagonal (k an int), got the band k={k}; "
                                  "call it once per diagonal")
    return int(k[0])


@_public
def matrix_diag(x, k=0, num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"):
    """Matrices with the last axis of ``x`` on diagonal ``k`` and ``padding_value`` elsewhere."""
    x = jnp.asarray(_v(x))
    k = _single_k(k, "matrix_diag")
    n = x.shape[-1]
    rows = int(_v(num_rows)) if int(_v(num_rows)) != -1 else n + abs(k)
    cols = int(_v(num_cols)) if int(_v(num_cols)) != -1 else n + abs(k)
    i = jnp.arange(n)
    r, c = i + max(-k, 0), i + max(k, 0)
    keep = (r < rows) & (c < cols)
    out = jnp.full(x.shape[:-1] + (rows, cols), _v(padding_value), x.dtype)
    return out.at[..., jnp.where(keep, r, rows), jnp.where(keep, c, cols)].set(x, mode="drop")


@_public
def matrix_diag_part(x, k, padding_value, align="RIGHT_LEFT"):
    """Diagonal ``k`` of the last two axes of ``x``."""
    return jnp.diagonal(jnp.asarray(_v(x)), _single_k(k, "matrix_diag_part"), -2, -1)


@_public
def matrix_set_diag(x, diagonal, k=0, align="RIGHT_LEFT"):
    """``x`` with diagonal ``k`` of its last two axes replaced by ``diagonal``."""
    x = jnp.asarray(_v(x))
    k = _single_k(k, "matrix_set_diag")
    n = jnp.diagonal(x, k, -2, -1).shape[-1]
    i = jnp.arange(n)
    return x.at[..., i + max(-k, 0), i + max(k, 0)].set(jnp.asarray(_v(diagonal), x.dtype))
