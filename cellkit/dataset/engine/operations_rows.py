"""Pipeline steps that regroup rows: ``flat_map``, ``padded_batch`` and ``bucket_batch_by_length``.

Each reads its parent's epoch in order (a grain ``IterDataset`` over a Python generator), so its
output has no random access; like every step it is rebuilt, with the epoch's seed, each epoch.

>>> import numpy as np
>>> import cellkit.dataset as ds
>>> def gen():
...     for n in (1, 3, 2):
...         yield (np.arange(n, dtype=np.int32) + 1,)
>>> data = ds.GeneratorDataset(gen, ["seq"], shuffle=False)
>>> for (batch,) in data.padded_batch(3, pad_info={"seq": (None, -1)}).create_tuple_iterator(output_numpy=True):
...     print(batch)
[[ 1 -1 -1]
 [ 1  2  3]
 [ 1  2 -1]]
"""

from __future__ import annotations

import numbers

import numpy as np

from .dataset_members import NODES
from .datasets import Dataset, UnionBaseDataset, _columns_arg, _PyIterDataset, _seed_of

__all__ = ["FlatMapDataset", "PaddedBatchDataset", "BucketBatchByLengthDataset"]


def _positive_int(value, what):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{what} must be a positive int, got {value!r}")
    return int(value)


class _RowsDataset(UnionBaseDataset):
    """A step that turns the parent's rows, in order, into other rows (``_rows``)."""

    def __init__(self, parent):
        super().__init__([parent])

    def _size(self):
        return None

    def _parent_rows(self, seed, epoch):
        return iter(self.children[0]._build(_seed_of(seed, 0), epoch))

    def _build(self, seed, epoch):
        return _PyIterDataset(lambda: self._rows(self._parent_rows(seed, epoch)))


class FlatMapDataset(_RowsDataset):
    def __init__(self, parent, func):
        super().__init__(parent)
        if len(parent.get_col_names()) != 1:
            raise ValueError(f"flat_map: the dataset must have one column, it has {parent.get_col_names()}")
        self.func = func

    def get_col_names(self):
        return self.children[0].get_col_names()

    def _rows(self, rows):
        for row in rows:
            out = self.func(*row)
            if not isinstance(out, Dataset):
                raise TypeError(f"flat_map: func must return a dataset, got {type(out).__name__}")
            yield from out.create_tuple_iterator(output_numpy=True, num_epochs=1)


def _check_pad_info(pad_info, names, what):
    if not isinstance(pad_info, dict):
        raise TypeError(f"{what}: pad_info must be a dict {{column: (shape or None, value)}}, got {pad_info!r}")
    for name, spec in pad_info.items():
        if name not in names:
            raise ValueError(f"{what}: pad_info names column {name!r}, which is not in {names}")
        if not (isinstance(spec, tuple) and len(spec) == 2):
            raise TypeError(f"{what}: pad_info[{name!r}] must be (shape or None, value), got {spec!r}")
    return pad_info


def _pad_batch(rows, names, pad_info, lengths=None):
    """Stack ``rows`` column by column, padding the columns of ``pad_info`` (``lengths``: a first-axis
    length to pad every padded column to, for bucket boundaries)."""
    out = []
    for i, col in enumerate(zip(*rows)):
        arrays = [np.asarray(a) for a in col]
        spec = pad_info.get(names[i])
        if spec is None:
            out.append(np.stack(arrays))
            continue
        shape, value = spec
        ndim = arrays[0].ndim
        target = [max(a.shape[d] for a in arrays) for d in range(ndim)]
        if lengths is not None and ndim:
            target[0] = max(lengths, target[0]) if shape is None else target[0]
        if shape is not None:
            target = [t if s is None else s for s, t in zip(shape, target)]
        padded = []
        for a in arrays:
            if any(s > t for s, t in zip(a.shape, target)):
                raise RuntimeError(f"padded batch: a row of column {names[i]!r} has shape {a.shape}, larger "
                                   f"than the pad shape {target}")
            full = np.full(target, 0 if value is None else value, a.dtype)
            full[tuple(slice(0, s) for s in a.shape)] = a
            padded.append(full)
        out.append(np.stack(padded))
    return tuple(out)


