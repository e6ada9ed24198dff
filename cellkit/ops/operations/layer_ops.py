"""Layer Primitives of MindSpore's model zoo (``BiasAdd``, ``Flatten``, ``BatchNorm``, ``Conv3D``,
``MaxPool3D``, ``AvgPool3D``) and its renamed ones (``GatherV2``, ``Pack``, ``Unpack``): one table
line each, over cellkit's functional ops.

>>> import cellkit as ms
>>> from cellkit.ops import operations as P
>>> P.BiasAdd()(ms.ops.zeros((2, 3)), ms.Tensor([1., 2., 3.]))[0]
Array([1., 2., 3.], dtype=float32)
>>> P.Flatten()(ms.ops.ones((2, 3, 4))).shape
(2, 12)
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from ...parameter import Parameter
from .. import function as F
from ..function._utils import _v
from ..function.conv_func import _tuple, conv_padding, convolve
from ..primitive import REQUIRED, install_primitives

__all__ = []


def _bias_add(x, bias, *, data_format):
    x, b = jnp.asarray(_v(x)), jnp.asarray(_v(bias))
    if data_format not in ("NCHW", "NHWC", "NCDHW"):
        raise ValueError(f"For 'BiasAdd', data_format must be 'NCHW', 'NHWC' or 'NCDHW', got {data_format!r}")
    if data_format == "NCDHW" and x.ndim != 5:
        raise ValueError(f"For 'BiasAdd', NCDHW format only supports 5-D input on CPU, but got a {x.ndim}-D input.")
    if not 2 <= x.ndim <= 5:
        raise ValueError(f"For 'BiasAdd', the input must be 2-D to 5-D, got shape {x.shape}")
    axis = x.ndim - 1 if data_format == "NHWC" else 1
    if b.ndim != 1 or b.shape[0] != x.shape[axis]:
        raise ValueError(f"For 'BiasAdd', bias must be 1-D with {x.shape[axis]} elements (the channel axis {axis} "
                         f"of input_x {x.shape} in {data_format}), but got bias shape {b.shape}.")
    shape = [1] * x.ndim
    shape[axis] = b.shape[0]
    return (x + b.reshape(shape)).astype(x.dtype)


def _flatten(x):
    x = jnp.asarray(_v(x))
    return x.reshape(x.shape[0] if x.ndim else 1, -1)


def _batch_norm(x, scale, bias, mean, variance, *, is_training, epsilon, momentum, data_format):
    """MindSpore's ``BatchNorm``: ``(y, 0, 0, batch mean, batch variance)`` in training (0s in inference,
    as its CPU kernel); in training, ``mean``/``variance`` given as Parameters are updated with
    ``momentum`` (the unbiased batch variance)."""
    xv = jnp.asarray(_v(x))
    axis = xv.ndim - 1 if data_format == "NHWC" else 1
    reduce = tuple(i for i in range(xv.ndim) if i != axis)
    shape = [1] * xv.ndim
    shape[axis] = xv.shape[axis]
    g, b, m, v = (jnp.asarray(_v(a)) for a in (scale, bias, mean, variance))
    zeros = jnp.zeros((xv.shape[axis],), g.dtype)
    if is_training:
        bm, bv = jnp.mean(xv, reduce), jnp.var(xv, reduce)
        y = (xv - bm.reshape(shape)) / jnp.sqrt(bv.reshape(shape) + epsilon) * g.reshape(shape) + b.reshape(shape)
        n = math.prod(xv.shape[i] for i in reduce)
        unbiased = bv * n / max(n - 1, 1)
        for p, old, new in ((mean, m, bm), (variance, v, unbiased)):
            if isinstance(p, Parameter):
                p.assign_value(((1 - momentum) * old + momentum * new).astype(p.dtype))
        return y.astype(xv.dtype), zeros, zeros, bm.astype(g.dtype), bv.astype(g.dtype)
    y = (xv - m.reshape(shape)) / jnp.sqrt(v.reshape(shape) + epsilon) * g.reshape(shape) + b.reshape(shape)
    return y.astype(xv.dtype), zeros, zeros, zeros, zeros


def _conv3d(x, w, bias=None, *, out_channel, kernel_size, mode, pad_mode, pad, stride, dilation, group,
            data_format):
    del mode, kernel_size
    x, w = jnp.asarray(_v(x)), jnp.asarray(_v(w))
    if w.shape[0] != out_channel:
        raise ValueError(f"For 'Conv3D', the weight's first axis must be out_channel={out_channel}, got {w.shape}")
    if x.shape[1] != w.shape[1] * group:
        raise ValueError(f"For 'Conv3D', 'C_in' of input 'x' shape divide by parameter 'group' must be equal to "
                         f"'C_in' of input 'weight' shape: {w.shape[1]}, but got 'C_in' of input 'x' shape: "
                         f"{x.shape[1]}, and 'group': {group}.")
    strides = _tuple(stride if not (isinstance(stride, tuple) and len(stride) == 5) else stride[2:], 3, "stride",
                     "Conv3D")
    dil = _tuple(dilation if not (isinstance(dilation, tuple) and len(dilation) == 5) else dilation[2:], 3,
                 "dilation", "Conv3D")
    b = None if bias is None else jnp.asarray(_v(bias))
    return convolve(x, w, b, strides=strides, dilation=dil, group=int(group),
                    padding=conv_padding(pad_mode, pad, 3, "Conv3D"))


def _pool_pads(shape, k, s, pad_mode, pad_list, ceil_mode, what):
    """``(explicit pads, extra high-side pads for ceil_mode)`` per spatial axis."""
    mode = pad_mode.upper()
    if mode not in ("VALID", "SAME", "PAD"):
        raise ValueError(f"For '{what}', 'pad_mode' must be 'VALID', 'SAME' or 'PAD', but got {pad_mode!r}.")
    if mode == "VALID":
        pads = [(0, 0)] * 3
    elif mode == "SAME":
        pads = []
        for n, kk, ss in zip(shape, k, s):
            total = max((-(-n // ss) - 1) * ss + kk - n, 0)
            pads.append((total // 2, total - total // 2))
    else:
        p = _tuple(pad_list, 6, "pad_list", what) if not isinstance(pad_list, int) else (pad_list,) * 6
        pads = [(p[0], p[1]), (p[2], p[3]), (p[4], p[5])]
    extra = []
    for n, kk, ss, (lo, hi) in zip(shape, k, s, pads):
        span = n + lo + hi - kk
        out = (-(-span // ss) if ceil_mode else span // ss) + 1
        if ceil_mode and (out - 1) * ss >= n + lo:  # the last window must start inside the input
            out -= 1
        extra.append(max((out - 1) * ss + kk - (n + lo + hi), 0))
    return pads, extra


def _pool3d(x, kernel_size, strides, pad_mode, pad_list, ceil_mode, kind, include_pad=True, divisor=0):
    x = jnp.asarray(_v(x))
    if x.ndim != 5:
        raise ValueError(f"For '{kind}', the input must be 5-D (N, C, D, H, W), got shape {x.shape}")
    k = _tuple(kernel_size if not (isinstance(kernel_size, tuple) and len(kernel_size) == 5) else kernel_size[2:],
               3, "kernel_size", kind)
    s = _tuple(strides if not (isinstance(strides, tuple) and len(strides) == 5) else strides[2:], 3, "strides",
               kind)
    pads, extra = _pool_pads(x.shape[2:], k, s, pad_mode, pad_list, bool(ceil_mode), kind)
    window, step = (1, 1) + k, (1, 1) + s
    full = [(0, 0), (0, 0)] + [(lo, hi + e) for (lo, hi), e in zip(pads, extra)]
    if kind == "MaxPool3D":
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, window, step, full).astype(x.dtype)
    total = jax.lax.reduce_window(x, 0., jax.lax.add, window, step, full)
    if divisor:
        return (total / divisor).astype(x.dtype)
    ones = jnp.ones(x.shape[2:], x.dtype)
    if include_pad and pad_mode.upper() != "VALID":
        ones = jnp.pad(ones, pads, constant_values=1)
        inner = [(0, e) for e in extra]
    else:
        inner = [(lo, hi + e) for (lo, hi), e in zip(pads, extra)]
    count = jax.lax.reduce_window(ones, 0., jax.lax.add, k, s, inner)
    return (total / count).astype(x.dtype)


def _max_pool3d(x, *, kernel_size, strides, pad_mode, pad_list, ceil_mode, data_format):
    return _pool3d(x, kernel_size, strides, pad_mode, pad_list, ceil_mode, "MaxPool3D")


def _avg_pool3d(x, *, kernel_size, strides, pad_mode, pad, ceil_mode, count_include_pad, divisor_override,
                data_format):
    return _pool3d(x, kernel_size, strides, pad_mode, pad, ceil_mode, "AvgPool3D", count_include_pad,
                   divisor_override)


def _pack(x, *, axis):
    return F.stack([_v(t) for t in x], axis)


def _unpack(x, *, axis):
    x = jnp.asarray(_v(x))
    return tuple(jnp.moveaxis(x, axis, 0))


_CONV3D = {"out_channel": REQUIRED, "kernel_size": REQUIRED, "mode": 1, "pad_mode": "valid", "pad": 0,
           "stride": 1, "dilation": 1, "group": 1, "data_format": "NCDHW"}

# Name: (op, constructor arguments with MindSpore's defaults[, check])
PRIMITIVES = {
    "BiasAdd": (_bias_add, {"data_format": "NCHW"}),
    "Flatten": (_flatten, {}),
    "BatchNorm": (_batch_norm, {"is_training": False, "epsilon": 1e-5, "momentum": 0.1, "data_format": "NCHW"}),
    "Conv3D": (_conv3d, _CONV3D),
    "MaxPool3D": (_max_pool3d, {"kernel_size": 1, "strides": 1, "pad_mode": "VALID", "pad_list": 0,
                                "ceil_mode": None, "data_format": "NCDHW"}),
    "AvgPool3D": (_avg_pool3d, {"kernel_size": 1, "strides": 1, "pad_mode": "valid", "pad": 0, "ceil_mode": False,
                                "count_include_pad": True, "divisor_override": 0, "data_format": "NCDHW"}),
    # MindSpore's older names (both fail inside MindSpore 2.10): Gather and Stack/Unstack.
    "GatherV2": (lambda x, indices, axis: F.gather(x, indices, axis), {}),
    "Pack": (_pack, {"axis": 0}),
    "Unpack": (_unpack, {"axis": 0}),
}
install_primitives(globals(), __all__, PRIMITIVES)
