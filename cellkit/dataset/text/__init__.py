"""``cellkit.dataset.text``: MindSpore's text processing (``import mindspore.dataset.text as text``):
tokenizers, normalizers, ``Vocab`` and the ops that use it, pretrained vectors and SentencePiece.
Every transform is a callable on NumPy arrays and an operation of ``Dataset.map``.

>>> import cellkit.dataset as ds
>>> import cellkit.dataset.text as text
>>> data = ds.NumpySlicesDataset(["Hello world", "hello"], column_names=["text"], shuffle=False)
>>> vocab = text.Vocab.from_list(["<pad>", "<unk>", "hello", "world"])
>>> data = data.map([text.CaseFold(), text.WhitespaceTokenizer(), text.Lookup(vocab, "<unk>")])
>>> [row[0].tolist() for row in data.create_tuple_iterator(output_numpy=True)]
[[2, 3], [2]]
"""

from . import transforms, utils
from .transforms import *  # noqa: F401,F403
from .utils import *  # noqa: F401,F403

__all__ = ["transforms", "utils", *[n for n in transforms.__all__ if n != "TextTensorOperation"], *utils.__all__]
