"""Execution mode: ``set_context(mode=GRAPH_MODE)`` routes top-level Cell calls through ``jit``.

>>> import cellkit as ms
>>> ms.set_context(mode=ms.GRAPH_MODE)
>>> ms.get_context("mode") == ms.GRAPH_MODE
True
>>> ms.set_context(mode=ms.PYNATIVE_MODE)
"""

from __future__ import annotations

import jax

from . import compilation_cache
from .parallel_context import (ParallelMode, get_auto_parallel_context, reset_auto_parallel_context,
                               set_auto_parallel_context)

__all__ = ["GRAPH_MODE", "PYNATIVE_MODE", "set_context", "get_context", "ParallelMode", "set_auto_parallel_context",
           "get_auto_parallel_context", "reset_auto_parallel_context"]

GRAPH_MODE = 0
PYNATIVE_MODE = 1

# graph[0] is read on every Cell call, so it is a plain list slot.
graph = [False]
# donate[0]: whether cellkit.jit donates the buffers of the Parameters a step overwrites (read per call).
donate = [True]
_settings = {"mode": PYNATIVE_MODE, "device_target": "CPU", "debug_nans": False, "debug_infs": False,
             "jit_donate": True}


def set_context(**kwargs) -> None:
    """Set ``mode`` (``GRAPH_MODE`` or ``PYNATIVE_MODE``) and other MindSpore settings.

    ``debug_nans=True`` turns on JAX's NaN checking (``jax_debug_nans``): an
    operation that produces a NaN — a NaN loss, say — raises
    ``FloatingPointError`` naming the operation, also inside ``cellkit.jit``.
    ``debug_infs=True`` does the same for infinities (``jax_debug_infs``); leave
    it off for models that use ``-inf`` on purpose (attention masks). Turning
    either on or off recompiles what runs next. A ``cellkit.jit`` step refused
    this way writes nothing back: the Parameters keep their values.
    ``jit_donate=False`` stops ``cellkit.jit`` functions from donating the
    buffers of the Parameters they overwrite (on by default; see
    ``cellkit.engine.donation``); a function's own ``jit(fn, donate=...)`` wins.
    ``enable_compile_cache=False`` turns JAX's persistent compilation cache
    off for the rest of the process (``True`` turns it back on) and
    ``compile_cache_path=...`` moves it to another folder; see
    ``cellkit.compilation_cache`` (on by default; ``CELLKIT_COMPILATION_CACHE=0``
    before ``import cellkit`` keeps it off).
    Settings cellkit has no use for (``device_target``, ``save_graphs``, ...) are
    recorded and returned by ``get_context``; JAX picks the device itself.
    """
    if "mode" in kwargs:
        mode = kwargs["mode"]
        if mode not in (GRAPH_MODE, PYNATIVE_MODE):
            raise ValueError(f"set_context: mode must be GRAPH_MODE ({GRAPH_MODE}) or "
                             f"PYNATIVE_MODE ({PYNATIVE_MODE}), got {mode!r}")
        graph[0] = mode == GRAPH_MODE
    for key in ("debug_nans", "debug_infs"):
        if key in kwargs and bool(kwargs[key]) != bool(getattr(jax.config, f"jax_{key}")):
            jax.config.update(f"jax_{key}", bool(kwargs[key]))
            # Functions compiled before would keep running unchecked (or checked): compile again.
            jax.clear_caches()
    if "jit_donate" in kwargs:
        if not isinstance(kwargs["jit_donate"], (bool, int)):
            raise TypeError(f"set_context: jit_donate must be True or False, got {kwargs['jit_donate']!r}")
        donate[0] = bool(kwargs["jit_donate"])
    if "compile_cache_path" in kwargs:
        compilation_cache.set_cache_path(kwargs["compile_cache_path"])
    if "enable_compile_cache" in kwargs:
        compilation_cache.set_enabled(kwargs["enable_compile_cache"])
    _settings.update(kwargs)


def get_context(key: str):
    """The value of one setting."""
    if key == "enable_compile_cache":
        return compilation_cache.cache_dir() is not None
    if key == "compile_cache_path":
        return compilation_cache.cache_dir()
    if key not in _settings:
        from .suggest import did_you_mean
        known = [*_settings, "enable_compile_cache", "compile_cache_path"]
        raise ValueError(f"get_context: unknown key {key!r}{did_you_mean(key, known) or ';'} "
                         f"known: {', '.join(sorted(known))}")
    return _settings[key]
