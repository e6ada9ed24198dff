"""Executables of cellkit's own fixed functions, kept whole beside the persistent compilation cache.

JAX's persistent cache (:mod:`cellkit.compilation_cache`) saves the compile
but not what comes before it: its key is a hash of the lowered computation,
so a fresh process traces and lowers a function before it can look the
executable up. For a first executable that costs 25-35 ms, most of it making
JAX's MLIR context. That is a tenth of a short script's own run when the only
executable it needs is one of cellkit's (the random draws that initialise a
model's weights: :mod:`cellkit.draws`).

:class:`StoredJit` wraps such a function, whose code is cellkit's own and
fixed. Its executables are also written whole to the cache folder
(``jax.experimental.serialize_executable``), under a key computed without
tracing:

* the function's name, its static arguments and its arguments' shapes and
  dtypes;
* a hash of the source files it is made from (``sources``), so an edited
  function never gets an old executable;
* the jax and jaxlib versions, the backend (platform, its version, device kinds
  and count), the CPU's instruction-set flags, ``XLA_FLAGS``, and every JAX
  setting in effect (64-bit mode included) except the cache's and logging's.

A file holds one executable for one name, static arguments and shapes, with
its whole key at its head: an entry made under another key (another JAX,
64-bit mode, edited code) is not used, and is replaced by the executable
compiled then. The files are therefore bounded by the functions and shapes
there are (a few, of about 70 KB each). They are written to a temporary file and
renamed into place, as the cache's own entries are.

XLA's CPU runtime serializes an executable whole only when it was compiled in
a process that has not yet read one back from JAX's cache: the code of a
function named as one already loaded is left out, and the executable read
back then fails when run. So an executable is stored only when compiled
afresh in such a process (a script's first draws, typically; reading this
store's own executables does not count), and only after it has been read back
once and given the same bits; an executable read back is run once before it
is used. Whatever cannot be stored, read or run is compiled (or read from
JAX's cache) as before, never an error. With the persistent cache off
(``CELLKIT_COMPILATION_CACHE=0``, ``set_context(enable_compile_cache=False)``),
nothing is stored: the function is its ``jax.jit``.
:func:`cellkit.compilation_cache.clear_compilation_cache` removes these files
with the rest.

Each executable read back records the JAX monitoring event :data:`LOAD_EVENT`,
and its seconds under :data:`LOAD_DURATION_EVENT`, as JAX records a compile.

>>> import jax.numpy as jnp, numpy as np
>>> from cellkit.tiered_jit import eager_options_jit
>>> double = StoredJit(eager_options_jit(lambda x: x * 2), "doctest.double", sources=())
>>> double(np.arange(3.0, dtype=np.float32)).tolist()
[0.0, 2.0, 4.0]
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pathlib
import pickle
import platform
import threading
import time

import jax
import numpy as np
from jax.experimental import serialize_executable

from . import compilation_cache

try:   # (JAX's own key for the settings that change a trace: its jit caches use it)
    from jax._src.config import trace_context as _trace_context
except ImportError:   # another jax
    def _trace_context():
        return None

__all__ = ["StoredJit", "LOAD_EVENT", "LOAD_DURATION_EVENT", "SUFFIX"]

LOAD_EVENT = "/cellkit/stored_executables/load"
LOAD_DURATION_EVENT = "/cellkit/stored_executables/load_duration"
SUFFIX = "-executable"
_MAGIC = b"cellkit-stored-executable-1\n"
# JAX settings that say where and whether things are cached or logged, not what is computed.
_NOT_KEYED = ("jax_compilation_cache", "jax_persistent_cache", "jax_enable_compilation_cache",
              "jax_raise_persistent_cache_errors", "jax_log_compiles", "jax_logging_level", "jax_debug_log_modules",
              "jax_explain_cache_misses", "jax_dump_ir", "jax_include_debug_info_in_dumps", "jax_pprint_use_color",
              "jax_traceback_filtering", "jax_check_proxy_envs")
_environment = []   # [bytes]: the process's part of every key, computed on first use
_lock = threading.Lock()
_read_back = [False]   # whether this process has read an executable back from JAX's persistent cache


def _on_event(event, **_):
    if event == "/jax/compilation_cache/cache_hits":
        _read_back[0] = True


jax.monitoring.register_event_listener(_on_event)


class StoredJit:
    """A cellkit function's ``jax.jit`` (``jitted``: a :func:`cellkit.tiered_jit.eager_options_jit`
    object) whose executables are also kept in the persistent cache folder, read back
    without tracing; see the module's text.

    ``name`` names the function in keys and file names; ``static_argnums`` are ``jitted``'s own;
    ``sources`` are the files whose text makes the function (its module, and any other cellkit module it
    calls into). Calls whose other arguments are not all NumPy arrays are ``jitted``'s own."""

    def __init__(self, jitted, name: str, static_argnums=(), sources=()):
        self.jitted, self.name = jitted, name
        self.static_argnums = tuple(static_argnums)
        self.sources = tuple(str(s) for s in sources) + (__file__,)   # (this module's own text: its format)
        self._source_hash = None
        self._loaded = {}   # (static, shapes, trace context, folder) -> executable

    def __call__(self, *args):
        folder = compilation_cache.cache_dir()
        static = tuple(args[i] for i in self.static_argnums)
        dynamic = tuple(a for i, a in enumerate(args) if i not in self.static_argnums)
        if folder is None or not all(type(a) is np.ndarray for a in dynamic):
            return self.jitted(*args)
        shapes = tuple((a.shape, a.dtype.str) for a in dynamic)
        local = (static, shapes, _trace_context(), folder)
        executable = self._loaded.get(local)
        if executable is None:
            with _lock:
                executable = self._loaded.get(local)
                if executable is None:
                    executable, out = self._obtain(args, dynamic, static, shapes, pathlib.Path(folder))
                    if executable is None:
                        return self.jitted(*args)
                    if len(self._loaded) >= 64:
                        self._loaded.clear()   # (bounded: an executable dropped is read back again)
                    self._loaded[local] = executable
                    return out
        return executable(*dynamic)

    def path(self, folder, static, shapes) -> pathlib.Path:
        """The file that holds the executable for these static arguments and shapes."""
        slot = hashlib.sha256(repr((self.name, static, shapes)).encode()).hexdigest()[:32]
        return pathlib.Path(folder) / f"cellkit-{self.name.rsplit('.', 1)[-1]}-{slot}{SUFFIX}"

    def key(self, static, shapes) -> bytes:
        """The whole key of the executable for these static arguments and shapes, in this process."""
        if self._source_hash is None:
            digest = hashlib.sha256()
            for source in self.sources:
                digest.update(source.encode() + b"\0" + pathlib.Path(source).read_bytes())
            self._source_hash = digest.hexdigest()
        digest = hashlib.sha256(_environment_key())
        digest.update(repr((self.name, static, shapes, self._source_hash)).encode())
        return digest.hexdigest().encode()

    def _obtain(self, args, dynamic, static, shapes, folder):
        """The executable read back from ``folder``, or else compiled (and stored), with its output for
        these arguments; (None, None) where it cannot be made here (the call is then ``jitted``'s own)."""
        try:
            key, path = self.key(static, shapes), self.path(folder, static, shapes)
        except Exception:   # noqa: BLE001 - a source file gone, a backend without these fields
            return None, None
        header = _MAGIC + key + b"\n"
        start = time.perf_counter()
        try:
            data = path.read_bytes()
        except OSError:
            data = b""
        if data.startswith(header):
            try:
                executable = _load(data[len(header):])
                out = jax.block_until_ready(executable(*dynamic))   # (one that cannot run fails here)
            except Exception:   # noqa: BLE001 - unreadable: compiled again below, and the file replaced
                pass
            else:
                jax.monitoring.record_event(LOAD_EVENT)
                jax.monitoring.record_event_duration_secs(LOAD_DURATION_EVENT, time.perf_counter() - start)
                return executable, out
        # A new executable serializes whole only when compiled afresh (one JAX read back from its cache
        # would not serialize with its code), and before JAX read any back in this process (XLA's CPU
        # runtime names functions alike, and leaves out the code of one already loaded): else it is used,
        # not stored.
        storable = not _read_back[0]
        try:
            with _compilation_cache_off() if storable else contextlib.nullcontext():
                executable = self.jitted.compiled(*args)
            out = executable(*dynamic)
        except Exception:   # noqa: BLE001 - the call itself says what is wrong
            return None, None
        if storable:
            try:
                ids = [d.id for d in executable.runtime_executable().local_devices()]
                payload = pickle.dumps((*serialize_executable.serialize(executable), ids))
                if _round_trips(payload, dynamic, out):
                    _write(path, header + payload)
            except Exception:   # noqa: BLE001 - not serializable on this backend: used, not stored
                pass
        return executable, out


