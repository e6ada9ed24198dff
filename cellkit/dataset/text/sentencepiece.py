"""SentencePiece: ``SentencePieceVocab`` trains a model (from a dataset's column or text files) and
``SentencePieceTokenizer`` splits text with one, to pieces or ids.

Both run on the ``sentencepiece`` package (``pip install sentencepiece``), imported when first
used; a model file saved by MindSpore's ``SentencePieceVocab.save_model`` loads here and splits the
same way.
"""

from __future__ import annotations

import io
import os
from enum import IntEnum

import numpy as np

from ._base import TextTensorOperation, check_int, scalar_str, str_array, strings

__all__ = ["SentencePieceModel", "SPieceTokenizerLoadType", "SPieceTokenizerOutType", "SentencePieceVocab",
           "SentencePieceTokenizer"]


class SentencePieceModel(IntEnum):
    """The SentencePiece training algorithm."""
    UNIGRAM = 0
    BPE = 1
    CHAR = 2
    WORD = 3


class SPieceTokenizerLoadType(IntEnum):
    FILE = 0
    MODEL = 1


class SPieceTokenizerOutType(IntEnum):
    """What ``SentencePieceTokenizer`` gives: the pieces (strings) or their ids (int32)."""
    STRING = 0
    INT = 1


def _spm():
    try:
        import sentencepiece
    except ImportError as e:
        raise ImportError("cellkit.dataset.text's SentencePiece needs the sentencepiece package: "
                          "pip install sentencepiece") from e
    return sentencepiece


def _train(sentences, vocab_size, character_coverage, model_type, params, who):
    check_int(vocab_size, "vocab_size", who, 1)
    if not isinstance(character_coverage, (int, float)) or isinstance(character_coverage, bool):
        raise TypeError(f"{who}: character_coverage must be a float, got {character_coverage!r}")
    if not isinstance(model_type, SentencePieceModel):
        raise TypeError(f"{who}: model_type must be a SentencePieceModel, got {model_type!r}")
    if not isinstance(params, dict):
        raise TypeError(f"{who}: params must be a dict, got {type(params).__name__}")
    model = io.BytesIO()
    try:
        _spm().SentencePieceTrainer.train(sentence_iterator=iter(sentences), model_writer=model,
                                          vocab_size=vocab_size, character_coverage=float(character_coverage),
                                          model_type=model_type.name.lower(), minloglevel=2,
                                          **{k: str(v) for k, v in params.items()})
    except RuntimeError as e:
        raise RuntimeError(f"{who}: SentencePiece training failed: {e}") from e
    vocab = SentencePieceVocab()
    vocab._model = model.getvalue()
    return vocab


class SentencePieceVocab:
    """A trained SentencePiece model."""

    def __init__(self):
        self._model = None

    @classmethod
    def from_dataset(cls, dataset, col_names, vocab_size, character_coverage, model_type, params):
        """Train on the strings of the column ``col_names[0]`` of ``dataset``."""
        if not isinstance(col_names, list) or not col_names:
            raise TypeError(f"SentencePieceVocab.from_dataset: col_names must be a list of one column name, "
                            f"got {col_names!r}")
        rows = dataset.create_dict_iterator(num_epochs=1, output_numpy=True)
        sentences = [str(s) for r in rows for s in str_array(r[col_names[0]], "SentencePieceVocab").reshape(-1)]
        return _train(sentences, vocab_size, character_coverage, model_type, params, "SentencePieceVocab.from_dataset")

    @classmethod
    def from_file(cls, file_path, vocab_size, character_coverage, model_type, params):
        """Train on the lines of the text files ``file_path`` (a list of paths)."""
        if not isinstance(file_path, list) or not all(isinstance(p, str) for p in file_path):
            raise TypeError(f"SentencePieceVocab.from_file: file_path must be a list of paths, got {file_path!r}")
        lines = []
        for p in file_path:
            if not os.path.isfile(p):
                raise ValueError(f"SentencePieceVocab.from_file: {p} does not exist or is not a file")
            with open(p, encoding="utf-8") as f:
                lines += [ln.rstrip("\n") for ln in f if ln.strip()]
        return _train(lines, vocab_size, character_coverage, model_type, params, "SentencePieceVocab.from_file")

    @classmethod
    def save_model(cls, vocab, path, filename):
        """Write the model to ``path/filename`` (a file ``SentencePieceTokenizer`` and the
        sentencepiece package load)."""
        if not isinstance(vocab, SentencePieceVocab) or vocab._model is None:
            raise TypeError(f"SentencePieceVocab.save_model: vocab must be a trained SentencePieceVocab, got {vocab!r}")
        if not os.path.isdir(path):
            raise ValueError(f"SentencePieceVocab.save_model: {path} is not a directory")
        with open(os.path.join(path, filename), "wb") as f:
            f.write(vocab._model)


class SentencePieceTokenizer(TextTensorOperation):
    """Split a string with a SentencePiece model (a ``SentencePieceVocab`` or a model file's path) into
    pieces (``out_type=STRING``) or their ids (``INT``, int32)."""

    def __init__(self, mode, out_type):
        if isinstance(mode, SentencePieceVocab):
            model = mode._model
        elif isinstance(mode, str):
            if not os.path.isfile(mode):
                raise ValueError(f"SentencePieceTokenizer: {mode} does not exist or is not a file")
            with open(mode, "rb") as f:
                model = f.read()
        else:
            raise TypeError(f"SentencePieceTokenizer: mode must be a SentencePieceVocab or a model file's path, "
                            f"got {type(mode).__name__}")
        if not isinstance(out_type, SPieceTokenizerOutType):
            raise TypeError(f"SentencePieceTokenizer: out_type must be an SPieceTokenizerOutType, got {out_type!r}")
        self.mode, self.out_type = mode, out_type
        self._processor = _spm().SentencePieceProcessor(model_proto=model)

    def apply(self, rng, x):
        s = scalar_str(x, "SentencePieceTokenizer")
        if self.out_type == SPieceTokenizerOutType.INT:
            return np.array(self._processor.encode(s, out_type=int), np.int32)
        return strings(self._processor.encode(s, out_type=str))
