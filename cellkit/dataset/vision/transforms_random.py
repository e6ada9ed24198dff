"""The random image transforms of mindcv's pipelines (``mindspore.dataset.vision``), on HWC NumPy images.

Each draws from the generator the pipeline hands it (seeded by ``ds.config``); in
their deterministic settings (``scale=(1, 1)``, ``degrees=(90, 90)``, a factor
range of one value) they give MindSpore's values.

>>> import numpy as np
>>> from cellkit.dataset import vision
>>> img = np.arange(5 * 7 * 3, dtype=np.uint8).reshape(5, 7, 3)
>>> vision.RandomResizedCrop((3, 4), scale=(1, 1), ratio=(1.4, 1.4))(img).shape
(3, 4, 3)
>>> vision.RandomRotation((90, 90), expand=True)(img).shape
(7, 5, 3)
>>> vision.RandomColorAdjust(brightness=(0.5, 0.5))(img)[0, 1]
array([2, 2, 2], dtype=uint8)
"""

from __future__ import annotations

import enum
import math
import numbers

import numpy as np

from ..engine.datasets_files import decode_image
from ..transforms.transforms import RandomTensorOperation, TensorOperation
from .transforms import Inter, _image, _resize, _size_pair

__all__ = ["ImageBatchFormat", "RandomResizedCrop", "RandomCropDecodeResize", "RandomColorAdjust", "RandomRotation",
           "RandomErasing", "Grayscale", "ToPIL", "MixUpBatch", "CutMixBatch"]


class ImageBatchFormat(enum.IntEnum):
    """The layout of a batch of images (``CutMixBatch``)."""
    NHWC = 0
    NCHW = 1


def _range(value, what, lo=0.0, center=None):
    """A (min, max) pair from a pair or, with ``center``, from one number ``v`` as (center - v, center + v)."""
    if isinstance(value, numbers.Number) and not isinstance(value, bool) and center is not None:
        if value < 0:
            raise ValueError(f"{what} must be non-negative, got {value!r}")
        return max(center - value, lo), center + value
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, numbers.Number) for v in value):
        a, b = float(value[0]), float(value[1])
        if a > b or a < lo:
            raise ValueError(f"{what} must be a (min, max) pair with {lo} <= min <= max, got {value!r}")
        return a, b
    raise TypeError(f"{what} must be a number or a (min, max) pair, got {value!r}")


def _saturate(out, dtype):
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.clip(np.rint(out), info.min, info.max).astype(dtype)
    return out.astype(dtype)


def _gray(img):
    """OpenCV's RGB -> gray weights."""
    f = img.astype(np.float32)
    return f[..., 0] * 0.299 + f[..., 1] * 0.587 + f[..., 2] * 0.114


def _crop_box(rng, H, W, scale, ratio, attempts):
    """torchvision's and MindSpore's rule: random area and log-uniform aspect ratio, else a central crop."""
    area = H * W
    log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
    for _ in range(attempts):
        target = area * rng.uniform(*scale)
        aspect = math.exp(rng.uniform(*log_ratio))
        w, h = int(round(math.sqrt(target * aspect))), int(round(math.sqrt(target / aspect)))
        if 0 < w <= W and 0 < h <= H:
            return int(rng.integers(H - h + 1)), int(rng.integers(W - w + 1)), h, w
    in_ratio = W / H
    if in_ratio < ratio[0]:
        w, h = W, int(round(W / ratio[0]))
    elif in_ratio > ratio[1]:
        h, w = H, int(round(H * ratio[1]))
    else:
        h, w = H, W
    return (H - h) // 2, (W - w) // 2, h, w


