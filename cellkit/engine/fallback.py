"""Python control flow on traced values inside ``cellkit.jit``: run the function op by op instead.

MindSpore's graph mode runs ``if out.sum() > 0:`` in a ``construct`` (its JIT
fallback). JAX cannot trace it: it raises ``TracerBoolConversionError``. When a
``cellkit.jit`` function (or a Cell called in GRAPH_MODE) meets that, this module
warns once, naming the file and line, and runs that function (for that cache
entry) op by op from then on, still writing its Parameters back. When the
function is itself called under an outer JAX trace (``jax.jit``, ``jax.vmap`` ...)
nothing can run op by op: the error names the file, the line and the fix instead.
"""

from __future__ import annotations

import os
import traceback
import warnings

import jax

from .. import context

__all__ = ["CONCRETE_ERRORS", "FIX", "fall_back", "EagerEntry", "where"]

CONCRETE_ERRORS = (jax.errors.ConcretizationTypeError, jax.errors.TracerBoolConversionError,
                   jax.errors.TracerIntegerConversionError, jax.errors.TracerArrayConversionError)

_ROOTS = tuple(os.path.dirname(m.__file__) + os.sep for m in (jax, __import__("cellkit")))
_warned = set()

FIX = ("compute both branches and pick with ops.select / jnp.where, use "
       "ops.WhileLoop / ops.ForiLoop / ops.Scan (or jax.lax.cond) for loops and branches, or "
       "make the value static (static_argnums)")


def where(err) -> str:
    """``file:line: source`` of the innermost user frame in ``err``'s traceback."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if not f.filename.startswith(_ROOTS)]
    if not frames:
        return "an unknown place"
    f = frames[-1]
    return f"{f.filename}:{f.lineno}" + (f" ({f.line.strip()})" if f.line else "")


def refuse(name, place):
    """The error for control flow on a traced value where nothing can run op by op."""
    return TypeError(f"cellkit.jit({name}): Python control flow on a traced value at {place}: under an "
                     f"outer JAX transform a traced value has no True/False or concrete value, and the "
                     f"function cannot run op by op. To compile it, {FIX}.")


def _run_eagerly(fn, args, kwargs):
    saved = context.graph[0]
    context.graph[0] = False  # the Cells inside run op by op too
    try:
        return fn(*args, **kwargs)
    finally:
        context.graph[0] = saved


class EagerEntry:
    """A cache entry that runs the function op by op (it took Python control flow on a traced value)."""

    __slots__ = ("jf", "epoch", "covered", "captured", "place", "tls")

    def __init__(self, jf, epoch, place, tls):
        self.jf, self.epoch, self.covered, self.captured, self.place = jf, epoch, True, (), place
        self.tls = tls  # where the jitted function keeps the call being made

    last_split = ((), (), ())  # no Parameters passed in, none donated: they are read and written op by op

    def plist(self, unique):
        return ()

    def compiled(self, donate):
        return self.jitted

    def jitted(self, donated, kept, dyn):
        call = self.tls.call
        if any(isinstance(x, jax.core.Tracer) for x in jax.tree_util.tree_leaves(dyn)):
            raise refuse(getattr(self.jf.fn, "__name__", "fn"), self.place)
        return _run_eagerly(self.jf.fn, call.args, call.kwargs), [], {}


def fall_back(jf, key, err, call, epoch, tls):
    """Warn once, replace ``jf``'s cache entry ``key`` by an op-by-op one, and run the call that way."""
    name = getattr(jf.fn, "__name__", type(jf.fn).__name__)
    place = where(err)
    if (id(jf.fn), place) not in _warned:
        _warned.add((id(jf.fn), place))
        warnings.warn(f"cellkit.jit({name}): Python control flow on a traced value at {place}; running "
                      f"{name} op by op (not compiled) for inputs of this structure, as MindSpore's JIT "
                      f"fallback does; Parameters it assigns are still written back. To compile it, {FIX}.",
                      RuntimeWarning, stacklevel=3)
    jf._entries[key] = EagerEntry(jf, epoch, place, tls)
    return _run_eagerly(jf.fn, call.args, call.kwargs)
