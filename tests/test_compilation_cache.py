"""JAX's persistent compilation cache as cellkit configures it: folder, thresholds, switch, clearing, x64 keys.

Each case runs a small program in a fresh process (the cache is read and
written across processes) with its own temporary cache folder.
"""

import json
import os
import pathlib
import subprocess
import sys

import jax
import pytest

import cellkit as ms
from cellkit import compilation_cache

ROOT = pathlib.Path(__file__).resolve().parent.parent

PROGRAM = r"""
import json, sys
from jax import monitoring
hits = []
monitoring.register_event_listener(lambda e, **_: hits.append(e) if e.endswith("cache_hits") else None)
import jax, jax.numpy as jnp
import cellkit as ms
x = jnp.arange(6).reshape(2, 3)
y = ms.ops.sum(x * 3 + 1, dim=1)
print(json.dumps({"dir": ms.compilation_cache.cache_dir(), "hits": len(hits), "x64": jax.config.jax_enable_x64,
                  "dtype": str(y.dtype), "min_time": jax.config.jax_persistent_cache_min_compile_time_secs}))
"""


def _run(tmp_path, **env_over):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_COMPILATION", "CELLKIT_COMPILATION"))}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    env["PYTHONPATH"] = str(ROOT)
    env.update(env_over)
    done = subprocess.run([sys.executable, "-c", PROGRAM], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Error reading persistent compilation cache" not in done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _entries(folder):
    return sorted(p.name for p in pathlib.Path(folder).glob("*-cache"))


def test_on_by_default_in_a_per_user_versioned_folder_and_read_back(tmp_path):
    first = _run(tmp_path)
    folder = pathlib.Path(first["dir"])
    assert folder.parent == tmp_path / "xdg" / "cellkit" / "jax"
    assert folder.name.startswith(f"jax-{jax.__version__}-jaxlib-")
    assert first["min_time"] == 0.0
    entries = _entries(folder)
    assert entries and first["hits"] == 0            # every small executable is kept
    second = _run(tmp_path)
    assert second["hits"] == len(entries)            # the next process reads them all back ...
    assert _entries(folder) == entries               # ... and writes nothing new
    assert not list(folder.glob("*.tmp"))            # entries are renamed into place


def test_jax_compilation_cache_dir_is_respected(tmp_path):
    mine = tmp_path / "mine"
    out = _run(tmp_path, JAX_COMPILATION_CACHE_DIR=str(mine))
    assert out["dir"] == str(mine) and _entries(mine)
    assert not (tmp_path / "xdg").exists()


def test_the_switch_turns_it_off(tmp_path):
    out = _run(tmp_path, CELLKIT_COMPILATION_CACHE="0")
    assert out["dir"] is None and out["min_time"] == 1.0   # JAX's own defaults, untouched
    assert not (tmp_path / "xdg").exists()


def test_64_bit_and_32_bit_never_share_an_entry(tmp_path):
    shared = str(tmp_path / "shared")
    off = _run(tmp_path, JAX_COMPILATION_CACHE_DIR=shared, JAX_ENABLE_X64="0")
    after_off = set(_entries(shared))
    on = _run(tmp_path, JAX_COMPILATION_CACHE_DIR=shared, JAX_ENABLE_X64="1")
    after_on = set(_entries(shared))
    assert (off["x64"], on["x64"]) == (False, True) and (off["dtype"], on["dtype"]) == ("int32", "int64")
    assert on["hits"] == 0                           # nothing 32-bit was served to the 64-bit process
    assert after_on - after_off                      # its executables are entries of their own


def test_processes_at_once_share_the_folder_safely(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_COMPILATION", "CELLKIT_COMPILATION"))}
    env.update(PYTHONPATH=str(ROOT), JAX_COMPILATION_CACHE_DIR=str(tmp_path / "c"))
    procs = [subprocess.Popen([sys.executable, "-c", PROGRAM], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(3)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-2000:]
        assert "persistent compilation cache" not in err
    assert _entries(tmp_path / "c") and not list((tmp_path / "c").glob("*.tmp"))


def test_clear_removes_only_the_cache_entries(tmp_path, monkeypatch):
    folder = tmp_path / "c"
    folder.mkdir()
    for name in ("a-cache", "a-atime", ".b.1.2.tmp", "notes.txt"):
        (folder / name).write_text("x")
    monkeypatch.setattr(compilation_cache, "cache_dir", lambda: str(folder))
    assert ms.clear_compilation_cache() == 3
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


def test_set_context_switches_and_moves_the_cache(tmp_path):
    before = (jax.config.jax_enable_compilation_cache, jax.config.jax_compilation_cache_dir)
    try:
        ms.set_context(enable_compile_cache=False)
        assert ms.get_context("enable_compile_cache") is False and ms.get_context("compile_cache_path") is None
        ms.set_context(enable_compile_cache=True, compile_cache_path=str(tmp_path / "moved"))
        assert ms.get_context("compile_cache_path") == str(tmp_path / "moved")
        with pytest.raises(TypeError, match="compile_cache_path"):
            ms.set_context(compile_cache_path=3)
        with pytest.raises(TypeError, match="enable_compile_cache"):
            ms.set_context(enable_compile_cache="yes")
    finally:
        jax.config.update("jax_enable_compilation_cache", before[0])
        jax.config.update("jax_compilation_cache_dir", before[1])
        compilation_cache._reset()
