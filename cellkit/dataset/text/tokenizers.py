"""MindSpore's tokenizers (``mindspore.dataset.text``): a string in, its tokens out (a unicode
array), and with ``with_offsets=True`` also each token's start and end as UTF-8 byte offsets
(``uint32``), as three output columns.

MindSpore runs them on ICU; here they are Python's ``str``, ``re`` and ``unicodedata``. The
results agree with MindSpore 2.10 on the recorded cases (``tests/test_dataset_text.py``);
``docs/differences.md`` lists what differs.

>>> import cellkit.dataset.text as text
>>> text.WhitespaceTokenizer(with_offsets=True)("Welcome to  Beijing!")
(array(['Welcome', 'to', 'Beijing!'], dtype='<U8'), array([ 0,  8, 12], dtype=uint32), array([ 7, 10, 20], dtype=uint32))
>>> text.BasicTokenizer(lower_case=True)("Héllo, WORLD! 北京")
array(['hello', ',', 'world', '!', '北', '京'], dtype='<U5')
>>> vocab = text.Vocab.from_list(["my", "favor", "##ite", "[UNK]"])
>>> text.WordpieceTokenizer(vocab)(["my", "favorite", "cat"])
array(['my', 'favor', '##ite', '[UNK]'], dtype='<U5')
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np

from ._base import (TextTensorOperation, check_bool, check_int, check_str, compile_pattern, scalar_str,
                    str_array, strings, tokens_out)
from .normalize import NormalizeForm, nfkc_casefold, normalize
from .vocab import Vocab

__all__ = ["WhitespaceTokenizer", "UnicodeCharTokenizer", "RegexTokenizer", "UnicodeScriptTokenizer",
           "BasicTokenizer", "WordpieceTokenizer", "BertTokenizer"]


def is_space(c: str) -> bool:
    """Unicode White_Space (Python's ``isspace`` less the ASCII separators 0x1C-0x1F)."""
    return c.isspace() and not "\x1c" <= c <= "\x1f"


class _Tokenizer(TextTensorOperation):
    name = "Tokenizer"

    def __init__(self, with_offsets=False):
        self.with_offsets = check_bool(with_offsets, "with_offsets", self.name)

    def spans(self, s: str) -> list:
        raise NotImplementedError

    def prepare(self, s: str) -> str:
        return s

    def apply(self, rng, x):
        s = self.prepare(scalar_str(x, self.name))
        return tokens_out(s, self.spans(s), self.with_offsets)


def _runs(s: str, key) -> list:
    """Spans of maximal runs of equal ``key(char)``, as ``(start, end, key)``."""
    out, start = [], 0
    for i in range(1, len(s) + 1):
        if i == len(s) or key(s[i]) != key(s[start]):
            out.append((start, i, key(s[start])))
            start = i
    return out


class WhitespaceTokenizer(_Tokenizer):
    """Split on Unicode white space (ICU's ``\\s``), dropping it."""
    name = "WhitespaceTokenizer"

    def spans(self, s):
        return [(a, b) for a, b, space in _runs(s, is_space) if not space]


class UnicodeCharTokenizer(_Tokenizer):
    """One token per Unicode character."""
    name = "UnicodeCharTokenizer"

    def spans(self, s):
        return [(i, i + 1) for i in range(len(s))]


class RegexTokenizer(_Tokenizer):
    """Split at the matches of ``delim_pattern``; a match that ``keep_delim_pattern`` matches whole is
    kept as a token. The patterns are Python ``re`` patterns (MindSpore's are ICU's; the common
    syntax is the same)."""
    name = "RegexTokenizer"

    def __init__(self, delim_pattern, keep_delim_pattern="", with_offsets=False):
        super().__init__(with_offsets)
        self.delim_pattern = check_str(delim_pattern, "delim_pattern", self.name)
        self.keep_delim_pattern = check_str(keep_delim_pattern, "keep_delim_pattern", self.name)
        self._delim = compile_pattern(delim_pattern, self.name)
        self._keep = compile_pattern(keep_delim_pattern, self.name)

    def spans(self, s):
        out, pos = [], 0
        for m in self._delim.finditer(s):
            if m.end() == m.start():
                continue
            if m.start() > pos:
                out.append((pos, m.start()))
            if self.keep_delim_pattern and self._keep.fullmatch(m.group()):
                out.append(m.span())
            pos = m.end()
        if pos < len(s):
            out.append((pos, len(s)))
        return out


_SCRIPT_ALIASES = {"CJK": "HAN", "IDEOGRAPHIC": "HAN", "FULLWIDTH": None, "HALFWIDTH": None}


def script(c: str) -> str:
    """The Unicode script of a letter from its name (``LATIN``, ``HAN``, ``CYRILLIC``, ...), ``COMMON``
    for digits, punctuation, symbols and spaces, ``INHERITED`` for combining marks (a token of their
    own, as in MindSpore)."""
    cat = unicodedata.category(c)
    if cat[0] == "M":
        return "INHERITED"
    if c == "\u1680":  # the one space with a script of its own
        return "OGHAM"
    if cat[0] != "L" or cat == "Lm":
        return "COMMON"
    words = unicodedata.name(c, "COMMON").split()
    while words and words[0] in _SCRIPT_ALIASES and _SCRIPT_ALIASES[words[0]] is None:
        words = words[1:]
    first = words[0] if words else "COMMON"
    return _SCRIPT_ALIASES.get(first, first) if first not in ("FEMININE", "MASCULINE") else "LATIN"


class UnicodeScriptTokenizer(_Tokenizer):
    """Split where the Unicode script changes (Latin, Han, Cyrillic, ...; digits and punctuation are
    the Common script) and around white space, which is dropped unless ``keep_whitespace``."""
    name = "UnicodeScriptTokenizer"

    def __init__(self, keep_whitespace=False, with_offsets=False):
        self.keep_whitespace = check_bool(False if keep_whitespace is None else keep_whitespace,
                                          "keep_whitespace", self.name)
        super().__init__(False if with_offsets is None else with_offsets)

    def spans(self, s):
        keys = [(is_space(c), script(c)) for c in s]
        out, start = [], 0
        for i in range(1, len(s) + 1):
            if i == len(s) or keys[i] != keys[start]:
                if self.keep_whitespace or not keys[start][0]:
                    out.append((start, i))
                start = i
        return out


_PRESERVED = re.compile(r"\[CLS\]|\[SEP\]|\[UNK\]|\[PAD\]|\[MASK\]|\[unused\d+\]")
_FOLD_KEPT = {"[CLS]", "[SEP]", "[UNK]", "[PAD]", "[MASK]"}
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
        (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def _is_split_char(c: str) -> bool:
    """A character BERT makes a token of its own: ASCII punctuation and symbols, Unicode punctuation,
    CJK ideographs."""
    o = ord(c)
    if 33 <= o <= 47 or 58 <= o <= 64 or 91 <= o <= 96 or 123 <= o <= 126:
        return True
    return unicodedata.category(c)[0] == "P" or any(a <= o <= b for a, b in _CJK)


def _is_regex_space(c: str) -> bool:  # ICU's \s: [\t\n\f\r\p{Z}]
    return c in "\t\n\f\r" or unicodedata.category(c)[0] == "Z"


def _fold_keeping_specials(s: str) -> str:
    """NFKC case folding of ``s`` that leaves ``[CLS]``, ``[SEP]``, ``[UNK]``, ``[PAD]``, ``[MASK]`` as
    they are."""
    out, pos = [], 0
    for m in re.finditer(r"\[[^\[\]]*\]", s):
        if m.group() in _FOLD_KEPT:
            out += [nfkc_casefold(s[pos:m.start()]), m.group()]
            pos = m.end()
    out.append(nfkc_casefold(s[pos:]))
    return "".join(out)


class BasicTokenizer(_Tokenizer):
    """BERT's basic tokenization: optional lower-casing (NFKC case folding, then accents removed) or
    ``normalization_form``; control characters become spaces; split on white space (kept as tokens
    with ``keep_whitespace``), punctuation and CJK characters; with ``preserve_unused_token``,
    ``[CLS]``, ``[SEP]``, ``[UNK]``, ``[PAD]``, ``[MASK]`` and ``[unusedN]`` stay whole. Offsets are
    into the normalized text, as MindSpore's are."""
    name = "BasicTokenizer"

    def __init__(self, lower_case=False, keep_whitespace=False, normalization_form=NormalizeForm.NONE,
                 preserve_unused_token=True, with_offsets=False):
        self.lower_case = check_bool(lower_case, "lower_case", self.name)
        self.keep_whitespace = check_bool(keep_whitespace, "keep_whitespace", self.name)
        if not isinstance(normalization_form, NormalizeForm):
            raise TypeError(f"{self.name}: wrong input type for normalization_form, should be enum of "
                            f"'NormalizeForm', got {normalization_form!r}")
        self.normalization_form = normalization_form
        self.preserve_unused_token = check_bool(preserve_unused_token, "preserve_unused_token", self.name)
        super().__init__(with_offsets)

    def prepare(self, s):
        if self.lower_case:
            s = _fold_keeping_specials(s) if self.preserve_unused_token else nfkc_casefold(s)
            s = "".join(c for c in unicodedata.normalize("NFD", s) if unicodedata.category(c) != "Mn")
        else:
            s = normalize(s, self.normalization_form)
        return "".join(" " if unicodedata.category(c) in ("Cc", "Cf") else c for c in s)

    def spans(self, s):
        out, i, word = [], 0, None
        while i < len(s):
            m = _PRESERVED.match(s, i) if self.preserve_unused_token else None
            if m or _is_regex_space(s[i]) or _is_split_char(s[i]):
                if word is not None:
                    out.append((word, i))
                    word = None
                if m:
                    out.append(m.span())
                    i = m.end()
                elif _is_regex_space(s[i]):
                    j = i
                    while j < len(s) and _is_regex_space(s[j]):
                        j += 1
                    if self.keep_whitespace:
                        out.append((i, j))
                    i = j
                else:
                    out.append((i, i + 1))
                    i += 1
            else:
                word = i if word is None else word
                i += 1
        if word is not None:
            out.append((word, len(s)))
        return out


def _check_vocab(vocab, who):
    if not isinstance(vocab, Vocab):
        raise TypeError(f"{who}: wrong input type for vocab, should be text.Vocab object, got {type(vocab).__name__}")
    return vocab


class _Wordpiece:
    """Greedy longest-match-first splitting of words into vocabulary pieces."""

    def __init__(self, vocab, suffix_indicator, max_bytes_per_token, unknown_token, who):
        self.vocab = _check_vocab(vocab, who)
        self.suffix_indicator = check_str(suffix_indicator, "suffix_indicator", who)
        self.max_bytes_per_token = check_int(max_bytes_per_token, "max_bytes_per_token", who, 0, 2**32 - 1)
        self.unknown_token = check_str(unknown_token, "unknown_token", who)

    def split(self, word: str) -> list:
        """``[(piece, start byte, end byte)]`` of one word."""
        table = self.vocab._index
        nbytes = len(word.encode("utf-8"))
        unknown = [(self.unknown_token or word, 0, nbytes)]
        if nbytes > self.max_bytes_per_token:  # MindSpore ends this one's offsets at the unknown token's length
            return [(self.unknown_token or word, 0, len((self.unknown_token or word).encode("utf-8")))]
        out, start, pos = [], 0, 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else self.suffix_indicator + word[start:end]
                if piece in table:
                    break
                end -= 1
            if end == start:
                return unknown
            size = len(word[start:end].encode("utf-8"))
            out.append((piece, pos, pos + size))
            start, pos = end, pos + size
        return out


class WordpieceTokenizer(TextTensorOperation):
    """Split each word of a string array into the longest pieces of ``vocab`` (later pieces carry
    ``suffix_indicator``); a word that does not split, or is longer than ``max_bytes_per_token``
    bytes, becomes ``unknown_token`` (itself when ``unknown_token`` is empty). Offsets are byte
    offsets within each word."""
    name = "WordpieceTokenizer"

    def __init__(self, vocab, suffix_indicator="##", max_bytes_per_token=100, unknown_token="[UNK]",
                 with_offsets=False):
        self._wp = _Wordpiece(vocab, suffix_indicator, max_bytes_per_token, unknown_token, self.name)
        self.vocab, self.suffix_indicator = vocab, suffix_indicator
        self.max_bytes_per_token, self.unknown_token = max_bytes_per_token, unknown_token
        self.with_offsets = check_bool(with_offsets, "with_offsets", self.name)

    def apply(self, rng, x):
        words = str_array(x, self.name).reshape(-1)
        pieces = [p for w in words for p in self._wp.split(str(w))]
        toks = strings([p for p, _, _ in pieces])
        if not self.with_offsets:
            return toks
        return (toks, np.array([a for _, a, _ in pieces] or [0], np.uint32),
                np.array([b for _, _, b in pieces] or [0], np.uint32))


class BertTokenizer(TextTensorOperation):
    """``BasicTokenizer`` then ``WordpieceTokenizer``; offsets are into the normalized text."""
    name = "BertTokenizer"

    def __init__(self, vocab, suffix_indicator="##", max_bytes_per_token=100, unknown_token="[UNK]",
                 lower_case=False, keep_whitespace=False, normalization_form=NormalizeForm.NONE,
                 preserve_unused_token=True, with_offsets=False):
        self._wp = _Wordpiece(vocab, suffix_indicator, max_bytes_per_token, unknown_token, self.name)
        self._basic = BasicTokenizer(lower_case, keep_whitespace, normalization_form, preserve_unused_token, True)
        self.vocab, self.with_offsets = vocab, check_bool(with_offsets, "with_offsets", self.name)

    def apply(self, rng, x):
        words, starts, _ = self._basic.apply(rng, x)
        pieces = []
        for w, s in zip(words, starts):
            if str(w):
                pieces += [(p, int(s) + a, int(s) + b) for p, a, b in self._wp.split(str(w))]
        toks = strings([p for p, _, _ in pieces])
        if not self.with_offsets:
            return toks
        return (toks, np.array([a for _, a, _ in pieces] or [0], np.uint32),
                np.array([b for _, _, b in pieces] or [0], np.uint32))

