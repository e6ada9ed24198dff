"""Callbacks: call order and cb_params fields against MindSpore 2.10 (Model.train/fit/eval on a
tiny network), LossMonitor's lines, ModelCheckpoint's files, History, plateau callbacks."""

import contextlib
import io
import os

import numpy as np
import pytest
from ms_fixtures import load

import cellkit as ms
from cellkit import nn, train

F = load("train_model")
X, Y, W = (F["data"]["output"][k] for k in ("x", "y", "w"))
HOOKS = ["on_train_begin", "on_train_epoch_begin", "on_train_step_begin", "on_train_step_end", "on_train_epoch_end",
         "on_train_end", "on_eval_begin", "on_eval_epoch_begin", "on_eval_step_begin", "on_eval_step_end",
         "on_eval_epoch_end", "on_eval_end"]


def make_net():
    return nn.Dense(3, 1, weight_init=ms.Tensor(W), bias_init="zeros")


def data():
    return [(X[:4], Y[:4]), (X[4:], Y[4:])]


class Recording(train.Callback):
    def __init__(self):
        self.calls = []


for _hook in HOOKS:
    setattr(Recording, _hook, (lambda h: lambda self, ctx: self.calls.append(
        [h, sorted(ctx.original_args().keys()), int(ctx.original_args().get("cur_epoch_num", 0) or 0),
         int(ctx.original_args().get("cur_step_num", 0) or 0), str(ctx.original_args().get("mode"))]))(_hook))


def _same_calls(got, want):
    assert [c[0] for c in got] == [c[0] for c in want]
    for g, w in zip(got, want):
        assert g == w, (g[0], sorted(set(g[1]) ^ set(w[1])))


def test_train_call_order_fields_and_losses():
    net = make_net()
    model = train.Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.05, 0.9))
    r = Recording()
    losses = []
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        model.train(2, data(), callbacks=[r, train.LambdaCallback(
            on_train_step_end=lambda c: losses.append(float(c.original_args().net_outputs))), train.LossMonitor(1)])
    _same_calls(r.calls, F["train_calls"]["output"])
    np.testing.assert_allclose(losses, F["train_loss"]["output"], rtol=1e-5)
    want_lines = F["train_lossmonitor"]["output"]
    got_lines = out.getvalue().splitlines()
    assert [ln.split(", loss is")[0] for ln in got_lines] == [ln.split(", loss is")[0] for ln in want_lines]
    np.testing.assert_allclose([float(ln.split("loss is ")[1]) for ln in got_lines],
                               [float(ln.split("loss is ")[1]) for ln in want_lines], rtol=1e-5)
    np.testing.assert_allclose(model.predict(ms.Tensor(X[:2])), F["predict"]["output"], rtol=1e-5)
    r2 = Recording()
    model.train(3, data(), callbacks=[r2], initial_epoch=1)
    _same_calls(r2.calls, F["resume_calls"]["output"])
    # (MindSpore's recorded weight array shares memory with the Parameter: it is the value after both runs)
    np.testing.assert_allclose(net.weight.asnumpy(), F["train_weight"]["output"], rtol=1e-5)


def test_fit_and_eval_calls_and_results():
    net = make_net()
    model = train.Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.05), metrics={"mae", "loss"})
    r, seen = Recording(), []
    model.fit(2, data(), data(), callbacks=[r, train.LambdaCallback(on_train_epoch_end=lambda c: seen.append(
        {"metrics": dict(c.original_args().get("metrics", {})),
         "eval_results": dict(c.original_args().get("eval_results", {}))}))])
    _same_calls(r.calls, F["fit_calls"]["output"])
    for got, want in zip(seen, F["fit_eval_seen"]["output"]):
        for part in ("metrics", "eval_results"):
            assert sorted(got[part]) == sorted(want[part])
            np.testing.assert_allclose([got[part][k] for k in sorted(want[part])],
                                       [want[part][k] for k in sorted(want[part])], rtol=1e-5)
    r2 = Recording()
    res = model.eval(data(), callbacks=[r2])
    _same_calls(r2.calls, F["eval_calls"]["output"])
    want = F["eval_result"]["output"]
    np.testing.assert_allclose([res[k] for k in sorted(want)], [want[k] for k in sorted(want)], rtol=1e-5)


