"""The pipeline operations, each a node that builds its step of the grain pipeline.

Column rules follow MindSpore 2.10: ``map`` with as many output columns as input
columns puts each output where its input was; with another number it puts the
outputs first, then the untouched columns in their order; ``zip`` refuses duplicate column names;
``batch`` stacks each column and hands ``per_batch_map`` a list per column.
"""

from __future__ import annotations

import itertools
import numbers

import grain
import numpy as np
from grain.experimental import (LimitIterDataset, RepeatIterDataset, WindowShuffleIterDataset,
                                WindowShuffleMapDataset, ZipIterDataset, ZipMapDataset)

from .. import config
from .datasets import _NODES, BatchInfo, Dataset, UnionBaseDataset, _columns_arg, _iterable, _PyIterDataset, _seed_of

__all__ = ["MapDataset", "BatchDataset", "ShuffleDataset", "RepeatDataset", "TakeDataset", "SkipDataset",
           "FilterDataset", "ProjectDataset", "RenameDataset", "ZipDataset", "ConcatDataset", "split"]


def _positive_int(value, what, lo=1):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not lo <= value <= 2**31 - 1:
        raise ValueError(f"{what} is not within the required interval of [{lo}, 2147483647], got {value!r}")
    return int(value)


def _absl_flags_parsed():
    """grain's worker processes read absl flags; a program that does not use absl never parses them."""
    from absl import flags
    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()


