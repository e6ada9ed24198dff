"""MindSpore's ``JitConfig`` and ``mutable``: graph-compiler options, and inputs kept variable.

XLA compiles every ``cellkit.jit`` function the same way, so a ``JitConfig`` is
checked and kept (``Cell.set_jit_config`` stores it on the Cell) but changes
nothing. ``mutable`` marks an input as variable rather than a constant of the
graph; ``cellkit.jit`` already traces arrays and Python numbers (a new value
does not recompile), so ``mutable`` checks its input and returns it.

>>> import cellkit as ms
>>> ms.JitConfig(jit_level="O1").jit_config_dict["jit_level"]
'O1'
>>> ms.mutable((1, 2.0))
(1, 2.0)
"""

from __future__ import annotations

import numbers

import jax

from ..parameter import Parameter

__all__ = ["JitConfig", "mutable"]

_CHOICES = {"jit_level": ("", "O0", "O1", "O2"), "exc_mode": ("auto", "sink", "no_sink"),
            "jit_syntax_level": ("", "STRICT", "COMPATIBLE", "LAX"), "debug_level": ("RELEASE", "DEBUG"),
            "infer_boost": ("on", "off")}


class JitConfig:
    """Options for the graph compiler, checked as MindSpore checks them (and kept: XLA takes none)."""

    def __init__(self, jit_level="", exc_mode="auto", jit_syntax_level="", debug_level="RELEASE",
                 infer_boost="off", **kwargs):
        given = {"jit_level": jit_level, "exc_mode": exc_mode, "jit_syntax_level": jit_syntax_level,
                 "debug_level": debug_level, "infer_boost": infer_boost}
        for key, value in given.items():
            if value not in _CHOICES[key]:
                shown = [c for c in _CHOICES[key] if c]
                raise ValueError(f"For '{key}' must be one of {shown}.")
        backend = kwargs.pop("backend", "ms_backend" if jit_level else None)
        self.jit_config_dict = {**given, **({"backend": backend} if backend else {}), **kwargs}

    def __repr__(self):
        return f"JitConfig({self.jit_config_dict})"


def _check(value, seen):
    if isinstance(value, (bool, numbers.Number, jax.Array, Parameter)) or hasattr(value, "__jax_array__"):
        return
    if isinstance(value, (tuple, list, dict)):
        if id(value) in seen:
            raise TypeError("For 'mutable', the 'input_data' must not refer to itself")
        seen = seen | {id(value)}
        for item in (value.values() if isinstance(value, dict) else value):
            _check(item, seen)
        return
    raise TypeError("For 'mutable', the 'input_data' should be one of (bool, int, float, Tensor, tuple, list, "
                    f"dict) or their nested structures with no self-reference, but got "
                    f"{type(value).__name__}: {value!r}.")


def mutable(input_data, dynamic_len=False):
    """Mark ``input_data`` as a variable input of a compiled function: checked and returned as it is."""
    if not isinstance(dynamic_len, bool):
        raise TypeError(f"For 'mutable', 'dynamic_len' must be a bool, got {type(dynamic_len).__name__}")
    _check(input_data, frozenset())
    return input_data
