"""Cell attribute semantics against MindSpore 2.10: what assigning to a Cell attribute does when
the attribute already holds a list, None, a Tensor, a Parameter or a sub-Cell (the cases of
``tests/fixtures/record/cell_attr_cases.py``, recorded by ``record_cell_attributes.py``)."""

import pathlib
import sys

import numpy as np
import pytest

import cellkit
from ms_fixtures import load

sys.path.insert(0, str(pathlib.Path(__file__).parent / "fixtures" / "record"))
from cell_attr_cases import CASES  # noqa: E402

RECORDED = load("cell_attributes")


def _same(got, want, where):
    if isinstance(want, np.ndarray):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, err_msg=where)
    elif isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), f"{where}: keys {sorted(got)} != {sorted(want)}"
        for k in want:
            _same(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), f"{where}: {got!r} != {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{where}[{i}]")
    else:
        assert got == want, f"{where}: {got!r} != MindSpore's {want!r}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_cell_attribute_case(name):
    expected = RECORDED[name]
    cellkit.set_seed(0)
    if "error" in expected:
        with pytest.raises(getattr(__builtins__, expected["error"], None) or Exception) as info:
            CASES[name](cellkit)
        assert type(info.value).__name__ == expected["error"], f"{name}: {info.value!r}"
        return
    _same(CASES[name](cellkit), expected["output"], name)
