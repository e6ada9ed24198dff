"""Image and box Primitives of MindSpore's detection and super-resolution models: ``BoundingBoxEncode``,
``BoundingBoxDecode``, ``ResizeBicubic``, ``CropAndResize``, ``ROIAlign``, ``ExtractImagePatches``,
``DepthToSpace`` and ``SpaceToDepth``; one table line each. The resampling ones follow the kernels
MindSpore took from TensorFlow and Detectron (their index and weight rules are in each function).

>>> import cellkit as ms
>>> from cellkit.ops import operations as P
>>> anchors = ms.Tensor([[0., 0., 10., 10.]])
>>> P.BoundingBoxEncode()(anchors, ms.Tensor([[1., 1., 11., 9.]])).round(4)
Array([[ 0.0909,  0.    ,  0.    , -0.2007]], dtype=float32)
>>> P.DepthToSpace(2)(ms.ops.ones((1, 8, 2, 3))).shape
(1, 2, 4, 6)
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ..function._utils import _v
from ..primitive import REQUIRED, install_primitives

__all__ = []


def _boxes(anchor_box, other, what):
    a, b = jnp.asarray(_v(anchor_box)), jnp.asarray(_v(other))
    if a.ndim != 2 or a.shape[1] != 4 or a.shape != b.shape:
        raise ValueError(f"For '{what}', the inputs must both have shape (n, 4), got {a.shape} and {b.shape}")
    return a, b


def _centres(box):
    x1, y1, x2, y2 = (box[:, i] for i in range(4))
    return (x1 + x2) * .5, (y1 + y2) * .5, x2 - x1 + 1., y2 - y1 + 1.


def _encode(anchor_box, groundtruth_box, *, means, stds):
    """``((g - p) / p_size, log(g_size / p_size))`` per box, minus ``means``, over ``stds`` (sizes + 1)."""
    a, g = _boxes(anchor_box, groundtruth_box, "BoundingBoxEncode")
    px, py, pw, ph = _centres(a)
    gx, gy, gw, gh = _centres(g)
    d = jnp.stack([(gx - px) / pw, (gy - py) / ph, jnp.log(gw / pw), jnp.log(gh / ph)], 1)
    return ((d - jnp.asarray(means, a.dtype)) / jnp.asarray(stds, a.dtype)).astype(a.dtype)


def _decode(anchor_box, deltas, *, max_shape, means, stds, wh_ratio_clip):
    """The boxes ``deltas`` encode against ``anchor_box``; x clipped to ``[0, max_shape[1]]``, y to ``[0, max_shape[0]]``."""
    a, d = _boxes(anchor_box, deltas, "BoundingBoxDecode")
    d = d * jnp.asarray(stds, a.dtype) + jnp.asarray(means, a.dtype)
    limit = abs(math.log(wh_ratio_clip))
    dx, dy = d[:, 0], d[:, 1]
    dw, dh = jnp.clip(d[:, 2], -limit, limit), jnp.clip(d[:, 3], -limit, limit)
    px, py, pw, ph = _centres(a)
    gx, gy, gw, gh = px + pw * dx, py + ph * dy, pw * jnp.exp(dw), ph * jnp.exp(dh)
    h, w = max_shape
    x1, x2 = jnp.clip(gx - gw * .5 + .5, 0, w), jnp.clip(gx + gw * .5 - .5, 0, w)
    y1, y2 = jnp.clip(gy - gh * .5 + .5, 0, h), jnp.clip(gy + gh * .5 - .5, 0, h)
    return jnp.stack([x1, y1, x2, y2], 1).astype(a.dtype)


def _cubic_taps(out_size, in_size, align_corners, half_pixel):
    """TensorFlow's bicubic taps: ``(indices (out, 4), weights (out, 4))`` along one axis."""
    scale = (in_size - 1) / (out_size - 1) if align_corners and out_size > 1 else in_size / out_size
    pos = np.arange(out_size, dtype=np.float64)
    loc = (pos + .5) * scale - .5 if half_pixel else pos * scale
    base = np.floor(loc)
    t = loc - base
    t = np.rint(t * 1024) / 1024  # TensorFlow's kernel reads the weights from a table of 1024 steps
    a = -.5 if half_pixel else -.75
    u = np.stack([t + 1, t, 1 - t, 2 - t], 1)
    near = ((a + 2) * u - (a + 3)) * u * u + 1
    far = ((a * u - 5 * a) * u + 8 * a) * u - 4 * a
    w = np.where(np.abs(u) <= 1, near, far)
    idx = base[:, None].astype(np.int64) + np.arange(-1, 3)
    if half_pixel:  # taps outside the image get no weight; the rest are renormalised
        w = np.where((idx >= 0) & (idx < in_size), w, 0.)
        w = w / w.sum(1, keepdims=True)
    return np.clip(idx, 0, in_size - 1), w


