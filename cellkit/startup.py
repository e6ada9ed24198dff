"""What ``import cellkit`` does to keep a fresh process's start cheap.

A short script pays its imports every time it runs. The costs here are not
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
* **A test library JAX's import reaches.** ``jax._src.path`` imports
  ``etils.epath``, whose ``testing`` module imports ``unittest.mock`` and with it
  ``asyncio`` (about 8 ms) and the ``unittest`` package (about 6 ms) without
  using them at import. :func:`import_jax` defers both (:func:`defer_submodule`):
  each loads on its first use, the same module object.
* **Libraries a script may not use.** optax (25 ms with absl) is imported by
  cellkit's optimizers and learning-rate schedules on their first use, not by
  ``import cellkit``: they name it through :func:`lazy_module`, which defers the
  parts of it nothing reads then (:data:`UNREAD_PARTS`: about 5 ms).
* **Parts of a library nothing reads at import.** ``import grain`` imports
  ``grain.checkpoint``, whose Orbax handlers import Orbax, TensorStore and
  Pallas wherever Orbax is installed: 95 ms of grain's 150. ``cellkit.dataset``
  reads nothing from it. :func:`defer_submodule` makes such a submodule a
  module object that runs its code on the first attribute read: the same object
  afterwards, with everything it would have had (``grain.checkpoint.CheckpointSave``
  imports Orbax then).

>>> from cellkit import startup
>>> with startup.collector_paused():
...     import json
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import threading
import types

__all__ = ["collector_paused", "defer_submodule", "import_jax", "lazy_module", "LEAVE_GC", "UNREAD_PARTS"]

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
    """``import jax``, its ROCm plugin scan narrowed and ``unittest.mock`` deferred as the module docstring
    says (only on the first import)."""
    if "jax" in sys.modules:
        import jax
        return jax
    defer_submodule("unittest")        # (``from unittest import mock`` then reads the deferred mock below
    defer_submodule("unittest.mock")   # as the package's attribute: neither runs)
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
                for name in UNREAD_PARTS.get(self._name, ()):
                    defer_submodule(name)
                with collector_paused():
                    module = importlib.import_module(self._name)
            self._module = module
        return getattr(module, attr)

    def __repr__(self):
        return f"<lazy module {self._name!r}{'' if self._module is None else ' (imported)'}>"


# Parts a library's import loads and nothing reads then, deferred when cellkit imports it (lazy_module):
# optax's optional families (experimental, perturbations, ...) and the distributions of jax.scipy.stats,
# of which optax's import reads only ``norm`` (about 5 ms of optax's 25).
UNREAD_PARTS = {"optax": ("jax.scipy.stats", "optax.experimental", "optax.perturbations", "optax.second_order",
                          "optax.assignment", "optax.projections")}

_LOADING = threading.RLock()


class _Deferred(types.ModuleType):
    """A module whose code has not run yet: the first read of a missing attribute (or ``dir``) runs it in
    place, and the object is then a plain module (made by :func:`defer_submodule`)."""

    def _load(self):
        with _LOADING:
            if type(self) is _Deferred:
                self.__class__ = types.ModuleType
                try:
                    with collector_paused():
                        self.__spec__.loader.exec_module(self)
                except BaseException:
                    self.__class__ = _Deferred   # (the next read tries again, as a re-import would)
                    raise

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__") and attr not in ("__all__", "__version__"):
            raise AttributeError(attr)   # (probes of module metadata do not run the code)
        self._load()
        return getattr(self, attr)

    def __dir__(self):
        self._load()
        return dir(self)


def defer_submodule(name: str) -> bool:
    """Make the submodule ``name`` ("package.sub"), or the top-level module ``name``, run its code only
    when one of its attributes is first read, not when it is imported. Returns whether it did: False
    when the module is already imported, or not found as a plain source or byte-code file (for a
    dotted name, finding it imports the top-level package).

    For a submodule that its package (not yet imported) imports but nothing reads at import time, the
    package's ``from . import sub`` binds the deferred module. For one whose package is already imported
    (and does not import it), the deferred module is set as the package's attribute, as its import
    would set it: ``import package.sub``, ``from package import sub`` and ``from package.sub import x``
    all give it. Every later use sees that same object, loaded.
    """
    import importlib.machinery
    import importlib.util
    parent, _, child = name.rpartition(".")
    if name in sys.modules:
        return False
    try:
        if parent:
            found = importlib.util.find_spec(parent)
            places = None if found is None else found.submodule_search_locations
            spec = None if places is None else importlib.machinery.PathFinder.find_spec(name, list(places))
        else:
            spec = importlib.machinery.PathFinder.find_spec(name)
    except (ImportError, ValueError):
        return False
    loaders = (importlib.machinery.SourceFileLoader, importlib.machinery.SourcelessFileLoader)
    if spec is None or not isinstance(spec.loader, loaders):
        return False
    module = importlib.util.module_from_spec(spec)
    module.__class__ = _Deferred
    sys.modules[name] = module
    if parent and parent in sys.modules:
        setattr(sys.modules[parent], child, module)
    return True
