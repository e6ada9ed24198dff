"""The import structure of ``cellkit``: no import circles, ``__all__`` everywhere.

The graph is read from the source with ``ast``, not from ``sys.modules``: an import
inside a function is an edge like one at the top of a module (hiding a circle in a
function does not remove it). Edges point from a module to the cellkit modules it
imports: ``from .x import y`` is an edge to ``x`` (or to ``x.y`` when that is a
submodule); ``from . import y`` is an edge to the submodule ``y`` when there is one,
otherwise to the package's ``__init__``. A package's ``__init__`` importing its own
children is an ordinary edge, so a child that imports its package's ``__init__`` (for
a name re-exported from a sibling) closes a circle.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent / "cellkit"


def _module_files():
    """{dotted module name: (path, is_package)} for every module under cellkit/."""
    mods = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        mods[".".join(parts)] = (path, is_pkg)
    return mods


MODULES = _module_files()


def _resolve(module, is_pkg, level, target):
    """The absolute name of ``from <level dots><target> import ...`` written in ``module``."""
    if level == 0:
        return target
    base = module.split(".")
    if not is_pkg:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _imports(module, path, is_pkg):
    """The cellkit modules that ``module`` imports anywhere in its source."""
    tree = ast.parse(path.read_text(), filename=str(path))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.name
                while name and name not in MODULES:  # ``import cellkit.x.attr``-like forms
                    name = name.rpartition(".")[0]
                if name:
                    out.add(name)
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, is_pkg, node.level, node.module)
            if source.split(".")[0] != "cellkit":
                continue
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                if sub in MODULES:
                    out.add(sub)
                elif source in MODULES:
                    out.add(source)
    out.discard(module)
    return out


def import_graph():
    return {m: _imports(m, p, pkg) for m, (p, pkg) in MODULES.items()}


def find_cycle(graph):
    """One import circle as a list of modules (first == last), or None."""
    state = {}  # 1: on the current path, 2: done
    stack = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_the_graph_sees_imports_everywhere():
    graph = import_graph()
    assert "cellkit.parameter" in graph["cellkit.cell"]
    assert "cellkit.cell" in graph["cellkit"]
    # relative imports several levels up resolve to the module, not its package
    assert any(m.startswith("cellkit.engine") for m in graph["cellkit.nn.wrap.cell_wrapper"])
    # an import inside a method (Cell.shard) is an edge too
    assert "cellkit.parallel" in graph["cellkit.cell"]


def test_from_package_import_is_the_submodule_or_the_init(tmp_path):
    src = tmp_path / "mod.py"
    src.write_text("def f():\n    from . import grad_function, jit_function\n    from . import value_and_grad\n"
                   "from ..parameter import Parameter\nimport cellkit.engine.frame\nimport numpy\n")
    assert _imports("cellkit.engine.jit_function", src, False) == {
        "cellkit.engine.grad_function", "cellkit.engine", "cellkit.parameter", "cellkit.engine.frame"}


def test_cycle_finder_reports_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_resolution_of_relative_imports():
    assert _resolve("cellkit.nn.layer.conv", False, 2, "cell") == "cellkit.nn.cell"
    assert _resolve("cellkit.nn", True, 1, "layer") == "cellkit.nn.layer"
    assert _resolve("cellkit.nn.layer.conv", False, 1, None) == "cellkit.nn.layer"


def test_no_import_circles():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle in cellkit: " + " -> ".join(cycle)


def _defines_all(tree) -> bool:
    for node in tree.body:
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                    return True
            elif isinstance(sub, ast.ImportFrom) and any(a.name == "__all__" for a in sub.names):
                return True
            elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                break
    return False


@pytest.mark.parametrize("module", [m for m in MODULES if not m.rpartition(".")[2].startswith("_")])
def test_every_public_module_has_all(module):
    """Every package and public module states its exports (private ``_x`` helper modules may not)."""
    path, _ = MODULES[module]
    assert _defines_all(ast.parse(path.read_text())), f"{path.relative_to(ROOT.parent)} has no __all__"


def test_no_op_or_primitive_is_defined_by_two_families():
    from collections import Counter

    from cellkit.ops import function, operations
    for package in (function, operations):
        counts = Counter(name for module in package.FAMILIES.values() for name in module.__all__)
        assert [n for n, k in counts.items() if k > 1] == [], package.__name__