def _resize_bicubic(images, size, *, align_corners, half_pixel_centers):
    x = jnp.asarray(_v(images))
    if x.ndim != 4:
        raise ValueError(f"For 'ResizeBicubic', images must be 4-D (N, C, H, W), got shape {x.shape}")
    oh, ow = (int(s) for s in np.asarray(_v(size)).tolist())
    iy, wy = _cubic_taps(oh, x.shape[2], align_corners, half_pixel_centers)
    ix, wx = _cubic_taps(ow, x.shape[3], align_corners, half_pixel_centers)
    rows = jnp.einsum("nchkw,hk->nchw", x[:, :, iy, :], jnp.asarray(wy, jnp.float32))
    out = jnp.einsum("nchwk,wk->nchw", rows[:, :, :, ix], jnp.asarray(wx, jnp.float32))
    return out.astype(x.dtype)


def _crop_and_resize(x, boxes, box_index, crop_size, *, method, extrapolation_value):
    """TensorFlow's ``crop_and_resize`` over NHWC images: float32 crops, ``extrapolation_value`` outside."""
    img = jnp.asarray(_v(x)).astype(jnp.float32)
    b, idx = jnp.asarray(_v(boxes), jnp.float32), jnp.asarray(_v(box_index))
    if method not in ("bilinear", "nearest", "bilinear_v2"):
        raise ValueError(f"For 'CropAndResize', method must be 'bilinear', 'nearest' or 'bilinear_v2', got {method!r}")
    ch, cw = (int(s) for s in np.asarray(_v(crop_size)).tolist())
    _, height, width, _ = img.shape

    def axis(lo, hi, n, size):
        if n > 1:
            return lo * (size - 1) + jnp.arange(n) * ((hi - lo) * (size - 1) / (n - 1))
        return jnp.full((1,), .5 * (lo + hi) * (size - 1))

    def one(box, i):
        ys, xs = axis(box[0], box[2], ch, height), axis(box[1], box[3], cw, width)
        inside = ((ys >= 0) & (ys <= height - 1))[:, None] & ((xs >= 0) & (xs <= width - 1))[None, :]
        im = img[i]
        if method == "nearest":
            yi = jnp.clip(jnp.floor(ys + .5), 0, height - 1).astype(jnp.int32)  # roundf: halves away from 0
            xi = jnp.clip(jnp.floor(xs + .5), 0, width - 1).astype(jnp.int32)
            val = im[yi][:, xi]
        else:
            y0, x0 = jnp.floor(ys), jnp.floor(xs)
            dy, dx = (ys - y0)[:, None, None], (xs - x0)[None, :, None]
            y0i, x0i = jnp.clip(y0, 0, height - 1).astype(jnp.int32), jnp.clip(x0, 0, width - 1).astype(jnp.int32)
            y1i = jnp.clip(jnp.ceil(ys), 0, height - 1).astype(jnp.int32)
            x1i = jnp.clip(jnp.ceil(xs), 0, width - 1).astype(jnp.int32)
            top = im[y0i][:, x0i] + (im[y0i][:, x1i] - im[y0i][:, x0i]) * dx
            bottom = im[y1i][:, x0i] + (im[y1i][:, x1i] - im[y1i][:, x0i]) * dx
            val = top + (bottom - top) * dy
        return jnp.where(inside[:, :, None], val, jnp.float32(extrapolation_value))

    return jax.vmap(one)(b, idx)


