"""Linear algebra (MindSpore's ``ops/function/linalg_func.py``)."""

from __future__ import annotations

import jax.numpy as jnp

from ._utils import _axis, _v, exporter

__all__ = []
_public = exporter(__all__)


@_public
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):  # noqa: N803,A002
    """Vector or matrix norm."""
    return jnp.linalg.norm(_v(A), ord=ord, axis=_axis(dim), keepdims=keepdim)
