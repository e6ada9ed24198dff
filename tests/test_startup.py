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


def _package(tmp_path, name):
    """A package whose __init__ imports its submodule ``heavy`` (which records, in ``builtins``, that it ran)."""
    root = tmp_path / name
    root.mkdir()
    (root / "__init__.py").write_text("from . import heavy\nfrom .heavy import __name__ as _heavy_name\n"
                                      "LIGHT = 1\n")
    (root / "heavy.py").write_text("import builtins\nbuiltins.HEAVY_RUNS = getattr(builtins, 'HEAVY_RUNS', 0) + 1\n"
                                   "VALUE = 42\n__all__ = ['VALUE']\ndef helper():\n    return VALUE\n")
    return root


def test_defer_submodule_runs_its_code_on_the_first_attribute_read(tmp_path):
    _package(tmp_path, "deferpkg")
    out = _python(f"import sys, builtins; sys.path.insert(0, {str(tmp_path)!r}); from cellkit import startup; "
                  "print(startup.defer_submodule('deferpkg.heavy')); import deferpkg; "
                  "print(getattr(builtins, 'HEAVY_RUNS', 0), deferpkg.LIGHT); "
                  "print(deferpkg.heavy.VALUE, builtins.HEAVY_RUNS, deferpkg.heavy.helper()); "
                  "print(deferpkg.heavy is sys.modules['deferpkg.heavy'], type(deferpkg.heavy).__name__); "
                  "from deferpkg.heavy import *; print(VALUE)")
    # (``from .heavy import __name__`` in the package reads metadata only: no run)
    assert out == ["True", "0", "1", "42", "1", "42", "True", "module", "42"]


def test_defer_submodule_leaves_imported_or_missing_modules_alone(tmp_path):
    _package(tmp_path, "deferpkg2")
    out = _python(f"import sys; sys.path.insert(0, {str(tmp_path)!r}); from cellkit import startup; "
                  "print(startup.defer_submodule('deferpkg2.nothere'), startup.defer_submodule('json.decoder'), "
                  "startup.defer_submodule('nopackage_xyz.sub'), startup.defer_submodule('toplevel')); "
                  "import deferpkg2; print(startup.defer_submodule('deferpkg2.heavy'), deferpkg2.heavy.VALUE)")
    assert out == ["False", "False", "False", "False", "False", "42"]


def test_a_submodule_of_an_imported_package_is_deferred_as_its_attribute(tmp_path):
    root = tmp_path / "deferpkg4"
    root.mkdir()
    (root / "__init__.py").write_text("LIGHT = 1\n")   # (does not import its submodule)
    (root / "heavy.py").write_text("import builtins\nbuiltins.HEAVY4 = getattr(builtins, 'HEAVY4', 0) + 1\n"
                                   "VALUE = 42\n")
    out = _python(f"import sys, builtins; sys.path.insert(0, {str(tmp_path)!r}); from cellkit import startup; "
                  "import deferpkg4; print(startup.defer_submodule('deferpkg4.heavy')); "
                  "import deferpkg4.heavy; from deferpkg4 import heavy; print(getattr(builtins, 'HEAVY4', 0)); "
                  "print(deferpkg4.heavy.VALUE, heavy is deferpkg4.heavy is sys.modules['deferpkg4.heavy']); "
                  "from deferpkg4.heavy import VALUE; print(VALUE, builtins.HEAVY4)")
    assert out == ["True", "0", "42", "True", "42", "1"]


def test_jax_import_leaves_unittest_mock_to_its_first_use():
    # (etils.epath.testing imports it, with asyncio, and uses it only inside a function)
    out = _python("import sys, cellkit; print('asyncio' in sys.modules); "
                  "import unittest.mock; p = unittest.mock.patch; from unittest import mock; "
                  "from unittest.mock import MagicMock; print(mock is unittest.mock is sys.modules['unittest.mock'], "
                  "type(mock).__name__, MagicMock()(1) is not None, callable(p))")
    assert out == ["False", "True", "module", "True", "True"]