def _bilinear(feat, y, x):
    """Detectron's bilinear sample of ``feat`` (C, H, W) at points ``y``, ``x``; 0 outside [-1, size]."""
    _, height, width = feat.shape
    outside = (y < -1) | (y > height) | (x < -1) | (x > width)
    y, x = jnp.maximum(y, 0), jnp.maximum(x, 0)
    y0, x0 = jnp.floor(y).astype(jnp.int32), jnp.floor(x).astype(jnp.int32)
    y_edge, x_edge = y0 >= height - 1, x0 >= width - 1
    y0, x0 = jnp.where(y_edge, height - 1, y0), jnp.where(x_edge, width - 1, x0)
    y1, x1 = jnp.where(y_edge, height - 1, y0 + 1), jnp.where(x_edge, width - 1, x0 + 1)
    y, x = jnp.where(y_edge, y0.astype(y.dtype), y), jnp.where(x_edge, x0.astype(x.dtype), x)
    ly, lx = y - y0, x - x0
    hy, hx = 1 - ly, 1 - lx
    val = (hy * hx * feat[:, y0, x0] + hy * lx * feat[:, y0, x1] + ly * hx * feat[:, y1, x0]
           + ly * lx * feat[:, y1, x1])
    return jnp.where(outside, 0., val)


def _roi_align(features, rois, *, pooled_height, pooled_width, spatial_scale, sample_num, roi_end_mode):
    """Detectron's ROIAlign: each bin the mean of ``sample_num``^2 bilinear samples (when ``sample_num`` <= 0,
    the bin's size truncated to an int, at least 1, which needs concrete ``rois``); ``roi_end_mode`` 1 adds 1
    to the box ends."""
    feat, r = jnp.asarray(_v(features)), jnp.asarray(_v(rois))
    if feat.ndim != 4 or r.ndim != 2 or r.shape[1] != 5:
        raise ValueError(f"For 'ROIAlign', features must be (N, C, H, W) and rois (n, 5), got {feat.shape} "
                         f"and {r.shape}")
    offset = 1. if roi_end_mode == 1 else 0.
    outs = []
    for k in range(r.shape[0]):
        i = r[k, 0].astype(jnp.int32)
        x0, y0 = r[k, 1] * spatial_scale, r[k, 2] * spatial_scale
        x1, y1 = (r[k, 3] + offset) * spatial_scale, (r[k, 4] + offset) * spatial_scale
        rw, rh = jnp.maximum(x1 - x0, 1.), jnp.maximum(y1 - y0, 1.)
        bh, bw = rh / pooled_height, rw / pooled_width
        if sample_num > 0:
            gh = gw = int(sample_num)
        else:
            try:
                gh, gw = max(int(float(bh)), 1), max(int(float(bw)), 1)  # MindSpore truncates
            except jax.errors.ConcretizationTypeError:
                raise TypeError("For 'ROIAlign', sample_num <= 0 (an adaptive grid) needs concrete rois; "
                                "give sample_num > 0 inside jit") from None
        py = jnp.arange(pooled_height)[:, None] * bh + (jnp.arange(gh)[None, :] + .5) * bh / gh + y0
        px = jnp.arange(pooled_width)[:, None] * bw + (jnp.arange(gw)[None, :] + .5) * bw / gw + x0
        yy = jnp.broadcast_to(py[:, :, None, None], (pooled_height, gh, pooled_width, gw))
        xx = jnp.broadcast_to(px[None, None, :, :], (pooled_height, gh, pooled_width, gw))
        vals = _bilinear(feat[i], yy, xx)
        outs.append(vals.mean(axis=(2, 4)))
    return jnp.stack(outs).astype(feat.dtype)


