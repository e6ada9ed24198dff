"""Shared helpers for layers: building Parameters from MindSpore-style init arguments."""

from __future__ import annotations

import math

import numpy as np

from ..initializer import HeUniform, Uniform, _fans, initializer
from ..parameter import Parameter
from ..tensor import is_tensor


def make_param(init, shape, dtype, name, requires_grad=True, what="layer") -> Parameter:
    """A Parameter from a string, Initializer, number or Tensor ``init`` of ``shape``."""
    shape = tuple(shape)
    if is_tensor(init) or isinstance(init, np.ndarray):
        got = tuple(np.shape(init))
        if got != shape:
            raise ValueError(f"{what}: {name} init has shape {got}, expected {shape}")
    return Parameter(initializer(init, shape, dtype), name=name, requires_grad=requires_grad)


def default_weight_init():
    """MindSpore 2.x's default weight init for Dense and Conv layers."""
    return HeUniform(math.sqrt(5))


def default_bias_init(weight_shape):
    """U(-1/sqrt(fan_in), 1/sqrt(fan_in)), MindSpore 2.x's default bias init."""
    fan_in = _fans(weight_shape)[0] if len(weight_shape) >= 2 else weight_shape[0]
    return Uniform(1 / math.sqrt(fan_in)) if fan_in else "zeros"
