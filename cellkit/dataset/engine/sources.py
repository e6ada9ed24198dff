"""Datasets made from Python data: ``GeneratorDataset`` and ``NumpySlicesDataset``.

A random-access source (``__getitem__`` and ``__len__``) becomes a
``grain.MapDataset``: shuffled by default (MindSpore's rule), sharded with
``num_shards``/``shard_id``, and parallel in worker processes. A generator
function or an iterable is read in order, anew each epoch.

>>> import numpy as np
>>> import cellkit.dataset as ds
>>> class Squares:
...     def __getitem__(self, i):
...         return np.float32(i), np.float32(i * i)
...     def __len__(self):
...         return 4
>>> data = ds.GeneratorDataset(Squares(), column_names=["x", "y"], shuffle=False)
>>> [row["y"].item() for row in data.create_dict_iterator(output_numpy=True)]
[0.0, 1.0, 4.0, 9.0]
"""

from __future__ import annotations

import numbers

import grain
import numpy as np

from .datasets import Dataset, UnionBaseDataset, _as_row, _PyIterDataset
from .samplers import as_sampler

__all__ = ["GeneratorDataset", "NumpySlicesDataset", "SourceDataset", "MappableDataset"]


def _check_count(value, what, lo=1):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < lo:
        raise ValueError(f"{what} must be an int >= {lo} or None, got {value!r}")
    return int(value)


