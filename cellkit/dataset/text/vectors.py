"""Pretrained word vectors read from local text files (``Vectors``, ``FastText``, ``GloVe``,
``CharNGram``) and ``ToVectors``, which looks tokens up in them.

A file holds one ``word v1 v2 ...`` a line, optionally after a ``count dim`` header line. Nothing
is downloaded: the file must be on disk.

>>> import os, tempfile
>>> import cellkit.dataset.text as text
>>> path = os.path.join(tempfile.mkdtemp(), "vectors.txt")
>>> _ = open(path, "w").write("the 0.5 1\\ncat 2 -1\\n")
>>> text.ToVectors(text.Vectors.from_file(path))(["cat", "dog"])
array([[ 2., -1.],
       [ 0.,  0.]], dtype=float32)
"""

from __future__ import annotations

import fnmatch
import os

import numpy as np

from ._base import INT32_MAX, TextTensorOperation, check_bool, check_int, str_array

__all__ = ["Vectors", "FastText", "GloVe", "CharNGram", "ToVectors"]


class Vectors:
    """Word vectors: ``from_file(file_path, max_vectors=None)`` reads the first ``max_vectors``."""
    _pattern = None  # the file names a subclass accepts
    _kind = "Vectors"

    def __init__(self, table=None, dim=0):
        self._table = {} if table is None else table
        self.dim = dim

    @classmethod
    def from_file(cls, file_path, max_vectors=None):
        if not isinstance(file_path, str):
            raise TypeError(f"{cls._kind}.from_file: file_path must be a str, got {type(file_path).__name__}")
        if max_vectors is not None:
            check_int(max_vectors, "max_vectors", f"{cls._kind}.from_file", 0, INT32_MAX)
        if not os.path.isfile(file_path):
            raise RuntimeError(f"{cls._kind}.from_file: {file_path} does not exist or is not a file")
        if cls._pattern and not fnmatch.fnmatch(os.path.basename(file_path), cls._pattern):
            raise RuntimeError(f"{cls._kind}.from_file: the file name must match {cls._pattern!r}, got "
                               f"{os.path.basename(file_path)!r}")
        table, dim = {}, 0
        with open(file_path, encoding="utf-8") as f:
            lines = [ln.rstrip("\n").rstrip("\r") for ln in f]
        fields0 = lines[0].split() if lines else []
        if len(fields0) == 2 and all(v.isdigit() for v in fields0):
            lines = lines[1:]  # a "count dim" header
        for n, line in enumerate(lines):
            if not line.strip():
                continue
            if max_vectors and len(table) >= max_vectors:
                break
            word, *values = line.rstrip(" ").split(" ")
            try:
                vec = np.array([float(v) for v in values], np.float32)
            except ValueError as e:
                raise RuntimeError(f"{cls._kind}.from_file: line {n + 1} of {file_path} is not a word followed "
                                   "by numbers") from e
            if dim and vec.size != dim:
                raise RuntimeError(f"{cls._kind}.from_file: line {n + 1} of {file_path} has {vec.size} values, the "
                                   f"lines before have {dim}")
            dim = vec.size
            table.setdefault(word, vec)
        return cls(table, dim)

    def lookup(self, token: str):
        return self._table.get(token)


class FastText(Vectors):
    """FastText vectors from a ``*.vec`` file."""
    _pattern, _kind = "*.vec", "FastText"


class GloVe(Vectors):
    """GloVe vectors from a ``glove.*.txt`` file."""
    _pattern, _kind = "glove.*.txt", "GloVe"


class CharNGram(Vectors):
    """Character n-gram vectors (``2gram-ab`` ... ``4gram-abcd`` entries); a word's vector is the mean
    of those of its 2-, 3- and 4-grams, the word framed by ``#BEGIN#`` and ``#END#``."""
    _kind = "CharNGram"

    def lookup(self, token: str):
        chars = ["#BEGIN#", *token, "#END#"]
        found = [self._table[key] for n in (2, 3, 4) for i in range(len(chars) - n + 1)
                 if (key := f"{n}gram-{''.join(chars[i:i + n])}") in self._table]
        return np.mean(found, axis=0, dtype=np.float32) if found else None


class ToVectors(TextTensorOperation):
    """Each token's vector (``float32``, one more axis); a token not in ``vectors`` gets ``unk_init``
    (zeros by default). With ``lower_case_backup`` tokens are looked up lower-cased, as MindSpore
    2.10 does."""

    def __init__(self, vectors, unk_init=None, lower_case_backup=False):
        if not isinstance(vectors, Vectors):
            raise TypeError(f"ToVectors: vectors must be Vectors, FastText, GloVe or CharNGram, got "
                            f"{type(vectors).__name__}")
        if unk_init is not None and (not isinstance(unk_init, (list, tuple)) or
                                     not all(isinstance(v, (int, float)) for v in unk_init)):
            raise TypeError(f"ToVectors: unk_init must be a list of numbers, got {unk_init!r}")
        self.vectors, self.unk_init = vectors, unk_init
        self.lower_case_backup = check_bool(lower_case_backup, "lower_case_backup", "ToVectors")

    def apply(self, rng, x):
        x = str_array(x, "ToVectors")
        dim = self.vectors.dim
        if self.unk_init:
            if len(self.unk_init) != dim:
                raise RuntimeError(f"ToVectors: unk_init has {len(self.unk_init)} values, the vectors have {dim}")
            unk = np.array(self.unk_init, np.float32)
        else:
            unk = np.zeros(dim, np.float32)
        out = []
        for t in x.reshape(-1):
            t = str(t).lower() if self.lower_case_backup else str(t)
            v = self.vectors.lookup(t)
            out.append(unk if v is None else v)
        return np.array(out, np.float32).reshape(*x.shape, dim)
