"""Argument checks shared by the layers, with MindSpore-style messages.

Every message names the layer and says what was expected and what was given.
"""

from __future__ import annotations

import numbers

import jax
import numpy as np

from ..initializer import Initializer


def is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def positive_int(value, arg, what) -> int:
    if not is_int(value) or value < 1:
        raise ValueError(f"For '{what}', '{arg}' must be a positive int, but got {value!r}.")
    return int(value)


def non_negative_int(value, arg, what) -> int:
    if not is_int(value) or value < 0:
        raise ValueError(f"For '{what}', '{arg}' must be a non-negative int, but got {value!r}.")
    return int(value)


def check_bool(value, arg, what) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"For '{what}', '{arg}' must be a bool, but got {type(value).__name__} {value!r}.")
    return bool(value)


def pair(value, arg, what, positive=True) -> tuple:
    """An int (used twice) or a tuple of two ints, as MindSpore's ``twice``."""
    check = positive_int if positive else non_negative_int
    if is_int(value):
        v = check(value, arg, what)
        return (v, v)
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return tuple(check(v, f"{arg} item", what) for v in value)
    raise ValueError(f"For '{what}', '{arg}' must be an int or a tuple of two ints, but got {value!r}.")


def pad_mode_of(pad_mode, allowed, what) -> str:
    if not isinstance(pad_mode, str) or pad_mode.lower() not in allowed:
        raise ValueError(f"For '{what}', 'pad_mode' must be one of {list(allowed)}, but got {pad_mode!r}.")
    return pad_mode.lower()


def data_format_of(data_format, allowed, what) -> str:
    if data_format not in allowed:
        raise ValueError(f"For '{what}', 'data_format' must be one of {list(allowed)}, "
                         f"but got {data_format!r}.")
    return data_format


def init_repr(init) -> object:
    """What a layer keeps of an init argument for its repr.

    Strings, numbers, Initializers and None are kept as they are (hashable,
    static); an array is summarised so that the layer holds no array that is
    not a Parameter.
    """
    if init is None or isinstance(init, (str, numbers.Number, Initializer)):
        return init
    if isinstance(init, (jax.Array, np.ndarray)) or hasattr(init, "__cellkit_value__"):
        from .. import dtype as mstype
        arr = init.value if hasattr(init, "__cellkit_value__") else init
        return f"Tensor(shape={tuple(np.shape(arr))}, dtype={mstype.get_dtype(arr.dtype)})"
    return repr(init)
