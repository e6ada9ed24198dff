"""Channel-wise layers: ``LRN`` (local response normalisation) and ``ChannelShuffle``.

>>> import cellkit as ms
>>> from cellkit import nn
>>> nn.ChannelShuffle(2)(ms.ops.arange(4.).reshape(1, 4, 1, 1)).reshape(-1)
Array([0., 2., 1., 3.], dtype=float32)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...cell import Cell
from ...ops.function._utils import _v

__all__ = ["LRN", "ChannelShuffle"]


class LRN(Cell):
    """Local response normalisation across channels (MindSpore 2.10's ``nn.LRN``).

    ``y[:, c] = x[:, c] * (bias + alpha * sum(x[:, c - r : c + r + 1] ** 2)) ** -beta`` over an
    (N, C, H, W) input, ``r = depth_radius``. Defaults: ``depth_radius=5``, ``bias=1.0``,
    ``alpha=1.0``, ``beta=0.5``, ``norm_region='ACROSS_CHANNELS'`` (the only region).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.LRN(depth_radius=0, alpha=1.0, beta=1.0)(ms.ops.ones((1, 2, 1, 1))).reshape(-1)
    Array([0.5, 0.5], dtype=float32)
    """

    def __init__(self, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, norm_region="ACROSS_CHANNELS"):
        super().__init__()
        if not isinstance(depth_radius, int) or isinstance(depth_radius, bool):
            raise TypeError(f"For 'LRN', the 'depth_radius' must be int, but got {type(depth_radius).__name__}.")
        for arg, value in (("bias", bias), ("alpha", alpha), ("beta", beta)):
            if not isinstance(value, float):
                raise TypeError(f"For 'LRN', the '{arg}' must be float, but got {type(value).__name__}.")
        if not isinstance(norm_region, str):
            raise TypeError(f"For 'LRN', the 'norm_region' must be str, but got {type(norm_region).__name__}.")
        if norm_region != "ACROSS_CHANNELS":
            raise ValueError(f"For 'LRN', the 'norm_region' must be 'ACROSS_CHANNELS', but got {norm_region!r}.")
        if depth_radius < 0:
            raise ValueError(f"For 'LRN', the 'depth_radius' must be non-negative, but got {depth_radius}.")
        self.depth_radius, self.bias, self.alpha, self.beta = depth_radius, bias, alpha, beta
        self.norm_region = norm_region

    def construct(self, input_x):
        x = jnp.asarray(_v(input_x))
        if x.ndim != 4:
            raise ValueError(f"For 'LRN', the input must be 4-D (N, C, H, W), but got shape {x.shape}.")
        r = self.depth_radius
        sq = jax.lax.reduce_window(jnp.square(x), np.array(0, x.dtype), jax.lax.add, (1, 2 * r + 1, 1, 1),
                                   (1, 1, 1, 1), [(0, 0), (r, r), (0, 0), (0, 0)])
        return x * jnp.power(self.bias + self.alpha * sq, -self.beta)


class ChannelShuffle(Cell):
    """Interleave ``groups`` groups of channels: (N, C, *) with C = g * k (MindSpore 2.10's ``nn.ChannelShuffle``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.ChannelShuffle(3)(ms.ops.arange(6.).reshape(1, 6, 1)).reshape(-1)
    Array([0., 2., 4., 1., 3., 5.], dtype=float32)
    """

    def __init__(self, groups):
        super().__init__()
        if not isinstance(groups, int) or isinstance(groups, bool):
            raise TypeError(f"For ChannelShuffle, the param `groups` must be int, but got {type(groups)}.")
        if groups < 1:
            raise ValueError(f"For ChannelShuffle, the param `groups` must be larger than 0, but got {groups}.")
        self.groups = groups

    def construct(self, x):
        x = jnp.asarray(_v(x))
        if x.ndim < 3:
            raise ValueError(f"For ChannelShuffle, the input must have at least 3 dimensions, but got shape "
                             f"{x.shape}.")
        n, c = x.shape[:2]
        if c % self.groups:
            raise ValueError(f"For ChannelShuffle, the number of channels {c} must be divisible by groups "
                             f"{self.groups}.")
        out = x.reshape(n, self.groups, c // self.groups, -1).transpose(0, 2, 1, 3)
        return out.reshape(x.shape)
