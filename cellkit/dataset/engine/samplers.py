"""Samplers: which rows of a random-access source an epoch reads, and in which order.

A sampler maps the source's row count ``n`` to a list of row indices, drawn anew
each epoch from a generator seeded by ``cellkit.dataset.config`` and the epoch's
number (MindSpore 2.10's rules: ``num_samples`` of 0 or None means all, and is
capped at what the sampler can give). ``add_child`` chains samplers: the parent
picks positions in the child's list of indices.

>>> import numpy as np
>>> import cellkit.dataset as ds
>>> data = ds.NumpySlicesDataset(np.arange(10), sampler=ds.DistributedSampler(3, 1, shuffle=False))
>>> [int(r[0]) for r in data.create_tuple_iterator(output_numpy=True)]
[1, 4, 7, 0]
>>> ds.SequentialSampler(start_index=3, num_samples=4).get_num_samples()
4
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["BuiltinSampler", "Sampler", "DistributedSampler", "RandomSampler", "SequentialSampler",
           "SubsetSampler", "SubsetRandomSampler", "WeightedRandomSampler", "IterSampler", "as_sampler"]


def _count_arg(value, what, lo=0):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < lo:
        raise ValueError(f"{what} must be an int >= {lo} or None, got {value!r}")
    return int(value) or None


def _bool_arg(value, what):
    if not isinstance(value, bool):
        raise TypeError(f"{what} must be a boolean value but was: {value!r}")
    return value


def _index_list(indices, what):
    if isinstance(indices, numbers.Integral) and not isinstance(indices, bool):
        indices = [indices]
    if isinstance(indices, (str, bytes)) or not hasattr(indices, "__iter__"):
        raise TypeError(f"{what}: indices must be a list of ints, got {type(indices).__name__}")
    out = np.asarray(list(indices))
    if out.size and (out.dtype.kind not in "iu"):
        raise TypeError(f"{what}: indices must be ints, got {out.dtype}")
    return out.astype(np.int64).reshape(-1)


class BuiltinSampler:
    """The base of every sampler: ``num_samples``, child samplers and the epoch's indices."""

    def __init__(self, num_samples=None):
        self.num_samples = _count_arg(num_samples, f"{type(self).__name__}: num_samples")
        self.child_sampler = None

    # -- what a sampler defines ------------------------------------------------
    def _own(self, n: int, rng) -> np.ndarray:
        """Indices into ``range(n)`` for one epoch."""
        raise NotImplementedError

    def _own_count(self, n: int) -> int:
        return len(self._own(n, np.random.default_rng(0)))

    # -- the API ---------------------------------------------------------------
    def add_child(self, sampler):
        """Sample from ``sampler``'s indices instead of from the rows."""
        if not isinstance(sampler, BuiltinSampler):
            raise TypeError(f"add_child: sampler must be a Sampler, got {type(sampler).__name__}")
        if self.child_sampler is not None:
            raise RuntimeError("add_child: this sampler already has a child sampler")
        self.child_sampler = sampler

    def get_child(self):
        return self.child_sampler

    def get_num_samples(self):
        return self.num_samples

    def is_shuffled(self) -> bool:
        return False

    def is_sharded(self) -> bool:
        return self.child_sampler.is_sharded() if self.child_sampler is not None else False

    def _cap(self, k: int) -> int:
        return k if self.num_samples is None else min(k, self.num_samples)

    def indices(self, n: int, rng) -> np.ndarray:
        """The row indices of one epoch over ``n`` rows, drawing from ``rng``."""
        if self.child_sampler is None:
            return np.asarray(self._own(n, rng), np.int64)
        child = self.child_sampler.indices(n, rng)
        return child[np.asarray(self._own(len(child), rng), np.int64)]

    def count(self, n: int) -> int:
        """How many indices ``indices(n, ...)`` gives."""
        if self.child_sampler is not None:
            n = self.child_sampler.count(n)
        return self._own_count(n)


class Sampler(BuiltinSampler):
    """A sampler written in Python: ``__iter__`` yields the indices, reading ``self.dataset_size``.

    >>> import cellkit.dataset as ds
    >>> class Reverse(ds.Sampler):
    ...     def __iter__(self):
    ...         return iter(range(self.dataset_size - 1, -1, -1))
    >>> data = ds.NumpySlicesDataset([1, 2, 3], sampler=Reverse())
    >>> [int(r[0]) for r in data.create_tuple_iterator(output_numpy=True)]
    [3, 2, 1]
    """

    def __init__(self, num_samples=None):
        super().__init__(num_samples)
        self.dataset_size = 0

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__}: a Sampler must define __iter__ (the indices)")

    def _own(self, n, rng):
        self.dataset_size = n
        ids = _index_list(iter(self), type(self).__name__)
        return ids[:self._cap(len(ids))]


class IterSampler(Sampler):
    """Any iterable of indices (what ``sampler=`` makes of an iterable that is not a Sampler)."""

    def __init__(self, sampler, num_samples=None):
        super().__init__(num_samples)
        self.iterable = sampler

    def __iter__(self):
        return iter(self.iterable)


