"""Model.train with a cellkit.dataset pipeline, stand-alone and data parallel on 8 simulated devices."""

import jax
import numpy as np
import pytest

import cellkit as ms
import cellkit.dataset as ds
from cellkit import nn


@pytest.fixture(autouse=True)
def _reset():
    ms.reset_auto_parallel_context()
    yield
    ms.reset_auto_parallel_context()


def _fit(epochs=2):
    ms.set_seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 6)).astype(np.float32)
    y = (x[:, :3].sum(1) > 0).astype(np.int32)
    data = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(16, drop_remainder=True)
    net = nn.SequentialCell([nn.Dense(6, 8), nn.ReLU(), nn.Dense(8, 2)])
    model = ms.Model(net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), learning_rate=0.5),
                     metrics={"acc"})
    history = ms.train.callback.History()
    model.train(epochs, data, callbacks=[history])
    return net, model, history, data


def test_model_trains_on_a_dataset_pipeline():
    net, model, history, data = _fit(epochs=4)
    losses = [float(v) for v in history.history["net_output"]]
    assert history.epoch["epoch"] == [1, 2, 3, 4] and len(losses) == 4
    assert losses[-1] < losses[0]
    assert model.eval(data)["acc"] > 0.75


@pytest.mark.skipif(jax.device_count() < 8, reason="needs the 8 simulated devices of conftest.py")
def test_data_parallel_model_train_matches_stand_alone():
    single, _, _, _ = _fit()
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
    dp, model, _, _ = _fit()
    assert model._parallel_mode == "data_parallel" and model._device_number == 8
    for a, b in zip(single.trainable_params(), dp.trainable_params()):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)
    assert len(dp[0].weight.value.sharding.device_set) == 8   # replicated over the data mesh
