"""cellkit.amp and Cell.to_float against MindSpore 2.10: output dtypes and values per level,
loss-scale state per step (update Cell, manager, scalers), and the training step that skips
an overflowing update."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ms_fixtures import load

import cellkit as ms
from cellkit import amp, nn, train

F = load("train_model")
XIN = F["amp_input"]["output"]
DW = F["amp_dense_w"]["output"]
X, Y, W = (F["data"]["output"][k] for k in ("x", "y", "w"))


def amp_net():
    return nn.SequentialCell([nn.Dense(3, 4, weight_init=ms.Tensor(DW), bias_init="zeros"), nn.ReLU(),
                              nn.BatchNorm1d(4)])


def test_to_float_matches_mindspore():
    net = nn.Dense(3, 1, weight_init=ms.Tensor(W), bias_init="zeros").to_float(ms.float16)
    out = net(ms.Tensor(XIN))
    assert out.dtype == jnp.float16 and str(net.weight.dtype) == F["to_float"]["param_dtype"]
    np.testing.assert_allclose(np.asarray(out, np.float32), F["to_float"]["output"], rtol=2e-3, atol=2e-3)
    # gradients come back in the Parameters' own type; under jit too
    g = ms.grad(lambda x: net(x).astype(jnp.float32).sum(), None, net.trainable_params())(ms.Tensor(XIN))
    assert all(a.dtype == jnp.float32 for a in g)
    assert ms.jit(lambda n, x: n(x))(net, ms.Tensor(XIN)).dtype == jnp.float16
    with pytest.raises(ValueError, match="dst_type"):
        net.to_float(ms.int32)


@pytest.mark.parametrize("level", ["O1", "O2", "O3"])
def test_auto_mixed_precision_levels(level):
    net = amp.auto_mixed_precision(amp_net(), level)
    net.set_train(False)
    out = net(ms.Tensor(XIN))
    want = F[f"amp_{level}"]
    assert str(ms.dtype.pytype_to_dtype(out.dtype) if hasattr(ms.dtype, "pytype_to_dtype") else out.dtype) \
        in (want["dtype"], "float32")
    assert out.dtype == jnp.float32
    np.testing.assert_allclose(out, want["output"], rtol=5e-3, atol=5e-3)


def test_o2_structure_and_lists():
    net = amp.auto_mixed_precision(amp_net(), "O2")
    assert [type(c).__name__ for _, c in net.cells_and_names()] == F["amp_O2_flags"]["names"]
    names = [type(c).__name__ for _, c in net.cells_and_names()]
    dense, bn = net._backbone[0], net._backbone[2]._backbone
    assert dense.fp16 and bn.fp32 and names[-1] == "BatchNorm1d"
    assert [c.__name__ for c in amp.get_white_list() if c.__name__ in F["white_black"]["output"]] == \
        [n for n in F["white_black"]["output"] if hasattr(nn, n)]
    assert [c.__name__ for c in amp.get_black_list()] == [n for n in F["white_black"]["black"] if hasattr(nn, n)]
    # Parameter names are kept through the wrappers
    assert [p.name for p in net.trainable_params()] == [p.name for p in amp_net().trainable_params()]


@pytest.mark.parametrize("case", ["amp_bad_level", "amp_bad_dtype"])
def test_amp_errors(case):
    fn = {"amp_bad_level": lambda: amp.auto_mixed_precision(amp_net(), "O4"),
          "amp_bad_dtype": lambda: amp.auto_mixed_precision(amp_net(), "O2", ms.float32)}[case]
    with pytest.raises(Exception) as info:
        fn()
    assert type(info.value).__name__ == F[case]["error"]


def test_update_cell_state_per_step():
    want = F["update_cell_dynamic"]
    update = amp.DynamicLossScaleUpdateCell(2.0 ** 10, 2, 2)
    scale = ms.Parameter(ms.Tensor(2.0 ** 10, ms.float32), name="scale")
    got = []
    for overflow in want["overflow"]:
        update(scale, jnp.asarray(overflow))
        got.append([float(scale.value), int(update.cur_iter.value), int(update.last_overflow_iter.value)])
    np.testing.assert_allclose(got, want["output"])


def test_manager_and_scalers_per_step():
    m = train.DynamicLossScaleManager(init_loss_scale=16, scale_factor=2, scale_window=3)
    seq = []
    for overflow in [False, False, True, False, False, False, True, True, False]:
        m.update_loss_scale(overflow)
        seq.append(m.get_loss_scale())
    np.testing.assert_allclose(seq, F["manager_dynamic"]["output"])
    scaler = amp.DynamicLossScaler(scale_value=2 ** 10, scale_factor=2, scale_window=2)
    seq = []
    for finite in [True, True, False, True, True, True, False]:
        scaler.adjust(jnp.asarray(finite))
        seq.append([float(scaler.scale_value.value), int(scaler.counter.value)])
    np.testing.assert_allclose(seq, F["scaler_dynamic"]["output"])
    st = amp.StaticLossScaler(scale_value=64)
    np.testing.assert_allclose(st.scale(jnp.float32(3.0)), F["scaler_static"]["output"])
    assert float(st.unscale(jnp.float32(3.0))) == pytest.approx(F["scaler_static"]["unscale"])
    assert [bool(amp.all_finite((ms.Tensor([1.0, 2.0]), ms.Tensor([3.0])))),
            bool(amp.all_finite((ms.Tensor([1.0, np.inf]), ms.Tensor([3.0]))))] == F["all_finite"]["output"]
    with pytest.raises(ValueError):
        train.FixedLossScaleManager(0.5)


def test_loss_scale_step_skips_overflow_and_follows_update_cell():
    """An overflow (huge input at step 3) leaves the weights and optimizer state as they were and
    the scale follows MindSpore's update-Cell sequence for the overflows the step detects."""
    net = nn.Dense(3, 1, weight_init=ms.Tensor(W), bias_init="zeros")
    opt = nn.Momentum(net.trainable_params(), 0.01, 0.9)
    model = train.Model(net, nn.MSELoss(), opt,
                        loss_scale_manager=train.DynamicLossScaleManager(2 ** 10, 2, 2))
    step = model.train_network
    run = ms.jit(lambda n, x, y: n(x, y))
    scales, conds = [], []
    for i in range(6):
        x = X[:4] * (np.float32(1e30) if i == 2 else np.float32(1.0))
        before = (net.weight.asnumpy().copy(), opt.moments[0].asnumpy().copy() if hasattr(opt, "moments") else None)
        loss, cond, sens = run(step, x, Y[:4])
        conds.append(bool(cond))
        scales.append(float(step.scale_sense.value))
        if conds[-1]:
            np.testing.assert_array_equal(net.weight.asnumpy(), before[0])
        else:
            assert not np.array_equal(net.weight.asnumpy(), before[0])
    assert conds == [False, False, True, False, False, False]
    update = amp.DynamicLossScaleUpdateCell(2.0 ** 10, 2, 2)
    scale = ms.Parameter(ms.Tensor(2.0 ** 10, ms.float32), name="s")
    want = []
    for c in conds:
        update(scale, jnp.asarray(c))
        want.append(float(scale.value))
    assert scales == want


