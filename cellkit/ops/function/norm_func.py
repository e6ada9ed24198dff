"""Normalisation functions (MindSpore's ``batch_norm``, ``layer_norm``, ``group_norm``, ``rms_norm``)
and the computations the normalisation layers and Primitives share.

Half-precision inputs are normalised in float32 and returned in their dtype.

>>> import cellkit as ms
>>> from cellkit import ops
>>> ops.layer_norm(ms.Tensor([[1., 2., 3.]]), (3,)).round(4)
Array([[-1.2247,  0.    ,  1.2247]], dtype=float32)
"""

from __future__ import annotations

import functools
import numbers

import jax
import jax.numpy as jnp

from ...eager_jit import host_first
from ...tiered_jit import tiered_jit
from ._utils import _v, exporter

__all__ = []
_public = exporter(__all__)


def compute_dtype(dtype):
    """Compute in at least float32 (half-precision inputs are normalised in float32)."""
    return jnp.promote_types(dtype, jnp.float32)


def out_dtype(y, dtype):
    return y.astype(dtype) if jnp.issubdtype(dtype, jnp.floating) else y


@host_first
@functools.partial(tiered_jit, inline=True, static_argnames=("axis", "use_batch", "eps", "momentum"))
def batch_norm_core(x, moving_mean, moving_var, gamma, beta, *, axis, use_batch, eps, momentum):
    """(output, new moving mean, new moving variance); ``momentum`` weighs the batch statistics.

    With batch statistics the variance is the biased one; the running variance
    is updated with the unbiased one. Under a batch sharded over a mesh the
    means are over the whole (global) batch: XLA adds the cross-device sums.
    """
    axes = tuple(i for i in range(x.ndim) if i != axis)
    bshape = tuple(x.shape[axis] if i == axis else 1 for i in range(x.ndim))
    ct = compute_dtype(x.dtype)
    xc = x.astype(ct)
    if use_batch:
        n = x.size // x.shape[axis]
        mean = jnp.mean(xc, axis=axes)
        var = jnp.mean(jnp.square(xc - mean.reshape(bshape)), axis=axes)
        keep = 1.0 - momentum
        new_mean = keep * moving_mean.astype(ct) + momentum * jax.lax.stop_gradient(mean)
        new_var = keep * moving_var.astype(ct) + momentum * jax.lax.stop_gradient(var * (n / max(n - 1, 1)))
        new_mean, new_var = new_mean.astype(moving_mean.dtype), new_var.astype(moving_var.dtype)
    else:
        mean, var = moving_mean.astype(ct), moving_var.astype(ct)
        new_mean, new_var = moving_mean, moving_var
    scale = jax.lax.rsqrt(var + eps)
    if gamma is not None:
        scale = scale * gamma.astype(ct)
    y = (xc - mean.reshape(bshape)) * scale.reshape(bshape)
    if beta is not None:
        y = y + beta.astype(ct).reshape(bshape)
    return out_dtype(y, x.dtype), new_mean, new_var


@host_first
@functools.partial(tiered_jit, inline=True, static_argnames=("axis", "eps"))
def layer_norm_core(x, gamma, beta, *, axis, eps):
    """Normalise over the axes from ``axis`` on (biased variance), then ``* gamma + beta``."""
    axes = tuple(range(axis, x.ndim))
    ct = compute_dtype(x.dtype)
    xc = x.astype(ct)
    mean = jnp.mean(xc, axis=axes, keepdims=True)
    var = jnp.mean(jnp.square(xc - mean), axis=axes, keepdims=True)
    y = (xc - mean) * jax.lax.rsqrt(var + eps)
    if gamma is not None:
        y = y * gamma.astype(ct)
    if beta is not None:
        y = y + beta.astype(ct)
    return out_dtype(y, x.dtype)


@host_first
@functools.partial(tiered_jit, inline=True, static_argnames=("groups", "eps"))
def group_norm_core(x, gamma, beta, *, groups, eps):
    """Normalise each sample's ``groups`` channel groups (with their spatial positions); per-channel affine.

    ``groups == C`` is instance normalisation.
    """
    ct = compute_dtype(x.dtype)
    xg = x.astype(ct).reshape((x.shape[0], groups, -1))
    mean = jnp.mean(xg, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(xg - mean), axis=-1, keepdims=True)
    y = ((xg - mean) * jax.lax.rsqrt(var + eps)).reshape(x.shape)
    bshape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if gamma is not None:
        y = y * gamma.astype(ct).reshape(bshape)
    if beta is not None:
        y = y + beta.astype(ct).reshape(bshape)
    return out_dtype(y, x.dtype)


def _opt(v):
    return None if v is None else jnp.asarray(_v(v))


