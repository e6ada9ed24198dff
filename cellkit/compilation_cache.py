"""JAX's persistent compilation cache, on by default, for short eager programs.

A PyNative program compiles many small XLA executables (one per operation and
shape); a second run of the same script, notebook or test reads them back from
disk instead of compiling again. cellkit turns on JAX's own cache when it is
imported:

* **Folder.** ``$JAX_COMPILATION_CACHE_DIR`` (or ``jax_compilation_cache_dir``)
  when it is set, as is; otherwise a per-user folder,
  ``$XDG_CACHE_HOME/cellkit/jax/<jax and jaxlib versions>`` (``~/.cache`` when
  ``XDG_CACHE_HOME`` is unset). :func:`cache_dir` says which is in use.
* **Thresholds.** Every executable is kept (JAX's defaults skip any compile
  under one second, which is every eager one), unless
  ``JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS`` or
  ``JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES`` says otherwise.
* **Off switch.** ``CELLKIT_COMPILATION_CACHE=0`` (also ``off``, ``false``, ``no``)
  before ``import cellkit`` leaves JAX's cache settings untouched (off unless
  ``JAX_COMPILATION_CACHE_DIR`` is set). ``set_context(enable_compile_cache=False)``
  turns it off in a running process, ``compile_cache_path=...`` moves it
  (MindSpore's names).
* **Safety.** JAX's cache key hashes the lowered computation (its dtypes, so
  64-bit and 32-bit programs never share an entry), the jaxlib version, the XLA
  flags and the compile options; the folder is per jax/jaxlib version as well.
  Entries are written to a temporary file and renamed into place, so processes
  running at once (pytest-xdist workers, notebooks) and a process killed while
  writing never leave a torn entry behind. Executables with host callbacks
  (``jax.debug.print``, ``ops.Custom``) are never stored.
* **Whole executables.** JAX's cache key needs the computation traced and
  lowered first; a few of cellkit's own fixed functions (the random draws that
  initialise weights) also keep their executables whole in the folder, read
  back without either (:mod:`cellkit.stored_executables`).
* **Bound.** The folder grows by the executables of the programs run (tens of
  KB each). :func:`clear_compilation_cache` empties it (``all_versions=True``:
  the folders of other jax versions too); JAX's ``jax_compilation_cache_max_size``
  (``JAX_COMPILATION_CACHE_MAX_SIZE``, bytes) bounds it by least-recent use when
  the ``filelock`` package is installed.

>>> import cellkit as ms
>>> from cellkit import compilation_cache
>>> compilation_cache.cache_dir() is None or isinstance(compilation_cache.cache_dir(), str)
True
"""

from __future__ import annotations

import os
import pathlib
import threading

import jax

__all__ = ["ENV", "configure", "cache_dir", "default_dir", "clear_compilation_cache", "set_enabled",
           "set_cache_path"]

ENV = "CELLKIT_COMPILATION_CACHE"
_OFF = ("0", "off", "false", "no")
_state = {"configured": False}


def default_dir() -> pathlib.Path:
    """cellkit's per-user cache folder for this jax/jaxlib version."""
    import jaxlib
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(root) / "cellkit" / "jax" / f"jax-{jax.__version__}-jaxlib-{jaxlib.__version__}"


def cache_dir() -> str | None:
    """The folder JAX's persistent compilation cache uses now, or None when it is off."""
    if not jax.config.jax_enable_compilation_cache:
        return None
    return jax.config.jax_compilation_cache_dir


def configure() -> None:
    """Turn JAX's persistent compilation cache on (run once by ``import cellkit``); see the module's text."""
    if _state["configured"]:
        return
    _state["configured"] = True
    if os.environ.get(ENV, "").strip().lower() in _OFF:
        return
    _install_atomic_writes()
    if not jax.config.jax_compilation_cache_dir:
        jax.config.update("jax_compilation_cache_dir", str(default_dir()))
    if "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS" not in os.environ:
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    if "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES" not in os.environ:
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)


