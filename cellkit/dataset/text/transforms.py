"""MindSpore's text transforms (``mindspore.dataset.text.transforms``): the vocabulary and sequence
ops here, the tokenizers (``tokenizers.py``), the normalizers (``normalize.py``), ``ToVectors``
(``vectors.py``) and ``SentencePieceTokenizer`` (``sentencepiece.py``).

Each is a callable on NumPy arrays (strings as unicode arrays) and an operation of
``dataset.map(operations=..., input_columns=...)``.

>>> import numpy as np
>>> import cellkit as ms
>>> import cellkit.dataset.text as text
>>> vocab = text.Vocab.from_list(["<unk>", "a", "b"])
>>> text.Lookup(vocab, "<unk>")(np.array(["b", "zz"]))
array([2, 0], dtype=int32)
>>> text.Ngram(2)(["x", "y", "z"])
array(['x y', 'y z'], dtype='<U3')
>>> text.SlidingWindow(2)(np.array([1, 2, 3], np.int32))
array([[1, 2],
       [2, 3]], dtype=int32)
>>> text.ToNumber(ms.float32)(["1.5", "-2"])
array([ 1.5, -2. ], dtype=float32)
"""

from __future__ import annotations

import numbers
import re

import numpy as np

from ... import dtype as mstype
from ._base import INT32_MAX, TextTensorOperation, check_bool, check_int, check_str, str_array, strings
from .jieba import JiebaMode, JiebaTokenizer
from .normalize import CaseFold, FilterWikipediaXML, NormalizeUTF8, RegexReplace
from .sentencepiece import SentencePieceTokenizer
from .tokenizers import (BasicTokenizer, BertTokenizer, RegexTokenizer, UnicodeCharTokenizer, UnicodeScriptTokenizer,
                         WhitespaceTokenizer, WordpieceTokenizer)
from .vectors import ToVectors
from .vocab import Vocab

__all__ = ["TextTensorOperation", "Lookup", "Ngram", "SlidingWindow", "ToNumber", "Truncate", "TruncateSequencePair",
           "AddToken", "PythonTokenizer", "JiebaMode", "JiebaTokenizer", "ToVectors", "SentencePieceTokenizer",
           "WhitespaceTokenizer", "UnicodeCharTokenizer", "RegexTokenizer", "UnicodeScriptTokenizer",
           "BasicTokenizer", "BertTokenizer", "WordpieceTokenizer", "CaseFold", "NormalizeUTF8", "RegexReplace",
           "FilterWikipediaXML"]


def _np_type(data_type, who, numeric=True):
    if not isinstance(data_type, mstype.Type):
        raise TypeError(f"{who}: argument data_type with value {data_type!r} is not a cellkit dtype "
                        f"(e.g. ms.int32), but got {type(data_type).__name__}")
    dt = np.dtype(mstype.dtype_to_nptype(data_type))
    if numeric and dt.kind not in "iufb":
        raise TypeError(f"{who}: data_type {data_type} is not a numeric data type")
    return dt


class Lookup(TextTensorOperation):
    """Each word's id in ``vocab``; a word not in it gets ``unknown_token``'s id (without one, it is
    a RuntimeError). Ids come out as ``data_type`` (int32 by default)."""

    def __init__(self, vocab, unknown_token=None, data_type=mstype.int32):
        if not isinstance(vocab, Vocab):
            raise TypeError(f"Lookup: argument vocab is not an instance of text.Vocab, got {type(vocab).__name__}")
        if unknown_token is not None:
            check_str(unknown_token, "unknown_token", "Lookup")
        self.vocab, self.unknown_token, self.data_type = vocab, unknown_token, data_type
        self._dtype = _np_type(data_type, "Lookup")

    def apply(self, rng, x):
        x = str_array(x, "Lookup")
        table = self.vocab._index
        unk = None
        if self.unknown_token is not None:
            if self.unknown_token not in table:
                raise RuntimeError(f"Lookup: unknown_token {self.unknown_token!r} is not in the vocab")
            unk = table[self.unknown_token]
        ids = []
        for w in x.reshape(-1).tolist():
            i = table.get(w, unk)
            if i is None:
                raise RuntimeError(f"Lookup: {w!r} is not in the vocab and no unknown_token is given")
            ids.append(i)
        return np.array(ids, np.int64).reshape(x.shape).astype(self._dtype)


