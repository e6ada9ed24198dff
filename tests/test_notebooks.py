"""The tutorial notebooks in notebooks/: they run, and the saved files are from a full run.

Each notebook is executed from a copy on a fresh ``python3`` kernel (nbclient), in
``notebooks/``, with the checkout first on ``PYTHONPATH``; any error fails the test.
The committed files must hold the outputs of one run top to bottom: code cells
numbered 1..n in order, every cell that printed or displayed something saved with
its outputs, and no error outputs. ``notebooks/build.py`` makes them so.
"""

import copy
import importlib.util
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("ipywidgets")  # tqdm.auto's notebook bars in 03

NOTEBOOKS = pathlib.Path(__file__).resolve().parent.parent / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
IDS = [p.stem for p in PATHS]


def _build():
    spec = importlib.util.spec_from_file_location("notebooks_build", NOTEBOOKS / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = _build()


def read(path):
    return nbformat.read(path, as_version=4)


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def test_the_five_notebooks_are_there():
    assert {"01_cell_and_parameter", "02_network_parameters", "03_functional_training_loop",
            "04_custom_gradients", "05_jax_interop"} <= set(IDS)


def test_notebooks_match_their_sources():
    """The cells of each .ipynb are those build.py makes from notebooks/src/."""
    assert [s.stem for s in build.sources()] == IDS
    assert build.check() == []


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_saved_outputs_are_from_a_full_run(path):
    nb = read(path)
    nbformat.validate(nb)
    cells = code_cells(nb)
    assert cells, path.name
    assert [c.execution_count for c in cells] == list(range(1, len(cells) + 1)), \
        f"{path.name}: execution counts are not 1..n; rebuild with python notebooks/build.py"
    for n, cell in enumerate(cells, 1):
        kinds = [o.output_type for o in cell.outputs]
        assert "error" not in kinds, f"{path.name}: cell [{n}] saved an error"
        for o in cell.outputs:
            if o.output_type == "stream":
                assert o.name == "stdout", f"{path.name}: cell [{n}] wrote to stderr: {o.text[:200]!r}"
            if o.output_type == "execute_result":
                assert o.execution_count == n
    text = path.read_text()
    assert "/tmp/" not in text and str(NOTEBOOKS.parent) not in text, f"{path.name} shows an absolute path"


def test_plots_are_saved_as_images():
    for name in ("03_functional_training_loop", "04_custom_gradients", "05_jax_interop"):
        outputs = [o for c in code_cells(read(NOTEBOOKS / f"{name}.ipynb")) for o in c.outputs]
        assert any("image/png" in o.get("data", {}) for o in outputs), name


def test_cells_display_as_html():
    nb = read(NOTEBOOKS / "05_jax_interop.ipynb")
    html = code_cells(nb)[0].outputs[0]["data"]["text/html"]
    for text in ("<details open>", "fc1.weight", "(32, 1)", "Float32", "1.2k params"):
        assert text in html, text


def _shape(outputs):
    """What a cell's outputs are, leaving out values: stream names and displayed MIME types."""
    streams = sorted({o.name for o in outputs if o.output_type == "stream"})
    shown = [(o.output_type, sorted(o.get("data", {}))) for o in outputs if o.output_type != "stream"]
    return streams, shown


@pytest.mark.slow
@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_notebook_executes_on_a_fresh_kernel(path):
    """Run a copy top to bottom (nbclient raises CellExecutionError on the first error).

    Every cell that gives output on a fresh run has the same kind of output saved.
    """
    saved = read(path)
    nb = copy.deepcopy(saved)
    for cell in code_cells(nb):
        cell.outputs, cell.execution_count = [], None
    build.execute(nb, cwd=NOTEBOOKS, timeout=240)
    fresh = code_cells(nb)
    assert [c.execution_count for c in fresh] == list(range(1, len(fresh) + 1))
    for n, (got, kept) in enumerate(zip(fresh, code_cells(saved)), 1):
        assert all(o.output_type != "error" for o in got.outputs), f"{path.name}: cell [{n}] failed"
        assert _shape(got.outputs) == _shape(kept.outputs), \
            f"{path.name}: cell [{n}]'s saved outputs are not those of a run; rebuild with python notebooks/build.py"
