"""``JiebaTokenizer``: Chinese word segmentation from a Jieba dictionary and HMM model, cppjieba's
algorithm (which MindSpore runs) in Python.

- ``mp_path``: the dictionary, one ``word freq tag`` a line; a word's weight is
  ``log(freq / sum of freqs)``. ``JiebaMode.MP`` picks the segmentation of highest total weight
  (a character not in the dictionary weighs as the lightest word).
- ``hmm_path``: the HMM (cppjieba's ``hmm_model.utf8``: start, transition and emission log
  probabilities of the Begin/End/Middle/Single states). ``JiebaMode.HMM`` cuts with the Viterbi
  path; runs of ASCII letters and digits stay whole.
- ``JiebaMode.MIX`` (the default) cuts with MP, then re-cuts each run of single characters (that are
  not single-character words added with ``add_word``) with the HMM.

Spaces, tabs, newlines, ``，`` and ``。`` separate the text first and are tokens of their own.

>>> import os, tempfile
>>> import cellkit.dataset.text as text
>>> folder = tempfile.mkdtemp()
>>> _ = open(os.path.join(folder, "dict.utf8"), "w").write("北京 50 ns\\n大学 30 n\\n北京大学 20 nt\\n")
>>> hmm = "0 -9 -9 -1\\n" + "-9 -1 -1 -9\\n" * 4 + "a:-1\\n" * 4
>>> _ = open(os.path.join(folder, "hmm.utf8"), "w").write(hmm)
>>> op = text.JiebaTokenizer(os.path.join(folder, "hmm.utf8"), os.path.join(folder, "dict.utf8"))
>>> op("我们去北京大学")
array(['我', '们', '去', '北京大学'], dtype='<U4')
"""

from __future__ import annotations

import math
import os
import re
from enum import IntEnum

import numpy as np

from ._base import TextTensorOperation, check_bool, scalar_str, tokens_out

__all__ = ["JiebaMode", "JiebaTokenizer"]


class JiebaMode(IntEnum):
    """Jieba's segmentation modes."""
    MIX = 0
    MP = 1
    HMM = 2

_MIN = -3.14e100
_SEPARATORS = set(" \t\n\uff0c\u3002")
_B, _E, _M, _S = range(4)


def _read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [ln.rstrip("\r\n") for ln in f]


