"""``Vocab``: a table from words to ids, built from a list, a dict, a file or a dataset's columns.

>>> import cellkit.dataset.text as text
>>> vocab = text.Vocab.from_list(["hello", "world"], special_tokens=["<pad>", "<unk>"])
>>> vocab.vocab() == {"<pad>": 0, "<unk>": 1, "hello": 2, "world": 3}
True
>>> vocab.tokens_to_ids(["world", "nope"]), vocab.ids_to_tokens(2)
([3, -1], 'hello')
"""

from __future__ import annotations

import collections
import os

import numpy as np

from ._base import INT32_MAX, check_bool, check_int, str_array

__all__ = ["Vocab"]


def _check_words(words, name):
    if not isinstance(words, list):
        raise TypeError(f"Vocab: argument {name} with value {words!r} is not of type list, but got "
                        f"{type(words).__name__}")
    seen = set()
    for w in words:
        if not isinstance(w, str):
            raise TypeError(f"Vocab: {name} must hold strings, got {w!r}")
        if w in seen:
            raise ValueError(f"Vocab: {name} contains duplicate word: {w}.")
        seen.add(w)
    return words


def _special(special_tokens, special_first, words=()):
    special_tokens = _check_words([] if special_tokens is None else special_tokens, "special_tokens")
    check_bool(special_first, "special_first", "Vocab")
    dup = set(special_tokens) & set(words)
    if dup:
        raise ValueError(f"Vocab: special_tokens and word_list contain duplicate word :{dup}.")
    return special_tokens


class Vocab:
    """A word -> id table (``vocab()``), with ``tokens_to_ids`` and ``ids_to_tokens``; unknown words
    look up as -1 and unknown ids as ``''``, as in MindSpore."""

    def __init__(self):
        self._index = {}
        self._words = {}

    @classmethod
    def _of(cls, pairs):
        vocab = cls()
        vocab._index = dict(pairs)
        vocab._words = {i: w for w, i in vocab._index.items()}
        return vocab

    @classmethod
    def _ordered(cls, words, special_tokens, special_first):
        ordered = (special_tokens + words) if special_first else (words + special_tokens)
        return cls._of((w, i) for i, w in enumerate(ordered))

    @classmethod
    def from_list(cls, word_list, special_tokens=None, special_first=True):
        """Ids in list order, ``special_tokens`` before (``special_first``) or after the words."""
        words = _check_words(word_list, "word_list")
        return cls._ordered(list(words), _special(special_tokens, special_first, words), special_first)

    @classmethod
    def from_dict(cls, word_dict):
        """The table ``word_dict`` itself (ids are non-negative ints)."""
        if not isinstance(word_dict, dict):
            raise TypeError(f"Vocab.from_dict: word_dict must be a dict, got {type(word_dict).__name__}")
        for w, i in word_dict.items():
            if not isinstance(w, str):
                raise TypeError(f"Vocab.from_dict: the words must be strings, got {w!r}")
            check_int(i, "word_id", "Vocab.from_dict", 0, INT32_MAX)
        return cls._of(word_dict.items())

    @classmethod
    def from_file(cls, file_path, delimiter="", vocab_size=None, special_tokens=None, special_first=True):
        """One word a line (the part before ``delimiter`` when one is given), the first ``vocab_size``
        lines."""
        if not isinstance(file_path, str):
            raise TypeError(f"Vocab.from_file: file_path must be a str, got {type(file_path).__name__}")
        if not isinstance(delimiter, str):
            raise TypeError(f"Vocab.from_file: delimiter must be a str, got {type(delimiter).__name__}")
        if vocab_size is not None:
            check_int(vocab_size, "vocab_size", "Vocab.from_file", 1, INT32_MAX)
        special_tokens = _special(special_tokens, special_first)
        if not os.path.isfile(file_path):
            raise RuntimeError(f"Vocab.from_file: {file_path} does not exist or is not a file")
        with open(file_path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        words = []
        for line in lines[:vocab_size]:
            word = line.split(delimiter, 1)[0] if delimiter else line
            if word in words or word in special_tokens:
                raise RuntimeError(f"Vocab.from_file: duplicate word {word!r} in {file_path}")
            words.append(word)
        return cls._ordered(words, special_tokens, special_first)

    @classmethod
    def from_dataset(cls, dataset, columns=None, freq_range=None, top_k=None, special_tokens=None,
                     special_first=True):
        """The words of ``columns`` (all columns by default) of ``dataset``, most frequent first (ties
        in string order), those whose count is in ``freq_range`` (inclusive, ``None`` for no bound),
        the first ``top_k`` of them."""
        special_tokens = _special(special_tokens, special_first)
        names = dataset.get_col_names()
        columns = names if columns is None else [columns] if isinstance(columns, str) else list(columns)
        for c in columns:
            if c not in names:
                raise ValueError(f"Vocab.from_dataset: column {c!r} is not one of the dataset's columns {names}")
        low, high = (None, None) if freq_range is None else freq_range
        low, high = 0 if low is None else low, INT32_MAX if high is None else high
        if top_k is not None:
            check_int(top_k, "top_k", "Vocab.from_dataset", 1, INT32_MAX)
        counts = collections.Counter()
        for row in dataset.create_dict_iterator(num_epochs=1, output_numpy=True):
            for c in columns:
                counts.update(str(w) for w in str_array(row[c], "Vocab.from_dataset").reshape(-1))
        words = [w for w, n in sorted(counts.items(), key=lambda wn: (-wn[1], wn[0])) if low <= n <= high]
        words = [w for w in words if w not in special_tokens][:top_k]
        return cls._ordered(words, special_tokens, special_first)

    def vocab(self):
        """The table as a dict ``{word: id}``."""
        return dict(self._index)

    def tokens_to_ids(self, tokens):
        """The id of a word (-1 if absent), or the list of ids of a list or array of words."""
        if isinstance(tokens, np.ndarray):
            tokens = tokens.tolist()
        if isinstance(tokens, str):
            return self._index.get(tokens, -1)
        if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
            raise TypeError(f"Vocab.tokens_to_ids: tokens must be a str, a list of str or a NumPy array of "
                            f"str, got {tokens!r}")
        return [self._index.get(t, -1) for t in tokens]

    def ids_to_tokens(self, ids):
        """The word of an id (``''`` if absent), or the list of words of a list or array of ids."""
        if isinstance(ids, np.ndarray):
            ids = ids.tolist()
        one = not isinstance(ids, list)
        ids = [ids] if one else ids
        for i in ids:
            check_int(i, "ids", "Vocab.ids_to_tokens", 0, INT32_MAX)
        words = [self._words.get(int(i), "") for i in ids]
        return words[0] if one else words

    def __repr__(self):
        return f"Vocab({len(self._index)} words)"
