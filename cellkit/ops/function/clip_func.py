"""Clipping by value and by norm (MindSpore's ``ops/function/clip_func.py``).

``x`` may be one tensor or a list/tuple of them wherever MindSpore accepts that.

>>> import cellkit as ms
>>> ms.ops.clamp(ms.Tensor([-2., 0.5, 3.]), -1., 1.)
Array([-1. ,  0.5,  1. ], dtype=float32)
>>> grads = (ms.Tensor([3., 0.]), ms.Tensor([0., 4.]))
>>> [g.tolist() for g in ms.ops.clip_by_global_norm(grads, 1.0)]
[[0.6000000238418579, 0.0], [0.0, 0.800000011920929]]
"""

from __future__ import annotations

import jax.numpy as jnp

from ._utils import _v, exporter

__all__ = []
_public = exporter(__all__)


def _each(fn, x):
    if isinstance(x, (list, tuple)):
        return type(x)(fn(_v(e)) for e in x)
    return fn(_v(x))


@_public
def clamp(input, min=None, max=None):  # noqa: A001,A002
    """Clip to ``[min, max]``; either bound may be None (not both) or a tensor.

    >>> import cellkit as ms
    >>> ms.ops.clamp(ms.Tensor([1., 5.]), max=2.)
    Array([1., 2.], dtype=float32)
    """
    if min is None and max is None:
        raise ValueError("ops.clamp: at least one of 'min' or 'max' must not be None")
    x = _v(input)
    out = jnp.clip(x, _v(min), _v(max))
    return out.astype(x.dtype) if hasattr(x, "dtype") else out


@_public
def clip(input, min=None, max=None):  # noqa: A001,A002
    """The same as :func:`clamp`."""
    return clamp(input, min, max)


@_public
def clip_by_value(x, clip_value_min=None, clip_value_max=None):
    """Clip ``x`` (a tensor, or a list/tuple of them) to ``[clip_value_min, clip_value_max]``."""
    if clip_value_min is None and clip_value_max is None:
        raise ValueError("ops.clip_by_value: at least one of 'clip_value_min' or 'clip_value_max' must not be None")
    lo, hi = _v(clip_value_min), _v(clip_value_max)
    return _each(lambda t: jnp.clip(t, lo, hi).astype(t.dtype), x)


def _norm(t, p):
    """MindSpore's norm of order ``p`` for clipping: ``sum(t ** p) ** (1 / p)`` (no absolute value, as
    MindSpore computes it), the largest absolute value for ``inf``."""
    if p == float("inf"):
        return jnp.max(jnp.abs(t))
    return jnp.power(jnp.sum(jnp.power(t, p)), 1.0 / p).astype(t.dtype)


@_public
def clip_by_norm(x, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scale ``x`` (a tensor, or a list/tuple of them, taken together) so its ``norm_type``-norm is at most
    ``max_norm``; the tensors are returned scaled."""
    tensors = [_v(t) for t in x] if isinstance(x, (list, tuple)) else [_v(x)]
    norms = jnp.stack([_norm(t, norm_type) for t in tensors])
    total = jnp.max(norms) if norm_type == float("inf") else _norm(norms, norm_type)
    if error_if_nonfinite and not bool(jnp.isfinite(total)):
        raise RuntimeError(f"ops.clip_by_norm: the total norm of order {norm_type} is non-finite")
    coef = jnp.minimum(_v(max_norm) / (total + 1e-6), 1.0)
    out = [(t * coef).astype(t.dtype) for t in tensors]
    return type(x)(out) if isinstance(x, (list, tuple)) else out[0]


@_public
def clip_by_global_norm(x, clip_norm=1.0, use_norm=None):
    """Scale the tensors of ``x`` (a tuple or list) by ``clip_norm / max(global_norm, clip_norm)``, where
    the global norm is the 2-norm of all of them together (``use_norm`` must be None, as in MindSpore)."""
    if not isinstance(x, (list, tuple)):
        raise TypeError(f"ops.clip_by_global_norm: x must be a tuple or list of tensors, got {type(x).__name__}")
    if use_norm is not None:
        raise ValueError("ops.clip_by_global_norm: use_norm must be None (MindSpore supports only None)")
    if not isinstance(clip_norm, (int, float)) or isinstance(clip_norm, bool) or clip_norm <= 0:
        if not hasattr(clip_norm, "dtype"):
            raise ValueError(f"ops.clip_by_global_norm: clip_norm must be a number > 0, got {clip_norm!r}")
    tensors = [_v(t) for t in x]
    global_norm = jnp.sqrt(sum(jnp.sum(jnp.square(t.astype(jnp.float32))) for t in tensors))
    scale = _v(clip_norm) / jnp.maximum(global_norm, _v(clip_norm))
    return tuple((t * scale).astype(t.dtype) for t in tensors)  # a tuple for a list or ParameterTuple too