class _RowFn:
    """A picklable row -> row function (grain's worker processes pickle the pipeline)."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, row):
        return self.fn(row)


class MapDataset(UnionBaseDataset):
    def __init__(self, parent, operations, input_columns, output_columns, num_parallel_workers,
                 python_multiprocessing):
        super().__init__([parent])
        if operations is None:
            raise ValueError("map: operations must be given (a callable or a list of callables)")
        ops = list(operations) if isinstance(operations, (list, tuple)) else [operations]
        if not all(callable(op) for op in ops):
            raise TypeError("map: every operation must be callable")
        cols = parent.get_col_names()
        self.ops = ops
        self.input_columns = _columns_arg(input_columns, "map: input_columns") or [cols[0]]
        self.output_columns = _columns_arg(output_columns, "map: output_columns") or list(self.input_columns)
        self._in = parent._column_index(self.input_columns, "map: input_columns")
        rest = [i for i in range(len(cols)) if i not in self._in]
        self._rest = rest
        # As many outputs as inputs: each output takes its input's place. Otherwise the outputs
        # come first, then the untouched columns in their order.
        self._in_place = len(self.output_columns) == len(self.input_columns)
        if self._in_place:
            names = list(cols)
            for i, name in zip(self._in, self.output_columns):
                names[i] = name
            self._names = names
        else:
            self._names = self.output_columns + [cols[i] for i in rest]
        workers = num_parallel_workers
        self.workers = _positive_int(workers, "map: num_parallel_workers") if workers is not None else 1
        self.multiprocessing = bool(python_multiprocessing)
        if self.multiprocessing:
            self.processes, self.workers = self.workers, 1

    def get_col_names(self):
        return list(self._names)

    def _apply(self, row):
        values = tuple(row[i] for i in self._in)
        for op in self.ops:
            out = op(*values)
            values = out if isinstance(out, tuple) else (out,)
        if len(values) != len(self.output_columns):
            raise ValueError(f"map: the operations returned {len(values)} columns, but output_columns names "
                             f"{len(self.output_columns)}: {self.output_columns}")
        values = tuple(v if type(v) is np.ndarray else np.asarray(v) for v in values)
        if self._in_place:
            out = list(row)
            for i, v in zip(self._in, values):
                out[i] = v
            return tuple(out)
        return values + tuple(row[i] for i in self._rest)

    def _build(self, seed, epoch):
        ds = self.children[0]._build(_seed_of(seed, 0), epoch).map(_RowFn(self._apply))
        if self.multiprocessing and self.processes > 1:
            _absl_flags_parsed()
            ds = _iterable(ds).mp_prefetch(grain.MultiprocessingOptions(num_workers=self.processes))
        return ds


class BatchDataset(UnionBaseDataset):
    def __init__(self, parent, batch_size, drop_remainder, per_batch_map, input_columns, output_columns):
        super().__init__([parent])
        self.batch_size = _positive_int(batch_size, "Input batch_size")
        self.drop_remainder = bool(drop_remainder)
        if per_batch_map is not None and not callable(per_batch_map):
            raise TypeError("batch: per_batch_map must be callable")
        self.per_batch_map = per_batch_map
        self.input_columns = _columns_arg(input_columns, "batch: input_columns")
        self.output_columns = _columns_arg(output_columns, "batch: output_columns")
        self._batches = itertools.count()

    def get_batch_size(self):
        return self.batch_size

    def get_col_names(self):
        return self.output_columns or self.children[0].get_col_names()

    def _size(self):
        n = self.children[0]._size()
        if n is None:
            return None
        return n // self.batch_size if self.drop_remainder else -(-n // self.batch_size)

    def _collate(self, epoch):
        names = self.children[0].get_col_names()
        index = None if self.input_columns is None else [names.index(c) for c in self.input_columns]
        counter = itertools.count()

        def collate(rows):
            if self.per_batch_map is None:
                return tuple(np.stack(col) for col in zip(*rows))
            columns = [list(col) for col in zip(*rows)]
            if self.per_batch_map is not None:
                args = columns if index is None else [columns[i] for i in index]
                out = self.per_batch_map(*args, BatchInfo(next(counter), epoch))
                out = out if isinstance(out, tuple) else (out,)
                if index is None:
                    columns = list(out)
                else:
                    columns = list(out) + [c for i, c in enumerate(columns) if i not in index]
            return tuple(np.stack([np.asarray(v) for v in col]) for col in columns)
        return collate

    def _build(self, seed, epoch):
        parent = self.children[0]._build(_seed_of(seed, 0), epoch)
        return parent.batch(self.batch_size, drop_remainder=self.drop_remainder, batch_fn=self._collate(epoch))


class ShuffleDataset(UnionBaseDataset):
    def __init__(self, parent, buffer_size):
        super().__init__([parent])
        self.buffer_size = _positive_int(buffer_size, "shuffle: buffer_size", lo=2)

    def _build(self, seed, epoch):
        parent = self.children[0]._build(_seed_of(seed, 0), epoch)
        cls = WindowShuffleMapDataset if isinstance(parent, grain.MapDataset) else WindowShuffleIterDataset
        return cls(parent, window_size=self.buffer_size, seed=seed)


class RepeatDataset(UnionBaseDataset):
    def __init__(self, parent, count):
        super().__init__([parent])
        if count is not None and count != -1:
            count = _positive_int(count, "repeat: count")
        self.count = None if count in (None, -1) else count

    def get_repeat_count(self):
        return -1 if self.count is None else self.count

    def _size(self):
        n = self.children[0]._size()
        if self.count is None:
            return None if n else 0
        return None if n is None else n * self.count

    def get_dataset_size(self):
        if self.count is None:
            raise RuntimeError("get_dataset_size: the dataset repeats without end (repeat(None))")
        return super().get_dataset_size()

    def _build(self, seed, epoch):
        if self.count is not None:
            # Each repetition is an epoch of the parent: its own seed, so its own shuffle order.
            parts = [self.children[0]._build(_seed_of(seed, i), epoch) for i in range(self.count)]
            if all(isinstance(p, grain.MapDataset) for p in parts):
                return grain.MapDataset.concatenate(parts)
            return _PyIterDataset(lambda: itertools.chain.from_iterable(parts))
        parent = self.children[0]._build(_seed_of(seed, 0), epoch)
        if isinstance(parent, grain.MapDataset):
            return parent.repeat(None)
        return RepeatIterDataset(parent, None)


class TakeDataset(UnionBaseDataset):
    def __init__(self, parent, count):
        super().__init__([parent])
        self.count = -1 if count == -1 else _positive_int(count, "take: count")

    def _size(self):
        n = self.children[0]._size()
        if self.count == -1:
            return n
        return self.count if n is None else min(n, self.count)

    def _build(self, seed, epoch):
        parent = self.children[0]._build(_seed_of(seed, 0), epoch)
        if self.count == -1:
            return parent
        if isinstance(parent, grain.MapDataset):
            return parent[:self.count]
        return LimitIterDataset(parent, self.count)


class SkipDataset(UnionBaseDataset):
    def __init__(self, parent, count):
        super().__init__([parent])
        self.count = _positive_int(count, "skip: count", lo=0)

    def _size(self):
        n = self.children[0]._size()
        return None if n is None else max(n - self.count, 0)

    def _build(self, seed, epoch):
        parent = self.children[0]._build(_seed_of(seed, 0), epoch)
        if isinstance(parent, grain.MapDataset):
            return parent[self.count:]
        return _PyIterDataset(lambda: itertools.islice(parent, self.count, None))


class FilterDataset(UnionBaseDataset):
    def __init__(self, parent, predicate, input_columns):
        super().__init__([parent])
        if not callable(predicate):
            raise TypeError("filter: predicate must be callable")
        self.predicate = predicate
        names = _columns_arg(input_columns, "filter: input_columns") or parent.get_col_names()
        self._in = parent._column_index(names, "filter: input_columns")

    def _size(self):
        return None

    def _keep(self, row):
        return bool(np.asarray(self.predicate(*(row[i] for i in self._in))))

    def _build(self, seed, epoch):
        return self.children[0]._build(_seed_of(seed, 0), epoch).filter(self._keep)


class ProjectDataset(UnionBaseDataset):
    def __init__(self, parent, columns):
        super().__init__([parent])
        self.columns = _columns_arg(columns, "project: columns")
        self._in = parent._column_index(self.columns, "project")

    def get_col_names(self):
        return list(self.columns)

    def _build(self, seed, epoch):
        index = self._in
        return self.children[0]._build(_seed_of(seed, 0), epoch).map(lambda row: tuple(row[i] for i in index))


class RenameDataset(UnionBaseDataset):
    def __init__(self, parent, input_columns, output_columns):
        super().__init__([parent])
        old = _columns_arg(input_columns, "rename: input_columns")
        new = _columns_arg(output_columns, "rename: output_columns")
        if len(old) != len(new):
            raise ValueError(f"rename: input_columns {old} and output_columns {new} differ in length")
        parent._column_index(old, "rename")
        mapping = dict(zip(old, new))
        self._names = [mapping.get(c, c) for c in parent.get_col_names()]

    def get_col_names(self):
        return list(self._names)

    def _build(self, seed, epoch):
        return self.children[0]._build(_seed_of(seed, 0), epoch)


class ZipDataset(UnionBaseDataset):
    def __init__(self, datasets):
        super().__init__(datasets)
        names = [c for d in datasets for c in d.get_col_names()]
        dup = [c for c in names if names.count(c) > 1]
        if dup:
            raise RuntimeError(f"zip: duplicate column {dup[0]!r} already exists when zipping datasets; "
                             "rename or project the columns first")
        self._names = names

    def get_col_names(self):
        return list(self._names)

    def _size(self):
        sizes = [d._size() for d in self.children]
        return None if None in sizes else min(sizes)

    def _build(self, seed, epoch):
        parts = [d._build(_seed_of(seed, i), epoch) for i, d in enumerate(self.children)]
        flat = _RowFn(lambda rows: tuple(v for row in rows for v in row))
        if all(isinstance(p, grain.MapDataset) for p in parts):
            n = min(len(p) for p in parts)
            return ZipMapDataset([p[:n] for p in parts]).map(flat)
        return ZipIterDataset([_iterable(p) for p in parts], strict=False).map(flat)


class ConcatDataset(UnionBaseDataset):
    def __init__(self, datasets):
        super().__init__(datasets)
        names = [d.get_col_names() for d in datasets]
        if any(n != names[0] for n in names):
            raise ValueError(f"concat: every dataset must have the same columns, got {names}")

    def _size(self):
        sizes = [d._size() for d in self.children]
        return None if None in sizes else sum(sizes)

    def _build(self, seed, epoch):
        parts = [d._build(_seed_of(seed, i), epoch) for i, d in enumerate(self.children)]
        if all(isinstance(p, grain.MapDataset) for p in parts):
            return grain.MapDataset.concatenate(parts)
        return _PyIterDataset(lambda: itertools.chain.from_iterable(parts))


class _SplitDataset(UnionBaseDataset):
    """Rows ``index`` of the parent's rows, in that order."""

    def __init__(self, parent, index):
        super().__init__([parent])
        self.index = index

    def _size(self):
        return len(self.index)

    def _build(self, seed, epoch):
        parent = self.children[0]._build(_seed_of(seed, 0), epoch)
        rows = parent if isinstance(parent, grain.MapDataset) else grain.MapDataset.source(list(parent))
        return grain.MapDataset.source(self.index).map(lambda i: rows[int(i)])


