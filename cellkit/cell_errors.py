"""How an error leaving a Cell is annotated: the failing Cell named once, with its path from
the outermost Cell it passed through, and a clearer ``TypeError`` for inputs ``construct``
cannot take."""

from __future__ import annotations

import inspect

__all__ = ["annotate", "call_failed", "note"]


def describe(cell) -> str:
    extra = " ".join(cell.extend_repr().split())
    return f"{cell.cls_name}({extra})" if extra else cell.cls_name


def note(err: BaseException, text: str, *, replace=None) -> None:
    """Add ``text`` to ``err``'s notes (replacing the note ``replace``). Before Python 3.11,
    which has no notes, the text goes at the end of the message itself; the type is kept."""
    if hasattr(err, "add_note"):
        notes = getattr(err, "__notes__", None)
        if replace is not None and notes and replace in notes:
            notes[notes.index(replace)] = text
        else:
            err.add_note(text)
    elif err.args and isinstance(err.args[0], str):
        msg = err.args[0]
        if replace is not None and msg.endswith("\n" + replace):
            msg = msg[:-len(replace) - 1]
        err.args = (f"{msg}\n{text}",) + err.args[1:]


def path_to(root, target):
    for path, cell in root.cells_and_names():
        if cell is target:
            return path
    return None


def annotate(err: BaseException, cell) -> None:
    """Name the Cell an error came from: once, where it was raised, with its path from the
    outermost Cell it passed through (``in Cell layers.1 (Dense(...)) of Net``)."""
    where = getattr(err, "_ck_where", None)  # (outermost Cell so far, path from it, failing Cell, note)
    if where is None:
        desc = describe(cell)
        text = f"  in Cell {desc}"
        note(err, text)
        err._ck_where = (cell, "", desc, text)
        from .parameter import abstract_types
        for _, p in cell._own_params():
            if isinstance(p._value, abstract_types):
                note(err, f"  Parameter '{p.name}' is abstract (made under parallel.abstract()) and has no "
                           "data yet: make it with parallel.initialize(cell, mesh) or give it a value with set_data")
        return
    inner, path, desc, old = where
    rel = None if inner is cell else path_to(cell, inner)
    if not rel:  # re-entered, or ``inner`` was reached from outside this Cell's tree
        return
    path = f"{rel}.{path}" if path else rel
    text = f"  in Cell {path} ({desc}) of {cell.cls_name}"
    note(err, text, replace=old)
    err._ck_where = (cell, path, desc, text)


def bad_inputs(cell, args, kwargs):
    """A TypeError saying why ``construct`` cannot take these inputs, or None if it can."""
    try:
        sig = inspect.signature(cell.construct)
    except (TypeError, ValueError):
        return None
    try:
        sig.bind(*args, **kwargs)
    except TypeError as why:
        given = f"{len(args)} positional input(s)" + (f" and keywords {sorted(kwargs)}" if kwargs else "")
        return TypeError(f"{cell.cls_name} was called with {given}, but its construct{sig} does "
                         f"not take them: {why}")
    return None


def call_failed(cell, err, args, kwargs):
    """Annotate ``err`` as it leaves ``cell``; returns a clearer error to raise instead, or None."""
    if getattr(err, "_ck_internal", False):
        return None
    if isinstance(err, TypeError) and not hasattr(err, "_ck_where"):
        new = bad_inputs(cell, args, kwargs)
        if new is not None:
            annotate(new, cell)
            return new
    annotate(err, cell)
    return None
