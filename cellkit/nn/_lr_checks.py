"""Argument checks of the learning-rate schedules and lists, with MindSpore's messages and exception types.

MindSpore is strict about Python types here: a learning rate must be a
``float`` (``1`` is a ``TypeError``) and step counts must be ``int``.
"""

from __future__ import annotations

import math

__all__ = ["positive_int", "positive_float", "non_negative_float", "is_bool", "float_type"]


def _prefix(owner):
    return f"For '{owner}', the " if owner else "The "


def _number(value, name, owner, kind, rel):
    if isinstance(value, bool) or not isinstance(value, kind):
        raise TypeError(f"{_prefix(owner)}'{name}' must be {kind.__name__}, but got '{type(value).__name__}'")
    if math.isinf(value) or math.isnan(value):
        raise ValueError(f"{_prefix(owner)}'{name}' must be a legal value, but got '{value}'.")
    if not (value > 0 if rel == ">" else value >= 0):
        raise ValueError(f"{_prefix(owner)}'{name}' must be {kind.__name__} and must {rel} 0, but got "
                         f"'{value}' with type '{type(value).__name__}'.")
    return value


def positive_int(value, name, owner=None) -> int:
    """``value`` if it is an ``int`` > 0."""
    return _number(value, name, owner, int, ">")


def positive_float(value, name, owner=None) -> float:
    """``value`` if it is a ``float`` > 0."""
    return _number(value, name, owner, float, ">")


def non_negative_float(value, name, owner=None) -> float:
    """``value`` if it is a ``float`` >= 0."""
    return _number(value, name, owner, float, ">=")


def float_type(value, name, owner) -> float:
    """``value`` if it is a ``float`` (MindSpore's message for the arguments it type-checks first)."""
    if not isinstance(value, float):
        raise TypeError(f"For '{owner}', the argument '{name}' must be type of float, but got '{name}' type: "
                        f"{type(value)}.")
    return value


def is_bool(value, name, owner=None) -> bool:
    if not isinstance(value, bool):
        where = f"For '{owner}', the type" if owner else "The type"
        raise TypeError(f"{where} of '{name}' should be 'bool', but got type '{type(value).__name__}'.")
    return value
