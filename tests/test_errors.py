"""Every refusal, table-driven: the exception type, a message naming what went wrong, and a
model that is exactly as it was (values, names, requires_grad, structure) afterwards.

Each case is ``(id, action, exception type, regex)``. ``action(net, keep)`` does one bad
thing to a fresh :class:`Block` (or to objects it makes; ``keep(obj)`` snapshots such an
object so that it is checked too). The regex is searched in the message and its notes.
The cases are in ``error_cases.py`` (Cells, Parameters, jit, grad, initializers) and
``error_cases_api.py`` (layers, losses, optimizers, wrappers, checkpoints, sharding).
``docs/errors.md`` names the case id for each row it covers.
"""

import re

import numpy as np
import pytest

from cellkit import nn
from cellkit.cell_errors import call_failed as _call_failed, note as _note
from cellkit.engine import _Rediscover

import error_cases
import error_cases_api
from error_cases import Block, X, _message, snapshot

CASES = error_cases.CASES + error_cases_api.CASES


@pytest.mark.parametrize("action,error,pattern", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_refusal_leaves_the_model_unchanged(action, error, pattern):
    net = Block()
    net(X)  # materialised and used once
    before = snapshot(net)
    kept = []

    def keep(obj):
        kept.append((obj, snapshot(obj)))
        return obj

    with pytest.raises(error) as info:
        action(net, keep)
    assert re.search(pattern, _message(info.value)), _message(info.value)
    np.testing.assert_equal(snapshot(net), before)
    for obj, snap in kept:
        np.testing.assert_equal(snapshot(obj), snap)


def test_case_ids_are_unique():
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids))


def test_the_failing_cell_is_named_once_with_its_outer_path():
    class Outer(nn.Cell):
        def __init__(self):
            super().__init__()
            self.body = Block((3, 4, 5, 2))

        def construct(self, x):
            return self.body(x)

    with pytest.raises(ValueError) as info:
        Outer()(X)
    assert info.value.__notes__ == [
        "  in Cell body.layers.2 (Dense(input_channels=5, output_channels=2, has_bias=True)) of Outer"]


def test_notes_without_add_note_go_into_the_message():
    """Python 3.10 has no exception notes: the same text extends the message, the type stays."""
    class Old(ValueError):
        def __getattribute__(self, name):
            if name == "add_note":
                raise AttributeError(name)
            return super().__getattribute__(name)

    err = Old("bad shape")
    _note(err, "  in Cell a (Dense)")
    _note(err, "  in Cell x.a (Dense) of Net", replace="  in Cell a (Dense)")
    assert type(err) is Old and str(err) == "bad shape\n  in Cell x.a (Dense) of Net"


def test_none_may_still_fill_a_slot_of_its_kind():
    net = Block()
    net.insert_param_to_cell("scale", None)
    net.insert_child_to_cell("layers", None)
    assert net.scale is None and net.layers is None


def test_internal_control_flow_is_not_annotated():
    err = _Rediscover(None)  # raised through Cells while cellkit.jit finds a function's Parameters
    assert _call_failed(Block(), err, (X,), {}) is None
    assert not getattr(err, "__notes__", None) and not hasattr(err, "_ck_where")


def test_the_catalogue_names_every_case_and_only_tests_that_exist():
    """docs/errors.md cites each case of this file, and every test it cites exists."""
    import pathlib
    root = pathlib.Path(__file__).resolve().parent.parent
    text = (root / "docs" / "errors.md").read_text()
    ids = {c[0] for c in CASES}
    cited = set(re.findall(r"E:([a-z0-9-]+)", text))
    assert cited <= ids, sorted(cited - ids)
    assert ids <= cited, sorted(ids - cited)
    for path, name in set(re.findall(r"(test_\w+\.py)::(test_\w+)", text)):
        source = (root / "tests" / path).read_text()
        assert re.search(rf"^def {name}\(", source, re.M), f"{path}::{name}"
