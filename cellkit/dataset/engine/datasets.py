"""``Dataset``: MindSpore's pipeline operations over grain datasets.

A cellkit Dataset is a description: a source and the operations chained on it
(``map``, ``batch``, ``shuffle``, ``repeat``, ...). Each epoch builds the
matching grain pipeline — a ``grain.MapDataset`` while every step keeps random
access, a ``grain.IterDataset`` after the first step that does not — seeded
from ``cellkit.dataset.config`` and the epoch's number, so a seed fixes the
batches and their order epoch by epoch. A row is a tuple of NumPy arrays, one
per column.

>>> import numpy as np
>>> import cellkit.dataset as ds
>>> data = ds.NumpySlicesDataset({"x": np.arange(5), "y": np.arange(5) * 10}, shuffle=False)
>>> data = data.map(lambda x: x + 1, input_columns=["x"]).batch(2)
>>> data.get_col_names(), data.get_dataset_size()
(['x', 'y'], 3)
>>> [batch[0].tolist() for batch in data.create_tuple_iterator(output_numpy=True)]
[[1, 2], [3, 4], [5]]
"""

from __future__ import annotations

from typing import Callable

import grain
import numpy as np

from .. import config
from .dataset_members import DatasetMembersMixin
from .iterators import DictIterator, TupleIterator

__all__ = ["Dataset", "VisionBaseDataset", "TextBaseDataset", "AudioBaseDataset", "UnionBaseDataset", "BatchInfo",
           "zip"]

# The operation nodes by name, filled in by ``operations.py`` (which builds on this module).
_NODES = {}


def _seed_of(seed: int, i: int) -> int:
    """A child's seed: distinct per position in the tree, fixed by the parent's."""
    return (seed * 1000003 + i + 1) % (2**31 - 1)


def _as_row(item, what: str) -> tuple:
    if isinstance(item, dict):
        raise TypeError(f"{what}: a row must be a tuple of arrays, got a dict")
    if not isinstance(item, tuple):
        item = (item,) if not isinstance(item, list) else tuple(item)
    return tuple(np.asarray(v) for v in item)


class _PyIterDataset(grain.IterDataset):
    """A grain IterDataset over a Python iterable made anew for each epoch."""

    def __init__(self, make_iter: Callable[[], object]):
        super().__init__()
        self._make_iter = make_iter

    def __iter__(self):
        return _PyIterator(iter(self._make_iter()))


class _PyIterator(grain.DatasetIterator):
    def __init__(self, it):
        super().__init__()
        self._it = it
        self._n = 0

    def __next__(self):
        value = next(self._it)
        self._n += 1
        return value

    def get_state(self):
        return {"next_index": self._n}

    def set_state(self, state):
        raise NotImplementedError("a generator source cannot be restored to a position; use a random-access source")


def _iterable(ds):
    return ds if isinstance(ds, grain.IterDataset) else ds.to_iter_dataset()


class BatchInfo:
    """What ``per_batch_map`` and a callable ``batch_size`` are told: the batch and epoch numbers."""

    def __init__(self, batch_num: int, epoch_num: int):
        self._batch_num, self._epoch_num = batch_num, epoch_num

    def get_batch_num(self):
        return self._batch_num

    def get_epoch_num(self):
        return self._epoch_num


def _columns_arg(columns, what):
    if columns is None:
        return None
    if isinstance(columns, str):
        return [columns]
    if not isinstance(columns, (list, tuple)) or not all(isinstance(c, str) for c in columns):
        raise TypeError(f"{what} must be a column name or a list of column names, got {columns!r}")
    return list(columns)


