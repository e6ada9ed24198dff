"""Containers: ``SequentialCell``, ``CellList``, ``CellDict``.

Children are named by position (``'0'``, ``'1'``, ...) or key, and their
Parameters by path (``'0.weight'``), as in MindSpore.

>>> from cellkit import nn
>>> seq = nn.SequentialCell([nn.Dense(2, 3), nn.ReLU()])
>>> [n for n, _ in seq.parameters_and_names()]
['0.weight', '0.bias']
>>> len(seq), type(seq[1]).__name__
(2, 'ReLU')
"""

from __future__ import annotations

from collections import OrderedDict

from ..cell import Cell

__all__ = ["SequentialCell", "CellList", "CellDict"]


def _check_cell(cell, what):
    if not isinstance(cell, Cell):
        raise TypeError(f"{what}: expected a Cell, got {type(cell).__name__}")
    return cell


class _Indexed(Cell):
    """Children stored under '0', '1', ...; shared list-like behaviour."""

    def __init__(self):
        super().__init__()
        self.__dict__["_cell_count"] = 0

    def _add(self, cell):
        idx = str(len(self))
        _check_cell(cell, f"{self.cls_name}")
        cell.update_parameters_name(idx + ".")
        self.insert_child_to_cell(idx, cell)
        self.__dict__["_cell_count"] = len(self) + 1

    def __len__(self):
        return self.__dict__["_cell_count"]

    def _items(self):
        return [self.__dict__[str(i)] for i in range(len(self))]

    def __iter__(self):
        return iter(self._items())

    def __getitem__(self, index):
        items = self._items()
        if isinstance(index, slice):
            return type(self)(items[index])
        if not -len(items) <= index < len(items):
            raise IndexError(f"{self.cls_name} index {index} is out of range for {len(items)} cells")
        return items[index]

    def append(self, cell):
        """Add ``cell`` at the end."""
        self._add(cell)
        return self

    def extend(self, cells):
        for c in cells:
            self._add(c)
        return self


class SequentialCell(_Indexed):
    """Call child Cells in order, each on the previous one's output.

    Takes a list of Cells, an ``OrderedDict`` of name → Cell, or Cells as arguments.
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], (OrderedDict, dict)):
            for name, cell in args[0].items():
                _check_cell(cell, "SequentialCell")
                cell.update_parameters_name(name + ".")
                self.insert_child_to_cell(name, cell)
            self.__dict__["_cell_keys"] = list(args[0])
            return
        cells = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
        for c in cells:
            self._add(c)

    def __len__(self):
        keys = self.__dict__.get("_cell_keys")
        return len(keys) if keys is not None else self.__dict__["_cell_count"]

    def _items(self):
        keys = self.__dict__.get("_cell_keys")
        if keys is not None:
            return [self.__dict__[k] for k in keys]
        return super()._items()

    def _add(self, cell):
        if self.__dict__.get("_cell_keys") is not None:
            raise TypeError("SequentialCell built from a dict: append under a name with insert_child_to_cell")
        super()._add(cell)

    def construct(self, x):
        for cell in self._items():
            x = cell(x)
        return x


class CellList(_Indexed):
    """A list of Cells (not callable itself)."""

    def __init__(self, args=None):
        super().__init__()
        for c in args or ():
            self._add(c)

    def insert(self, index, cell):
        items = self._items()
        items.insert(index, _check_cell(cell, "CellList.insert"))
        for i in range(len(items)):
            self.__dict__.pop(str(i), None)
        self.__dict__["_cell_count"] = 0
        for c in items:
            self._add(c)

    def construct(self, *inputs):
        raise NotImplementedError("CellList is not callable; call its Cells")


class CellDict(Cell):
    """An ordered dict of Cells."""

    def __init__(self, cells=None):
        super().__init__()
        self.__dict__["_cell_keys"] = []
        for k, v in (cells.items() if isinstance(cells, dict) else cells or ()):
            self[k] = v

    def __setitem__(self, key, cell):
        _check_cell(cell, "CellDict")
        cell.update_parameters_name(key + ".")
        self.insert_child_to_cell(key, cell)
        if key not in self.__dict__["_cell_keys"]:
            self.__dict__["_cell_keys"].append(key)

    def __getitem__(self, key):
        if key not in self.__dict__["_cell_keys"]:
            raise KeyError(key)
        return self.__dict__[key]

    def __contains__(self, key):
        return key in self.__dict__["_cell_keys"]

    def __len__(self):
        return len(self.__dict__["_cell_keys"])

    def __iter__(self):
        return iter(self.__dict__["_cell_keys"])

    def keys(self):
        return list(self.__dict__["_cell_keys"])

    def values(self):
        return [self.__dict__[k] for k in self.__dict__["_cell_keys"]]

    def items(self):
        return [(k, self.__dict__[k]) for k in self.__dict__["_cell_keys"]]

    def construct(self, *inputs):
        raise NotImplementedError("CellDict is not callable; call its Cells")