def _patches(x, *, ksizes, strides, rates, padding):
    """TensorFlow's ``extract_image_patches`` over NCHW: (N, kh * kw * C, out_h, out_w), depth in (kh, kw, C) order."""
    x = jnp.asarray(_v(x))
    if x.ndim != 4:
        raise ValueError(f"For 'ExtractImagePatches', the input must be 4-D (N, C, H, W), got shape {x.shape}")
    k, s, r = (tuple(v[2:]) if len(v) == 4 else tuple(v) for v in (ksizes, strides, rates))
    if padding.upper() not in ("VALID", "SAME"):
        raise ValueError(f"For 'ExtractImagePatches', padding must be 'VALID' or 'SAME', got {padding!r}")
    p = jax.lax.conv_general_dilated_patches(x, k, s, padding.upper(), rhs_dilation=r)
    n, _, oh, ow = p.shape
    c = x.shape[1]
    return p.reshape(n, c, k[0] * k[1], oh, ow).transpose(0, 2, 1, 3, 4).reshape(n, -1, oh, ow)


def _depth_to_space(x, *, block_size):
    x = jnp.asarray(_v(x))
    b = block_size
    if x.ndim != 4:
        raise ValueError(f"For DepthToSpace, the input must be 4-D (N, C, H, W), got shape {x.shape}")
    n, c, h, w = x.shape
    if c % (b * b):
        raise ValueError(f"For DepthToSpace, the square of block_size must be smaller than the input channel, but "
                         f"got the block_size is {b}, and the input channel is {c}.")
    y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return y.reshape(n, c // (b * b), h * b, w * b)


def _space_to_depth(x, *, block_size):
    x = jnp.asarray(_v(x))
    b = block_size
    if x.ndim != 4 or x.shape[2] % b or x.shape[3] % b:
        raise ValueError(f"For SpaceToDepth, the input must be 4-D with height and width divisible by block_size "
                         f"{b}, got shape {x.shape}")
    n, c, h, w = x.shape
    y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return y.reshape(n, c * b * b, h // b, w // b)


def _check_block(block_size, **_):
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 2:
        raise ValueError(f"block_size must be an int of at least 2, got {block_size!r}")


_MEANS, _STDS = (0.0, 0.0, 0.0, 0.0), (1.0, 1.0, 1.0, 1.0)

# Name: (op, constructor arguments with MindSpore's defaults[, check])
PRIMITIVES = {
    "BoundingBoxEncode": (_encode, {"means": _MEANS, "stds": _STDS}),
    "BoundingBoxDecode": (_decode, {"max_shape": REQUIRED, "means": _MEANS, "stds": _STDS, "wh_ratio_clip": 0.016}),
    "ResizeBicubic": (_resize_bicubic, {"align_corners": False, "half_pixel_centers": False}),
    "CropAndResize": (_crop_and_resize, {"method": "bilinear", "extrapolation_value": 0.0}),
    "ROIAlign": (_roi_align, {"pooled_height": REQUIRED, "pooled_width": REQUIRED, "spatial_scale": REQUIRED,
                              "sample_num": 2, "roi_end_mode": 1}),
    "ExtractImagePatches": (_patches, {"ksizes": REQUIRED, "strides": REQUIRED, "rates": REQUIRED,
                                       "padding": "VALID"}),
    "DepthToSpace": (_depth_to_space, {"block_size": REQUIRED}, _check_block),
    "SpaceToDepth": (_space_to_depth, {"block_size": REQUIRED}, _check_block),
}
install_primitives(globals(), __all__, PRIMITIVES)
