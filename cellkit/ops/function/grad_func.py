"""Gradient helpers (MindSpore's ``ops/function/grad``)."""

from __future__ import annotations

import jax

from ...engine import grad, value_and_grad
from ._utils import _v, exporter

__all__ = ["grad", "value_and_grad"]
_public = exporter(__all__)


@_public
def stop_gradient(x):
    """Block gradients through ``x``."""
    return jax.lax.stop_gradient(_v(x))
