"""cellkit.stored_executables: whole executables read back without a trace, never across keys.

Storing needs a process that has read no executable back yet (see the module),
so the cases that store run a small program in a fresh process, with a cache
folder of their own.
"""

import json
import os
import pathlib
import subprocess
import sys

import jax
import numpy as np
import pytest

from cellkit import compilation_cache, stored_executables
from cellkit.stored_executables import StoredJit
from cellkit.tiered_jit import eager_options_jit

ROOT = pathlib.Path(__file__).resolve().parent.parent
DTYPE = np.float64 if jax.config.jax_enable_x64 else np.float32

PROGRAM = r"""
import json, sys
from jax import monitoring
events = []
monitoring.register_event_listener(lambda e, **_: events.append(e))
import cellkit
import jax, numpy as np
from cellkit.stored_executables import StoredJit, LOAD_EVENT
from cellkit.tiered_jit import eager_options_jit
source, shape = sys.argv[1], tuple(json.loads(sys.argv[2]))
traces = []
def scaled(kind, x):
    traces.append(kind)
    return x * (2 if kind == "double" else 3) + 1
f = StoredJit(eager_options_jit(scaled, static_argnums=(0,)), "tests.scaled", static_argnums=(0,), sources=(source,))
dtype = np.float64 if jax.config.jax_enable_x64 else np.float32
x = np.arange(np.prod(shape), dtype=dtype).reshape(shape)
outs = [f("double", x), f("double", x + 1)]
same = bool(np.array_equal(outs[0], x * 2 + 1) and np.array_equal(outs[1], x * 2 + 3))
print(json.dumps({"same": same, "traces": len(traces), "loads": events.count(LOAD_EVENT)}))
"""


