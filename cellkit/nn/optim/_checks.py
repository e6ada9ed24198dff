"""Argument checks shared by the optimizers (MindSpore's messages)."""

from __future__ import annotations

import numbers

from ...parameter import Parameter


def check_float(owner, name, value, *, minimum=None, exclusive_min=False, maximum=None,
                exclusive_max=False) -> float:
    """``value`` as a float (ints accepted, bools refused), within the given bounds."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"For '{owner}', the type of '{name}' should be 'float', but got type "
                        f"'{type(value).__name__}'.")
    value = float(value)
    low_ok = minimum is None or (value > minimum if exclusive_min else value >= minimum)
    high_ok = maximum is None or (value < maximum if exclusive_max else value <= maximum)
    if not (low_ok and high_ok):
        lo = "(" if exclusive_min else "["
        hi = ")" if exclusive_max else "]"
        bounds = f"{lo}{minimum if minimum is not None else '-inf'}, {maximum if maximum is not None else 'inf'}{hi}"
        raise ValueError(f"For '{owner}', the '{name}' must be in range of {bounds}, but got {value}.")
    return value


def check_bool(owner, name, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"For '{owner}', the '{name}' must be a bool, but got {type(value).__name__}.")
    return value


def check_type_float(owner, name, value) -> float:
    """``value`` if it is a Python ``float`` (MindSpore refuses ints here)."""
    if not isinstance(value, float):
        raise TypeError(f"For '{owner}', the type of '{name}' should be 'float', but got type "
                        f"'{type(value).__name__}'.")
    return value


def is_number(x) -> bool:
    """A real number that is not a bool."""
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def value_of(x):
    """A Parameter's value, anything else unchanged."""
    return x.value if isinstance(x, Parameter) else x
