"""cellkit.startup: what keeps a fresh process's ``import cellkit`` cheap."""

import gc
import os
import subprocess
import sys
import types

import pytest

from cellkit import startup


def _python(code):
    env = {k: v for k, v in os.environ.items() if k != "CELLKIT_GC_FREEZE"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env=env).stdout.split()


class _Dist:
    def __init__(self, name):
        self._normalized_name = name


class _Unnamed:   # a Distribution without a normalized name: kept (its metadata decides, as before)
    pass


def _call_from(module_name, fn, **kwargs):
    scope = {"__name__": module_name, "fn": fn, "kwargs": kwargs}
    exec("found = list(fn(**kwargs))", scope)
    return scope["found"]


def test_rocm_scan_sees_only_jax_rocm_distributions():
    dists = [_Dist("numpy"), _Dist("jax_rocm7_plugin"), _Dist("jaxlib"), _Dist("jax_rocm60_pjrt"), _Unnamed()]
    narrowed = startup._rocm_candidates(lambda **kw: iter(dists))
    found = _call_from(startup._SCANNER, narrowed)
    assert found == [dists[1], dists[3], dists[4]]


def test_other_callers_get_every_distribution():
    dists = [_Dist("numpy"), _Dist("jax_rocm7_plugin")]
    narrowed = startup._rocm_candidates(lambda **kw: iter(dists))
    assert _call_from("some.other.module", narrowed) == dists
    assert _call_from(startup._SCANNER, narrowed, path=["x"]) == dists   # (arguments: another question)


def test_import_restores_importlib_metadata_and_loads_no_optax():
    out = _python("import importlib.metadata as m; before = m.distributions; import cellkit, sys; "
                  "print(m.distributions is before, 'optax' in sys.modules, 'jax' in sys.modules)")
    assert out == ["True", "False", "True"]


def test_optax_loads_on_an_optimizers_first_use():
    out = _python("import cellkit as ms, sys; net = ms.nn.Dense(2, 2); print('optax' in sys.modules); "
                  "opt = ms.nn.Momentum(net.trainable_params(), 0.1, 0.9); print('optax' in sys.modules)")
    assert out == ["False", "True"]


def test_lazy_module_reads_through_and_imports_once():
    name = "_cellkit_lazy_probe"
    module = types.ModuleType(name)
    module.answer = 42
    lazy = startup.lazy_module(name)
    assert "not" not in repr(lazy) and "(imported)" not in repr(lazy)
    sys.modules[name] = module
    try:
        assert lazy.answer == 42
        assert "(imported)" in repr(lazy)
        module.answer = 43
        assert lazy.answer == 43
        with pytest.raises(AttributeError):
            lazy.missing
    finally:
        del sys.modules[name]


def test_lazy_module_of_a_missing_module_raises_import_error():
    with pytest.raises(ImportError):
        startup.lazy_module("_cellkit_no_such_module").anything


def test_collector_paused_restores_the_collectors_state():
    was = gc.isenabled()
    try:
        gc.enable()
        with startup.collector_paused():
            assert gc.isenabled() is startup.LEAVE_GC
        assert gc.isenabled()
        gc.disable()
        with startup.collector_paused():
            pass
        assert not gc.isenabled()
        gc.enable()
        with pytest.raises(ValueError):
            with startup.collector_paused():
                raise ValueError
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


def test_dataset_import_runs_no_collection():
    # grain's import (about 100,000 objects) with the collector running ran about 80 young collections
    out = _python("import gc, cellkit; runs = []; "
                  "gc.callbacks.append(lambda phase, info: phase == 'start' and runs.append(info['generation'])); "
                  "import cellkit.dataset; print(len(runs), gc.isenabled())")
    assert int(out[0]) <= 2 and out[1] == "True"   # (a young collection at most, once resumed)
