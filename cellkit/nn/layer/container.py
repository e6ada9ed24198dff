"""Containers: ``SequentialCell``, ``CellList``, ``CellDict``.

Children are named by position (``'0'``, ``'1'``, ...) or by key, and their
Parameters by path (``'0.weight'``; ``'seq.0.weight'`` once the container is
an attribute ``seq`` of a parent), as in MindSpore. Adding, replacing,
inserting or deleting children renames the Parameters of the children
concerned to their new paths, keeping the prefix the container already has.

>>> from cellkit import nn
>>> seq = nn.SequentialCell([nn.Dense(2, 3), nn.ReLU()])
>>> [n for n, _ in seq.parameters_and_names()]
['0.weight', '0.bias']
>>> len(seq), type(seq[1]).__name__
(2, 'ReLU')
"""

from __future__ import annotations

from collections import abc

from ...cell import Cell
from ...parameter import bump_structure
from .._checks import is_int

__all__ = ["SequentialCell", "CellList", "CellDict"]


def _check_cell(cell, what):
    if not isinstance(cell, Cell):
        raise TypeError(f"For '{what}', each cell must be subclass of Cell, but got {type(cell).__name__}.")
    return cell


def _index(n, index, what, inserting=False):
    """A normalised list index, with MindSpore's messages."""
    if not is_int(index):
        raise TypeError(f"For '{what}', the type of 'index' must be int, but got {type(index).__name__}.")
    hi = n if inserting else n - 1
    if not -n <= index <= hi:
        bound = f"[{-n}, {n}]" if inserting else f"[{-n}, {n})"
        raise IndexError(f"For '{what}', the value of 'index' must be a number in range {bound}, "
                         f"but got {index}.")
    return index + n if index < 0 else index


class _Container(Cell):
    """Children kept as attributes, in the order given by the static tuple ``_cell_keys``."""

    def __init__(self, auto_prefix=True):
        super().__init__(auto_prefix)
        self.__dict__["_cell_keys"] = ()

    # ----- storage ---------------------------------------------------------------

    def _keys(self):
        return self.__dict__["_cell_keys"]

    def _items(self):
        d = self.__dict__
        return [(k, d[k]) for k in self._keys()]

    def _prefix(self):
        """The name prefix the children's Parameters already carry (``'seq.'`` in a parent).

        MindSpore's rule (``_get_prefix_and_index``), quirks included, since checkpoints carry
        its names: the prefix ends before the last component of the first child's first
        Parameter name equal to that child's key, unless a second child's name confirms an
        earlier match (so ``stages.append`` in a list whose only stage holds ``blocks`` gives
        names like ``0.blocks.1.blocks.0.conv.weight``, as in MindSpore).
        """
        d = self.__dict__
        found = []
        for key in self._keys():
            first = next(iter(d[key].parameters_and_names()), None)
            if first is not None:
                found.append((key, first[1]))
                if len(found) == 2:
                    break
        if not found:
            return ""
        (first_key, first_param), second = found[0], (found[1] if len(found) > 1 else None)
        prefix = ""
        parts = first_param.name.split(".")
        for idx, name in enumerate(parts):
            if name == first_key:
                prefix = ".".join(parts[:idx])
                prefix = prefix + "." if prefix else prefix
                second_parts = second[1].name.split(".") if second is not None else []
                if second is not None and idx < len(second_parts) and second_parts[idx] == second[0]:
                    break
        return prefix

    def _rename(self, key, cell, prefix):
        if self._auto_prefix:
            cell.update_parameters_name(f"{prefix}{key}.")

    def _store(self, items, rename=(), prefix=None):
        """Make ``items`` (key, cell) the children, in order; rename the children at ``rename``."""
        self._check_mutable(None, None, f"change the Cells of a {self.cls_name}")
        d = self.__dict__
        if prefix is None and rename:
            prefix = self._prefix()
        for key in self._keys():
            d.pop(key, None)
        for i, (key, cell) in enumerate(items):
            if i in rename:
                self._rename(key, cell, prefix)
            d[key] = cell
        d["_cell_keys"] = tuple(k for k, _ in items)
        bump_structure()

    def __len__(self):
        return len(self._keys())

    def __bool__(self):
        return len(self._keys()) != 0

    def construct(self, *inputs):
        raise NotImplementedError(f"{self.cls_name} is not callable; call the Cells it holds")


