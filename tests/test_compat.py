"""cellkit.compat: ``import mindspore`` gives cellkit on request (``install``, ``cellkit run``,
``%load_ext cellkit``), never as a side effect of ``import cellkit``."""

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import cellkit
from cellkit import compat
from cellkit.compat.finder import RewritingLoader

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _python(code, *args, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, *args] if code is None else [sys.executable, "-c", code, *args],
                          capture_output=True, text=True, cwd=cwd or ROOT, env=env, timeout=300)


@pytest.fixture
def installed():
    was = compat.installed()
    compat.install()
    yield
    if not was:
        compat.uninstall()


def test_import_cellkit_changes_nothing():
    r = _python(textwrap.dedent("""
        import sys
        before = list(sys.meta_path)
        import cellkit
        from cellkit import compat
        assert not compat.installed()
        assert [f for f in sys.meta_path if type(f).__name__ == "AliasFinder"] == []
        assert not any(n == "mindspore" or n.startswith("mindspore.") for n in sys.modules)
        try:
            import mindspore
        except ModuleNotFoundError as e:
            print("refused", e.name)
        """))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "refused mindspore"


def test_alias_gives_the_same_module_objects(installed):
    import mindspore
    import mindspore.nn
    import mindspore.common.initializer as init
    from mindspore import nn, ops
    from mindspore.nn.optim.optimizer import opt_init_args_register  # noqa: F401
    assert mindspore is cellkit and mindspore.nn is cellkit.nn and nn is cellkit.nn and ops is cellkit.ops
    assert mindspore.nn.Cell is cellkit.nn.Cell is cellkit.Cell
    assert init is sys.modules["cellkit.common.initializer"]
    assert sys.modules["mindspore.nn"] is sys.modules["cellkit.nn"]


def test_a_missing_mindspore_path_is_named(installed):
    with pytest.raises(ModuleNotFoundError, match=r"No module named 'mindspore\.no_such_part'.*'cellkit\.no_such_part'") \
            as info:
        import mindspore.no_such_part  # noqa: F401
    assert info.value.name == "mindspore.no_such_part"


def test_install_is_idempotent_and_uninstall_removes_the_alias():
    was = compat.installed()
    compat.install()
    compat.install()
    assert sum(isinstance(f, compat.AliasFinder) for f in sys.meta_path) == 1
    import mindspore  # noqa: F401
    compat.uninstall()
    assert not compat.installed() and "mindspore" not in sys.modules
    with pytest.raises(ModuleNotFoundError):
        import mindspore  # noqa: F401,F811
    if was:
        compat.install()


def test_modules_using_mindspore_get_the_rewriting_loader(tmp_path, installed):
    (tmp_path / "uses_ms_mod.py").write_text("import mindspore as ms\nVALUE = ms.Tensor([1.0]) + 1\n")
    (tmp_path / "plain_mod.py").write_text("VALUE = 2\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import plain_mod
        import uses_ms_mod
    finally:
        sys.path.remove(str(tmp_path))
    assert isinstance(uses_ms_mod.__loader__, RewritingLoader)
    assert not isinstance(plain_mod.__loader__, RewritingLoader)
    assert float(uses_ms_mod.VALUE[0]) == 2.0


def _script(tmp_path, body):
    (tmp_path / "helper_mod.py").write_text("import mindspore\nNAME = mindspore.__name__\n")
    path = tmp_path / "user_script.py"
    path.write_text(textwrap.dedent(body))
    return path


def test_cellkit_run_runs_a_script_as_python_would(tmp_path):
    path = _script(tmp_path, """
        import sys
        import mindspore as ms
        from mindspore import nn
        import helper_mod

        class Net(nn.Cell):
            def construct(self, x):
                return x * 2

        if __name__ == "__main__":
            print(sys.argv[1:], helper_mod.NAME, ms is sys.modules["cellkit"])
            print(Net()(ms.Tensor([1.0, 2.0])).tolist(), type(sys.modules["__main__"].Net(),).__name__)
        """)
    r = _python(None, "-m", "cellkit", "run", str(path), "a", "--b", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["['a', '--b'] cellkit True", "[2.0, 4.0] Net"]


def test_tracebacks_start_at_the_users_line(tmp_path):
    path = _script(tmp_path, """
        import mindspore as ms

        def f():
            raise ValueError("boom")

        f()
        """)
    r = _python(None, "-m", "cellkit", "run", str(path), cwd=tmp_path)
    assert r.returncode == 1
    assert f'File "{path}", line 7, in <module>' in r.stderr and f'File "{path}", line 5, in f' in r.stderr
    assert "compat" not in r.stderr and r.stderr.strip().endswith("ValueError: boom")


def test_exit_status_and_usage(tmp_path):
    path = _script(tmp_path, "import sys\nsys.exit(3)\n")
    assert _python(None, "-m", "cellkit", "run", str(path), cwd=tmp_path).returncode == 3
    r = _python(None, "-m", "cellkit", cwd=tmp_path)
    assert r.returncode == 2 and "usage: cellkit run" in r.stdout


def test_run_module(tmp_path):
    pkg = tmp_path / "mspkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "main.py").write_text("import sys, mindspore\nprint(__name__, sys.argv[1:], mindspore.__name__)\n")
    r = _python(None, "-m", "cellkit", "run", "-m", "mspkg.main", "x", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "__main__ ['x'] cellkit"


def test_ipython_extension():
    pytest.importorskip("IPython")
    r = _python(textwrap.dedent("""
        from IPython.core.interactiveshell import InteractiveShell
        ip = InteractiveShell.instance()
        ip.run_line_magic("load_ext", "cellkit")
        result = ip.run_cell("import mindspore as ms\\nfrom mindspore import nn\\nout = nn.ReLU()(ms.Tensor([-1.0, 2.0])).tolist()")
        assert result.success, result.error_in_exec
        print(ip.user_ns["out"], ip.user_ns["ms"].__name__)
        ip.run_line_magic("unload_ext", "cellkit")
        from cellkit import compat
        print(compat.installed())
        """))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[-3:-1] == ["[0.0, 2.0] cellkit", "False"]


needs_rewrite = pytest.mark.skipif(compat.finder.rewrite_module() is None,
                                   reason="this cellkit has no cellkit.rewrite (assignment into Tensors)")


@needs_rewrite
def test_cellkit_run_applies_the_assignment_rewrite(tmp_path):
    (tmp_path / "assigning_mod.py").write_text(
        "import mindspore as ms\n\ndef fill(t):\n    t[0] = 5.0\n    return t\n")
    path = _script(tmp_path, """
        import mindspore as ms
        import assigning_mod
        x = ms.Tensor([1.0, 2.0, 3.0])
        x[1] = 7
        x[2] += 1
        print(x.tolist(), assigning_mod.fill(ms.Tensor([0.0, 0.0])).tolist())
        """)
    r = _python(None, "-m", "cellkit", "run", str(path), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[1.0, 7.0, 4.0] [5.0, 0.0]"


@needs_rewrite
def test_ipython_extension_rewrites_cells():
    pytest.importorskip("IPython")
    r = _python(textwrap.dedent("""
        from IPython.core.interactiveshell import InteractiveShell
        ip = InteractiveShell.instance()
        ip.run_line_magic("load_ext", "cellkit")
        result = ip.run_cell("import mindspore as ms\\nx = ms.Tensor([1.0, 2.0])\\nx[0] = 9\\nout = x.tolist()")
        assert result.success, result.error_in_exec
        print(ip.user_ns["out"])
        """))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "[9.0, 2.0]"
