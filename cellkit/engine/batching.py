"""``vmap`` with MindSpore's ``in_axes``/``out_axes``, over functions, Cells and ensembles of Cells.

The function runs in a frame that binds the *mapped* Parameters (those of a
Cell or Parameter argument whose ``in_axes`` entry is an int, or the stacked
Parameters of an ensemble) to their per-example slices; other Parameters are
read unmapped through the enclosing frame. Assigned Parameters come out of
``jax.vmap``: mapped ones stacked along their axis and written back (into each
member, for an ensemble); unmapped ones must be assigned the same value for
every example, else the error names them.

Per-example gradients are ``vmap`` of ``grad`` with ``weights``:

>>> import numpy as np
>>> import cellkit as ms
>>> from cellkit import nn, ops
>>> net = nn.Dense(3, 1)
>>> loss = lambda x, y: ((net(x) - y) ** 2).sum()
>>> per_example = ops.vmap(ms.grad(loss, None, net.trainable_params()))
>>> gw, gb = per_example(ops.ones((8, 1, 3)), ops.zeros((8, 1, 1)))
>>> gw.shape, gb.shape
((8, 1, 3), (8, 1))

A model ensemble is ``vmap`` over a ``CellList`` of copies of one Cell: their
Parameters are stacked and each member sees its own slice:

>>> members = nn.CellList([nn.Dense(3, 2) for _ in range(4)])
>>> ops.vmap(members, in_axes=None)(ops.ones((5, 3))).shape
(4, 5, 2)
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from ..cell import Cell
from ..parameter import Parameter
from ..rewrite import rewrite_function
from .capture import Transformed, cell_signature
from .fallback import CONCRETE_ERRORS, FIX, where
from .frame import _to_values
from .transforms import finish, pure

__all__ = ["vmap", "VmapFunction"]


def _check_axes(axes, what):
    ok = axes is None or (isinstance(axes, int) and not isinstance(axes, bool))
    if ok:
        return axes
    if isinstance(axes, (tuple, list)):
        return tuple(_check_axes(a, what) for a in axes)
    raise RuntimeError(f"vmap: {what} must be an int, None, or a tuple/list of those, got {axes!r}")


def _is_ensemble(fn) -> bool:
    """An ``nn.CellList`` (or a subclass): a list of Cells, not callable itself."""
    return isinstance(fn, Cell) and any(c.__name__ == "CellList" for c in type(fn).__mro__)


class VmapFunction(Transformed):
    """What ``vmap`` returns: call it like ``fn`` with batched inputs."""

    def __init__(self, fn, in_axes, out_axes):
        self.fn = rewrite_function(fn)
        self.in_axes = _check_axes(in_axes, "in_axes")
        self.out_axes = _check_axes(out_axes, "out_axes")
        if isinstance(self.in_axes, tuple) and all(a is None for a in self.in_axes) and self.in_axes:
            raise RuntimeError("vmap: in_axes maps no argument (all None); map at least one")
        if not isinstance(fn, Cell):
            functools.update_wrapper(self, fn, updated=())

    def _members(self):
        cells = list(self.fn)
        if not cells:
            raise ValueError("vmap: the CellList is empty; an ensemble needs at least one Cell")
        sigs = [cell_signature(c) for c in cells]
        for i, (treedef, _) in enumerate(sigs[1:], 1):
            if treedef != sigs[0][0]:
                raise ValueError(f"vmap: Cell {i} of the ensemble ({cells[i].cls_name}) does not have the "
                                 f"structure of Cell 0 ({cells[0].cls_name}); every member must be a copy "
                                 "of one Cell (same class, attributes and Parameter shapes)")
        return cells, [params for _, params in sigs]

    def __call__(self, *args, **kwargs):
        in_axes = self.in_axes
        if isinstance(in_axes, tuple):
            if len(in_axes) != len(args):
                raise RuntimeError(f"vmap: in_axes has {len(in_axes)} entries but the function was called "
                                   f"with {len(args)} positional arguments; give one per argument")
        else:
            in_axes = (in_axes,) * len(args)
        mapped, paxes, pvals = [], [], []
        members = None
        fn = self.fn
        if _is_ensemble(fn):
            cells, groups = self._members()
            members = groups
            fn = cells[0]
            for j, p in enumerate(groups[0]):
                mapped.append(p)
                paxes.append(0)
                pvals.append(jnp.stack([g[j].value for g in groups]))
        positions, xs, xaxes = [], [], []
        for i, (a, ax) in enumerate(zip(args, in_axes)):
            if isinstance(a, (Cell, Parameter)):
                if ax is None:
                    continue
                params = cell_signature(a)[1] if isinstance(a, Cell) else (a,)
                for p in params:
                    mapped.append(p)
                    paxes.append(ax)
                    pvals.append(p.value)
            else:
                positions.append(i)
                xs.append(_to_values(a))
                xaxes.append(ax)
        if not positions and not mapped:
            raise RuntimeError("vmap: nothing to map over; give at least one mapped argument")
        f, written, parent = pure(fn, tuple(mapped), args, positions, kwargs)
        index = {id(p): k for k, p in enumerate(mapped)}
        split = []

        def g(pv, xv):
            out, wv = f(pv, xv)
            m, u = [], []
            for p, v in zip(written, wv):
                (m if id(p) in index else u).append(v)
            split[:] = [[p for p in written if id(p) in index], [p for p in written if id(p) not in index]]
            return out, m, u

        out_axes = self.out_axes
        try:
            out, mw, uw = jax.vmap(g, in_axes=(paxes, xaxes), out_axes=(out_axes, 0, None))(pvals, xs)
        except CONCRETE_ERRORS as err:  # Python control flow on a value that differs per example
            raise TypeError(f"vmap({_name(self.fn)}): Python control flow on a mapped value at {where(err)}: "
                            f"each example has its own value there, so it has no single True/False or "
                            f"concrete value. To map it, {FIX}.") from err
        except ValueError as err:
            unmapped = split[1] if split else []
            if unmapped and "out_axes" in str(err):
                names = ", ".join(repr(p.name) for p in unmapped)
                raise ValueError(f"vmap({_name(self.fn)}): Parameter(s) "
                                 f"{names} were assigned a value that differs along the mapped axis, but "
                                 "they are not mapped (one value for all examples). Map them (pass their "
                                 "Cell with an in_axes entry, or vmap an ensemble), or do not assign them "
                                 "inside vmap (e.g. set_train(False) for BatchNorm)") from err
            raise
        mparams, uparams = split
        writes, values = list(uparams), list(uw)
        for p, v in zip(mparams, mw):
            k = index[id(p)]
            if members is not None and k < len(members[0]):
                for m, group in enumerate(members):
                    writes.append(group[k])
                    values.append(v[m])
            else:
                writes.append(p)
                values.append(jnp.moveaxis(v, 0, paxes[k]))
        finish(parent, writes, values)
        return out


def _name(fn) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


def vmap(fn, in_axes=0, out_axes=0):
    """Vectorise ``fn`` along ``in_axes`` of its inputs, MindSpore's ``ops.vmap``/``ms.vmap``.

    ``in_axes``: an int or None for every positional argument, or a tuple/list
    with one entry per argument. A Cell or Parameter argument with an int entry
    has its Parameters mapped along that axis (they hold stacked values), with
    None it is shared. ``fn`` may be a function, a Cell, or a ``CellList`` of
    copies of one Cell (a model ensemble: each member's Parameters are stacked
    and the result has one row per member). ``out_axes`` places the mapped axis
    in the outputs. Parameters assigned inside are written back.

    >>> import numpy as np
    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> x = ms.Tensor(np.array([[1, 2], [3, 4], [5, 6]], np.float32))
    >>> y = ms.Tensor(np.array([[-3, -2, -1], [3, 2, 1]], np.float32))
    >>> z = ms.Tensor(np.array([0, 3], np.float32))
    >>> ops.vmap(lambda x, y, z: x + y + z, in_axes=(0, 1, None), out_axes=1)(x, y, z)
    Array([[-2.,  1.,  4.],
           [ 8.,  9., 10.]], dtype=float32)
    """
    return VmapFunction(fn, in_axes, out_axes)