class SourceDataset(Dataset):
    """A dataset read from a source: random access (``_rows``/``_len``) or an iterable (``_iter``)."""

    def __init__(self, column_names, num_samples, shuffle, num_shards, shard_id, random_access,
                 num_parallel_workers=1, sampler=None):
        super().__init__()
        what = type(self).__name__
        self.sampler = as_sampler(sampler, what)
        if self.sampler is not None:
            if not random_access:
                raise ValueError(f"{what}: sampler is not supported if source does not have attribute '__getitem__'")
            if not (num_samples is None and shuffle is None and num_shards is None and shard_id is None):
                raise ValueError(f"{what}: conflicting arguments during sampler assignments: a sampler excludes "
                                 f"num_samples ({num_samples}), shuffle ({shuffle}), num_shards ({num_shards}) "
                                 f"and shard_id ({shard_id})")
        self.workers = _check_count(num_parallel_workers, "num_parallel_workers") or 1
        self._names = list(column_names)
        self.num_samples = _check_count(num_samples, "num_samples", lo=0)
        self.num_samples = self.num_samples or None
        if shuffle is not None and not isinstance(shuffle, bool):
            raise TypeError(f"shuffle must be a bool or None, got {type(shuffle).__name__}")
        # A generator or an iterable is read in order, shuffle=True or not (as MindSpore does); a
        # random-access source is shuffled unless shuffle=False.
        self.shuffle_rows = random_access and shuffle is not False
        if (num_shards is None) != (shard_id is None):
            raise ValueError("num_shards and shard_id must be given together")
        if num_shards is not None:
            num_shards = _check_count(num_shards, "num_shards")
            if isinstance(shard_id, bool) or not isinstance(shard_id, numbers.Integral) or not 0 <= shard_id < num_shards:
                raise ValueError(f"shard_id must be an int in [0, {num_shards - 1}], got {shard_id!r}")
        self.num_shards, self.shard_id = num_shards, shard_id
        self.random_access = random_access

    def get_col_names(self):
        return list(self._names)

    def _size(self):
        if not self.random_access:
            return self.num_samples if self.num_samples is not None and self._len_hint() is None else (
                None if self._len_hint() is None else self._limit(self._len_hint()))
        if self.sampler is not None:
            return self.sampler.count(self._len())
        return self._limit(self._len())

    def _len_hint(self):
        return None

    def _limit(self, n):
        if self.num_shards is not None:
            n = -(-n // self.num_shards)
        return n if self.num_samples is None else min(n, self.num_samples)

    def _build(self, seed, epoch):
        if not self.random_access:
            return _PyIterDataset(self._limited_iter)
        source = self._source()
        ds = grain.MapDataset.source(source)
        if not getattr(source, "rows_are_tuples", False):
            ds = ds.map(self._to_row)
        if self.sampler is not None:
            index = self.sampler.indices(len(ds), np.random.default_rng(seed)).tolist()
            return grain.MapDataset.source(index).map(ds.__getitem__)
        if self.shuffle_rows:
            ds = ds.shuffle(seed=seed)
        if self.num_shards is not None:
            ds = grain.MapDataset.source(self._shard_index(len(ds))).map(ds.__getitem__)
        if self.num_samples is not None:
            ds = ds[:self.num_samples]
        return ds

    def _shard_index(self, n):
        """MindSpore's DistributedSampler: every shard gets ceil(n / num_shards) rows, wrapping around."""
        return [(self.shard_id + k * self.num_shards) % n for k in range(-(-n // self.num_shards))]

    def _limited_iter(self):
        rows = map(self._to_row, self._iter())
        if self.num_shards is not None:
            rows = (r for i, r in enumerate(rows) if i % self.num_shards == self.shard_id)
        if self.num_samples is not None:
            rows = (r for _, r in zip(range(self.num_samples), rows))
        return rows

    def _to_row(self, item):
        row = _as_row(item, type(self).__name__)
        if len(row) != len(self._names):
            raise ValueError(f"{type(self).__name__}: the source gave a row of {len(row)} columns, but "
                             f"column_names names {len(self._names)}: {self._names}")
        return row


class MappableDataset(SourceDataset):
    """A source whose rows can be read in any order: the kind that takes a ``sampler``."""


class GeneratorDataset(MappableDataset, UnionBaseDataset):
    """Rows from Python: a random-access object, a generator function or an iterable."""

    def __init__(self, source, column_names=None, column_types=None, schema=None, num_samples=None,
                 num_parallel_workers=1, shuffle=None, sampler=None, num_shards=None, shard_id=None,
                 python_multiprocessing=True, max_rowsize=None):
        if column_names is None:
            raise ValueError("GeneratorDataset: column_names must be given (a name or a list of names)")
        names = [column_names] if isinstance(column_names, str) else list(column_names)
        random_access = hasattr(source, "__getitem__") and hasattr(source, "__len__")
        if not random_access and not callable(source) and not hasattr(source, "__iter__"):
            raise TypeError("GeneratorDataset: source must be random-access (__getitem__ and __len__), a "
                            f"generator function or an iterable, got {type(source).__name__}")
        self.source = source
        super().__init__(names, num_samples, shuffle, num_shards, shard_id, random_access, num_parallel_workers,
                         sampler)

    def _source(self):
        return self.source

    def _len(self):
        return len(self.source)

    def _len_hint(self):
        return len(self.source) if hasattr(self.source, "__len__") else None

    def _iter(self):
        return self.source() if callable(self.source) else iter(self.source)


class _Slices:
    """Row ``i`` of a tuple of equally long columns (a picklable random-access source)."""

    def __init__(self, columns):
        self.columns = columns

    def __len__(self):
        return len(self.columns[0])

    rows_are_tuples = True  # rows are already tuples of arrays: the source needs no conversion step

    def __getitem__(self, i):
        return tuple(c[i, ...] for c in self.columns)  # ``[i, ...]``: a 0-d array, not a NumPy scalar


class NumpySlicesDataset(GeneratorDataset):
    """Rows sliced along the first axis of arrays: a list, a tuple of columns or a dict of columns."""

    def __init__(self, data, column_names=None, num_samples=None, num_parallel_workers=1, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None):
        if isinstance(data, dict):
            names, columns = list(data), [np.asarray(v) for v in data.values()]
        elif isinstance(data, tuple):
            names, columns = None, [np.asarray(v) for v in data]
        elif isinstance(data, (list, np.ndarray)):
            names, columns = None, [np.asarray(data)]
        else:
            raise TypeError(f"NumpySlicesDataset: data must be a list, tuple, dict or NumPy array, got "
                            f"{type(data).__name__}")
        if column_names is not None:
            names = [column_names] if isinstance(column_names, str) else list(column_names)
        names = names or [f"column_{i}" for i in range(len(columns))]
        if len(names) != len(columns):
            raise ValueError(f"NumpySlicesDataset: {len(columns)} columns but {len(names)} column_names")
        if any(c.ndim == 0 for c in columns) or len({len(c) for c in columns}) > 1:
            raise ValueError("NumpySlicesDataset: every column must have the same (non-zero) first dimension, "
                             f"got shapes {[c.shape for c in columns]}")
        self._slices = self.source = _Slices(columns)
        SourceDataset.__init__(self, names, num_samples, shuffle, num_shards, shard_id, True, num_parallel_workers,
                               sampler)

    def _source(self):
        return self._slices

    def _len(self):
        return len(self._slices)