class DistributedSampler(BuiltinSampler):
    """Shard ``shard_id`` of ``num_shards``: each gets ceil(n / num_shards) rows, wrapping around.

    With ``offset`` >= 0, row ``i`` (of the shuffled order when ``shuffle``) goes to shard
    ``(i + offset) % num_shards`` and the shards are not padded.
    """

    def __init__(self, num_shards, shard_id, shuffle=True, num_samples=None, offset=-1):
        super().__init__(num_samples)
        if isinstance(num_shards, bool) or not isinstance(num_shards, numbers.Integral) or num_shards < 1:
            raise ValueError(f"DistributedSampler: num_shards must be a positive int, got {num_shards!r}")
        if isinstance(shard_id, bool) or not isinstance(shard_id, numbers.Integral) or not 0 <= shard_id < num_shards:
            raise ValueError(f"DistributedSampler: shard_id must be an int in [0, {num_shards - 1}], got {shard_id!r}")
        if isinstance(offset, bool) or not isinstance(offset, numbers.Integral) or not -1 <= offset <= num_shards:
            raise ValueError(f"DistributedSampler: offset must be -1 or an int in [0, num_shards={num_shards}], "
                             f"got {offset!r}")
        self.num_shards, self.shard_id, self.offset = int(num_shards), int(shard_id), int(offset)
        self.shuffle = _bool_arg(shuffle, "DistributedSampler: shuffle")

    def is_shuffled(self):
        return self.shuffle

    def is_sharded(self):
        return True

    def _positions(self, n):
        if self.offset < 0:
            return (self.shard_id + np.arange(-(-n // self.num_shards)) * self.num_shards) % max(n, 1)
        return np.flatnonzero((np.arange(n) + self.offset) % self.num_shards == self.shard_id)

    def _own(self, n, rng):
        order = rng.permutation(n) if self.shuffle else np.arange(n)
        pos = self._positions(n) if n else np.zeros(0, np.int64)
        return order[pos[:self._cap(len(pos))]]

    def _own_count(self, n):
        return self._cap(len(self._positions(n))) if n else 0


class RandomSampler(BuiltinSampler):
    """The rows in a random order, or drawn with ``replacement``."""

    def __init__(self, replacement=False, num_samples=None):
        super().__init__(num_samples)
        self.replacement = _bool_arg(replacement, "RandomSampler: replacement")

    def is_shuffled(self):
        return True

    def _own(self, n, rng):
        k = self._own_count(n)
        return rng.integers(n, size=k) if self.replacement else rng.permutation(n)[:k]

    def _own_count(self, n):
        return self._cap(n)


class SequentialSampler(BuiltinSampler):
    """The rows in order from ``start_index``."""

    def __init__(self, start_index=None, num_samples=None):
        super().__init__(num_samples)
        if start_index is not None and (isinstance(start_index, bool) or not isinstance(start_index, numbers.Integral)
                                        or start_index < 0):
            raise ValueError(f"SequentialSampler: start_index must be an int >= 0 or None, got {start_index!r}")
        self.start_index = int(start_index or 0)

    def _check(self, n):
        if n and self.start_index >= n:
            raise RuntimeError(f"SequentialSampler: start_index must be less than the number of rows, got "
                               f"start_index {self.start_index} for {n} rows")

    def _own(self, n, rng):
        return np.arange(self.start_index, self.start_index + self._own_count(n))

    def _own_count(self, n):
        self._check(n)
        return self._cap(max(n - self.start_index, 0))


class SubsetSampler(BuiltinSampler):
    """The rows ``indices``, in that order."""

    def __init__(self, indices, num_samples=None):
        super().__init__(num_samples)
        self.indices_ = _index_list(indices, type(self).__name__)

    def get_num_samples(self):
        return self._cap(len(self.indices_))

    def _pick(self, rng):
        return self.indices_

    def _own(self, n, rng):
        bad = self.indices_[(self.indices_ < 0) | (self.indices_ >= n)]
        if bad.size:
            raise RuntimeError(f"{type(self).__name__}: sample ID ({int(bad[0])}) is out of bound, expected range "
                               f"[0, {n - 1}]")
        return self._pick(rng)[:self._own_count(n)]

    def _own_count(self, n):
        return self._cap(len(self.indices_))


class SubsetRandomSampler(SubsetSampler):
    """The rows ``indices``, in a random order."""

    def is_shuffled(self):
        return True

    def _pick(self, rng):
        return rng.permutation(self.indices_)


class WeightedRandomSampler(BuiltinSampler):
    """Rows ``0 .. len(weights) - 1`` drawn with probabilities proportional to ``weights``."""

    def __init__(self, weights, num_samples=None, replacement=True):
        super().__init__(num_samples)
        w = np.asarray(weights, np.float64).reshape(-1) if not isinstance(weights, (str, bytes)) else None
        if w is None or w.size == 0 or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
            raise ValueError("WeightedRandomSampler: weights must be a non-empty list of non-negative numbers "
                             f"with a positive sum, got {weights!r}")
        self.weights = w
        self.replacement = _bool_arg(replacement, "WeightedRandomSampler: replacement")

    def is_shuffled(self):
        return True

    def _own(self, n, rng):
        k = self._own_count(n)
        if len(self.weights) > n:
            raise RuntimeError(f"WeightedRandomSampler: {len(self.weights)} weights for a dataset of {n} rows")
        if not self.replacement and k > np.count_nonzero(self.weights):
            raise RuntimeError("WeightedRandomSampler: without replacement, the weights must give at least "
                               f"num_samples ({k}) rows a non-zero weight")
        return rng.choice(len(self.weights), size=k, replace=self.replacement, p=self.weights / self.weights.sum())

    def _own_count(self, n):
        return self._cap(n)


def as_sampler(sampler, what):
    """``sampler=`` as a sampler: a Sampler, a list of indices or another iterable of them."""
    if sampler is None or isinstance(sampler, BuiltinSampler):
        return sampler
    if isinstance(sampler, (list, tuple, np.ndarray)):
        return SubsetSampler(sampler)
    if hasattr(sampler, "__iter__") and not isinstance(sampler, (str, bytes, dict)):
        return IterSampler(sampler)
    raise TypeError(f"{what}: sampler must be a Sampler, a list of indices or an iterable of them, got "
                    f"{type(sampler).__name__}")