def _check_pad(pad, name):
    if not (isinstance(pad, tuple) and len(pad) == 2 and isinstance(pad[0], str) and isinstance(pad[1], int)):
        raise ValueError(f"Ngram: {name} needs to be a tuple of (str, int): the pad token and the pad width, "
                         f"got {pad!r}")
    if pad[1] < 0:
        raise ValueError(f"Ngram: the padding width in {name} must be non-negative, got {pad[1]}")
    return pad


class Ngram(TextTensorOperation):
    """The n-grams of a 1-D string array for each ``n``, joined by ``separator``; up to ``n - 1`` of
    the ``left_pad``/``right_pad`` tokens frame the sequence. A sequence (with its padding) shorter
    than ``n`` gives one empty string."""

    def __init__(self, n, left_pad=("", 0), right_pad=("", 0), separator=" "):
        ns = [n] if isinstance(n, numbers.Integral) and not isinstance(n, bool) else n
        if not isinstance(ns, list) or not ns:
            raise TypeError(f"Ngram: n must be an int or a non-empty list of ints, got {n!r}")
        for i, k in enumerate(ns):
            check_int(k, f"gram_{i}", "Ngram")
            if k <= 0:
                raise ValueError(f"Ngram: input gram_{i} must be greater than 0, got {k}")
        self.ngrams = [int(k) for k in ns]
        self.left_pad, self.right_pad = _check_pad(left_pad, "left_pad"), _check_pad(right_pad, "right_pad")
        self.separator = check_str(separator, "separator", "Ngram")

    def apply(self, rng, x):
        x = str_array(x, "Ngram")
        if x.ndim != 1:
            raise RuntimeError(f"Ngram: the input must be a 1-D string array, got shape {x.shape}")
        words, out = x.tolist(), []
        for n in self.ngrams:
            seq = ([self.left_pad[0]] * min(self.left_pad[1], n - 1) + words
                   + [self.right_pad[0]] * min(self.right_pad[1], n - 1))
            if len(seq) < n:
                out.append("")
            else:
                out += [self.separator.join(seq[i:i + n]) for i in range(len(seq) - n + 1)]
        return strings(out)


class SlidingWindow(TextTensorOperation):
    """The windows of ``width`` consecutive elements of a 1-D array, one a row (none when it is
    shorter than ``width``)."""

    def __init__(self, width, axis=0):
        self.width = check_int(width, "width", "SlidingWindow", 1, INT32_MAX)
        self.axis = check_int(axis, "axis", "SlidingWindow")

    def apply(self, rng, x):
        x = np.asarray(x)
        if x.ndim != 1 or self.axis not in (0, -1):
            raise RuntimeError(f"SlidingWindow: the input must be 1-D (axis 0 or -1), got shape {x.shape} and "
                               f"axis {self.axis}")
        n = x.shape[0] - self.width + 1
        if n <= 0:
            return x[:0]
        return np.stack([x[i:i + self.width] for i in range(n)])


_INT = re.compile(r"\s*[+-]?\d+")
_FLOAT = re.compile(r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)", re.IGNORECASE)


