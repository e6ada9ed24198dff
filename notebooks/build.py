"""Build the tutorial notebooks from their sources and execute them.

Each notebook is written as a plain Python file in ``notebooks/src/`` in the
"percent" format: ``# %%`` starts a code cell, ``# %% [markdown]`` a Markdown
cell whose lines are comments (``# text``). This script turns every source into
``notebooks/<name>.ipynb`` and runs it top to bottom on a fresh ``python3``
kernel, saving the outputs (execution counts 1..n, plots as PNG images)::

    python notebooks/build.py                 # all notebooks
    python notebooks/build.py 03 04           # those whose names start with 03 or 04
    python notebooks/build.py --check         # only compare the .ipynb cells with the sources

The kernel runs in ``notebooks/`` with the repository root first on
``PYTHONPATH``, so it imports the checked-out ``cellkit``.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

import nbformat

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
SRC = HERE / "src"
KERNEL = "python3"
CELL_TIMEOUT = 300  # seconds, per cell

_MARKDOWN = "# %% [markdown]"
_CODE = "# %%"


def parse(text: str) -> list[tuple[str, str]]:
    """[(kind, source)] for a percent-format file; kind is 'code' or 'markdown'."""
    cells: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        stripped = line.rstrip()
        if stripped == _MARKDOWN:
            cells.append(("markdown", []))
        elif stripped == _CODE:
            cells.append(("code", []))
        elif not cells:
            if stripped:
                raise ValueError(f"text before the first cell marker: {line!r}")
        else:
            kind, lines = cells[-1]
            if kind == "markdown":
                if stripped and not stripped.startswith("#"):
                    raise ValueError(f"a Markdown line must be a comment: {line!r}")
                line = stripped[2:] if stripped.startswith("# ") else stripped[1:]
            lines.append(line)
    out = []
    for kind, lines in cells:
        while lines and not lines[-1].strip():
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
        out.append((kind, "\n".join(lines)))
    return out


def notebook_from_source(path: pathlib.Path) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    for kind, source in parse(path.read_text()):
        maker = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
        nb.cells.append(maker(source))
    nb.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    # Stable cell ids, so rebuilding an unchanged notebook gives the same file.
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{path.stem[:2]}-{i:03d}"
    return nb


def kernel_env() -> dict:
    """The kernel's environment: the checkout's cellkit first, JAX's default CPU devices."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    flags = [f for f in env.get("XLA_FLAGS", "").split() if not f.startswith("--xla_force_host_platform_device_count")]
    if flags:
        env["XLA_FLAGS"] = " ".join(flags)
    else:
        env.pop("XLA_FLAGS", None)
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"  # plots as PNG outputs
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # no debugger warning on stderr
    return env


def execute(nb: nbformat.NotebookNode, cwd: pathlib.Path = HERE, timeout: int = CELL_TIMEOUT):
    """Run ``nb`` in place on a fresh kernel; raises ``nbclient.exceptions.CellExecutionError``."""
    from nbclient import NotebookClient

    client = NotebookClient(nb, timeout=timeout, kernel_name=KERNEL, resources={"metadata": {"path": str(cwd)}},
                            record_timing=False)
    client.execute(env=kernel_env(), cwd=str(cwd))
    return nb


def sources() -> list[pathlib.Path]:
    return sorted(SRC.glob("[0-9][0-9]_*.py"))


def cells_of(nb) -> list[tuple[str, str]]:
    return [(c.cell_type, c.source) for c in nb.cells]


def check() -> list[str]:
    """Names of notebooks whose cells differ from their sources (or that are missing)."""
    stale = []
    for src in sources():
        target = HERE / f"{src.stem}.ipynb"
        if not target.exists() or cells_of(nbformat.read(target, as_version=4)) != cells_of(notebook_from_source(src)):
            stale.append(target.name)
    return stale


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="build only notebooks whose names start with these")
    parser.add_argument("--check", action="store_true", help="compare the notebooks' cells with the sources")
    args = parser.parse_args(argv)
    if args.check:
        stale = check()
        for name in stale:
            print(f"{name} does not match its source; run python notebooks/build.py")
        return 1 if stale else 0
    chosen = [s for s in sources() if not args.names or any(s.stem.startswith(n) for n in args.names)]
    if not chosen:
        parser.error(f"no source in {SRC.relative_to(ROOT)} matches {args.names}")
    for src in chosen:
        start = time.perf_counter()
        nb = execute(notebook_from_source(src))
        target = HERE / f"{src.stem}.ipynb"
        nbformat.write(nb, target)
        print(f"{target.relative_to(ROOT)}: {len(nb.cells)} cells, {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
