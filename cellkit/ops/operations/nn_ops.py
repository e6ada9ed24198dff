"""Neural-network Primitives (MindSpore's ``ops/operations/nn_ops.py``): one table line each.

>>> import cellkit as ms
>>> ms.set_seed(0)
>>> out, mask = ms.ops.Dropout2D(keep_prob=0.8)(ms.ops.ones((1, 3, 2, 2)))
>>> mask.dtype, mask.shape
(dtype('bool'), (1, 3, 2, 2))
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from .. import function as F
from ..function import conv_func as C
from ..function import norm_func as N
from ..function import pooling_func as PF
from ..function import sampling_func as S
from ..function._utils import _v
from ..function.random_func import _apply_mask, _channel_dropout, bernoulli_mask
from ..primitive import REQUIRED, install_primitives

__all__ = []


def _check_keep(what, allow_zero, keep_prob, **_):
    ok = isinstance(keep_prob, (int, float)) and not isinstance(keep_prob, bool)
    lo_ok = keep_prob >= 0 if allow_zero else keep_prob > 0
    if not ok or not lo_ok or keep_prob > 1:
        rng = "[0.0, 1.0]" if allow_zero else "(0.0, 1.0]"
        raise ValueError(f"{what}: keep_prob must be a float in {rng}, got {keep_prob!r}")


def _dropout(x, *, keep_prob, Seed0, Seed1):  # noqa: N803 - MindSpore's argument names
    """Elementwise dropout returning ``(output, mask)``; the mask has the input's dtype."""
    x = _v(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise TypeError(f"Dropout: the input must be a float tensor, got {x.dtype}")
    mask = bernoulli_mask(keep_prob, x.shape)
    return _apply_mask(x, mask, keep_prob), mask.astype(x.dtype)


def _gen_mask(shape, keep_prob, *, Seed0, Seed1):  # noqa: N803 - MindSpore's argument names
    """A bit-packed keep mask for ``shape``: uint8 of ``ceil(n / 128) * 16`` bytes, element ``i`` in
    bit ``i % 8`` of byte ``i // 8`` (1: kept, with probability ``keep_prob``)."""
    if not isinstance(shape, tuple) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise TypeError(f"DropoutGenMask: shape must be a tuple of non-negative ints, got {shape!r}")
    count = int(np.prod(shape, dtype=np.int64))
    n_bits = -(-count // 128) * 128
    keep = jnp.asarray(_v(keep_prob), jnp.float32)
    bits = bernoulli_mask(keep, (n_bits // 8, 8)).astype(jnp.uint8)
    return jnp.sum(bits << jnp.arange(8, dtype=jnp.uint8), axis=1, dtype=jnp.uint8)


def _do_mask(input_x, mask, keep_prob):
    """``input_x`` where the bit of ``mask`` (from ``DropoutGenMask``) is set, scaled by ``1 / keep_prob``."""
    x, mask = jnp.asarray(_v(input_x)), jnp.asarray(_v(mask))
    if mask.dtype != jnp.uint8 or mask.ndim != 1 or mask.size * 8 < x.size:
        raise ValueError(f"DropoutDoMask: mask must be DropoutGenMask's uint8 bits for {x.size} elements, got "
                         f"{mask.dtype} of shape {tuple(mask.shape)}")
    bits = (mask[:, None] >> jnp.arange(8, dtype=jnp.uint8)) & 1
    keep = bits.reshape(-1)[:x.size].reshape(x.shape).astype(bool)
    k = jnp.asarray(_v(keep_prob), x.dtype)
    return jnp.where(keep, x / k, jnp.zeros((), x.dtype)).astype(x.dtype)


def _lrn(x, *, depth_radius, bias, alpha, beta, norm_region):
    """Local response normalisation across channels (axis 1):
    ``x / (bias + alpha * sum of x^2 over the 2 r + 1 neighbouring channels) ** beta``."""
    x = jnp.asarray(_v(x))
    if x.ndim != 4:
        raise ValueError(f"For 'LRN', the input must be 4-D (N, C, H, W), got shape {tuple(x.shape)}")
    sq = jnp.pad(jnp.square(x), ((0, 0), (depth_radius, depth_radius), (0, 0), (0, 0)))
    window = sum(sq[:, i:i + x.shape[1]] for i in range(2 * depth_radius + 1))
    return (x / (bias + alpha * window) ** beta).astype(x.dtype)


def _check_lrn(depth_radius, bias, alpha, beta, norm_region):
    if not isinstance(depth_radius, int) or isinstance(depth_radius, bool) or depth_radius < 0:
        raise TypeError(f"For 'LRN', 'depth_radius' must be a non-negative int, got {depth_radius!r}")
    for label, v in (("bias", bias), ("alpha", alpha), ("beta", beta)):
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise TypeError(f"For 'LRN', '{label}' must be a float, got {type(v).__name__}")
    if norm_region != "ACROSS_CHANNELS":
        raise ValueError(f"For 'LRN', the 'norm_region' must be str and must be in '['ACROSS_CHANNELS']', but got "
                         f"{norm_region!r}.")


def _im2col(x, *, ksizes, strides, dilations, pads):
    """(N, C, H, W) -> (N, C, kh * kw, L): ``ops.unfold`` with the kernel positions on their own axis."""
    x = jnp.asarray(_v(x))
    pads = tuple(pads) if isinstance(pads, (tuple, list)) else pads
    if isinstance(pads, tuple) and len(pads) == 4:
        if pads[0] != pads[1] or pads[2] != pads[3]:
            raise ValueError(f"Im2Col: pads (top, bottom, left, right) must be symmetric, got {pads}")
        pads = (pads[0], pads[2])
    cols = C.unfold(x, ksizes, dilations, pads, strides)
    return cols.reshape(x.shape[0], x.shape[1], -1, cols.shape[-1])


def _dropout_nd(ndim, what):
    """Channel dropout of an (N, C, ...) input with ``ndim`` dimensions: ``(output, bool mask)``."""
    def call(x, *, keep_prob):
        return _channel_dropout(x, 1.0 - keep_prob, ndim, what)
    call.__name__ = what.lower()
    return call


# Name: (op, constructor arguments with MindSpore's defaults[, check])
PRIMITIVES = {
    "Dropout": (_dropout, {"keep_prob": 0.5, "Seed0": 0, "Seed1": 0},
                functools.partial(_check_keep, "Dropout", False)),
    "LRN": (_lrn, {"depth_radius": 5, "bias": 1.0, "alpha": 1.0, "beta": 0.5, "norm_region": "ACROSS_CHANNELS"},
            _check_lrn),
    "Im2Col": (_im2col, {"ksizes": REQUIRED, "strides": 1, "dilations": 1, "pads": 0}),
    "Dense": (F.dense, {}),
    "DropoutGenMask": (_gen_mask, {"Seed0": 0, "Seed1": 0}),
    "DropoutDoMask": (_do_mask, {}),
    "Dropout2D": (_dropout_nd(4, "Dropout2D"), {"keep_prob": 0.5}, functools.partial(_check_keep, "Dropout2D", True)),
    "Dropout3D": (_dropout_nd(5, "Dropout3D"), {"keep_prob": 0.5}, functools.partial(_check_keep, "Dropout3D", True)),
}

# --- padding and resizing ------------------------------------------------------------------------------

def _tf_pad(x, paddings, mode="constant", *, what):
    x = jnp.asarray(_v(x))
    pairs = [tuple(int(v) for v in p) for p in np.asarray(_v(paddings)).tolist()]
    if len(pairs) != x.ndim:
        raise ValueError(f"For '{what}', 'paddings' must have one (before, after) pair per input axis "
                         f"({x.ndim}), but got {len(pairs)}.")
    return jnp.pad(x, pairs, mode=mode)


def _pad_v3(x, paddings, value=None, *, mode, paddings_contiguous):
    x = jnp.asarray(_v(x))
    p = [int(v) for v in np.asarray(_v(paddings)).reshape(-1).tolist()]
    if not paddings_contiguous:             # (begin_0, begin_1, ..., end_0, end_1, ...)
        half = len(p) // 2
        p = [v for pair in zip(p[:half], p[half:]) for v in pair]
    value = 0 if value is None else _v(value)
    if mode == "edge":
        mode = "replicate"
    return S.pad_pairs(x, S.torch_pairs(p, x.ndim, "PadV3"), mode, value, "PadV3")


PRIMITIVES.update({
    "Pad": (lambda x, *, paddings: _tf_pad(x, paddings, what="Pad"), {"paddings": ()}),
    "MirrorPad": (lambda x, paddings, *, mode: _tf_pad(x, paddings, mode.lower(), what="MirrorPad"),
                  {"mode": "REFLECT"}),
    "PadV3": (_pad_v3, {"mode": "constant", "paddings_contiguous": True}),
    # half_pixel_centers is accepted and, as by MindSpore 2.10's CPU kernel, not used (docs/differences.md).
    "ResizeNearestNeighbor": (lambda x, *, size, align_corners, half_pixel_centers: S.resize_nearest_tf(
        x, size, align_corners), {"size": None, "align_corners": False, "half_pixel_centers": False}),
    "ResizeBilinearV2": (S.resize_bilinear_tf, {"align_corners": False, "half_pixel_centers": False}),
})
_CONV2D = {"out_channel": None, "kernel_size": None, "mode": 1, "pad_mode": "valid", "pad": 0, "stride": 1,
           "dilation": 1, "group": 1, "data_format": "NCHW"}
PRIMITIVES.update({
    "Conv2D": (C.conv2d_primitive, dict(_CONV2D)),
    "Conv2DBackpropInput": (C.conv2d_backprop_input, {**_CONV2D, "pad_list": None}),
    "Conv2DTranspose": (C.conv2d_backprop_input, {**_CONV2D, "pad_list": None}),
})
PRIMITIVES.update({
    "LayerNorm": (N.layer_norm_primitive, {"begin_norm_axis": 1, "begin_params_axis": 1, "epsilon": 1e-7}),
    "L2Normalize": (N.l2_normalize, {"axis": 0, "epsilon": 1e-4}),
    "RmsNorm": (N.rms_norm_core, {"epsilon": 1e-6}),
})
_POOL = {"kernel_size": 1, "strides": 1, "pad_mode": "valid", "data_format": "NCHW"}
PRIMITIVES.update({
    "MaxPool": (functools.partial(PF.tf_pool, kind="MaxPool"), dict(_POOL)),
    "AvgPool": (functools.partial(PF.tf_pool, kind="AvgPool"), dict(_POOL)),
})
install_primitives(globals(), __all__, PRIMITIVES)
