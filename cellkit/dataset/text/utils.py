"""MindSpore's ``dataset.text.utils``: ``Vocab``, the vector files, SentencePiece's vocabulary, the
enums and the string/bytes conversions.

>>> import numpy as np
>>> from cellkit.dataset.text import utils
>>> utils.to_bytes(np.array(["a", "é"]))
array([b'a', b'\\xc3\\xa9'], dtype='|S2')
>>> utils.to_str(np.array([b"a"]))
array(['a'], dtype='<U1')
"""

from __future__ import annotations

import numpy as np

from .normalize import NormalizeForm
from .sentencepiece import (SentencePieceModel, SentencePieceVocab, SPieceTokenizerLoadType,
                            SPieceTokenizerOutType)
from .jieba import JiebaMode
from .vectors import CharNGram, FastText, GloVe, Vectors
from .vocab import Vocab

__all__ = ["Vocab", "Vectors", "FastText", "GloVe", "CharNGram", "SentencePieceVocab", "SentencePieceModel",
           "SPieceTokenizerLoadType", "SPieceTokenizerOutType", "JiebaMode", "NormalizeForm", "to_bytes", "to_str"]


def to_bytes(array, encoding="utf8"):
    """A NumPy unicode array as bytes (``np.char.encode``)."""
    if not isinstance(array, np.ndarray):
        raise ValueError(f"to_bytes: the input should be a NumPy array, got {type(array).__name__}")
    return np.char.encode(array, encoding)


def to_str(array, encoding="utf8"):
    """A NumPy bytes array as unicode (``np.char.decode``)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"to_str: the input should be a NumPy array, got {type(array).__name__}")
    return np.char.decode(array, encoding)