def split(dataset, sizes, randomize=True):
    """MindSpore's ``Dataset.split``: sizes as row counts or as fractions summing to 1."""
    if not isinstance(sizes, (list, tuple)) or not sizes:
        raise TypeError(f"split: sizes must be a non-empty list of ints or of floats, got {sizes!r}")
    n = dataset.get_dataset_size()
    if all(isinstance(s, float) for s in sizes):
        if any(not 0 < s <= 1 for s in sizes) or abs(sum(sizes) - 1) > 1e-6:
            raise ValueError(f"split: fractions must lie in (0, 1] and sum to 1, got {sizes}")
        counts = [int(round(s * n)) for s in sizes]
        counts[-1] = n - sum(counts[:-1])
    elif all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in sizes):
        if sum(sizes) != n:
            raise ValueError(f"split: sizes {sizes} sum to {sum(sizes)}, but the dataset has {n} rows")
        counts = list(sizes)
    else:
        raise ValueError(f"split: sizes must be positive ints or floats in (0, 1], got {sizes!r}")
    order = np.arange(n)
    if randomize:
        order = np.random.default_rng(config.get_seed()).permutation(n)
    bounds = np.cumsum([0, *counts])
    return [_SplitDataset(dataset, order[a:b].tolist()) for a, b in zip(bounds[:-1], bounds[1:])]


_NODES.update({"MapDataset": MapDataset, "BatchDataset": BatchDataset, "ShuffleDataset": ShuffleDataset,
               "RepeatDataset": RepeatDataset, "TakeDataset": TakeDataset, "SkipDataset": SkipDataset,
               "FilterDataset": FilterDataset, "ProjectDataset": ProjectDataset, "RenameDataset": RenameDataset,
               "ZipDataset": ZipDataset, "ConcatDataset": ConcatDataset, "split": split})
