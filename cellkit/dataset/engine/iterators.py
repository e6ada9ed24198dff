"""The iterators a Dataset hands out: one epoch per pass, up to ``num_epochs`` passes.

Each pass over an iterator is one epoch with a fresh pipeline (a new shuffle
order); iterating past ``num_epochs`` epochs raises MindSpore's RuntimeError.
Rows come out as Tensors (``jax.Array``) or, with ``output_numpy=True``, as
NumPy arrays; string columns stay NumPy arrays either way, as in MindSpore.
"""

from __future__ import annotations

from ...tensor import Tensor

__all__ = ["TupleIterator", "DictIterator"]


def _to_tensor(value):
    """A Tensor, except strings, which a Tensor cannot hold: those stay NumPy arrays."""
    if getattr(value, "dtype", None) is not None and value.dtype.kind in "USO":
        return value
    return Tensor(value)


class _Iterator:
    def __init__(self, dataset, num_epochs, output_numpy):
        if isinstance(num_epochs, bool) or not isinstance(num_epochs, int) or (num_epochs < 1 and num_epochs != -1):
            raise ValueError(f"num_epochs must be a positive int or -1, got {num_epochs!r}")
        self._dataset = dataset
        self._epochs_left = num_epochs
        self._convert = (lambda a: a) if output_numpy else _to_tensor
        self._rows = None

    def __iter__(self):
        return self

    def __next__(self):
        if self._rows is None:
            if self._epochs_left == 0:
                raise RuntimeError("EOF buffer encountered: the iterator was created for a number of epochs "
                                   "(num_epochs) that has been used up; create it with a larger num_epochs")
            self._epochs_left -= self._epochs_left > 0
            self._rows = self._dataset._epoch_rows()
        try:
            row = next(self._rows)
        except StopIteration:
            self._rows = None
            raise
        return self._format(row)

    @property
    def dataset(self):
        """The dataset this iterator reads."""
        return self._dataset

    def get_col_names(self) -> list:
        """The names of the columns each row holds."""
        return self._dataset.get_col_names()

    def stop(self):
        """End the current epoch (the next ``next`` starts the next one, while epochs are left)."""
        self._rows = None

    def release(self):
        """Stop and give up the remaining epochs."""
        self._rows = None
        self._epochs_left = 0

    def terminate(self, ref=None):
        """As ``release`` (MindSpore calls it when the iterator is collected)."""
        self.release()

    def get_next(self):
        return next(self)


class TupleIterator(_Iterator):
    """Rows as lists of columns."""

    def __init__(self, dataset, index, num_epochs, output_numpy):
        super().__init__(dataset, num_epochs, output_numpy)
        self._index = index

    def get_col_names(self) -> list:
        names = self._dataset.get_col_names()
        return names if self._index is None else [names[i] for i in self._index]

    def _format(self, row):
        if self._index is not None:
            row = [row[i] for i in self._index]
        return [self._convert(v) for v in row]


class DictIterator(_Iterator):
    """Rows as ``{column name: column}`` dicts."""

    def __init__(self, dataset, names, num_epochs, output_numpy):
        super().__init__(dataset, num_epochs, output_numpy)
        self._names = names

    def _format(self, row):
        return {n: self._convert(v) for n, v in zip(self._names, row)}
