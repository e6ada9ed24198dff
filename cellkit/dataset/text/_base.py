"""What the text transforms share: the base class, reading string columns, byte offsets and the
argument checks, with MindSpore's exception types.

Strings travel as NumPy unicode arrays (``dtype('<U...')``), as MindSpore's pipelines hand them
out; bytes (``dtype('S...')``) are read as UTF-8. Offsets are byte offsets into the UTF-8 text,
as MindSpore gives them.
"""

from __future__ import annotations

import numbers
import re

import numpy as np

from ..transforms.transforms import TensorOperation

__all__ = ["TextTensorOperation"]


class TextTensorOperation(TensorOperation):
    """The base of the text transforms: ``op(column)`` or ``dataset.map(operations=op)``."""


def str_array(x, who: str) -> np.ndarray:
    """``x`` as a NumPy unicode array; anything else is MindSpore's RuntimeError."""
    if isinstance(x, (str, bytes)):
        x = np.array(x)
    x = np.asarray(x)
    if x.dtype.kind == "S":
        x = np.char.decode(x, "utf-8")
    elif x.dtype.kind == "O" and all(isinstance(v, str) for v in x.flat):
        x = x.astype(str)
    if x.dtype.kind != "U":
        raise RuntimeError(f"{who}: the input must be strings, got an array of dtype {x.dtype}")
    return x


def scalar_str(x, who: str) -> str:
    """One string: a Python str or a 0-d string array (MindSpore's tokenizers take one string)."""
    x = str_array(x, who)
    if x.ndim != 0:
        raise RuntimeError(f"{who}: the input must be one string (a scalar), got an array of shape {x.shape}")
    return str(x)


def strings(tokens) -> np.ndarray:
    """A list of str as a unicode array; no tokens is ``['']``, as MindSpore gives."""
    return np.array(list(tokens) if tokens else [""], dtype=str)


def byte_starts(s: str) -> list:
    """``b[i]`` = the number of UTF-8 bytes in ``s[:i]``."""
    b = [0] * (len(s) + 1)
    for i, c in enumerate(s):
        b[i + 1] = b[i] + len(c.encode("utf-8"))
    return b


def tokens_out(s: str, spans, with_offsets: bool):
    """Tokens ``s[a:b]`` for each span, and with offsets their UTF-8 byte offsets as uint32."""
    toks = [s[a:b] for a, b in spans]
    if not with_offsets:
        return strings(toks)
    if not toks:
        return strings(toks), np.zeros(1, np.uint32), np.zeros(1, np.uint32)
    b = byte_starts(s)
    return (strings(toks), np.array([b[a] for a, _ in spans], np.uint32), np.array([b[e] for _, e in spans], np.uint32))


def check_bool(value, name: str, who: str):
    if not isinstance(value, bool):
        raise TypeError(f"{who}: wrong input type for {name}, should be boolean, got {type(value).__name__}")
    return value


def check_str(value, name: str, who: str):
    if not isinstance(value, str):
        raise TypeError(f"{who}: argument {name} with value {value!r} is not of type str, but got "
                        f"{type(value).__name__}")
    return value


def check_int(value, name: str, who: str, low=None, high=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{who}: argument {name} with value {value!r} is not of type int, but got "
                        f"{type(value).__name__}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{who}: input {name} is not within the required interval of "
                         f"[{low if low is not None else '-inf'}, {high if high is not None else 'inf'}], got {value}")
    return int(value)


INT32_MAX = 2**31 - 1


def compile_pattern(pattern, who):
    """A Python ``re`` pattern, or a ValueError that says MindSpore's are ICU's."""
    try:
        return re.compile(pattern)
    except re.error as e:
        raise ValueError(f"{who}: {pattern!r} is not a pattern Python's re module accepts ({e}); MindSpore uses "
                         "ICU regular expressions, of which Python's re has the common syntax but not \\p{...}") from e