class _Indexed(_Container):
    """A list of Cells named '0', '1', ... (entries from an OrderedDict keep their keys)."""

    def set_grad(self, flag=True):
        """Set ``requires_grad`` on this container and every Cell in it (MindSpore's SequentialCell and
        CellList override ``Cell.set_grad`` so; they return None)."""
        super().set_grad(flag)
        for cell in self._cells.values():
            cell.set_grad(flag)

    def __init__(self, auto_prefix=True):
        super().__init__(auto_prefix)
        self.__dict__["_dynamic"] = ()   # per child: named by its position?

    def __getitem__(self, index):
        items = self._items()
        if isinstance(index, slice):
            return self._slice(items[index], self.__dict__["_dynamic"][index])
        if not is_int(index):
            raise TypeError(f"For '{self.cls_name}', the type of 'index' must be int or slice, "
                            f"but got {type(index).__name__}.")
        return items[_index(len(items), index, self.cls_name)][1]

    def _slice(self, items, dynamic):
        """A new container of the same type holding the same Cells (their names unchanged)."""
        new = object.__new__(type(self))
        _Indexed.__init__(new, self._auto_prefix)
        keys = [k if not dyn else str(i) for i, ((k, _), dyn) in enumerate(zip(items, dynamic))]
        d = new.__dict__
        for key, (_, cell) in zip(keys, items):
            d[key] = cell
        d["_cell_keys"] = tuple(keys)
        d["_dynamic"] = tuple(dynamic)
        return new

    def __iter__(self):
        return iter([c for _, c in self._items()])

    def __setitem__(self, index, cell):
        _check_cell(cell, self.cls_name)
        items = self._items()
        i = _index(len(items), index, self.cls_name)
        items[i] = (items[i][0], cell)
        self._store(items, rename={i})

    def __delitem__(self, index):
        n = len(self)
        if isinstance(index, slice):
            drop = set(range(n)[index])
        elif is_int(index):
            drop = {_index(n, index, self.cls_name)}
        else:
            raise TypeError(f"For '{self.cls_name}', the type of 'index' must be int or slice, "
                            f"but got {type(index).__name__}.")
        prefix = self._prefix()
        kept = [(c, dyn) for i, ((_, c), dyn) in enumerate(zip(self._items(), self.__dict__["_dynamic"]))
                if i not in drop]
        self._store_with_prefix([c for c, _ in kept], [d for _, d in kept], prefix)

    def _store_with_prefix(self, cells, dynamic, prefix, rename=()):
        old = dict((id(c), k) for k, c in self._items())
        items, ren = [], set(rename)
        for i, (cell, dyn) in enumerate(zip(cells, dynamic)):
            key = str(i) if dyn else old.get(id(cell))
            if key != old.get(id(cell)):
                ren.add(i)
            items.append((key, cell))
        self._store(items, ren, prefix)
        self.__dict__["_dynamic"] = tuple(dynamic)

    def _append(self, cell):
        _check_cell(cell, self.cls_name)
        prefix = self._prefix()
        cells = [c for _, c in self._items()] + [cell]
        dynamic = self.__dict__["_dynamic"] + (True,)
        self._store_with_prefix(cells, dynamic, prefix, rename={len(cells) - 1})

    def _insert(self, index, cell):
        _check_cell(cell, self.cls_name)
        i = _index(len(self), index, self.cls_name, inserting=True)
        prefix = self._prefix()
        cells = [c for _, c in self._items()]
        dynamic = list(self.__dict__["_dynamic"])
        cells.insert(i, cell)
        dynamic.insert(i, True)
        self._store_with_prefix(cells, dynamic, prefix, rename={i})