def test_jax_import_leaves_the_unittest_package_to_its_first_use():
    out = _python("import sys, cellkit; print(type(sys.modules['unittest']).__name__, 'unittest.case' in sys.modules); "
                  "import unittest; print(unittest.TestCase.__name__, 'unittest.case' in sys.modules, "
                  "type(unittest).__name__, unittest.mock is sys.modules['unittest.mock']); "
                  "from unittest import TestCase, main; print(TestCase is unittest.TestCase, callable(main))")
    assert out == ["_Deferred", "False", "TestCase", "True", "module", "True", "True", "True"]


def test_a_top_level_module_can_be_deferred(tmp_path):
    (tmp_path / "defertop.py").write_text("import builtins\nbuiltins.TOP = getattr(builtins, 'TOP', 0) + 1\n"
                                          "VALUE = 5\n")
    out = _python(f"import sys, builtins; sys.path.insert(0, {str(tmp_path)!r}); from cellkit import startup; "
                  "print(startup.defer_submodule('defertop')); import defertop; print(getattr(builtins, 'TOP', 0)); "
                  "from defertop import VALUE; print(VALUE, builtins.TOP, defertop is sys.modules['defertop']); "
                  "print(startup.defer_submodule('defertop'), startup.defer_submodule('no_such_top_module'))")
    assert out == ["True", "0", "5", "1", "True", "False", "False"]


def test_deferred_dir_loads_and_a_failing_run_is_retried(tmp_path):
    root = _package(tmp_path, "deferpkg3")
    (root / "heavy.py").write_text("import os\nif os.environ.get('FAIL_HEAVY'):\n    raise ImportError('no')\n"
                                   "VALUE = 7\n")
    out = _python(f"import os, sys; sys.path.insert(0, {str(tmp_path)!r}); from cellkit import startup; "
                  "startup.defer_submodule('deferpkg3.heavy'); import deferpkg3; os.environ['FAIL_HEAVY'] = '1'\n"
                  "try:\n    deferpkg3.heavy.VALUE\nexcept ImportError as e:\n    print('failed', e)\n"
                  "del os.environ['FAIL_HEAVY']; print(deferpkg3.heavy.VALUE, 'VALUE' in dir(deferpkg3.heavy))")
    assert out == ["failed", "no", "7", "True"]


def test_dataset_import_defers_grains_checkpoint_handlers():
    pytest.importorskip("grain")
    out = _python("import sys, cellkit.dataset, grain; print('orbax.checkpoint' in sys.modules); "
                  "from grain._src.python.checkpoint import handler; "
                  "print(grain.checkpoint.CheckpointHandler is handler.CheckpointHandler, "
                  "grain.checkpoint is sys.modules['grain.checkpoint'], type(grain.checkpoint).__name__, "
                  "hasattr(grain.checkpoint, 'CheckpointSave') == hasattr(handler, 'CheckpointSave'))")
    assert out == ["False", "True", "True", "module", "True"]


def test_optax_is_imported_without_the_parts_nothing_reads_then():
    out = _python("import sys, cellkit as ms; from cellkit import nn, startup; import numpy as np; "
                  "w = ms.Parameter(ms.Tensor(np.ones(2, np.float32)), name='w'); "
                  "opt = nn.Adam([w], learning_rate=0.1); opt((ms.Tensor(np.ones(2, np.float32)),)); "
                  "print(sorted({type(sys.modules[n]).__name__ for n in startup.UNREAD_PARTS['optax']})); "
                  "import optax, jax.scipy.stats as st; print(callable(optax.perturbations.make_perturbed_fun), "
                  "float(st.t.pdf(0.0, 3.0)) > 0, type(st).__name__, [round(float(v), 3) for v in w.asnumpy()])")
    assert out == ["['_Deferred']", "True", "True", "module", "[0.9,", "0.9]"]
