"""What a function reaches: the Parameters of a Cell, the Cells and Parameters behind its names.

``cell_signature`` flattens a Cell once and caches its structure and ordered
Parameters until the structure changes (``structure_epoch``). The bindings
helpers find the globals and closure variables a function uses (and those of
the functions it calls by name) that may hold Parameters, and tell whether any
of those names has since been rebound; ``jit`` uses them to find captured
Parameters and to know when to look again.
"""

from __future__ import annotations

import functools
import itertools
import types

import jax

from ..cell import Cell
from ..parameter import Parameter, ParameterTuple, structure_epoch
from .frame import _MISS, _is_param

__all__ = ["Transformed", "cell_signature", "cell_token"]


class Transformed:
    """Base of the callables ``jit`` and ``grad`` return: discovery looks through them to ``fn``."""


def cell_signature(cell):
    """(treedef, unique Parameters in order) for a Cell, cached until the structure changes."""
    cached = _signature(cell)
    return cached[1], cached[2]


def cell_token(cell) -> int:
    """A small integer standing for the Cell's treedef: equal treedefs get the same token.

    Cache keys hold it instead of the treedef, whose hash walks the whole
    structure (tens of microseconds for a deep model) on every call.
    """
    return _signature(cell)[3]


_TOKENS: dict = {}
_next_token = itertools.count()


def _signature(cell):
    d = cell.__dict__
    cached = d.get("_ck_sig")
    if cached is not None and cached[0] == structure_epoch[0]:
        return cached
    leaves, treedef = jax.tree_util.tree_flatten(cell, is_leaf=_is_param)
    seen, params = set(), []
    for leaf in leaves:
        if isinstance(leaf, Parameter) and id(leaf) not in seen:
            seen.add(id(leaf))
            leaf._get()
            params.append(leaf)
    token = _TOKENS.get(treedef)
    if token is None:
        # Tokens are never reused, so forgetting them all (a model zoo's worth) only costs cache misses.
        if len(_TOKENS) >= 4096:
            _TOKENS.clear()
        token = _TOKENS[treedef] = next(_next_token)
    cached = d["_ck_sig"] = (structure_epoch[0], treedef, tuple(params), token)
    return cached


# Closure and global bindings: detect that a name a function uses now means another object.

_RELEVANT = (Cell, Parameter, ParameterTuple, list, tuple, dict)


def _code_names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


_FUNCS = (types.FunctionType, functools.partial)


def _collect_bindings(fn, out, seen, depth=0) -> None:
    """Record (namespace, name, object) for every global or closure variable that
    ``fn`` (and the functions it calls by name) uses and that may hold Parameters."""
    if depth > 6 or id(fn) in seen:
        return
    seen.add(id(fn))
    if isinstance(fn, Transformed):
        return _collect_bindings(fn.fn, out, seen, depth + 1)
    if isinstance(fn, functools.partial):
        return _collect_bindings(fn.func, out, seen, depth + 1)
    if isinstance(fn, types.MethodType):
        return _collect_bindings(fn.__func__, out, seen, depth + 1)
    code = getattr(fn, "__code__", None)
    if code is None:
        return
    found = []
    g = getattr(fn, "__globals__", {})
    for name in _code_names(code):
        v = g.get(name, _MISS)
        if v is not _MISS:
            found.append((g, name, v))
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            found.append((cell, None, cell.cell_contents))
        except ValueError:  # not bound yet
            continue
    for ns, name, v in found:
        if isinstance(v, _RELEVANT):
            out.append((ns, name, v))
        elif isinstance(v, _FUNCS + (Transformed,)):
            out.append((ns, name, v))
            _collect_bindings(v, out, seen, depth + 1)


def _bindings_hold(bindings) -> bool:
    for ns, name, obj in bindings:
        if name is None:
            try:
                if ns.cell_contents is not obj:
                    return False
            except ValueError:
                return False
        elif ns.get(name, _MISS) is not obj:
            return False
    return True

