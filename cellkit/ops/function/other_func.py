"""Graph-mode helpers that are plain Python here (MindSpore's ``depend``, ``isinstance_``)."""

from __future__ import annotations

from ._utils import exporter

__all__ = []
_public = exporter(__all__)


@_public
def depend(value, expr):
    """Return ``value`` (ordering is implicit in JAX's data flow)."""
    return value


@_public
def isinstance_(x, t):
    """Python's isinstance (MindSpore exposes it for graph mode)."""
    return isinstance(x, t)
