"""``TimeDistributed`` (MindSpore's ``nn/layer/timedistributed.py``): apply a layer at every time step.

>>> import cellkit as ms
>>> from cellkit import nn
>>> nn.TimeDistributed(nn.Dense(3, 2), time_axis=1)(ms.ops.ones((4, 5, 3))).shape
(4, 5, 2)
"""

from __future__ import annotations

import jax.numpy as jnp

from ...cell import Cell
from ...ops.function._utils import _v
from ...ops.primitive import Primitive
from .._checks import is_int

__all__ = ["TimeDistributed"]


def _perm(axis_a, axis_b, length):
    perm = tuple(range(length))
    axis_a, axis_b = (axis_a, axis_b) if axis_a < axis_b else (axis_b, axis_a)
    return perm[:axis_a] + (perm[axis_b],) + perm[axis_a:axis_b] + perm[axis_b + 1:]


class TimeDistributed(Cell):
    """Apply ``layer`` to every slice of the input along ``time_axis`` (MindSpore 2.10's ``nn.TimeDistributed``).

    Args:
        layer (Cell or Primitive): the layer, kept as the sub-Cell ``layer``.
        time_axis (int): the time axis of the input (rank >= 3).
        reshape_with_axis (int): default ``None``: the layer runs once per time step and the
            results are stacked on ``time_axis``. Given, the time axis is merged into this axis,
            the layer runs once, and the output is split again (the layer must keep that axis).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> net = nn.TimeDistributed(nn.Dense(3, 2), time_axis=1, reshape_with_axis=0)
    >>> net(ms.ops.ones((4, 5, 3))).shape
    (4, 5, 2)
    """

    def __init__(self, layer, time_axis, reshape_with_axis=None):
        if not isinstance(layer, (Cell, Primitive)):
            raise TypeError(f"For 'TimeDistributed', the 'layer' must be Cell or Primitive instance, but got type: "
                            f"{type(layer).__name__}.")
        super().__init__()
        if not is_int(time_axis):
            raise TypeError(f"For 'TimeDistributed', the 'time_axis' must be int, but got "
                            f"{type(time_axis).__name__}.")
        if reshape_with_axis is not None and not is_int(reshape_with_axis):
            raise TypeError(f"For 'TimeDistributed', the 'reshape_with_axis' must be int, but got "
                            f"{type(reshape_with_axis).__name__}.")
        self.layer = layer
        self.time_axis = time_axis
        self.reshape_with_axis = reshape_with_axis

    def construct(self, inputs):
        x = jnp.asarray(_v(inputs))
        if x.ndim < 3:
            raise ValueError(f"For 'TimeDistributed', the inputs shape must be at least 3D, but got {x.ndim}.")
        time_axis = self.time_axis % x.ndim
        if self.reshape_with_axis is not None:
            return self._reshaped(x, time_axis)
        outs = []
        for t in range(x.shape[time_axis]):
            y = jnp.asarray(_v(self.layer(jnp.take(x, t, axis=time_axis))))
            if time_axis > y.ndim:
                raise ValueError(f"For 'TimeDistributed', the value of 'time_axis' must be in range of "
                                 f"[{-y.ndim - 1}, {y.ndim}], but got {time_axis}.")
            outs.append(y)
        return jnp.stack(outs, time_axis)

    def _reshaped(self, x, time_axis):
        n = x.ndim
        rwa = self.reshape_with_axis % n
        new_time = n - 2 if rwa == n - 1 else (rwa + 1 if time_axis > rwa else rwa - 1)
        pos = new_time if new_time < rwa else rwa
        x = jnp.transpose(x, _perm(new_time, time_axis, n))
        shape = x.shape
        y = jnp.asarray(_v(self.layer(x.reshape(shape[:pos] + (-1,) + shape[pos + 2:]))))
        merged = shape[:pos] + (shape[pos] * shape[pos + 1],) + shape[pos + 2:]
        if pos >= y.ndim or merged[pos] != y.shape[pos]:
            raise ValueError(f"For 'TimeDistributed', the 'reshape_with_axis' is invalid in the input and output: "
                             f"the layer changed axis {pos} (input shape {merged}, output shape {y.shape}). You may "
                             f"try pass parameters without 'reshape_with_axis'.")
        out_shape = y.shape[:pos] + shape[pos:pos + 2] + y.shape[pos + 1:]
        return y.reshape((-1,) + out_shape[1:])
