"""train.Model: datasets of any iterable, one compilation per step, resuming from a checkpoint,
the errors MindSpore 2.10 raises."""

import numpy as np
import pytest
from ms_fixtures import load

import cellkit as ms
from cellkit import engine, nn, train

F = load("train_model")
X, Y, W = (F["data"]["output"][k] for k in ("x", "y", "w"))


def make_net():
    return nn.Dense(3, 1, weight_init=ms.Tensor(W), bias_init="zeros")


def batches():
    return [(X[:4], Y[:4]), (X[4:], Y[4:])]


def _losses(model, dataset, epochs=2, **kw):
    out = []
    model.train(epochs, dataset, callbacks=train.LambdaCallback(
        on_train_step_end=lambda c: out.append(float(c.original_args().net_outputs))), **kw)
    return out


def test_datasets_of_any_iterable_and_sink_mode():
    want = F["train_loss"]["output"]

    class Sized:
        def __iter__(self):
            return iter([{"x": X[:4], "y": Y[:4]}, {"x": X[4:], "y": Y[4:]}])

        def get_dataset_size(self):
            return 2

    for dataset, sink in [(batches(), False), (Sized(), False), (batches(), True)]:
        net = make_net()
        model = train.Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.05, 0.9))
        np.testing.assert_allclose(_losses(model, dataset, dataset_sink_mode=sink), want, rtol=1e-5)
    # a generator: one epoch; a second epoch has nothing left and says so
    net = make_net()
    model = train.Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.05, 0.9))
    np.testing.assert_allclose(_losses(model, (b for b in batches()), epochs=1), want[:2], rtol=1e-5)
    with pytest.raises(ValueError, match="generator"):
        model.train(2, (b for b in batches()))


def test_step_compiles_once():
    net = make_net()
    model = train.Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.05), metrics={"mae"})
    model.train(1, batches())
    model.eval(batches())
    before = engine.compile_count()
    model.train(3, batches())
    model.eval(batches())
    assert engine.compile_count() == before


def test_resume_from_checkpoint_matches_uninterrupted(tmp_path):
    cfg = train.CheckpointConfig(save_checkpoint_steps=2, keep_checkpoint_max=2)
    net = make_net()
    opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
    model = train.Model(net, nn.MSELoss(), opt)
    full = _losses(model, batches(), epochs=4)
    net = make_net()
    opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
    model = train.Model(net, nn.MSELoss(), opt)
    model.train(2, batches(), callbacks=[train.ModelCheckpoint("run", str(tmp_path), cfg)])
    # a new process: fresh network and optimizer, state (weights, moments, step) from the file
    net2 = make_net()
    opt2 = nn.Momentum(net2.trainable_params(), 0.05, 0.9)
    model2 = train.Model(net2, nn.MSELoss(), opt2)
    params = ms.load_checkpoint(str(tmp_path / "run-2_2.ckpt"))
    not_loaded, _ = ms.load_param_into_net(model2.train_network, params)
    assert not_loaded == []
    np.testing.assert_allclose(_losses(model2, batches(), epochs=4, initial_epoch=2), full[4:], rtol=1e-5)


@pytest.mark.parametrize("case", ["model_amp_no_opt", "model_bad_kwarg", "model_metrics_no_loss"])
def test_model_errors_as_mindspore(case):
    fn = {"model_amp_no_opt": lambda: train.Model(make_net(), nn.MSELoss(), amp_level="O2"),
          "model_bad_kwarg": lambda: train.Model(make_net(), nn.MSELoss(), foo=1),
          "model_metrics_no_loss": lambda: train.Model(make_net(), metrics={"acc"})}[case]
    with pytest.raises(Exception) as info:
        fn()
    assert type(info.value).__name__ == F[case]["error"]


def test_model_argument_checks():
    net = make_net()
    model = train.Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.05))
    with pytest.raises(ValueError, match="initial_epoch"):
        model.train(1, batches(), initial_epoch=1)
    with pytest.raises(ValueError, match="no valid data"):
        model.train(1, [])
    with pytest.raises(TypeError, match="iterable"):
        model.train(1, 3)
    with pytest.raises(ValueError, match="two elements"):
        model.train(1, [(X, Y, Y)])
    with pytest.raises(ValueError, match="metrics"):
        model.eval(batches())
    with pytest.raises(TypeError, match="Cell"):
        train.Model(lambda x: x)
    assert ms.Model is train.Model and model.predict_network is net
    assert type(model.train_network).__name__ == "TrainOneStepCell"
    assert model.eval_network is None


def test_amp_level_and_loss_scale_in_model():
    net = nn.SequentialCell([nn.Dense(3, 4), nn.ReLU(), nn.Dense(4, 1)])
    model = train.Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.01, 0.9, loss_scale=128.0), amp_level="O3",
                        loss_scale_manager=train.FixedLossScaleManager(128.0, drop_overflow_update=False),
                        metrics={"mse"})
    losses = _losses(model, batches(), epochs=3)
    assert np.all(np.isfinite(losses)) and losses[-2] < losses[0]  # same batch, two epochs apart
    assert model.predict(X).dtype == np.float16  # O3: the backbone computes in float16
    assert np.isfinite(model.eval(batches())["mse"])