def _compilation_cache_off():
    """JAX's persistent cache off in this thread, for the compilations inside."""
    from jax._src.config import enable_compilation_cache
    return enable_compilation_cache(False)


def _round_trips(payload, dynamic, out) -> bool:
    """Whether ``payload`` loads back into an executable that gives the bits ``out`` for ``dynamic``
    (checked once, before it is stored)."""
    want, got = jax.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(_load(payload)(*dynamic))
    return len(want) == len(got) and all(np.asarray(a).tobytes() == np.asarray(b).tobytes()
                                         for a, b in zip(want, got))


def _load(payload: bytes):
    """The executable a stored ``payload`` holds, loaded onto the devices it was made for."""
    serialized, in_tree, out_tree, ids = pickle.loads(payload)
    by_id = {d.id: d for d in jax.devices()}
    devices = [by_id[i] for i in ids]   # (the devices it runs on: not every device there is)
    return serialize_executable.deserialize_and_load(serialized, in_tree, out_tree, backend=devices[0].client,
                                                     execution_devices=devices)


def _write(path: pathlib.Path, data: bytes) -> None:
    """``data`` into ``path`` whole or not at all (a temporary file renamed into place); a folder that
    cannot be written leaves the store as it was."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError:
        pass
    finally:
        try:
            tmp.unlink()
        except OSError:
            pass


def _settings() -> list:
    """Every JAX setting in effect, but the cache's and logging's, as (name, value) pairs."""
    try:
        from jax._src.config import config_states
        values = {name: state.value for name, state in config_states.items()}
    except Exception:   # noqa: BLE001 - another JAX: its global values
        values = dict(jax.config.values)
    return sorted((name, repr(value)) for name, value in values.items() if not name.startswith(_NOT_KEYED))


def _cpu_flags() -> str:
    """The CPU's instruction-set flags (Linux), or the processor's name: XLA's CPU code is made for them."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("flags"):
                    return line.strip()
    except OSError:
        pass
    return platform.machine() + " " + platform.processor()


def _environment_key() -> bytes:
    """The process's part of every key (versions, backend, CPU, XLA flags), plus the JAX settings now."""
    if not _environment:
        import jaxlib
        devices = jax.devices()
        backend = devices[0].client
        fixed = [jax.__version__, jaxlib.__version__, jax.__file__, backend.platform, backend.platform_version,
                 getattr(backend, "runtime_type", ""), [d.device_kind for d in devices], jax.process_count(),
                 _cpu_flags(), os.environ.get("XLA_FLAGS", ""), os.environ.get("LIBTPU_INIT_ARGS", "")]
        _environment.append(repr(fixed).encode())
    return _environment[0] + repr(_settings()).encode()
