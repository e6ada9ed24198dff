"""MindSpore's string-to-string text transforms: ``CaseFold``, ``NormalizeUTF8``, ``RegexReplace``
and ``FilterWikipediaXML``, applied to each string of the column.

>>> import cellkit.dataset.text as text
>>> text.CaseFold()("Straße ﬁX")
array('strasse fix', dtype='<U11')
>>> text.NormalizeUTF8(text.NormalizeForm.NFKC)(["①", "Ｘ"])
array(['1', 'X'], dtype='<U1')
>>> text.RegexReplace(r"(\\w+)@(\\w+)", "$2 at $1")("me@home")
array('home at me', dtype='<U10')
"""

from __future__ import annotations

import re
import unicodedata
from enum import IntEnum

import numpy as np

from ._base import TextTensorOperation, check_bool, check_str, compile_pattern, str_array

__all__ = ["NormalizeForm", "CaseFold", "NormalizeUTF8", "RegexReplace", "FilterWikipediaXML"]


class NormalizeForm(IntEnum):
    """Unicode normalization forms."""
    NONE = 0
    NFC = 1
    NFKC = 2
    NFD = 3
    NFKD = 4


def normalize(s: str, form: NormalizeForm) -> str:
    return s if form == NormalizeForm.NONE else unicodedata.normalize(form.name, s)


_IGNORABLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
                        "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
                        "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]")


def nfkc_casefold(s: str) -> str:
    """Unicode's NFKC_Casefold (ICU's case folding used by MindSpore): NFKC, full case folding, and
    the default-ignorable characters removed."""
    s = unicodedata.normalize("NFKC", _IGNORABLE.sub("", s))
    return unicodedata.normalize("NFKC", s.casefold())


def _each(x, fn, who):
    x = str_array(x, who)
    out = [fn(str(v)) for v in x.reshape(-1)]
    return np.array(out, dtype=str).reshape(x.shape) if out else x


class CaseFold(TextTensorOperation):
    """Fold case (Unicode NFKC case folding: ``"ß"`` becomes ``"ss"``, ``"ﬁ"`` becomes ``"fi"``)."""

    def apply(self, rng, x):
        return _each(x, nfkc_casefold, "CaseFold")


class NormalizeUTF8(TextTensorOperation):
    """Unicode normalization to ``normalize_form`` (NFKC by default; ``NONE`` leaves the text)."""

    def __init__(self, normalize_form=NormalizeForm.NFKC):
        normalize_form = NormalizeForm.NFKC if normalize_form is None else normalize_form
        if not isinstance(normalize_form, NormalizeForm):
            raise TypeError(f"NormalizeUTF8: wrong input type for normalization_form, should be enum of "
                            f"'NormalizeForm', got {normalize_form!r}")
        self.normalize_form = normalize_form

    def apply(self, rng, x):
        return _each(x, lambda s: normalize(s, self.normalize_form), "NormalizeUTF8")


class _Template:
    """An ICU replacement string (``$1``, ``${name}``, ``\\$``) as a function of a match."""

    def __init__(self, replace: str):
        parts, i = [], 0
        while i < len(replace):
            c = replace[i]
            if c == "\\" and i + 1 < len(replace):
                parts.append(replace[i + 1])
                i += 2
            elif c == "$" and (m := re.match(r"\$(\d+)|\$\{(\w+)\}", replace[i:])):
                parts.append((int(m.group(1)),) if m.group(1) else (m.group(2),))
                i += m.end()
            else:
                parts.append(c)
                i += 1
        self.parts = parts

    def __call__(self, m):
        return "".join(p if isinstance(p, str) else (m.group(p[0]) or "") for p in self.parts)


class RegexReplace(TextTensorOperation):
    """Replace the matches of ``pattern`` (all, or the first with ``replace_all=False``) by ``replace``,
    in which ``$1`` or ``${name}`` stand for a group, as in ICU."""

    def __init__(self, pattern, replace, replace_all=True):
        self.pattern = check_str(pattern, "pattern", "RegexReplace")
        self.replace = check_str(replace, "replace", "RegexReplace")
        self.replace_all = check_bool(replace_all, "replace_all", "RegexReplace")
        self._re, self._repl = compile_pattern(pattern, "RegexReplace"), _Template(replace)

    def apply(self, rng, x):
        return _each(x, lambda s: self._re.sub(self._repl, s, count=0 if self.replace_all else 1), "RegexReplace")


def _wiki_rules():
    rules = {r"<.*>": "", r"&amp;": "&", "&lt;": "<", "&gt;": ">", r"<ef[^<]*<\/ef>": "", "<[^>]*>": "",
             r"\[http:[^] ]*": "[", r"\|thumb": "", r"\|left": "", r"\|right": "", r"\|\d+px": "",
             r"\[\[image:[^\[\]]*\|": "", r"\[\[category:([^|\]]*)[^]]*\]\]": r"[[\1]]",
             r"\[\[[a-z\-]*:[^\]]*\]\]": "", r"\[\[[^\|\]]*\|": "[[", r"\{\{[^\}]*\}\}": "", r"\{[^\}]*\}": "",
             r"\[": "", r"\]": "", "&[^;]*;": " ", r"[^a-z\n]+": " ", r"\n ": "", r"\s+": " ", r"\n\s*\n": "\n"}
    rules.update({c: c.lower() for c in "ABCDEFGHIJKLMNOPQSTUVWXYZ"})
    rules["R"] = ""  # MindSpore 2.10's table maps "R" to nothing
    rules.update({str(d): f" {w} " for d, w in enumerate("zero one two three four five six seven eight nine".split())})
    # MindSpore keeps the rules in an ordered map, so they run in the order of their patterns' text.
    return [(re.compile(p), r) for p, r in sorted(rules.items(), key=lambda kv: kv[0].encode("utf-16-be"))]


class FilterWikipediaXML(TextTensorOperation):
    """Clean Wikipedia XML markup to lowercase letters and single spaces, digits spelled out (the
    rules and their order are MindSpore 2.10's); text holding ``#redirect`` becomes empty."""
    _rules = None

    def _filter(self, s):
        if "#redirect" in s or "#REDIRECT" in s:
            return ""
        if FilterWikipediaXML._rules is None:
            FilterWikipediaXML._rules = _wiki_rules()
        for pattern, repl in FilterWikipediaXML._rules:
            s = pattern.sub(repl, s).strip()
        return s

    def apply(self, rng, x):
        return _each(x, self._filter, "FilterWikipediaXML")
