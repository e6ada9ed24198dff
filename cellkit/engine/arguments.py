"""How ``jit`` takes a call apart: the cache key, the Parameters, the traced values.

A call's arguments are split into three things: a hashable *kind* per argument
(the cache key: static values, tree structures, each Cell's structure
signature), the Parameters reached through the arguments (``stateful``, one
group per Cell or Parameter), and the dynamic leaves (``dyn``, the arrays that
become traced inputs). Inside the trace :func:`rebuild` puts the arguments back
together from the traced values and the original objects.
"""

from __future__ import annotations

import jax
import numpy as np
from jax.sharding import PartitionSpec

from ..cell import Cell, _static_key
from ..parameter import Parameter
from .capture import _signature

__all__ = ["split", "rebuild", "layout", "dyn_shardings"]

_ARRAY_TYPES = (jax.Array, np.ndarray, np.generic, int, float, complex, bool)


def _classify_leaf(leaf, stateful):
    if isinstance(leaf, Cell):
        _, _, params, token = _signature(leaf)
        stateful.append(params)
        return ("c", token)
    if isinstance(leaf, Parameter):
        leaf._get()
        stateful.append((leaf,))
        return ("p",)
    if isinstance(leaf, _ARRAY_TYPES) or hasattr(leaf, "__jax_array__"):
        return None
    return ("s", _static_key(leaf))


def _is_stateful(x) -> bool:
    return isinstance(x, (Cell, Parameter))


def _split_tree(a, stateful):
    leaves, treedef = jax.tree_util.tree_flatten(a, is_leaf=_is_stateful)
    leaf_kinds = tuple(_classify_leaf(leaf, stateful) for leaf in leaves)
    d = [leaf if k is None else None for leaf, k in zip(leaves, leaf_kinds)]
    return ("t", treedef, leaf_kinds), d


def split(args, kwargs, static_argnums, static_argnames):
    """((kinds, sorted keyword names), Parameter groups, dynamic leaves) of one call."""
    kinds, stateful, dyn = [], [], []
    for i, a in enumerate(args):
        if i in static_argnums:
            kinds.append(("s", _static_key(a)))
            dyn.append(None)
        elif isinstance(a, _ARRAY_TYPES):
            kinds.append(None)
            dyn.append(a)
        elif isinstance(a, (Cell, Parameter)):
            kinds.append(_classify_leaf(a, stateful))
            dyn.append(None)
        else:
            kind, d = _split_tree(a, stateful)
            kinds.append(kind)
            dyn.append(d)
    kw = ()
    if kwargs:
        kw = tuple(sorted(kwargs))
        for name in kw:
            a = kwargs[name]
            if name in static_argnames:
                kinds.append(("s", _static_key(a)))
                dyn.append(None)
            else:
                kind, d = _split_tree(a, stateful)
                kinds.append(kind)
                dyn.append(d)
    return (tuple(kinds), kw), tuple(stateful), dyn


def rebuild(call, dyn):
    """The arguments inside the trace: traced values where dynamic, objects elsewhere."""
    kinds, kw = call.kinds
    n = len(call.args)
    originals = list(call.args) + [call.kwargs[k] for k in kw]
    rebuilt = []
    for kind, orig, d in zip(kinds, originals, dyn):
        if kind is None:
            rebuilt.append(d)
        elif kind[0] == "t":
            leaves = jax.tree_util.tree_leaves(orig, is_leaf=_is_stateful)
            merged = [x if k is None else leaf for x, k, leaf in zip(d, kind[2], leaves)]
            rebuilt.append(jax.tree_util.tree_unflatten(kind[1], merged))
        else:
            rebuilt.append(orig)
    return rebuilt[:n], dict(zip(kw, rebuilt[n:]))


def layout(stateful):
    """(the arguments' Parameters without repeats, in order; where each occurrence went, or None).

    A Parameter reached through two arguments (a Cell and its optimizer, the
    same Cell twice) is passed in once. The pattern is part of the cache key:
    ``f(a, a)`` and ``f(a, b)`` share a structure but not a computation.
    """
    seen, unique, pattern = {}, [], []
    for group in stateful:
        for p in group:
            i = seen.get(id(p))
            if i is None:
                i = seen[id(p)] = len(unique)
                unique.append(p)
            pattern.append(i)
    return unique, (None if len(unique) == len(pattern) else tuple(pattern))


def _broadcast_prefix(prefix, tree) -> list:
    """One entry of the sharding tree ``prefix`` per leaf of ``tree`` (Cells and Parameters are leaves)."""
    leaves = []

    def repeat(s, sub):
        leaves.extend([s] * len(jax.tree_util.tree_leaves(sub, is_leaf=_is_stateful)))

    jax.tree_util.tree_map(repeat, prefix, tree,
                           is_leaf=lambda x: x is None or isinstance(x, (jax.sharding.Sharding, PartitionSpec)))
    return leaves


def dyn_shardings(fn, spec, static_argnums, call):
    """The user's ``in_shardings`` ``spec`` (one per non-static positional argument of ``fn``) laid
    out like ``dyn``; the Parameters' values (``vals``) keep the shardings they have."""
    args = call.args
    kinds = call.kinds[0]
    positions = [i for i in range(len(args)) if i not in static_argnums]
    explicit = isinstance(spec, (tuple, list))
    if explicit and len(spec) != len(positions):
        raise ValueError(f"cellkit.jit({getattr(fn, '__name__', 'fn')}): in_shardings has "
                         f"{len(spec)} entries but the call has {len(positions)} non-static "
                         "positional arguments; give one per argument (None: as it comes)")
    per_arg = dict(zip(positions, spec)) if explicit else dict.fromkeys(positions, spec)
    out = []
    for i, kind in enumerate(kinds):
        s = per_arg.get(i) if i < len(args) else None  # keyword arguments keep their sharding
        if s is None or kind is None:
            out.append(s)
        elif kind[0] == "t":  # a tree: the prefix broadcast over its leaves, Parameters skipped
            leaves = _broadcast_prefix(s, args[i])
            out.append([x if k is None else None for x, k in zip(leaves, kind[2])])
        else:
            if explicit and kind[0] in ("c", "p"):
                raise ValueError(f"cellkit.jit({getattr(fn, '__name__', 'fn')}): in_shardings "
                                 f"entry {positions.index(i)} is for a {type(args[i]).__name__}; it must be "
                                 "None: Parameters are placed by their own sharding (parallel.shard)")
            out.append(None)
    return out