class SequentialCell(_Indexed):
    """Call the child Cells in order, each on the previous one's output (MindSpore 2.10).

    Args:
        *args: a list of Cells, an ``OrderedDict`` of name → Cell (the names
            become the children's names), a single Cell, or Cells as separate
            arguments.

    Supports ``len``, iteration, indexing and slicing (a slice is a new
    SequentialCell holding the same Cells), ``seq[i] = cell``, ``del seq[i]``
    (or a slice; later positional children move down and are renamed),
    ``append(cell)`` and ``insert(index, cell)``.

    >>> from collections import OrderedDict
    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> seq = nn.SequentialCell(nn.Dense(2, 3), nn.ReLU())
    >>> seq.append(nn.Dense(3, 1))
    >>> [n for n, _ in seq.parameters_and_names()]
    ['0.weight', '0.bias', '2.weight', '2.bias']
    >>> seq(ms.ops.ones((4, 2))).shape
    (4, 1)
    >>> named = nn.SequentialCell(OrderedDict([('fc1', nn.Dense(2, 3)), ('act', nn.ReLU())]))
    >>> [n for n, _ in named.parameters_and_names()]
    ['fc1.weight', 'fc1.bias']
    >>> named
    SequentialCell(
      (fc1): Dense(input_channels=2, output_channels=3, has_bias=True)
      (act): ReLU()
    )
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1:
            cells = args[0]
            if isinstance(cells, Cell):
                items, dynamic = [("0", cells)], [True]
            elif isinstance(cells, (list, tuple)):
                items, dynamic = [(str(i), c) for i, c in enumerate(cells)], [True] * len(cells)
            elif isinstance(cells, dict):
                items, dynamic = list(cells.items()), [False] * len(cells)
            else:
                raise TypeError(f"For 'SequentialCell', the 'args[0]' must be Cell, list or orderedDict, "
                                f"but got {type(cells).__name__}")
        else:
            items, dynamic = [(str(i), c) for i, c in enumerate(args)], [True] * len(args)
        for key, cell in items:
            _check_cell(cell, "SequentialCell")
            if not isinstance(key, str) or not key or "." in key:
                raise KeyError(f"For 'SequentialCell', a child's name must be a non-empty string "
                               f"without '.', but got {key!r}.")
        self._store(items, rename=set(range(len(items))), prefix="")
        self.__dict__["_dynamic"] = tuple(dynamic)

    def append(self, cell):
        """Add ``cell`` at the end, named by its position."""
        self._append(cell)

    def insert(self, index, cell):
        """Insert ``cell`` before position ``index``; later positional children move up."""
        self._insert(index, cell)

    def construct(self, input_data):
        for _, cell in self._items():
            input_data = cell(input_data)
        return input_data


class CellList(_Indexed):
    """A list of Cells, named '0', '1', ... (MindSpore 2.10's ``nn.CellList``); not callable.

    Args:
        args: an optional list of Cells.
        auto_prefix (keyword, bool): rename the Cells' Parameters by position;
            default ``True``.

    Supports ``len``, iteration, indexing, slicing, ``cl[i] = cell``,
    ``del cl[i]`` (or a slice), ``+=``, ``append``, ``extend`` and ``insert``.

    >>> from cellkit import nn
    >>> cl = nn.CellList([nn.Dense(2, 2)])
    >>> cl.extend([nn.ReLU(), nn.Dense(2, 1)])
    CellList(
      (0): Dense(input_channels=2, output_channels=2, has_bias=True)
      (1): ReLU()
      (2): Dense(input_channels=2, output_channels=1, has_bias=True)
    )
    >>> cl.insert(0, nn.Dense(2, 2, has_bias=False))
    >>> [n for n, _ in cl.parameters_and_names()]
    ['0.weight', '1.weight', '1.bias', '3.weight', '3.bias']
    >>> del cl[0]
    >>> [n for n, _ in cl.parameters_and_names()]
    ['0.weight', '0.bias', '2.weight', '2.bias']
    """

    def __init__(self, *args, **kwargs):
        auto_prefix = kwargs.pop("auto_prefix", True)
        if kwargs:
            raise TypeError(f"CellList got unexpected keyword arguments {sorted(kwargs)}")
        super().__init__(auto_prefix)
        if len(args) > 1:
            raise TypeError(f"CellList takes at most one positional argument (a list of Cells), got {len(args)}")
        if args and args[0] is not None:
            self.extend(args[0])

    def append(self, cell):
        """Add ``cell`` at the end."""
        self._append(cell)

    def extend(self, cells):
        """Add every Cell of the list ``cells`` at the end; returns the CellList."""
        if not isinstance(cells, (list, tuple)):
            raise TypeError(f"For 'CellList', the new cells wanted to append should be instance of list, "
                            f"but got {type(cells).__name__}.")
        for cell in cells:
            if isinstance(cell, CellDict):
                raise TypeError("For 'CellList', the type of cell can not be CellDict, but got CellDict.")
            self._append(cell)
        return self

    def insert(self, index, cell):
        """Insert ``cell`` before position ``index``."""
        self._insert(index, cell)

    def __iadd__(self, cells):
        return self.extend(cells)


class CellDict(_Container):
    """An ordered dict of Cells (MindSpore 2.10's ``nn.CellDict``); not callable.

    Args:
        args: an optional dict, OrderedDict, CellDict or iterable of
            (key, Cell) pairs.
        auto_prefix (keyword, bool): rename the Cells' Parameters by key;
            default ``True``.

    Keys must be non-empty strings without '.', and must not shadow an
    attribute of the Cell. Containers cannot be values. Supports ``len``,
    iteration over keys, ``in``, ``cd[key]``, ``cd[key] = cell``, ``del
    cd[key]``, ``keys``, ``values``, ``items``, ``update``, ``pop`` and ``clear``.

    >>> from cellkit import nn
    >>> cd = nn.CellDict({'x': nn.Dense(2, 3), 'act': nn.ReLU()})
    >>> [n for n, _ in cd.parameters_and_names()], list(cd.keys())
    (['x.weight', 'x.bias'], ['x', 'act'])
    >>> type(cd.pop('act')).__name__, len(cd)
    ('ReLU', 1)
    """

    def __init__(self, *args, **kwargs):
        auto_prefix = kwargs.pop("auto_prefix", True)
        if kwargs:
            raise TypeError(f"CellDict got unexpected keyword arguments {sorted(kwargs)}")
        super().__init__(auto_prefix)
        if len(args) > 1:
            raise TypeError(f"CellDict takes at most one positional argument, got {len(args)}")
        if args and args[0] is not None:
            self.update(args[0])

    def _validate_key(self, key):
        name = self.cls_name
        if not isinstance(key, str):
            raise TypeError(f"For '{name}', the type of key should be string but got {type(key).__name__}.")
        if key == "":
            raise KeyError(f"For '{name}', key can not be empty string \"\", but got key {key!r}")
        if "." in key:
            raise KeyError(f"For '{name}', key can not contain \".\", but got key {key}")
        if key not in self._keys() and (key in self.__dict__ or hasattr(type(self), key)):
            raise KeyError(f"For '{name}', the key can not be same with the attributes of Cell, "
                           f"but got key {key}.")

    def _validate_cell(self, cell):
        name = self.cls_name
        if cell is None:
            raise TypeError(f"For '{name}', cell can not be None.")
        if not isinstance(cell, Cell):
            raise TypeError(f"For '{name}', the type of cell should be Cell, but got {type(cell).__name__}.")
        if isinstance(cell, (CellDict, CellList, SequentialCell)):
            raise TypeError(f"For '{name}', the type of cell can not be CellDict, CellList or SequentialCell, "
                            f"but got {type(cell).__name__}.")

    def __getitem__(self, key):
        if key not in self._keys():
            raise KeyError(key)
        return self.__dict__[key]

    def __setitem__(self, key, cell):
        self._validate_key(key)
        self._validate_cell(cell)
        items = self._items()
        keys = [k for k, _ in items]
        if key in keys:
            i = keys.index(key)
            items[i] = (key, cell)
        else:
            i = len(items)
            items.append((key, cell))
        self._store(items, rename={i})

    def __delitem__(self, key):
        if key not in self._keys():
            raise KeyError(key)
        self._store([(k, c) for k, c in self._items() if k != key])

    def __iter__(self):
        return iter(self._keys())

    def __contains__(self, key):
        return key in self._keys()

    def keys(self):
        """The keys, in order."""
        return list(self._keys())

    def values(self):
        """The Cells, in order."""
        return [c for _, c in self._items()]

    def items(self):
        """(key, Cell) pairs, in order."""
        return self._items()

    def clear(self):
        """Remove every Cell."""
        self._store([])

    def pop(self, key):
        """Remove the Cell at ``key`` and return it."""
        cell = self[key]
        del self[key]
        return cell

    def update(self, cells):
        """Add or replace Cells from a mapping or an iterable of (key, Cell) pairs."""
        if isinstance(cells, (abc.Mapping, CellDict)):
            pairs = list(cells.items())
        elif isinstance(cells, abc.Iterable):
            pairs = []
            for i, kv in enumerate(cells):
                if not isinstance(kv, abc.Iterable):
                    raise TypeError(f"CellDict update sequence element #{i} should be Iterable; but got "
                                    f"{type(kv).__name__}")
                kv = tuple(kv)
                if len(kv) != 2:
                    raise ValueError(f"CellDict update sequence element #{i}, length should be 2; but has "
                                     f"length {len(kv)}")
                pairs.append(kv)
        else:
            raise TypeError(f"CellDict.update() should be called with an iterable of key-value pairs, "
                            f"but got {type(cells).__name__}")
        for key, cell in pairs:
            self[key] = cell