def set_enabled(enabled: bool) -> None:
    """Turn the persistent cache on or off in this process (``set_context(enable_compile_cache=...)``)."""
    if not isinstance(enabled, (bool, int)):
        raise TypeError(f"set_context: enable_compile_cache must be True or False, got {enabled!r}")
    if enabled and not jax.config.jax_compilation_cache_dir:
        _install_atomic_writes()
        jax.config.update("jax_compilation_cache_dir", str(default_dir()))
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_enable_compilation_cache", bool(enabled))
    _reset()


def set_cache_path(path) -> None:
    """Keep the persistent cache in ``path`` from now on (``set_context(compile_cache_path=...)``)."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"set_context: compile_cache_path must be a folder path, got {path!r}")
    _install_atomic_writes()
    jax.config.update("jax_compilation_cache_dir", os.fspath(path))
    _reset()


def clear_compilation_cache(all_versions: bool = False) -> int:
    """Delete the persistent cache's entries; return how many files were removed.

    Removes the entries of the folder in use (:func:`cache_dir`). With
    ``all_versions=True`` it also empties cellkit's folders of other jax/jaxlib
    versions. Only the cache's own files (``*-cache``, ``*-atime``, unfinished
    ``*.tmp``, and the whole executables of :mod:`cellkit.stored_executables`,
    ``*-executable``) are removed, never anything else found in the folder.
    Executables already loaded in this process stay in memory.
    """
    folders = {pathlib.Path(d) for d in [cache_dir()] if d}
    if all_versions:
        root = default_dir().parent
        if root.is_dir():
            folders.update(p for p in root.iterdir() if p.is_dir())
    removed = 0
    for folder in folders:
        if not folder.is_dir():
            continue
        for entry in folder.iterdir():
            if entry.is_file() and entry.name.endswith(("-cache", "-atime", ".tmp", "-executable")):
                try:
                    entry.unlink()
                    removed += 1
                except FileNotFoundError:   # another process removed it first
                    pass
    _reset()
    return removed


def _reset() -> None:
    """Make JAX open its cache again from the current settings on the next compilation."""
    from jax._src import compilation_cache as jcc
    jcc.reset_cache()


def _install_atomic_writes() -> None:
    """Make JAX's file cache write each entry to a temporary file and rename it into place.

    JAX's unbounded file cache writes an entry in place: a reader in another
    process can see half of it, and a process killed mid-write leaves a torn
    entry that is never rewritten. The rename is atomic on a local file system.
    """
    try:
        from jax._src import compilation_cache as jcc
        from jax._src.lru_cache import LRUCache
    except ImportError:   # a jax without these internals: its own writes stay
        return
    if getattr(jcc.get_file_cache, "_cellkit_atomic", False):
        return
    original = jcc.get_file_cache

    class AtomicFileCache(LRUCache):
        def put(self, key: str, value: bytes) -> None:
            if self.eviction_enabled or not isinstance(self.path, pathlib.Path):
                return super().put(key, value)
            if not key:
                raise ValueError("key cannot be empty")
            target = self.path / f"{key}-cache"
            if target.exists():
                return
            tmp = self.path / f".{key}.{os.getpid()}.{threading.get_ident()}.tmp"
            try:
                tmp.write_bytes(value)
                os.replace(tmp, target)
            finally:
                if tmp.exists():
                    tmp.unlink()

    def get_file_cache(path):
        cache_and_path = original(path)
        if cache_and_path is not None and type(cache_and_path[0]) is LRUCache:
            cache = cache_and_path[0]
            if not cache.eviction_enabled and isinstance(cache.path, pathlib.Path):
                cache.__class__ = AtomicFileCache
        return cache_and_path

    get_file_cache._cellkit_atomic = True
    jcc.get_file_cache = get_file_cache
