"""Image transforms (``mindspore.dataset.vision``) on HWC NumPy images.

>>> import numpy as np
>>> from cellkit.dataset import vision
>>> img = np.zeros((4, 6, 3), np.uint8)
>>> vision.Resize(2)(img).shape, vision.HWC2CHW()(img).shape
((2, 3, 3), (3, 4, 6))
>>> vision.Normalize(mean=[0, 0, 0], std=[2, 2, 2])(img + 4)[0, 0]
array([2., 2., 2.], dtype=float32)
"""

from __future__ import annotations

import enum
import numbers

import numpy as np

from ..engine.datasets_files import decode_image
from ..transforms.transforms import RandomTensorOperation, TensorOperation

__all__ = ["Inter", "Border", "Decode", "Resize", "Rescale", "Normalize", "HWC2CHW", "CenterCrop", "Crop",
           "RandomCrop", "RandomHorizontalFlip", "RandomVerticalFlip", "HorizontalFlip", "VerticalFlip",
           "ToTensor", "Pad"]


class Inter(enum.IntEnum):
    """Interpolation modes (MindSpore's values)."""
    NEAREST = 0
    ANTIALIAS = 1
    BILINEAR = LINEAR = 2
    BICUBIC = CUBIC = 3
    AREA = 4
    PILCUBIC = 5


class Border(str, enum.Enum):
    """Padding modes."""
    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"


def _image(x, what):
    x = np.asarray(x)
    if x.ndim not in (2, 3):
        raise RuntimeError(f"{what}: the image must be <H, W> or <H, W, C>, got shape {x.shape}")
    return x


def _size_pair(size, what):
    if isinstance(size, numbers.Integral) and not isinstance(size, bool) and size > 0:
        return int(size), int(size)
    if isinstance(size, (list, tuple)) and len(size) == 2 and all(isinstance(s, numbers.Integral) and s > 0 for s in size):
        return int(size[0]), int(size[1])
    raise ValueError(f"{what}: size must be a positive int or a (height, width) pair, got {size!r}")


def _linear_axis(n_in, n_out):
    """OpenCV's INTER_LINEAR sampling of one axis: half-pixel centres, clamped at the edges."""
    src = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
    src = np.clip(src, 0, n_in - 1)
    lo = np.floor(src).astype(int)
    hi = np.minimum(lo + 1, n_in - 1)
    return lo, hi, (src - lo).astype(np.float32)


def _resize(img, h, w, interpolation):
    H, W = img.shape[:2]
    if interpolation == Inter.NEAREST:
        rows = np.minimum((np.arange(h) * (H / h)).astype(int), H - 1)
        cols = np.minimum((np.arange(w) * (W / w)).astype(int), W - 1)
        return img[rows][:, cols]
    if interpolation != Inter.BILINEAR:
        raise NotImplementedError(f"Resize: interpolation {Inter(interpolation).name} is not supported; "
                                  "NEAREST and BILINEAR are (see docs/differences.md)")
    f = img.astype(np.float32)
    r0, r1, fr = _linear_axis(H, h)
    c0, c1, fc = _linear_axis(W, w)
    fr = fr.reshape((-1,) + (1,) * (img.ndim - 1))
    fc = fc.reshape((1, -1) + (1,) * (img.ndim - 2))
    rows = f[r0] * (1 - fr) + f[r1] * fr
    out = rows[:, c0] * (1 - fc) + rows[:, c1] * fc
    if np.issubdtype(img.dtype, np.integer):
        info = np.iinfo(img.dtype)
        return np.clip(np.rint(out), info.min, info.max).astype(img.dtype)
    return out.astype(img.dtype)


class Decode(TensorOperation):
    """Decode JPEG/PNG/BMP bytes to an RGB HWC uint8 image (with Pillow)."""

    def __init__(self, to_pil=False):
        self.to_pil = to_pil

    def apply(self, rng, data):
        image = decode_image(data, "Decode")
        if self.to_pil:
            from PIL import Image
            return Image.fromarray(image)
        return image


class Resize(TensorOperation):
    """Resize to ``size`` (an int resizes the shorter edge, keeping the aspect ratio)."""

    def __init__(self, size, interpolation=Inter.BILINEAR):
        if isinstance(size, numbers.Integral) and not isinstance(size, bool):
            if size <= 0:
                raise ValueError(f"Resize: size must be positive, got {size}")
            self.size = int(size)
        else:
            self.size = _size_pair(size, "Resize")
        self.interpolation = Inter(interpolation)

    def apply(self, rng, img):
        img = _image(img, "Resize")
        H, W = img.shape[:2]
        if isinstance(self.size, int):
            h, w = (self.size, int(W * self.size / H)) if H <= W else (int(H * self.size / W), self.size)
        else:
            h, w = self.size
        return _resize(img, h, w, self.interpolation)


class Rescale(TensorOperation):
    """``image * rescale + shift`` as float32."""

    def __init__(self, rescale, shift):
        self.rescale, self.shift = float(rescale), float(shift)

    def apply(self, rng, img):
        out = np.multiply(img, np.float32(self.rescale), dtype=np.float32)  # a new array: add in place
        if self.shift:
            out += np.float32(self.shift)
        return out


