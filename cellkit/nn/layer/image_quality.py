"""Image layers of MindSpore's ``nn/layer/image.py``: ``ImageGradients``, ``PSNR``, ``SSIM``, ``MSSSIM`` and
``CentralCrop``.

Images are (N, C, H, W). Integer images are scaled to [0, 1] by their dtype's maximum first, as
MindSpore does; float images are used as they are.

>>> import cellkit as ms
>>> from cellkit import nn
>>> img = ms.ops.ones((1, 1, 4, 4))
>>> float(nn.SSIM(filter_size=3)(img, img)[0])
1.0
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...cell import Cell
from ...ops.function._utils import _v
from .container import CellList
from .conv import Conv2d

__all__ = ["ImageGradients", "PSNR", "SSIM", "MSSSIM", "CentralCrop"]


def _images(cell, *imgs, names=("img1", "img2")):
    out = []
    for arg, img in zip(names, imgs):
        x = jnp.asarray(_v(img))
        if x.ndim != 4:
            raise ValueError(f"For '{cell.cls_name}', the dimension of '{arg}' must be 4d, but got {x.ndim}.")
        out.append(x)
    if len(out) == 2 and (out[0].shape != out[1].shape or out[0].dtype != out[1].dtype):
        raise ValueError(f"For '{cell.cls_name}', 'img1' and 'img2' must have the same shape and dtype, but got "
                         f"{out[0].shape} {out[0].dtype} and {out[1].shape} {out[1].dtype}.")
    return out


def _to_float(img, max_val):
    """(img as float, max_val), both divided by the dtype's maximum for integer images."""
    if jnp.issubdtype(img.dtype, jnp.integer):
        top = float(np.iinfo(img.dtype).max)
        return img.astype(jnp.float32) / top, max_val / top
    if img.dtype != jnp.float64:
        img = img.astype(jnp.float32)
    return img, float(max_val)


def _check_max_val(cell, max_val):
    if not isinstance(max_val, (int, float)) or isinstance(max_val, bool):
        raise TypeError(f"For '{cell.cls_name}', the 'max_val' must be int or float, but got "
                        f"{type(max_val).__name__}.")
    if max_val <= 0:
        raise ValueError(f"For '{cell.cls_name}', the 'max_val' must be greater than 0, but got {max_val}.")
    return max_val


class ImageGradients(Cell):
    """``(dy, dx)``: forward differences along H and W, zero in the last row/column (``nn.ImageGradients``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> dy, dx = nn.ImageGradients()(ms.Tensor([[[[1., 2.], [3., 4.]]]]))
    >>> dy.reshape(-1), dx.reshape(-1)
    (Array([2., 2., 0., 0.], dtype=float32), Array([1., 0., 1., 0.], dtype=float32))
    """

    def construct(self, images):
        (x,) = _images(self, images, names=("images",))
        dy = jnp.pad(x[:, :, 1:, :] - x[:, :, :-1, :], ((0, 0), (0, 0), (0, 1), (0, 0)))
        dx = jnp.pad(x[:, :, :, 1:] - x[:, :, :, :-1], ((0, 0), (0, 0), (0, 0), (0, 1)))
        return dy, dx


class PSNR(Cell):
    """Peak signal-to-noise ratio per image, ``10 log10(max_val² / mse)`` (MindSpore 2.10's ``nn.PSNR``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> round(float(nn.PSNR()(ms.ops.zeros((1, 1, 2, 2)), ms.ops.zeros((1, 1, 2, 2)) + 0.1)[0]), 4)
    20.0
    """

    def __init__(self, max_val=1.0):
        super().__init__()
        self.max_val = _check_max_val(self, max_val)

    def construct(self, img1, img2):
        a, b = _images(self, img1, img2)
        a, max_val = _to_float(a, self.max_val)
        b, _ = _to_float(b, self.max_val)
        mse = jnp.mean(jnp.square(a - b), axis=(-3, -2, -1))
        return 10 * jnp.log(jnp.square(jnp.asarray(max_val, a.dtype)) / mse) / jnp.log(jnp.asarray(10.0, a.dtype))