def _run(tmp_path, source_text="version 1", shape=(4,)):
    source = tmp_path / "source.py"
    source.write_text(source_text)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_COMPILATION", "CELLKIT_COMPILATION"))}
    env.update(JAX_COMPILATION_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", PROGRAM, str(source), json.dumps(shape)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _files(folder):
    return sorted(pathlib.Path(folder).glob(f"*{stored_executables.SUFFIX}"))


def test_a_fresh_process_reads_the_executable_back_without_a_trace(tmp_path):
    first = _run(tmp_path)
    assert first == {"same": True, "traces": 1, "loads": 0}
    (path,) = _files(tmp_path / "cache")
    stored = path.read_bytes()
    second = _run(tmp_path)
    assert second == {"same": True, "traces": 0, "loads": 1}   # (read back once, then kept in memory)
    assert path.read_bytes() == stored
    other_shape = _run(tmp_path, shape=(2, 3))                 # another shape: a file of its own
    assert other_shape == {"same": True, "traces": 1, "loads": 0} and len(_files(tmp_path / "cache")) == 2


def test_an_entry_of_another_key_or_torn_is_compiled_again_and_replaced(tmp_path):
    _run(tmp_path)
    (path,) = _files(tmp_path / "cache")
    first = path.read_bytes()
    edited = _run(tmp_path, source_text="version 2")   # the function's source edited: never served
    assert edited == {"same": True, "traces": 1, "loads": 0}
    replaced = path.read_bytes()
    assert replaced != first and _run(tmp_path, source_text="version 2")["loads"] == 1
    header = replaced[:replaced.index(b"\n", replaced.index(b"\n") + 1) + 1]
    path.write_bytes(header + b"not a pickle")          # the right key, a torn body
    assert _run(tmp_path, source_text="version 2") == {"same": True, "traces": 1, "loads": 0}
    assert path.read_bytes().startswith(header) and len(path.read_bytes()) > len(header) + 100


def test_the_key_follows_versions_64_bit_mode_settings_and_sources(tmp_path, monkeypatch):
    source = tmp_path / "source.py"
    source.write_text("version 1")
    fn = eager_options_jit(lambda kind, x: x, static_argnums=(0,))
    shapes = (((3,), np.dtype(DTYPE).str),)

    def key():
        return StoredJit(fn, "tests.key", static_argnums=(0,), sources=(source,)).key(("double",), shapes)
    base = key()
    assert key() == base
    with jax.enable_x64(not jax.config.jax_enable_x64):
        assert key() != base
    with jax.numpy_rank_promotion("raise" if jax.config.jax_numpy_rank_promotion != "raise" else "allow"):
        assert key() != base
    source.write_text("version 2")
    assert key() != base
    source.write_text("version 1")
    monkeypatch.setattr(stored_executables, "_environment", [])
    monkeypatch.setattr(jax, "__version__", jax.__version__ + ".other")
    assert key() != base
    monkeypatch.setattr(stored_executables, "_environment", [])
    monkeypatch.setenv("XLA_FLAGS", os.environ.get("XLA_FLAGS", "") + " --xla_cpu_enable_fast_math=false")
    assert key() != base


def _stored(tmp_path, traces):
    def scaled(kind, x):
        traces.append(kind)
        return x * 2 + 1
    return StoredJit(eager_options_jit(scaled, static_argnums=(0,)), "tests.inprocess", static_argnums=(0,),
                     sources=())


def test_in_a_process_that_read_executables_back_nothing_is_stored(tmp_path, monkeypatch):
    monkeypatch.setattr(compilation_cache, "cache_dir", lambda: str(tmp_path / "cache"))
    monkeypatch.setattr(stored_executables, "_read_back", [True])
    traces, x = [], np.arange(3, dtype=DTYPE)
    np.testing.assert_array_equal(_stored(tmp_path, traces)("double", x), x * 2 + 1)
    assert traces == ["double"] and not _files(tmp_path / "cache")


def test_a_payload_that_does_not_give_the_same_bits_is_not_stored(tmp_path, monkeypatch):
    monkeypatch.setattr(compilation_cache, "cache_dir", lambda: str(tmp_path / "cache"))
    monkeypatch.setattr(stored_executables, "_read_back", [False])
    monkeypatch.setattr(stored_executables, "_load", lambda payload: lambda *a: np.zeros(3, DTYPE))
    traces, x = [], np.arange(3, dtype=DTYPE)
    np.testing.assert_array_equal(_stored(tmp_path, traces)("double", x), x * 2 + 1)
    assert not _files(tmp_path / "cache")


def test_nothing_is_stored_with_the_cache_off_or_for_jax_arrays(tmp_path, monkeypatch):
    monkeypatch.setattr(stored_executables, "_read_back", [False])
    monkeypatch.setattr(compilation_cache, "cache_dir", lambda: None)
    traces, x = [], np.arange(3, dtype=DTYPE)
    np.testing.assert_array_equal(_stored(tmp_path, traces)("double", x), x * 2 + 1)
    monkeypatch.setattr(compilation_cache, "cache_dir", lambda: str(tmp_path / "cache"))
    np.testing.assert_array_equal(np.asarray(_stored(tmp_path, traces)("double", jax.numpy.asarray(x))), x * 2 + 1)
    assert not list(tmp_path.rglob(f"*{stored_executables.SUFFIX}")) and len(traces) == 2


def test_an_unwritable_folder_loses_nothing(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the folder would be")
    monkeypatch.setattr(compilation_cache, "cache_dir", lambda: str(blocker / "cache"))
    traces, x = [], np.arange(3, dtype=DTYPE)
    np.testing.assert_array_equal(_stored(tmp_path, traces)("double", x), x * 2 + 1)
    assert blocker.read_text() == "a file where the folder would be"


def test_clearing_the_cache_removes_the_stored_executables(tmp_path, monkeypatch):
    _run(tmp_path)
    folder = tmp_path / "cache"
    (folder / "unrelated.txt").write_text("kept")
    monkeypatch.setattr(compilation_cache, "cache_dir", lambda: str(folder))
    monkeypatch.setattr(compilation_cache, "_reset", lambda: None)
    assert _files(folder) and compilation_cache.clear_compilation_cache() >= 1
    assert not _files(folder) and (folder / "unrelated.txt").exists()


DRAW = r"""
import json, sys
from jax import monitoring
events = []
monitoring.register_event_listener(lambda e, **_: events.append(e))
monitoring.register_event_duration_secs_listener(lambda e, d, **_: events.append(e))
from cellkit import draws
import jax, numpy as np
key = jax.random.wrap_key_data(np.array([0, 3], np.uint32))   # (jax.random.key(3), made without compiling)
dtype = np.float64 if jax.config.jax_enable_x64 else np.float32
reference = {"normal": lambda: jax.random.normal(key, (5, 7), dtype),
             "truncated_normal": lambda: jax.random.truncated_normal(key, -2.0, 2.0, (5, 7), dtype)}
kinds = sys.argv[1].split(",")
drawn = [draws.standard(kind, key, (5, 7), np.dtype(dtype)) for kind in kinds]   # (before jax.random's,
lowered = events.count("/jax/core/compile/jaxpr_to_mlir_module_duration")       # read from JAX's cache)
same = all(np.array_equal(d, np.asarray(reference[kind]())) for d, kind in zip(drawn, kinds))
print(json.dumps({"same": bool(same), "loads": events.count("/cellkit/stored_executables/load"),
                  "lowered": lowered}))
"""


def test_fresh_processes_draw_with_stored_executables_and_jax_randoms_bits(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_COMPILATION", "CELLKIT_COMPILATION"))}
    env.update(JAX_COMPILATION_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))

    def run(kinds):
        done = subprocess.run([sys.executable, "-c", DRAW, kinds], env=env, cwd=ROOT, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout.strip().splitlines()[-1])
    first = run("normal")                    # compiled afresh and stored
    second = run("normal,truncated_normal")  # the first read back; the second compiled after it, stored too
    third = run("normal,truncated_normal")   # both read back
    assert first["same"] and second["same"] and third["same"]
    assert (first["loads"], second["loads"], third["loads"]) == (0, 1, 2)
    # (the draws lower only the executables compiled afresh)
    assert (first["lowered"], second["lowered"], third["lowered"]) == (1, 1, 0)