class ToNumber(TextTensorOperation):
    """Parse strings as numbers of ``data_type`` (C's ``strtol``/``strtod``: leading blanks, the longest
    numeric prefix); no number or one out of the type's range is a RuntimeError."""

    def __init__(self, data_type):
        self.data_type = data_type
        self._dtype = _np_type(data_type, "ToNumber")

    def _parse(self, s):
        dt = self._dtype
        m = (_FLOAT if dt.kind == "f" else _INT).match(s)
        if not m:
            raise RuntimeError(f"ToNumber: {s!r} is not a number")
        if dt.kind == "f":
            v = float(m.group())
            if np.isinf(v) or (np.isfinite(v) and abs(v) > float(np.finfo(dt).max)):
                raise RuntimeError(f"ToNumber: {s!r} is out of the range of {dt}")
            return v
        v = int(m.group())
        if dt.kind == "b" or not np.iinfo(dt).min <= v <= np.iinfo(dt).max:
            raise RuntimeError(f"ToNumber: {s!r} is out of the range of {dt}")
        return v

    def apply(self, rng, x):
        x = str_array(x, "ToNumber")
        return np.array([self._parse(s) for s in x.reshape(-1).tolist()], self._dtype).reshape(x.shape)


def _check_rank(x, who, ranks=(1, 2)):
    x = np.asarray(x)
    if x.ndim not in ranks:
        raise RuntimeError(f"{who}: the input must have rank {' or '.join(map(str, ranks))}, got shape {x.shape}")
    return x


class Truncate(TextTensorOperation):
    """Keep the first ``max_seq_len`` elements along the last axis of a 1-D or 2-D array."""

    def __init__(self, max_seq_len):
        self.max_seq_len = check_int(max_seq_len, "max_seq_len", "Truncate", 1, INT32_MAX)

    def apply(self, rng, x):
        return _check_rank(x, "Truncate")[..., :self.max_seq_len]


class TruncateSequencePair(TextTensorOperation):
    """Shorten two 1-D arrays, the longer one first (the second on a tie), until together they hold at
    most ``max_length`` elements."""

    def __init__(self, max_length):
        self.max_length = check_int(max_length, "max_length", "TruncateSequencePair")

    def apply(self, rng, a, b):
        a, b = _check_rank(a, "TruncateSequencePair", (1,)), _check_rank(b, "TruncateSequencePair", (1,))
        la, lb = len(a), len(b)
        while la + lb > max(self.max_length, 0):
            if la > lb:
                la -= 1
            else:
                lb -= 1
        return a[:la], b[:lb]


class AddToken(TextTensorOperation):
    """Add ``token`` at the start (``begin=True``) or the end of each row of a 1-D or 2-D string array."""

    def __init__(self, token, begin=True):
        self.token = check_str(token, "token", "AddToken")
        self.begin = check_bool(begin, "begin", "AddToken")

    def apply(self, rng, x):
        x = _check_rank(str_array(x, "AddToken"), "AddToken")
        tok = np.full(x.shape[:-1] + (1,), self.token)
        return np.concatenate([tok, x] if self.begin else [x, tok], axis=-1)


class PythonTokenizer:
    """Tokenize with a Python function from a string to a list of strings."""

    def __init__(self, tokenizer):
        if not callable(tokenizer):
            raise TypeError(f"PythonTokenizer: tokenizer is not a callable Python function, got {tokenizer!r}")
        self.pyfunc = tokenizer
        self.random = False

    def __call__(self, in_array):
        if not isinstance(in_array, np.ndarray):
            raise TypeError(f"PythonTokenizer: the input should be a NumPy array, got {type(in_array).__name__}")
        x = str_array(in_array, "PythonTokenizer")
        try:
            if x.ndim == 0:
                return np.array(self.pyfunc(str(x)), dtype=str)
            return np.array([np.array(self.pyfunc(str(s)), dtype=str) for s in x.reshape(-1)]).reshape(
                *x.shape, -1)
        except Exception as e:  # noqa: BLE001 - MindSpore wraps the function's error
            raise RuntimeError(f"Error occurred in Pyfunc [{getattr(self.pyfunc, '__name__', self.pyfunc)}], "
                               f"error message: {e}") from e