class RandomResizedCrop(RandomTensorOperation):
    """Crop a random area (fraction ``scale``, aspect ``ratio``) and resize it to ``size``."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=Inter.BILINEAR,
                 max_attempts=10):
        name = type(self).__name__
        self.size = _size_pair(size, name)
        self.scale = _range(scale, f"{name}: scale")
        self.ratio = _range(ratio, f"{name}: ratio", lo=1e-12)
        self.interpolation = Inter(interpolation)
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, numbers.Integral) or max_attempts < 1:
            raise ValueError(f"{name}: max_attempts must be a positive int, got {max_attempts!r}")
        self.max_attempts = int(max_attempts)

    def apply(self, rng, img):
        img = _image(img, type(self).__name__)
        top, left, h, w = _crop_box(rng, img.shape[0], img.shape[1], self.scale, self.ratio, self.max_attempts)
        return _resize(img[top:top + h, left:left + w], *self.size, self.interpolation)


class RandomCropDecodeResize(RandomResizedCrop):
    """``Decode`` then ``RandomResizedCrop``, on encoded image bytes."""

    def apply(self, rng, data):
        return super().apply(rng, decode_image(data, "RandomCropDecodeResize"))


class RandomColorAdjust(RandomTensorOperation):
    """Brightness, contrast, saturation and hue by factors drawn from their ranges (a number v: (1-v, 1+v))."""

    def __init__(self, brightness=(1, 1), contrast=(1, 1), saturation=(1, 1), hue=(0, 0)):
        self.brightness = _range(brightness, "RandomColorAdjust: brightness", center=1.0)
        self.contrast = _range(contrast, "RandomColorAdjust: contrast", center=1.0)
        self.saturation = _range(saturation, "RandomColorAdjust: saturation", center=1.0)
        self.hue = _range(hue, "RandomColorAdjust: hue", lo=-0.5, center=0.0)
        if self.hue[0] < -0.5 or self.hue[1] > 0.5:
            raise ValueError(f"RandomColorAdjust: hue must lie in [-0.5, 0.5], got {hue!r}")

    def apply(self, rng, img):
        img = _image(img, "RandomColorAdjust")
        if img.ndim != 3 or img.shape[2] != 3:
            raise RuntimeError(f"RandomColorAdjust: the image must be <H, W, 3>, got shape {img.shape}")
        dtype, out = img.dtype, img
        b, c, s, h = (rng.uniform(*r) if r[0] != r[1] else r[0]
                      for r in (self.brightness, self.contrast, self.saturation, self.hue))
        if b != 1:
            out = _saturate(out.astype(np.float32) * b, dtype)
        if c != 1:
            mean = float(np.rint(_gray(out).mean())) if np.issubdtype(dtype, np.integer) else float(_gray(out).mean())
            out = _saturate(out.astype(np.float32) * c + mean * (1 - c), dtype)
        if s != 1:
            gray = _gray(out)[..., None]
            if np.issubdtype(dtype, np.integer):
                gray = np.rint(gray)
            out = _saturate(out.astype(np.float32) * s + gray * (1 - s), dtype)
        if h != 0:
            out = _shift_hue(out, h)
        return out


def _shift_hue(img, shift):
    """Rotate the hue of an RGB image by ``shift`` turns (in HSV, as PIL and OpenCV do)."""
    scale = 255.0 if np.issubdtype(img.dtype, np.integer) else 1.0
    rgb = img.astype(np.float32) / scale
    mx, mn = rgb.max(-1), rgb.min(-1)
    d = mx - mn
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    safe = np.where(d == 0, 1, d)
    hue = np.where(mx == r, (g - b) / safe % 6, np.where(mx == g, (b - r) / safe + 2, (r - g) / safe + 4)) / 6
    hue = np.where(d == 0, 0, hue)
    hue = (hue + shift) % 1.0
    sat = np.where(mx == 0, 0, d / np.where(mx == 0, 1, mx))
    i = np.floor(hue * 6)
    f = hue * 6 - i
    p, q, t = mx * (1 - sat), mx * (1 - sat * f), mx * (1 - sat * (1 - f))
    i = i.astype(int) % 6
    choices = [(mx, t, p), (q, mx, p), (p, mx, t), (p, q, mx), (t, p, mx), (mx, p, q)]
    out = np.stack([np.choose(i, [c[k] for c in choices]) for k in range(3)], -1)
    return _saturate(out * scale, img.dtype)


class RandomRotation(RandomTensorOperation):
    """Rotate counter-clockwise by an angle drawn from ``degrees`` (a number d: (-d, d)) about ``center``."""

    def __init__(self, degrees, resample=Inter.NEAREST, expand=False, center=None, fill_value=0):
        self.degrees = _range(degrees, "RandomRotation: degrees", lo=-math.inf, center=0.0)
        self.resample = Inter(resample)
        if self.resample not in (Inter.NEAREST, Inter.BILINEAR):
            raise NotImplementedError(f"RandomRotation: resample {self.resample.name} is not supported; NEAREST "
                                      "and BILINEAR are (see docs/differences.md)")
        self.expand, self.center = bool(expand), center
        self.fill_value = fill_value

    def apply(self, rng, img):
        img = _image(img, "RandomRotation")
        lo, hi = self.degrees
        angle = math.radians(rng.uniform(lo, hi) if lo != hi else lo)
        H, W = img.shape[:2]
        cx, cy = ((W - 1) / 2, (H - 1) / 2) if self.center is None else (float(self.center[0]), float(self.center[1]))
        cos, sin = math.cos(angle), math.sin(angle)
        cos, sin = (round(cos) if abs(cos - round(cos)) < 1e-12 else cos), (round(sin) if abs(sin - round(sin)) < 1e-12 else sin)
        if self.expand:
            nW = int(round(abs(W * cos) + abs(H * sin)))
            nH = int(round(abs(W * sin) + abs(H * cos)))
            ncx, ncy = (nW - 1) / 2, (nH - 1) / 2
        else:
            nW, nH, ncx, ncy = W, H, cx, cy
        ys, xs = np.mgrid[0:nH, 0:nW].astype(np.float64)
        dx, dy = xs - ncx, ys - ncy
        sx, sy = cx + cos * dx - sin * dy, cy + sin * dx + cos * dy
        fill = np.broadcast_to(np.asarray(self.fill_value, np.float64), img.shape[2:])
        if self.resample == Inter.NEAREST:
            ix, iy = np.floor(sx + 0.5).astype(int), np.floor(sy + 0.5).astype(int)
            inside = (ix >= 0) & (ix < W) & (iy >= 0) & (iy < H)
            out = img[np.clip(iy, 0, H - 1), np.clip(ix, 0, W - 1)].astype(np.float64)
            out[~inside] = fill
            return _saturate(out, img.dtype)
        x0, y0 = np.floor(sx).astype(int), np.floor(sy).astype(int)
        fx, fy = sx - x0, sy - y0
        out = 0.0
        for oy, wy in ((0, 1 - fy), (1, fy)):
            for ox, wx in ((0, 1 - fx), (1, fx)):
                xi, yi = x0 + ox, y0 + oy
                inside = (xi >= 0) & (xi < W) & (yi >= 0) & (yi < H)
                v = img[np.clip(yi, 0, H - 1), np.clip(xi, 0, W - 1)].astype(np.float64)
                v[~inside] = fill
                w = (wy * wx).reshape(wy.shape + (1,) * (img.ndim - 2))
                out = out + v * w
        return _saturate(out, img.dtype)


class RandomErasing(RandomTensorOperation):
    """With probability ``prob``, fill a random rectangle of a CHW image with ``value`` (or noise: 'random')."""

    def __init__(self, prob=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False, max_attempts=10):
        if not 0.0 <= prob <= 1.0:
            raise ValueError(f"RandomErasing: prob must be in [0, 1], got {prob!r}")
        self.prob = prob
        self.scale = _range(scale, "RandomErasing: scale")
        self.ratio = _range(ratio, "RandomErasing: ratio", lo=1e-12)
        self.value, self.inplace, self.max_attempts = value, inplace, int(max_attempts)

    def apply(self, rng, img):
        img = np.asarray(img)
        if img.ndim != 3:
            raise RuntimeError(f"RandomErasing: the image must be <C, H, W>, got shape {img.shape}")
        if rng.random() >= self.prob:
            return img
        C, H, W = img.shape
        log_ratio = (math.log(self.ratio[0]), math.log(self.ratio[1]))
        for _ in range(self.max_attempts):
            area = H * W * rng.uniform(*self.scale)
            aspect = math.exp(rng.uniform(*log_ratio))
            h, w = int(round(math.sqrt(area * aspect))), int(round(math.sqrt(area / aspect)))
            if h < H and w < W:
                top, left = int(rng.integers(H - h + 1)), int(rng.integers(W - w + 1))
                out = img if self.inplace else img.copy()
                if isinstance(self.value, str):
                    if self.value != "random":
                        raise ValueError(f"RandomErasing: value must be a number, a list or 'random', got {self.value!r}")
                    patch = rng.standard_normal((C, h, w))
                else:
                    patch = np.asarray(self.value, np.float64).reshape(-1, 1, 1)
                out[:, top:top + h, left:left + w] = np.broadcast_to(patch, (C, h, w)).astype(img.dtype)
                return out
        return img


class Grayscale(TensorOperation):
    """RGB to gray with ``num_output_channels`` (1 or 3) channels; a PIL image gives a PIL image."""

    def __init__(self, num_output_channels=1):
        if num_output_channels not in (1, 3):
            raise ValueError(f"Grayscale: num_output_channels must be 1 or 3, got {num_output_channels!r}")
        self.channels = num_output_channels

    def apply(self, rng, img):
        if hasattr(img, "convert") and hasattr(img, "mode"):       # a PIL image: as MindSpore, with PIL
            gray = img.convert("L")
            return gray if self.channels == 1 else gray.convert("RGB")
        img = _image(img, "Grayscale")
        gray = _saturate(_gray(img), img.dtype)
        return gray[..., None] if self.channels == 1 else np.repeat(gray[..., None], 3, -1)


class ToPIL(TensorOperation):
    """An HWC uint8 array as a PIL image."""

    def apply(self, rng, img):
        if hasattr(img, "convert") and hasattr(img, "mode"):
            return img
        from PIL import Image
        img = _image(img, "ToPIL")
        return Image.fromarray(img[..., 0] if img.ndim == 3 and img.shape[2] == 1 else img)


def _batch_args(images, labels, what):
    images, labels = np.asarray(images), np.asarray(labels)
    if images.ndim != 4:
        raise RuntimeError(f"{what}: images must be a batch <N, H, W, C> or <N, C, H, W>, got shape {images.shape}")
    if labels.ndim != 2 or len(labels) != len(images):
        raise RuntimeError(f"{what}: labels must be one-hot <N, num_classes> (batch with OneHot first), got shape "
                           f"{labels.shape}")
    return images, labels


class MixUpBatch(RandomTensorOperation):
    """Mix each image and its one-hot label with another of the batch, by lam ~ Beta(alpha, alpha)."""

    def __init__(self, alpha=1.0):
        if not alpha > 0:
            raise ValueError(f"MixUpBatch: alpha must be positive, got {alpha!r}")
        self.alpha = float(alpha)

    def apply(self, rng, images, labels):
        images, labels = _batch_args(images, labels, "MixUpBatch")
        lam = rng.beta(self.alpha, self.alpha)
        perm = rng.permutation(len(images))
        mixed = images.astype(np.float64) * lam + images[perm].astype(np.float64) * (1 - lam)
        return _saturate(mixed, images.dtype), (labels * lam + labels[perm] * (1 - lam)).astype(labels.dtype)


class CutMixBatch(RandomTensorOperation):
    """Paste a random box of another image of the batch; labels mixed by the box's share of the area."""

    def __init__(self, image_batch_format, alpha=1.0, prob=1.0):
        self.format = ImageBatchFormat(image_batch_format)
        if not alpha > 0:
            raise ValueError(f"CutMixBatch: alpha must be positive, got {alpha!r}")
        if not 0.0 <= prob <= 1.0:
            raise ValueError(f"CutMixBatch: prob must be in [0, 1], got {prob!r}")
        self.alpha, self.prob = float(alpha), float(prob)

    def apply(self, rng, images, labels):
        images, labels = _batch_args(images, labels, "CutMixBatch")
        nhwc = images if self.format == ImageBatchFormat.NHWC else images.transpose(0, 2, 3, 1)
        out, new_labels = nhwc.copy(), labels.astype(np.float64).copy()
        N, H, W = nhwc.shape[:3]
        perm = rng.permutation(N)
        for i in range(N):
            if rng.random() >= self.prob:
                continue
            lam = rng.beta(self.alpha, self.alpha)
            h, w = int(H * math.sqrt(1 - lam)), int(W * math.sqrt(1 - lam))
            cy, cx = int(rng.integers(H)), int(rng.integers(W))
            y0, y1 = max(cy - h // 2, 0), min(cy + h // 2, H)
            x0, x1 = max(cx - w // 2, 0), min(cx + w // 2, W)
            out[i, y0:y1, x0:x1] = nhwc[perm[i], y0:y1, x0:x1]
            share = (y1 - y0) * (x1 - x0) / (H * W)
            new_labels[i] = labels[i] * (1 - share) + labels[perm[i]] * share
        if self.format == ImageBatchFormat.NCHW:
            out = out.transpose(0, 3, 1, 2)
        return out, new_labels.astype(labels.dtype)