class PaddedBatchDataset(_RowsDataset):
    def __init__(self, parent, batch_size, drop_remainder, pad_info):
        super().__init__(parent)
        self.batch_size = _positive_int(batch_size, "padded_batch: batch_size")
        self.drop_remainder = bool(drop_remainder)
        self.pad_info = _check_pad_info(pad_info, parent.get_col_names(), "padded_batch")

    def get_batch_size(self):
        return self.batch_size

    def get_col_names(self):
        return self.children[0].get_col_names()

    def _rows(self, rows):
        names, batch = self.get_col_names(), []
        for row in rows:
            batch.append(row)
            if len(batch) == self.batch_size:
                yield _pad_batch(batch, names, self.pad_info)
                batch = []
        if batch and not self.drop_remainder:
            yield _pad_batch(batch, names, self.pad_info)


class BucketBatchByLengthDataset(_RowsDataset):
    def __init__(self, parent, column_names, bucket_boundaries, bucket_batch_sizes, element_length_function,
                 pad_info, pad_to_bucket_boundary, drop_remainder):
        super().__init__(parent)
        what = "bucket_batch_by_length"
        names = parent.get_col_names()
        self._columns = _columns_arg(column_names, f"{what}: column_names")
        self._in = parent._column_index(self._columns, what)
        boundaries = list(bucket_boundaries)
        if not boundaries or any(not isinstance(b, numbers.Integral) or b <= 0 for b in boundaries) \
                or any(a >= b for a, b in zip(boundaries, boundaries[1:])):
            raise ValueError(f"{what}: bucket_boundaries must be increasing positive ints, got {bucket_boundaries!r}")
        if len(bucket_batch_sizes) != len(boundaries) + 1:
            raise ValueError(f"{what}: bucket_batch_sizes must have one more entry than bucket_boundaries "
                             f"({len(boundaries) + 1}), got {len(bucket_batch_sizes)}")
        self.bucket_boundaries = boundaries
        self.bucket_batch_sizes = [_positive_int(b, f"{what}: bucket_batch_sizes") for b in bucket_batch_sizes]
        if element_length_function is None and len(self._columns) != 1:
            raise ValueError(f"{what}: element_length_function is needed for more than one column")
        self.element_length_function = element_length_function
        self.pad_info = _check_pad_info(pad_info or {}, names, what)
        self.pad_to_bucket_boundary = bool(pad_to_bucket_boundary)
        self.drop_remainder = bool(drop_remainder)
        if self.pad_to_bucket_boundary and any(spec[0] is not None for spec in self.pad_info.values()):
            raise ValueError(f"{what}: pad_to_bucket_boundary needs pad shapes of None")

    def get_col_names(self):
        return self.children[0].get_col_names()

    def _bucket(self, row):
        cols = [row[i] for i in self._in]
        if self.element_length_function is None:
            length = np.asarray(cols[0]).shape[0]
        else:
            length = self.element_length_function(*cols)
        return int(np.searchsorted(self.bucket_boundaries, length, side="right"))

    def _emit(self, rows, bucket):
        names = self.get_col_names()
        pad_info = self.pad_info or {name: (None, 0) for name in self._columns}
        lengths = None
        if self.pad_to_bucket_boundary and bucket < len(self.bucket_boundaries):
            lengths = self.bucket_boundaries[bucket] - 1
        return _pad_batch(rows, names, pad_info, lengths)

    def _rows(self, rows):
        buckets = [[] for _ in self.bucket_batch_sizes]
        for row in rows:
            b = self._bucket(row)
            buckets[b].append(row)
            if len(buckets[b]) == self.bucket_batch_sizes[b]:
                yield self._emit(buckets[b], b)
                buckets[b] = []
        if not self.drop_remainder:
            for b, rest in enumerate(buckets):
                if rest:
                    yield self._emit(rest, b)


NODES.update({"FlatMapDataset": FlatMapDataset, "PaddedBatchDataset": PaddedBatchDataset,
              "BucketBatchByLengthDataset": BucketBatchByLengthDataset})