@_public
def batch_norm(input_x, running_mean, running_var, weight, bias, training=False, momentum=0.1, eps=1e-5):
    """Batch normalisation over every axis but axis 1 (MindSpore 2.10's ``ops.batch_norm``).

    ``training=True`` normalises with the batch statistics and returns only
    the output, as MindSpore's function does (it does not write the running
    statistics back: use ``nn.BatchNorm*d`` for that); ``momentum`` weighs the
    new batch statistic, PyTorch's convention.

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> x = ms.Tensor([[0., 1.], [2., 3.]])
    >>> ops.batch_norm(x, ops.zeros(2), ops.ones(2), ops.ones(2), ops.zeros(2), training=True).round(3)
    Array([[-1., -1.],
           [ 1.,  1.]], dtype=float32)
    """
    x = jnp.asarray(_v(input_x))
    if x.ndim < 2:
        raise ValueError(f"For 'batch_norm', the input must be at least 2-D (N, C, ...), but got {x.shape}.")
    c = (x.shape[1],)
    for arg, v in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                   ("bias", bias)):
        if jnp.shape(_v(v)) != c:
            raise ValueError(f"For 'batch_norm', '{arg}' must have shape {c}, but got {jnp.shape(_v(v))}.")
    y, _, _ = batch_norm_core(x, _opt(running_mean), _opt(running_var), _opt(weight), _opt(bias), axis=1,
                              use_batch=bool(training), eps=float(eps), momentum=float(momentum))
    return y


@_public
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """Normalise over the trailing ``normalized_shape`` axes (MindSpore 2.10's ``ops.layer_norm``)."""
    x = jnp.asarray(_v(input))
    shape = (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else tuple(normalized_shape)
    if not shape or x.shape[x.ndim - len(shape):] != shape:
        raise ValueError(f"For 'layer_norm', 'normalized_shape' {shape} must equal the trailing axes of the input "
                         f"of shape {x.shape}.")
    return layer_norm_core(x, _opt(weight), _opt(bias), axis=x.ndim - len(shape), eps=float(eps))


@_public
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """Group normalisation of an (N, C, *) input (MindSpore 2.10's ``ops.group_norm``)."""
    x = jnp.asarray(_v(input))
    if x.ndim < 2 or x.shape[1] % num_groups:
        raise ValueError(f"For 'group_norm', the input's channels must be divisible by num_groups={num_groups}, "
                         f"but got input shape {x.shape}.")
    return group_norm_core(x, _opt(weight), _opt(bias), groups=int(num_groups), eps=float(eps))


def rms_norm_core(x, gamma, epsilon):
    """(y, rstd): ``y = x / sqrt(mean(x², gamma's axes) + eps) * gamma``."""
    x, gamma = jnp.asarray(_v(x)), jnp.asarray(_v(gamma))
    if gamma.ndim == 0 or x.shape[x.ndim - gamma.ndim:] != gamma.shape:
        raise ValueError(f"For 'rms_norm', gamma's shape {gamma.shape} must equal the trailing axes of x's "
                         f"shape {x.shape}.")
    axes = tuple(range(x.ndim - gamma.ndim, x.ndim))
    ct = compute_dtype(x.dtype)
    rstd = jax.lax.rsqrt(jnp.mean(jnp.square(x.astype(ct)), axis=axes, keepdims=True) + epsilon)
    return out_dtype(x.astype(ct) * rstd * gamma.astype(ct), x.dtype), rstd


@_public
def rms_norm(x, gamma, epsilon=1e-6):
    """RMS normalisation over gamma's (trailing) axes; returns ``(y, rstd)`` as MindSpore 2.10.

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> y, rstd = ops.rms_norm(ms.Tensor([[3., 4.]]), ops.ones(2), epsilon=0.0)
    >>> [round(v, 3) for v in y[0].tolist()], rstd.shape     # rms of (3, 4) is sqrt(12.5)
    ([0.849, 1.131], (1, 1))
    """
    return rms_norm_core(x, gamma, float(epsilon))


def l2_normalize(x, *, axis, epsilon):
    """MindSpore's ``L2Normalize``: ``x / sqrt(max(sum(x²), epsilon))`` along ``axis``."""
    x = jnp.asarray(_v(x))
    axis = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    ct = compute_dtype(x.dtype)
    ss = jnp.sum(jnp.square(x.astype(ct)), axis=axis, keepdims=True)
    return out_dtype(x.astype(ct) * jax.lax.rsqrt(jnp.maximum(ss, epsilon)), x.dtype)


def layer_norm_primitive(x, gamma, beta, *, begin_norm_axis, begin_params_axis, epsilon):
    """MindSpore's ``LayerNorm`` Primitive: ``(y, mean, variance)``, the statistics with kept axes."""
    x, gamma, beta = jnp.asarray(_v(x)), jnp.asarray(_v(gamma)), jnp.asarray(_v(beta))
    axis, params = begin_norm_axis % x.ndim, begin_params_axis % x.ndim
    if gamma.shape != x.shape[params:] or beta.shape != x.shape[params:]:
        raise ValueError(f"For 'LayerNorm', gamma and beta must have shape {x.shape[params:]} (the input's shape "
                         f"from begin_params_axis={begin_params_axis}), but got {gamma.shape} and {beta.shape}.")
    axes = tuple(range(axis, x.ndim))
    ct = compute_dtype(x.dtype)
    mean = jnp.mean(x.astype(ct), axis=axes, keepdims=True)
    var = jnp.mean(jnp.square(x.astype(ct) - mean), axis=axes, keepdims=True)
    y = layer_norm_core(x, gamma, beta, axis=axis, eps=float(epsilon))
    return y, out_dtype(mean, x.dtype), out_dtype(var, x.dtype)