def test_reduce_lr_on_plateau_and_early_stopping():
    net = make_net()
    model = train.Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.5))
    lrs = []
    model.train(4, data(), callbacks=[
        train.LambdaCallback(on_train_step_end=lambda c: lrs.append(float(c.original_args().optimizer.learning_rate))),
        train.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=0)])
    np.testing.assert_allclose(lrs, F["plateau_lr"]["output"], rtol=1e-6)
    net = make_net()
    model = train.Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.5))
    r = Recording()
    model.train(5, data(), callbacks=[r, train.EarlyStopping(monitor="loss", patience=0, min_delta=100.0)])
    assert sorted({c[2] for c in r.calls}) == F["earlystop_epochs"]["output"]
    with pytest.raises(ValueError, match="mode"):
        train.EarlyStopping(mode="best")


def test_model_checkpoint_names_and_resume(tmp_path):
    cfg = train.CheckpointConfig(save_checkpoint_steps=1, keep_checkpoint_max=3)
    net = make_net()
    model = train.Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.05))
    ck = train.ModelCheckpoint(prefix="net", directory=str(tmp_path), config=cfg)
    model.train(2, data(), callbacks=[ck])
    assert sorted(os.listdir(tmp_path)) == F["ckpt_files"]["output"]
    assert ck.latest_ckpt_file_name.endswith("net-2_2.ckpt")
    trained = net.weight.asnumpy().copy()
    model.train(1, data(), callbacks=[train.ModelCheckpoint(prefix="net", directory=str(tmp_path), config=cfg)])
    assert sorted(os.listdir(tmp_path)) == F["ckpt_files"]["after_second_run"]
    # resume: a fresh net from the epoch-2 checkpoint continues as the original run did
    net2 = make_net()
    ms.load_param_into_net(net2, ms.load_checkpoint(str(tmp_path / "net-2_2.ckpt")))
    np.testing.assert_array_equal(net2.weight.asnumpy(), trained)
    with pytest.raises(ValueError, match="can't be all None or 0"):
        train.CheckpointConfig(0, 0, 0, 0)
    with pytest.raises(ValueError, match="prefix"):
        train.ModelCheckpoint(prefix="a/b")


def test_history_and_plot():
    import matplotlib
    matplotlib.use("Agg")
    net = make_net()
    model = train.Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.05), metrics={"mae"})
    h = train.History()
    model.fit(2, data(), data(), callbacks=[h])
    want = F["history"]
    assert h.epoch["epoch"] == want["epoch"]
    assert sorted(h.history) == sorted(want["output"])
    for k, v in want["output"].items():
        np.testing.assert_allclose([float(x) for x in h.history[k]], v, rtol=1e-5)
    fig = h.plot()
    assert [ax.get_title() for ax in fig.axes] == ["loss", "mae"]
    np.testing.assert_allclose(fig.axes[1].lines[0].get_ydata(), want["output"]["mae"], rtol=1e-5)


def test_callback_checks_and_unsupported():
    net = make_net()
    model = train.Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.05))
    with pytest.raises(TypeError, match="Callback"):
        model.train(1, data(), callbacks=[object()])
    with pytest.raises(NotImplementedError, match="SummaryLandscape"):
        train.SummaryLandscape("./summary")
    with pytest.raises(TypeError, match="dict"):
        train.RunContext([1])
    ctx = train.RunContext({})
    ctx.request_stop()
    assert ctx.get_stop_requested()
    # 1.x names are called through the on_* hooks
    seen = []

    class Old(train.Callback):
        def step_end(self, run_context):
            seen.append(run_context.original_args().cur_step_num)
    model.train(1, data(), callbacks=Old())
    assert seen == [1, 2]


def test_progress_bar_default(monkeypatch):
    from cellkit.train.callback import _progress_bar
    monkeypatch.setenv("CELLKIT_PROGRESS_BAR", "0")
    assert not _progress_bar.interactive()
    monkeypatch.setenv("CELLKIT_PROGRESS_BAR", "1")
    assert _progress_bar.interactive()
    net = make_net()
    model = train.Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.05))
    r = Recording()
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        model.train(1, data(), callbacks=[r])
    assert "2/2" in err.getvalue() and "loss=" in err.getvalue()
    monkeypatch.delenv("CELLKIT_PROGRESS_BAR")
    assert not _progress_bar.interactive()  # pytest captures stdout: not a terminal
