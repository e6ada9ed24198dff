"""What every op module shares: Parameters unwrapped to arrays, and the export and rename helpers.

A family module keeps its own ``__all__``; ``_public = exporter(__all__)`` is the
decorator that adds a function to it, and ``install_renames`` turns a table of
``name: (jax_function, "(MindSpore signature)")`` lines into ops.
"""

from __future__ import annotations

import functools

import numpy as np

from ...parameter import Parameter

__all__ = ["exporter", "install_renames", "rename"]


def _v(x):
    """A Parameter's value (lists/tuples of them too); anything else unchanged."""
    if isinstance(x, Parameter):
        return x.value
    if isinstance(x, (list, tuple)) and any(isinstance(e, Parameter) for e in x):
        return [_v(e) for e in x]
    return x


def _dtype(dtype, default=None):
    """``dtype`` as a NumPy dtype, or ``default`` when it is None."""
    return default if dtype is None else np.dtype(dtype)


def _axis(dim):
    """An axis argument as JAX takes it: a list of axes becomes a tuple."""
    return tuple(dim) if isinstance(dim, list) else dim


def exporter(names: list):
    """A decorator that appends the function's name to ``names`` (a module's ``__all__``)."""
    def public(fn):
        names.append(fn.__name__)
        return fn
    return public


def rename(name, jax_fn, doc):
    """The MindSpore op ``name``: ``jax_fn`` with Parameters accepted wherever arrays are."""
    @functools.wraps(jax_fn)
    def op(*args, **kwargs):
        return jax_fn(*[_v(a) for a in args], **{k: _v(v) for k, v in kwargs.items()})
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"MindSpore ``ops.{name}{doc}``: ``{jax_fn.__module__}.{jax_fn.__name__}``."
    op.__wrapped__ = jax_fn
    return op


def install_renames(namespace: dict, names: list, table: dict) -> None:
    """Define each ``name: (jax_fn, signature)`` of ``table`` in ``namespace`` and export it."""
    for name, (fn, sig) in table.items():
        namespace[name] = rename(name, fn, sig)
        names.append(name)
