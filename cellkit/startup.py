"""What ``import cellkit`` does to keep a fresh process's start cheap.

A short script pays its imports every time it runs. Two costs here are not
the imported code's own work:

* **The cyclic collector.** Importing cellkit, JAX and NumPy makes about
  160,000 objects (modules, functions, tables). With the collector running, the
  import triggers two full collections (40-65 ms, finding about a thousand
  unreachable objects), and every later full collection, and those at
  interpreter exit (about 0.1 s), walk them all. :func:`collector_paused`
  pauses the collector around an import; ``freeze=True`` (cellkit's own
  import) then freezes the objects made, out of the collector's sight: they
  live as long as the process. ``CELLKIT_GC_FREEZE=0`` (read at import) leaves
  the collector alone.
* **JAX's ROCm plugin scan.** ``jax.numpy`` looks for a ``jax-rocm*-plugin``
  distribution by reading the metadata of every installed one (about 20 ms
  for 100 distributions, more in larger environments). :func:`import_jax`
  imports JAX with that one loop handed only the distributions whose names
  start with ``jax_rocm`` (read from their folder names, no metadata parsed):
  the loop finds the same plugin, or none, as before. Any other caller of
  ``importlib.metadata.distributions`` meanwhile gets every distribution.
* **Libraries a script may not use.** optax (25 ms with absl) is imported by
  cellkit's optimizers and learning-rate schedules on their first use, not by
  ``import cellkit``: they name it through :func:`lazy_module`.

>>> from cellkit import startup
>>> with startup.collector_paused():
...     import json
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys

__all__ = ["collector_paused", "import_jax", "lazy_module", "LEAVE_GC"]

LEAVE_GC = os.environ.get("CELLKIT_GC_FREEZE", "1").strip().lower() in ("0", "off", "false", "no")
_SCANNER = "jax._src.numpy.array_constructors"   # JAX's module whose import scans for a ROCm plugin


@contextlib.contextmanager
def collector_paused(freeze: bool = False):
    """The cyclic collector paused for the body (unless ``CELLKIT_GC_FREEZE=0``), its state restored after;
    ``freeze``: every object alive then is frozen first (for an import at a process's start only: a frozen
    object caught in a reference cycle later is never freed)."""
    if LEAVE_GC:
        yield
        return
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()   # (before the collector resumes: else its next collection walks every object made)
        if was_on:
            gc.enable()


def _rocm_candidates(original):
    def distributions(**kwargs):
        found = original(**kwargs)
        if kwargs or sys._getframe(1).f_globals.get("__name__") != _SCANNER:
            return found
        return (d for d in found if (getattr(d, "_normalized_name", None) or "jax_rocm").startswith("jax_rocm"))
    return distributions


def import_jax():
    """``import jax``, its ROCm plugin scan narrowed as the module docstring says (only on the first import)."""
    if "jax" in sys.modules:
        import jax
        return jax
    import importlib.metadata   # (with the collector paused, when cellkit's import calls this)
    original = importlib.metadata.distributions
    importlib.metadata.distributions = _rocm_candidates(original)
    try:
        import jax
    finally:
        importlib.metadata.distributions = original
    return jax


class lazy_module:
    """A stand-in for the module ``name`` that imports it on the first attribute read (collector paused)
    and reads every attribute from it: ``optax = lazy_module("optax")`` and then ``optax.adam(...)``."""

    __slots__ = ("_name", "_module")

    def __init__(self, name: str):
        self._name, self._module = name, None

    def __getattr__(self, attr):
        module = self._module
        if module is None:
            module = sys.modules.get(self._name)
            if module is None:
                import importlib
                with collector_paused():
                    module = importlib.import_module(self._name)
            self._module = module
        return getattr(module, attr)

    def __repr__(self):
        return f"<lazy module {self._name!r}{'' if self._module is None else ' (imported)'}>"
