"""Activation Primitives (MindSpore's ``ops.ReLU``, ``ops.Softmax``, ``ops.Elu``, ...): one table line each.

Each calls the functional op of ``ops.function.activation_func`` with its
constructor arguments, so the dtype rules and exceptions are the functional
op's.

>>> import cellkit as ms
>>> from cellkit.ops import operations as P
>>> P.Softmax(axis=(0, 1))(ms.ops.zeros((2, 2))).tolist()
[[0.25, 0.25], [0.25, 0.25]]
>>> P.HShrink(lambd=1.0)(ms.Tensor([-2.0, 0.5]))
Array([-2.,  0.], dtype=float32)
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ..function import activation_func as A
from ..primitive import install_primitives

__all__ = []


def _softmax(x, *, axis):
    """Softmax over an int or a tuple of axes (the Primitive takes both)."""
    return jax.nn.softmax(A.float_arg("Softmax", x), axis=axis)


def _check_axis(name, tuples, axis, **_):
    ok = isinstance(axis, (int, np.integer)) and not isinstance(axis, bool)
    if tuples and isinstance(axis, tuple):
        ok = all(isinstance(a, int) and not isinstance(a, bool) for a in axis)
    if not ok:
        kinds = "[int, tuple of int]" if tuples else "int"
        raise TypeError(f"For '{name}', the type of 'axis' should be one of {kinds}, but got "
                        f"{type(axis).__name__} {axis!r}.")


def _check_number(name, what, kinds=(int, float)):
    def check(**config):
        A.number_arg(name, config[what], what, kinds)
    return check


def _checked(name, fn):
    def call(x):
        return fn(A.float_arg(name, x))
    call.__name__ = name.lower()
    return call


def _gelu_tanh(x):
    return A.gelu(x, approximate="tanh")


def _celu_check(alpha, **_):
    A.number_arg("CeLU", alpha, "alpha")
    if alpha == 0:
        raise ValueError(f"For 'CeLU', the alpha must be not equal to 0, but got {alpha}.")


# Name: (op, constructor arguments with MindSpore's defaults[, check])
PRIMITIVES = {
    "ReLU": (A.relu, {}),
    "ReLU6": (A.relu6, {}),
    "Sigmoid": (A.sigmoid, {}),
    "Tanh": (_checked("Tanh", jnp.tanh), {}),
    "Softmax": (_softmax, {"axis": -1}, functools.partial(_check_axis, "Softmax", True)),
    "LogSoftmax": (A.log_softmax, {"axis": -1}, functools.partial(_check_axis, "LogSoftmax", False)),
    "GeLU": (_gelu_tanh, {}),
    "Gelu": (_gelu_tanh, {}),
    "FastGeLU": (A.fast_gelu, {}),
    "FastGelu": (A.fast_gelu, {}),
    "Elu": (A.elu, {"alpha": 1.0}, _check_number("Elu", "alpha", (float,))),
    "CeLU": (A.celu, {"alpha": 1.0}, _celu_check),
    "SeLU": (A.selu, {}),
    "HSwish": (A.hardswish, {}),
    "HSigmoid": (A.hardsigmoid, {}),
    "Softplus": (A.softplus, {}),
    "Softsign": (A.softsign, {}),
    "Mish": (A.mish, {}),
    "PReLU": (A.prelu, {}),
    "HShrink": (A.hardshrink, {"lambd": 0.5}, _check_number("HShrink", "lambd")),
    "SoftShrink": (A.softshrink, {"lambd": 0.5}, _check_number("SoftShrink", "lambd")),
    "GLU": (A.glu, {"axis": -1}, functools.partial(_check_axis, "GLU", False)),
}
install_primitives(globals(), __all__, PRIMITIVES)
