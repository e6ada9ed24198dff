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
from ..primitive import install_primitives

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
