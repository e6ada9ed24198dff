"""Metrics (cellkit.train.metrics) against MindSpore 2.10's values on recorded inputs."""

import numpy as np
import pytest
from ms_fixtures import load

import cellkit as ms
from cellkit import nn, train

CASES = load("train_metrics")
METRIC_CASES = sorted(k for k in CASES if "/" in k and not k.startswith(("auc/", "OcclusionSensitivity/")))


def _run(cls, batches, kwargs):
    kwargs = dict(kwargs)
    ev = kwargs.pop("_eval", None) or {}
    m = getattr(train, cls)(**kwargs)
    m.clear()
    for b in batches:
        m.update(*b)
    return m.eval(**ev)


def _close(got, want):
    if isinstance(want, list):
        assert isinstance(got, (list, tuple)) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w)
        return
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", METRIC_CASES)
def test_metric_matches_mindspore(name):
    case = CASES[name]
    cls = name.split("/")[0]
    if "error" in case:
        with pytest.raises(Exception) as info:
            _run(cls, case["inputs"], case["kwargs"])
        assert type(info.value).__name__ == case["error"]
        return
    _close(_run(cls, case["inputs"], case["kwargs"]), case["output"])


@pytest.mark.parametrize("name", sorted(k for k in CASES if k.startswith("auc/")))
def test_auc_matches_mindspore(name):
    case = CASES[name]
    x, y = case["inputs"]
    fn = (lambda a, b: train.auc(a, b, reorder=True)) if name.endswith("reorder") else train.auc
    if "error" in case:
        with pytest.raises(ValueError):
            fn(x, y)
    else:
        np.testing.assert_allclose(fn(x, y), case["output"])


@pytest.mark.parametrize("name", sorted(k for k in CASES if k.startswith("OcclusionSensitivity/")))
def test_occlusion_sensitivity_matches_mindspore(name):
    case = CASES[name]
    w = CASES["dense_weight"]["output"]
    net = nn.Dense(6, 3, weight_init=ms.Tensor(w), bias_init="zeros")
    x, label = case["inputs"]
    m = train.OcclusionSensitivity(**case["kwargs"])
    m.update(net, ms.Tensor(x), label)
    np.testing.assert_allclose(m.eval(), case["output"], rtol=1e-5, atol=1e-6)


def test_names_and_exports():
    assert train.names() == CASES["names"]["output"]
    for n in ["Accuracy", "Metric", "names", "get_metric_fn", "auc", "F1", "ConfusionMatrixMetric"]:
        assert getattr(nn, n) is getattr(train, n) is getattr(train.metrics, n)
    assert isinstance(train.get_metric_fn("top_5_accuracy"), train.Top5CategoricalAccuracy)
    with pytest.raises(KeyError, match="Unknown"):
        train.get_metric_fn("kappa")


def test_indexes_and_inputs():
    m = train.Accuracy().set_indexes([2, 0])
    m.clear()
    m.update(np.array([1, 0]), None, np.array([[0.1, 0.9], [0.8, 0.2]]))  # (label, _, scores) -> (scores, label)
    assert m.eval() == 1.0
    with pytest.raises(ValueError, match="indexes"):
        train.Accuracy().set_indexes((0, 1))
    with pytest.raises(TypeError, match="tensor, list or numpy"):
        train.MAE()("a", "b")
    # Tensors (jax arrays) and Parameters are read on the host
    assert train.MAE()(ms.Tensor([1.0, 2.0]), ms.Parameter(ms.Tensor([1.0, 4.0]), name="p")) == 1.0
