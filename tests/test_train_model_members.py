"""Model's members beyond train/eval/predict: ``build`` (ahead-of-time tracing and compiling),
the auto-parallel layout queries that refuse, and MindSpore's attributes."""

import numpy as np
import pytest

import cellkit as ms
import cellkit.dataset as ds
from cellkit import engine, nn


def _model(metrics=None):
    net = nn.Dense(2, 1, weight_init="ones", bias_init="zeros")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
    return net, ms.train.Model(net, nn.MSELoss(), opt, metrics=metrics)


def _data():
    x = np.arange(16, dtype=np.float32).reshape(8, 2) / 8
    return ds.NumpySlicesDataset({"x": x, "y": x.sum(1, keepdims=True)}, shuffle=False).batch(4)


def test_build_traces_ahead_and_changes_nothing():
    net, model = _model({"mae"})
    before = engine.compile_count()
    model.build(_data(), _data())
    assert engine.compile_count() == before + 2  # the train step and the eval step
    np.testing.assert_array_equal(net.weight.asnumpy(), [[1.0, 1.0]])
    model.train(1, _data())
    other_net, other = _model()
    other.train(1, _data())
    np.testing.assert_array_equal(net.weight.asnumpy(), other_net.weight.asnumpy())


def test_build_checks_its_arguments():
    _, model = _model()
    with pytest.raises(RuntimeError, match="metric"):
        model.build(valid_dataset=_data())
    model.build()  # nothing to build


@pytest.mark.parametrize("name, args", [("infer_train_layout", (None,)), ("infer_predict_layout", ())])
def test_layout_queries_refuse_naming_the_alternative(name, args):
    _, model = _model()
    with pytest.raises(NotImplementedError, match="Parameter.sharding"):
        getattr(model, name)(*args)


def test_attributes():
    _, model = _model()
    assert (model.enable_hcce, model.enable_tre, model.epoch_iter, model.batch_num) == (False, False, 0, -1)
