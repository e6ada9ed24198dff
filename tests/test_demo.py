import json

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("matplotlib")

from cellkit import demo  # noqa: E402


@pytest.mark.slow
def test_demo_runs_a_short_epoch_and_writes_its_outputs(tmp_path, capsys):
    result = demo.main(["--epochs", "1", "--max-steps", "6", "--out", str(tmp_path), "--quiet"])
    out = capsys.readouterr().out
    assert "epoch  1: loss" in out and "test accuracy" in out
    for name in ("lenet_digits.safetensors", "training.png", "metrics.json"):
        assert (tmp_path / name).stat().st_size > 0
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["steps_per_epoch"] == 6 and len(metrics["history"]["step_loss"]) == 6
    assert metrics["compilations"] == 1
    assert 0.0 <= result["test_accuracy"] <= 1.0
    # The first steps already learn something: the loss falls from about log(10).
    losses = metrics["history"]["step_loss"]
    assert losses[0] > 2.0 and min(losses) < losses[0]
    assert (tmp_path / "training.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_digits_split_is_deterministic_and_disjoint():
    a = demo.load_digits(0)
    b = demo.load_digits(0)
    assert all((x == y).all() for x, y in zip(a, b))
    x_train, y_train, x_test, y_test = a
    assert x_train.shape[1:] == (1, 8, 8) and len(x_train) + len(x_test) == 1797
    assert 0.0 <= x_train.min() and x_train.max() <= 1.0