class Dataset(DatasetMembersMixin):
    """The base of every dataset: the pipeline operations and the iterators."""

    def __init__(self, children=()):
        self.children = list(children)
        self._epochs_started = 0

    # -- what a node defines -------------------------------------------------
    def get_col_names(self) -> list:
        return self.children[0].get_col_names()

    def _size(self):
        """Rows (or batches) per epoch, or None where only iterating can tell."""
        return self.children[0]._size()

    def _build(self, seed: int, epoch: int):
        """This node's grain dataset for one epoch."""
        raise NotImplementedError

    # -- sizes and columns ----------------------------------------------------
    def get_dataset_size(self) -> int:
        """The number of rows (batches after ``batch``) in one epoch."""
        n = self._size()
        if n is None:
            n = sum(1 for _ in self._build(_seed_of(config.get_seed(), 0), 0))
        return n

    def get_batch_size(self) -> int:
        return self.children[0].get_batch_size() if self.children else 1

    def get_repeat_count(self) -> int:
        return self.children[0].get_repeat_count() if self.children else 1

    def output_shapes(self, estimate=False) -> list:
        return [list(v.shape) for v in self._first_row()]

    def output_types(self) -> list:
        return [v.dtype for v in self._first_row()]

    def _first_row(self):
        return next(iter(self._build(_seed_of(config.get_seed(), 0), 0)))

    def _column_index(self, names, what):
        cols = self.get_col_names()
        missing = [n for n in names if n not in cols]
        if missing:
            raise ValueError(f"{what}: no column {missing[0]!r}; the columns are {cols}")
        return [cols.index(n) for n in names]

    # -- operations -----------------------------------------------------------
    def map(self, operations=None, input_columns=None, output_columns=None, num_parallel_workers=None,
            python_multiprocessing=False, **kwargs):
        """Apply ``operations`` (a callable or a list applied in order) to ``input_columns`` of each row."""
        return _NODES["MapDataset"](self, operations, input_columns, output_columns, num_parallel_workers,
                          python_multiprocessing)

    def batch(self, batch_size, drop_remainder=False, num_parallel_workers=None, per_batch_map=None,
              input_columns=None, output_columns=None, python_multiprocessing=False, **kwargs):
        """Stack ``batch_size`` consecutive rows into one, column by column."""
        return _NODES["BatchDataset"](self, batch_size, drop_remainder, per_batch_map, input_columns, output_columns)

    def shuffle(self, buffer_size):
        """Shuffle rows within a window of ``buffer_size`` rows, anew each epoch."""
        return _NODES["ShuffleDataset"](self, buffer_size)

    def repeat(self, count=None):
        """Repeat the dataset ``count`` times (None or -1: without end)."""
        return _NODES["RepeatDataset"](self, count)

    def take(self, count=-1):
        """The first ``count`` rows (-1: all)."""
        return _NODES["TakeDataset"](self, count)

    def skip(self, count):
        """All but the first ``count`` rows."""
        return _NODES["SkipDataset"](self, count)

    def filter(self, predicate, input_columns=None, num_parallel_workers=None):
        """Keep the rows for which ``predicate(*columns)`` is true."""
        return _NODES["FilterDataset"](self, predicate, input_columns)

    def project(self, columns):
        """Keep ``columns``, in that order."""
        return _NODES["ProjectDataset"](self, columns)

    def rename(self, input_columns, output_columns):
        """Rename columns."""
        return _NODES["RenameDataset"](self, input_columns, output_columns)

    def zip(self, datasets):
        """Rows of this dataset side by side with those of ``datasets`` (the columns of all)."""
        if isinstance(datasets, Dataset):
            datasets = (datasets,)
        return zip((self, *datasets))

    def concat(self, datasets):
        """This dataset's rows followed by those of ``datasets``."""
        if isinstance(datasets, Dataset):
            datasets = [datasets]
        return _NODES["ConcatDataset"]([self, *datasets])

    def __add__(self, other):
        return self.concat(other)

    def split(self, sizes, randomize=True):
        """Split into datasets of ``sizes`` rows (ints) or fractions (floats summing to 1)."""
        return _NODES["split"](self, sizes, randomize)

    # -- iterators ------------------------------------------------------------
    def _epoch_rows(self):
        """One epoch of rows: a fresh pipeline, seeded by the global seed and the epoch's number."""
        epoch = self._epochs_started
        self._epochs_started += 1
        pipeline = self._build(_seed_of(config.get_seed(), epoch), epoch)
        skip = self.__dict__.pop("_init_step", 0)  # set_init_step: this epoch starts that far in
        if isinstance(pipeline, grain.MapDataset):
            pipeline = pipeline[skip:] if skip else pipeline
            skip = 0
            # Read with as many threads as the pipeline asks for (MindSpore's num_parallel_workers;
            # 1 by default): grain's default of 16 threads costs more than it gains on a few cores.
            pipeline = pipeline.to_iter_dataset(grain.ReadOptions(num_threads=self._threads()))
        rows = iter(pipeline)
        for _ in range(skip):
            next(rows, None)
        return rows

    def _threads(self) -> int:
        """The most workers any step of the pipeline asks for."""
        return max([getattr(self, "workers", 1), *(c._threads() for c in self.children)])

    def create_tuple_iterator(self, columns=None, num_epochs=-1, output_numpy=False, do_copy=False):
        """An iterator of rows as lists of Tensors (NumPy arrays with ``output_numpy=True``)."""
        index = None if columns is None else self._column_index(_columns_arg(columns, "columns"),
                                                                "create_tuple_iterator")
        return TupleIterator(self, index, num_epochs, output_numpy)

    def create_dict_iterator(self, num_epochs=-1, output_numpy=False, do_copy=False):
        """An iterator of rows as ``{column name: Tensor}`` dicts."""
        return DictIterator(self, self.get_col_names(), num_epochs, output_numpy)

    def __iter__(self):
        return iter(self.create_tuple_iterator())

    def __len__(self):
        return self.get_dataset_size()


class VisionBaseDataset(Dataset):
    """The base MindSpore gives the datasets of images (and every pipeline step)."""


class TextBaseDataset(Dataset):
    """The base MindSpore gives the datasets of text (and every pipeline step)."""


class AudioBaseDataset(Dataset):
    """The base MindSpore gives the datasets of audio (and every pipeline step)."""


class UnionBaseDataset(VisionBaseDataset, TextBaseDataset, AudioBaseDataset):
    """The base of the pipeline steps (``MapDataset``, ``BatchDataset``, ...) and of ``GeneratorDataset``."""


def zip(datasets):  # noqa: A001 - MindSpore's name
    """``cellkit.dataset.zip((a, b))``: the rows of the datasets side by side."""
    if not isinstance(datasets, tuple) or not all(isinstance(d, Dataset) for d in datasets):
        raise TypeError("zip: datasets must be a tuple of datasets")
    return _NODES["ZipDataset"](list(datasets))