class Normalize(TensorOperation):
    """``(image - mean) / std`` per channel, as float32."""

    def __init__(self, mean, std, is_hwc=True):
        self.mean, self.std = np.asarray(mean, np.float32), np.asarray(std, np.float32)
        if self.mean.shape != self.std.shape or self.mean.ndim != 1:
            raise ValueError(f"Normalize: mean and std must be lists of the same length, got {mean!r}, {std!r}")
        if (self.std <= 0).any():
            raise ValueError(f"Normalize: std must be positive, got {std!r}")
        self.is_hwc = is_hwc

    def apply(self, rng, img):
        img = np.asarray(img, np.float32)
        shape = (1, 1, -1) if self.is_hwc else (-1, 1, 1)
        if img.ndim == 2:
            shape = (1, -1) if self.is_hwc else (-1, 1)
        return ((img - self.mean.reshape(shape)) / self.std.reshape(shape)).astype(np.float32)


class HWC2CHW(TensorOperation):
    """Move the channel axis first."""

    def apply(self, rng, img):
        img = _image(img, "HWC2CHW")
        return np.ascontiguousarray(img.transpose(2, 0, 1) if img.ndim == 3 else img[None])


class Crop(TensorOperation):
    """The ``size`` region whose top-left corner is ``coordinates`` (row, column)."""

    def __init__(self, coordinates, size):
        self.top, self.left = coordinates
        self.size = _size_pair(size, "Crop")

    def apply(self, rng, img):
        img = _image(img, "Crop")
        h, w = self.size
        if self.top + h > img.shape[0] or self.left + w > img.shape[1]:
            raise ValueError(f"Crop: the region {self.size} at {(self.top, self.left)} exceeds the image {img.shape[:2]}")
        return img[self.top:self.top + h, self.left:self.left + w]


class CenterCrop(TensorOperation):
    """The central ``size`` region (zero-padded where the image is smaller)."""

    def __init__(self, size):
        self.size = _size_pair(size, "CenterCrop")

    def apply(self, rng, img):
        img = _image(img, "CenterCrop")
        h, w = self.size
        H, W = img.shape[:2]
        if h > H or w > W:
            pad = [((max(h - H, 0) + 1) // 2, max(h - H, 0) // 2), ((max(w - W, 0) + 1) // 2, max(w - W, 0) // 2)]
            img = np.pad(img, pad + [(0, 0)] * (img.ndim - 2))
            H, W = img.shape[:2]
        top, left = (H - h) // 2, (W - w) // 2
        return img[top:top + h, left:left + w]


class Pad(TensorOperation):
    """Pad the borders: ``padding`` is an int, (left/right, top/bottom) or (left, top, right, bottom)."""

    def __init__(self, padding, fill_value=0, padding_mode=Border.CONSTANT):
        if isinstance(padding, numbers.Integral):
            padding = (padding,) * 4
        elif len(padding) == 2:
            padding = (padding[0], padding[1], padding[0], padding[1])
        self.left, self.top, self.right, self.bottom = (int(p) for p in padding)
        self.fill_value, self.mode = fill_value, Border(padding_mode)

    def apply(self, rng, img):
        img = _image(img, "Pad")
        widths = [(self.top, self.bottom), (self.left, self.right)] + [(0, 0)] * (img.ndim - 2)
        if self.mode == Border.CONSTANT:
            return np.pad(img, widths, constant_values=self.fill_value)
        return np.pad(img, widths, mode=self.mode.value)


class RandomCrop(RandomTensorOperation):
    """A ``size`` region at a random place, after optional padding."""

    def __init__(self, size, padding=None, pad_if_needed=False, fill_value=0, padding_mode=Border.CONSTANT):
        self.size = _size_pair(size, "RandomCrop")
        self.pad = None if padding is None else Pad(padding, fill_value, padding_mode)
        self.pad_if_needed, self.fill_value, self.padding_mode = pad_if_needed, fill_value, padding_mode

    def apply(self, rng, img):
        img = _image(img, "RandomCrop")
        if self.pad is not None:
            img = self.pad.apply(rng, img)
        h, w = self.size
        H, W = img.shape[:2]
        if self.pad_if_needed and (h > H or w > W):
            img = Pad((max(w - W, 0), max(h - H, 0)), self.fill_value, self.padding_mode).apply(rng, img)
            H, W = img.shape[:2]
        if h > H or w > W:
            raise RuntimeError(f"RandomCrop: crop size {self.size} is larger than the image {img.shape[:2]}; "
                               "pass padding or pad_if_needed=True")
        top, left = int(rng.integers(H - h + 1)), int(rng.integers(W - w + 1))
        return img[top:top + h, left:left + w]


class _RandomFlip(RandomTensorOperation):
    axis = 1

    def __init__(self, prob=0.5):
        if not 0.0 <= prob <= 1.0:
            raise ValueError(f"{type(self).__name__}: prob must be in [0, 1], got {prob!r}")
        self.prob = prob

    def apply(self, rng, img):
        img = _image(img, type(self).__name__)
        return np.flip(img, self.axis).copy() if rng.random() < self.prob else img


class RandomHorizontalFlip(_RandomFlip):
    """Flip left-right with probability ``prob``."""
    axis = 1


class RandomVerticalFlip(_RandomFlip):
    """Flip upside down with probability ``prob``."""
    axis = 0


class HorizontalFlip(TensorOperation):
    def apply(self, rng, img):
        return np.flip(_image(img, "HorizontalFlip"), 1).copy()


class VerticalFlip(TensorOperation):
    def apply(self, rng, img):
        return np.flip(_image(img, "VerticalFlip"), 0).copy()


class ToTensor(TensorOperation):
    """HWC uint8 image to CHW ``output_type`` in [0, 1]."""

    def __init__(self, output_type=np.float32):
        from ..transforms.transforms import _np_dtype
        self.dtype = _np_dtype(output_type)

    def apply(self, rng, img):
        img = _image(img, "ToTensor")
        img = img[..., None] if img.ndim == 2 else img
        return (img.transpose(2, 0, 1) / 255.0).astype(self.dtype)