class _Dictionary:
    def __init__(self, path):
        freqs = {}
        for n, line in enumerate(_read_lines(path)):
            if not line:
                continue
            cols = line.split(" ")
            if len(cols) != 3:
                raise RuntimeError(f"JiebaTokenizer: line {n + 1} of {path} is not 'word freq tag': {line!r}")
            freqs[cols[0]] = float(cols[1])
        self.total = sum(freqs.values())
        if self.total <= 0:
            raise RuntimeError(f"JiebaTokenizer: the dictionary {path} holds no word with a positive frequency")
        self.weights = {w: math.log(f / self.total) for w, f in freqs.items()}
        ordered = sorted(self.weights.values())
        self.min_weight, self.median_weight = ordered[0], ordered[len(ordered) // 2]
        self.max_len = max(len(w) for w in self.weights)
        self.user_single = set()

    def add(self, word, freq):
        self.weights[word] = math.log(freq / self.total) if freq else self.median_weight
        self.max_len = max(self.max_len, len(word))
        if len(word) == 1:
            self.user_single.add(word)

    def cut(self, s):
        """MP: the segmentation of greatest weight (dynamic programming from the right; among equal
        weights the shortest first word)."""
        n = len(s)
        best, choice = [0.0] * (n + 1), [1] * n
        for i in range(n - 1, -1, -1):
            best[i] = _MIN
            for j in range(i + 1, min(n, i + self.max_len) + 1):
                w = self.weights.get(s[i:j])
                if w is None and j > i + 1:
                    continue
                val = (self.min_weight if w is None else w) + best[j]
                if val > best[i]:
                    best[i], choice[i] = val, j - i
        out, i = [], 0
        while i < n:
            out.append(s[i:i + choice[i]])
            i += choice[i]
        return out


class _HMM:
    def __init__(self, path):
        lines = [ln for ln in _read_lines(path) if ln and not ln.startswith("#")]
        try:
            self.start = [float(v) for v in lines[0].split(" ")]
            self.trans = [[float(v) for v in lines[1 + i].split(" ")] for i in range(4)]
            self.emit = [dict((kv.split(":")[0], float(kv.split(":")[1])) for kv in lines[5 + i].split(","))
                         for i in range(4)]
        except (IndexError, ValueError) as e:
            raise RuntimeError(f"JiebaTokenizer: {path} is not a Jieba HMM model file") from e
        if len(self.start) != 4 or any(len(t) != 4 for t in self.trans):
            raise RuntimeError(f"JiebaTokenizer: {path} is not a Jieba HMM model file")

    def _viterbi_cut(self, s):
        weight = [[self.start[y] + self.emit[y].get(s[0], _MIN) for y in range(4)]]
        path = [[-1] * 4]
        for c in s[1:]:
            prev, row, back = weight[-1], [], []
            for y in range(4):
                emit = self.emit[y].get(c, _MIN)
                w, p = _MIN, _E
                for py in range(4):
                    val = prev[py] + self.trans[py][y] + emit
                    if val > w:
                        w, p = val, py
                row.append(w)
                back.append(p)
            weight.append(row)
            path.append(back)
        state = _E if weight[-1][_E] >= weight[-1][_S] else _S
        states = [0] * len(s)
        for x in range(len(s) - 1, -1, -1):
            states[x] = state
            state = path[x][state]
        out, left = [], 0
        for i, st in enumerate(states):
            if st in (_E, _S):
                out.append(s[left:i + 1])
                left = i + 1
        return out

    def cut(self, s):
        out, left, i = [], 0, 0
        while i < len(s):
            if ord(s[i]) < 0x80:
                if left != i:
                    out += self._viterbi_cut(s[left:i])
                m = re.match(r"[A-Za-z][A-Za-z0-9]*|[0-9][0-9.]*", s[i:])
                j = i + (m.end() if m else 1)
                out.append(s[i:j])
                left = i = j
            else:
                i += 1
        if left != i:
            out += self._viterbi_cut(s[left:i])
        return out


class JiebaTokenizer(TextTensorOperation):
    """Segment Chinese text with a Jieba dictionary (``mp_path``) and HMM model (``hmm_path``) in
    ``mode`` (``JiebaMode.MIX``, ``MP`` or ``HMM``); ``add_word``/``add_dict`` add words."""

    def __init__(self, hmm_path, mp_path, mode=JiebaMode.MIX, with_offsets=False):
        for name, path in (("hmm_path", hmm_path), ("mp_path", mp_path)):
            if path is None:
                raise ValueError(f"JiebaTokenizer: {name} is not provided")
            if not isinstance(path, str):
                raise TypeError(f"JiebaTokenizer: wrong input type for {name}, should be string")
        self.with_offsets = check_bool(with_offsets, "with_offsets", "JiebaTokenizer")
        if not isinstance(mode, JiebaMode):
            raise TypeError(f"JiebaTokenizer: wrong input type for mode, should be JiebaMode, got {mode!r}")
        for path in (hmm_path, mp_path):
            if not os.path.exists(path):
                raise ValueError(f"JiebaTokenizer: jieba mode file {path} is not exist.")
        self.mode, self.hmm_path, self.mp_path = mode, hmm_path, mp_path
        self._dict, self._hmm = _Dictionary(mp_path), _HMM(hmm_path)

    def add_word(self, word, freq=None):
        """Add ``word`` with frequency ``freq`` (by default it weighs as the dictionary's median word)."""
        if word is None:
            raise ValueError("JiebaTokenizer.add_word: word is not provided")
        if not isinstance(word, str):
            raise TypeError(f"JiebaTokenizer.add_word: word must be a str, got {type(word).__name__}")
        if freq is not None and (isinstance(freq, bool) or not isinstance(freq, int) or not 0 <= freq < 2**32):
            raise ValueError(f"JiebaTokenizer.add_word: freq must be an int in [0, 2**32), got {freq!r}")
        self._dict.add(word, freq or 0)

    def add_dict(self, user_dict):
        """Add the words of a dict ``{word: freq}`` or of a file of ``word [freq]`` lines."""
        if isinstance(user_dict, dict):
            for word, freq in user_dict.items():
                self.add_word(word, freq)
        elif isinstance(user_dict, str):
            if not os.path.exists(user_dict):
                raise ValueError(f"JiebaTokenizer.add_dict: user dict file {user_dict} is not exist.")
            for line in _read_lines(user_dict):
                m = re.match(r"^\s*([^\s*]+?)\s*([0-9]+)?\s*$", line.strip().lstrip("\ufeff"))
                if m:
                    self.add_word(m.group(1), int(m.group(2)) if m.group(2) else 0)
        else:
            raise TypeError(f"JiebaTokenizer.add_dict: user_dict must be a str (a file) or a dict, got "
                            f"{type(user_dict).__name__}")

    def _cut_piece(self, s):
        if self.mode == JiebaMode.HMM:
            return self._hmm.cut(s)
        words = self._dict.cut(s)
        if self.mode == JiebaMode.MP:
            return words
        out, i = [], 0
        while i < len(words):
            if len(words[i]) > 1 or words[i] in self._dict.user_single:
                out.append(words[i])
                i += 1
                continue
            j = i
            while j < len(words) and len(words[j]) == 1 and words[j] not in self._dict.user_single:
                j += 1
            out += self._hmm.cut("".join(words[i:j]))
            i = j
        return out

    def apply(self, rng, x):
        s = scalar_str(x, "JiebaTokenizer")
        words, start = [], 0
        for i, c in enumerate(s):
            if c in _SEPARATORS:
                if start < i:
                    words += self._cut_piece(s[start:i])
                words.append(c)
                start = i + 1
        if start < len(s):
            words += self._cut_piece(s[start:])
        spans, pos = [], 0
        for w in words:
            spans.append((pos, pos + len(w)))
            pos += len(w)
        if not s and self.with_offsets:  # MindSpore: one empty token, no offsets
            return np.array([""]), np.zeros(0, np.uint32), np.zeros(0, np.uint32)
        return tokens_out(s, spans, self.with_offsets)