def test_build_train_network_levels():
    net = amp_net()
    opt = nn.SGD(net.trainable_params(), 0.01)
    step = amp.build_train_network(net, opt, nn.MSELoss(), level="O2")
    assert type(step).__name__ == "TrainOneStepWithLossScaleCell"
    loss, cond, scale = step(ms.Tensor(XIN), ms.Tensor(np.zeros((4, 4), np.float32)))
    # float16 gradients of a loss scaled by 2**24 overflow: the step is skipped and the scale halves
    # MindSpore returns the scale after the update cell ran, in PyNative and graph mode alike
    # (tests/fixtures/mindspore/wrap_cells.json, "dynamic(2**10,2,2)")
    assert loss.dtype == jnp.float32 and bool(cond) and float(scale) == 2.0 ** 23
    assert float(step.scale_sense.value) == 2.0 ** 23
    step3 = amp.build_train_network(amp_net(), nn.SGD(amp_net().trainable_params(), 0.01), nn.MSELoss(), level="O3")
    assert type(step3).__name__ == "TrainOneStepCell"
    with pytest.raises(ValueError, match="Unsupported arg"):
        amp.build_train_network(amp_net(), opt, nn.MSELoss(), level="O2", foo=1)
    with pytest.raises(NotImplementedError, match="auto"):
        amp.build_train_network(amp_net(), opt, nn.MSELoss(), level="auto")


def test_o2_eval_keeps_integer_labels_as_class_indices():
    # MindSpore's WithEvalCell casts only floating tensors to float32 (mixed_precision_cast).
    from cellkit.train import Model
    ms.set_seed(0)
    net = nn.SequentialCell([nn.Dense(4, 8), nn.ReLU(), nn.Dense(8, 3)])
    model = Model(net, nn.CrossEntropyLoss(), nn.Adam(net.trainable_params(), 1e-3), amp_level="O2",
                  metrics={"accuracy"})
    x = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)
    y = np.array([0, 1, 2, 0, 1, 2], np.int32)
    got = model.eval([(x, y)])["accuracy"]
    want = float(np.mean(np.argmax(np.asarray(net(ms.Tensor(x)), np.float32), -1) == y))
    assert got == want