def _window(size, sigma):
    """MindSpore's Gaussian window, shape (1, 1, size, size)."""
    x, y = np.mgrid[-size // 2 + 1:size // 2 + 1, -size // 2 + 1:size // 2 + 1]
    g = np.exp(-(x.astype(np.float32) ** 2 + y.astype(np.float32) ** 2) / (2 * sigma ** 2))
    return (g / g.sum()).astype(np.float32)[None, None]


def _window_conv(size, sigma):
    conv = Conv2d(1, 1, size, weight_init=_window(size, sigma), pad_mode="valid")
    conv.weight.requires_grad = False
    return conv


def _ssim_cs(c1, c2, a, b, conv):
    """(ssim, contrast-structure) per image and channel, (N, C)."""
    w = conv.weight.value.astype(a.dtype)      # the window in the images' float type (float64 under x64)

    def f(x):
        n, c, h, wd = x.shape
        y = jax.lax.conv_general_dilated(x.reshape(n * c, 1, h, wd), w, (1, 1), "VALID")
        return y.reshape((n, c) + y.shape[2:])
    mu1, mu2 = f(a), f(b)
    s11 = f(a * a) - mu1 * mu1
    s22 = f(b * b) - mu2 * mu2
    s12 = f(a * b) - mu1 * mu2
    v1 = 2 * s12 + c2
    v2 = s11 + s22 + c2
    ssim = ((2 * mu1 * mu2 + c1) * v1) / ((mu1 * mu1 + mu2 * mu2 + c1) * v2)
    return jnp.mean(ssim, axis=(2, 3)), jnp.mean(v1 / v2, axis=(2, 3))


class _SSIMBase(Cell):
    def _setup(self, max_val, filter_size, filter_sigma, k1, k2):
        self.max_val = _check_max_val(self, max_val)
        if not isinstance(filter_size, int) or isinstance(filter_size, bool) or filter_size < 1:
            raise ValueError(f"For '{self.cls_name}', the 'filter_size' must be an int >= 1, but got {filter_size!r}.")
        if not isinstance(filter_sigma, float) or filter_sigma <= 0:
            raise ValueError(f"For '{self.cls_name}', the 'filter_sigma' must be a positive float, but got "
                             f"{filter_sigma!r}.")
        for arg, value in (("k1", k1), ("k2", k2)):
            if not isinstance(value, float):
                raise TypeError(f"For '{self.cls_name}', the '{arg}' must be float, but got {type(value).__name__}.")
        self.filter_size, self.filter_sigma, self.k1, self.k2 = filter_size, filter_sigma, k1, k2

    def _prepare(self, img1, img2):
        a, b = _images(self, img1, img2)
        if min(a.shape[2:]) < self.filter_size:
            raise ValueError(f"For '{self.cls_name}', the height and width of 'img1' must be at least "
                             f"filter_size {self.filter_size}, but got shape {a.shape}.")
        a, max_val = _to_float(a, self.max_val)
        b, _ = _to_float(b, self.max_val)
        return a, b, (self.k1 * max_val) ** 2, (self.k2 * max_val) ** 2


class SSIM(_SSIMBase):
    """Structural similarity per image, averaged over channels (MindSpore 2.10's ``nn.SSIM``).

    Defaults: ``max_val=1.0``, ``filter_size=11``, ``filter_sigma=1.5``, ``k1=0.01``, ``k2=0.03``.
    The Gaussian window is the frozen Parameter ``conv.weight`` (1, 1, filter_size, filter_size).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.SSIM(filter_size=3)(ms.ops.ones((2, 3, 5, 5)), ms.ops.ones((2, 3, 5, 5))).shape
    (2,)
    """

    def __init__(self, max_val=1.0, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03):
        super().__init__()
        self._setup(max_val, filter_size, filter_sigma, k1, k2)
        self.conv = _window_conv(filter_size, filter_sigma)

    def construct(self, img1, img2):
        a, b, c1, c2 = self._prepare(img1, img2)
        ssim, _ = _ssim_cs(c1, c2, a, b, self.conv)
        return jnp.mean(ssim, axis=-1)


def _avg_pool2(x):
    n, c, h, w = x.shape
    x = x[:, :, :h // 2 * 2, :w // 2 * 2]
    return jax.lax.reduce_window(x, np.array(0, x.dtype), jax.lax.add, (1, 1, 2, 2), (1, 1, 2, 2), "VALID") / 4


class MSSSIM(_SSIMBase):
    """Multi-scale structural similarity per image (MindSpore 2.10's ``nn.MSSSIM``).

    Defaults: ``max_val=1.0``, ``power_factors=(0.0448, 0.2856, 0.3001, 0.2363, 0.1333)`` (one
    scale each; the image is halved by 2x2 average pooling between scales), ``filter_size=11``,
    ``filter_sigma=1.5``, ``k1=0.01``, ``k2=0.03``. The windows are the frozen Parameters
    ``multi_convs_list.<i>.weight``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> net = nn.MSSSIM(power_factors=(0.5, 0.5), filter_size=3)
    >>> net(ms.ops.ones((1, 1, 8, 8)), ms.ops.ones((1, 1, 8, 8)))
    Array([1.], dtype=float32)
    """

    def __init__(self, max_val=1.0, power_factors=(0.0448, 0.2856, 0.3001, 0.2363, 0.1333), filter_size=11,
                 filter_sigma=1.5, k1=0.01, k2=0.03):
        super().__init__()
        self._setup(max_val, filter_size, filter_sigma, k1, k2)
        if not isinstance(power_factors, (tuple, list)):
            raise TypeError(f"For 'MSSSIM', the 'power_factors' must be tuple or list, but got "
                            f"{type(power_factors).__name__}.")
        self.power_factors = tuple(power_factors)
        self.level = len(power_factors)
        self.multi_convs_list = CellList([_window_conv(filter_size, filter_sigma) for _ in range(self.level)])

    def construct(self, img1, img2):
        a, b, c1, c2 = self._prepare(img1, img2)
        mcs = []
        sim = None
        for i in range(self.level):
            sim, cs = _ssim_cs(c1, c2, a, b, self.multi_convs_list[i])
            mcs.append(jax.nn.relu(cs))
            a, b = _avg_pool2(a), _avg_pool2(b)
        stacked = jnp.stack(mcs[:-1] + [jax.nn.relu(sim)], axis=-1)
        ms_ssim = jnp.prod(jnp.power(stacked, jnp.asarray(self.power_factors, stacked.dtype)), axis=-1)
        return jnp.mean(ms_ssim, axis=-1)


class CentralCrop(Cell):
    """The central ``central_fraction`` (0, 1] of H and W of a (C, H, W) or (N, C, H, W) image (``nn.CentralCrop``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.CentralCrop(0.5)(ms.ops.ones((3, 8, 6))).shape
    (3, 4, 4)
    """

    def __init__(self, central_fraction):
        super().__init__()
        if not isinstance(central_fraction, float):
            raise TypeError(f"For 'CentralCrop', the 'central_fraction' must be float, but got "
                            f"{type(central_fraction).__name__}.")
        if not 0.0 < central_fraction <= 1.0:
            raise ValueError(f"For 'CentralCrop', the 'central_fraction' must be in range (0.0, 1.0], but got "
                             f"{central_fraction}.")
        self.central_fraction = central_fraction

    def construct(self, image):
        x = jnp.asarray(_v(image))
        if x.ndim not in (3, 4):
            raise ValueError(f"CentralCrop image must be 3d or 4d, but got shape {x.shape}")
        if self.central_fraction == 1.0:
            return x
        h, w = x.shape[-2:]
        top = int((float(h) - float(h * self.central_fraction)) / 2)
        left = int((float(w) - float(w * self.central_fraction)) / 2)
        return x[..., top:h - top, left:w - left]
