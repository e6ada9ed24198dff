import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit import engine, nn, ops

RNG = np.random.default_rng(0)
X = ms.Tensor(RNG.normal(size=(16, 3)), ms.float32)
Y = ms.Tensor(np.asarray(X) @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3, ms.float32)


def make_net(seed=0):
    ms.set_seed(seed)
    net = nn.SequentialCell([nn.Dense(3, 8), nn.Tanh(), nn.Dense(8, 1)])
    for p in net.get_parameters():  # initializers are lazy: draw the values now, after the seed
        p.init_data()
    return net


def plain_forward(values, x):
    """The same network in plain JAX, from its Parameter values (in parameters_and_names order)."""
    w0, b0, w1, b1 = values
    return jnp.tanh(x @ w0.T + b0) @ w1.T + b1


def test_with_loss_cell():
    net = make_net()
    with_loss = nn.WithLossCell(net, nn.MSELoss())
    values = [p.value for p in net.get_parameters()]
    expected = np.mean((np.asarray(plain_forward(values, X)) - np.asarray(Y)) ** 2)
    np.testing.assert_allclose(with_loss(X, Y), expected, rtol=1e-6)
    assert with_loss.backbone_network is net
    # auto_prefix=False: the Parameters keep their names (no '_backbone.' prefix).
    assert [p.name for p in with_loss.trainable_params()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    with pytest.raises(TypeError, match="backbone must be a Cell"):
        nn.WithLossCell(lambda x: x, nn.MSELoss())


def test_one_step_matches_plain_jax():
    net = make_net()
    values = [p.value for p in net.get_parameters()]
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))

    def loss_fn(vals):
        return jnp.mean((plain_forward(vals, X) - Y) ** 2)

    expected_loss, grads = jax.value_and_grad(loss_fn)(values)
    loss = train(X, Y)
    np.testing.assert_allclose(loss, expected_loss, rtol=1e-6)  # the loss before the update
    for p, v, g in zip(net.get_parameters(), values, grads):
        np.testing.assert_allclose(p.asnumpy(), v - 0.1 * g, rtol=1e-5, atol=1e-7)
    assert train.weights is train.optimizer.parameters


def test_sens_and_return_grad():
    net_a, net_b = make_net(), make_net()
    plain = nn.TrainOneStepCell(nn.WithLossCell(net_a, nn.MSELoss()), nn.SGD(net_a.trainable_params(), 0.1))
    scaled = nn.TrainOneStepCell(nn.WithLossCell(net_b, nn.MSELoss()), nn.SGD(net_b.trainable_params(), 0.05),
                                 sens=2.0, return_grad=True)
    loss_a = plain(X, Y)
    loss_b, grads = scaled(X, Y)
    np.testing.assert_allclose(loss_a, loss_b, rtol=1e-6)  # sens scales the gradients, not the loss
    for p, q in zip(net_a.get_parameters(), net_b.get_parameters()):
        np.testing.assert_allclose(p.asnumpy(), q.asnumpy(), rtol=1e-5, atol=1e-7)
    assert list(grads) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert grads["0.weight"].shape == (8, 3)
    with pytest.raises(ValueError, match="'sens' can not be 0"):
        nn.TrainOneStepCell(nn.WithLossCell(net_a, nn.MSELoss()), nn.SGD(net_a.trainable_params()), sens=0)
    with pytest.raises(TypeError, match="optimizer must be an Optimizer"):
        nn.TrainOneStepCell(net_a, object())


def test_non_scalar_loss_is_summed():
    net = nn.Dense(3, 1, weight_init="zeros", bias_init="zeros")
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss("none")), nn.SGD(net.trainable_params(), 0.01))
    loss = train(X, Y)
    assert loss.shape == (16, 1)
    # d/db of sum((b - y)^2) at b = 0 is -2 sum(y).
    np.testing.assert_allclose(net.bias.asnumpy(), [0.01 * 2 * float(np.sum(np.asarray(Y)))], rtol=1e-5)


def _train(mode, steps):
    net = make_net()
    opt = nn.Adam(net.trainable_params(), 0.05)
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    step = train
    if mode == "jit":
        step = ms.jit(lambda x, y: train(x, y))
    if mode == "graph":
        ms.set_context(mode=ms.GRAPH_MODE)
    try:
        losses = [float(step(X, Y)) for _ in range(steps)]
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    return losses, net, opt, step


def test_training_lowers_the_loss_eager_jit_and_graph_mode():
    before = engine._graph_call.trace_count
    eager, eager_net, eager_opt, _ = _train("eager", 12)
    jitted, jit_net, _, jit_step = _train("jit", 12)
    graph, graph_net, graph_opt, _ = _train("graph", 12)
    assert eager[-1] < eager[0] / 3
    np.testing.assert_allclose(jitted, eager, rtol=2e-5)
    np.testing.assert_allclose(graph, eager, rtol=2e-5)
    for p, q, r in zip(eager_net.get_parameters(), jit_net.get_parameters(), graph_net.get_parameters()):
        np.testing.assert_allclose(q.asnumpy(), p.asnumpy(), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(r.asnumpy(), p.asnumpy(), rtol=1e-4, atol=1e-6)
    assert jit_step.trace_count == 1
    assert engine._graph_call.trace_count - before == 1  # GRAPH_MODE compiled the step once
    assert int(graph_opt.global_step.asnumpy()[0]) == 12
    assert ms.get_context("mode") == ms.PYNATIVE_MODE


def test_train_cell_parameters_are_the_network_and_the_optimizer_state():
    net = make_net()
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.Momentum(net.trainable_params(), 0.1, 0.9))
    names = [p.name for p in train.get_parameters()]
    assert names == ["0.weight", "0.bias", "2.weight", "2.bias", "global_step", "learning_rate", "momentum",
                     "moments.0.weight", "moments.0.bias", "moments.2.weight", "moments.2.bias"]


def test_dropout_network_draws_fresh_masks_in_jit():
    ms.set_seed(1)
    net = nn.SequentialCell([nn.Dense(3, 32), nn.Dropout(p=0.5), nn.Dense(32, 1)])
    net.set_train()
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.0))
    step = ms.jit(lambda x, y: train(x, y))
    losses = {float(step(X, Y)) for _ in range(3)}  # lr 0: only the mask changes the loss
    assert len(losses) == 3 and step.trace_count == 1


# ----- against MindSpore 2.10 (tests/fixtures/record/record_wrap.py) ------------------------------

from ms_fixtures import load  # noqa: E402

WRAP = load("wrap_cells")
WX = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0], [-1.0, 1.0]], np.float32)
WY = np.array([[1.0], [0.0], [2.0], [-1.0]], np.float32)
WX_BIG = np.array([[1e30, 2.0], [0.5, -1.0], [2.0, 0.0], [-1.0, 1.0]], np.float32)


def tiny():
    return nn.Dense(2, 1, weight_init="ones", bias_init="zeros")


LOSS_SCALES = {
    "dynamic(2**10,2,2)": lambda: nn.DynamicLossScaleUpdateCell(2.0 ** 10, 2, 2),
    "fixed(128)": lambda: nn.FixedLossScaleUpdateCell(128.0),
    "tensor(64)": lambda: ms.Tensor(64.0, ms.float32),
}


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("key", sorted(LOSS_SCALES))
def test_loss_scale_steps_match_mindspore(key, jit):
    dense = tiny()
    scale = LOSS_SCALES[key]()
    cell = nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(dense, nn.MSELoss()),
                                            nn.SGD(dense.trainable_params(), 0.01), scale)
    step = ms.jit(lambda x, y: cell(x, y)) if jit else cell
    for kind, ref in zip(WRAP["schedule"]["output"], WRAP[key]["output"]):
        loss, overflow, sens = step(ms.Tensor(WX_BIG if kind == "big" else WX), ms.Tensor(WY))
        assert bool(overflow) == ref["overflow"]
        np.testing.assert_allclose(np.asarray(sens), ref["scale"], rtol=0)
        np.testing.assert_allclose(np.asarray(loss), ref["loss"], rtol=1e-6)
        np.testing.assert_allclose(dense.weight.asnumpy(), ref["weight"], rtol=1e-6)
        np.testing.assert_allclose(dense.bias.asnumpy(), ref["bias"], rtol=1e-6)
        if "cur_iter" in ref:
            assert int(scale.cur_iter.asnumpy()) == ref["cur_iter"]
            assert int(scale.last_overflow_iter.asnumpy()) == ref["last_overflow_iter"]
    if jit:
        assert step.trace_count == 1
    # the optimizer was skipped on the overflow step: 7 updates in 8 steps
    assert int(cell.optimizer.global_step.asnumpy()[0]) == 7


@pytest.mark.parametrize("key", ["update_cell(4.0,2,3)", "update_cell(1.0,4,1)"])
def test_dynamic_update_cell_matches_mindspore(key):
    case = WRAP[key]
    init, factor, window = (float(key[12:-1].split(",")[0]), int(key[12:-1].split(",")[1]),
                            int(key[12:-1].split(",")[2]))
    cell = nn.DynamicLossScaleUpdateCell(init, factor, window)
    scale = ms.Parameter(ms.Tensor(init, ms.float32), name="scale_sense")
    for flag, ref in zip(case["flags"], case["output"]):
        assert bool(cell(scale, ms.Tensor(flag))) == ref["returned"]
        assert float(scale.asnumpy()) == ref["scale"]
        assert int(cell.cur_iter.asnumpy()) == ref["cur_iter"]
        assert int(cell.last_overflow_iter.asnumpy()) == ref["last_overflow_iter"]
    assert cell.get_loss_scale() == init


def test_loss_scale_cell_refusals_and_names():
    for key, arg in (("TrainOneStepWithLossScaleCell(scale_sense=Tensor([[1.]]))", ms.Tensor(np.ones((1, 1)),
                                                                                              ms.float32)),
                     ("TrainOneStepWithLossScaleCell(scale_sense=2.0)", 2.0)):
        dense = tiny()
        with pytest.raises(getattr(__import__("builtins"), WRAP[key]["error"]), match="scale_sense"):
            nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(dense, nn.MSELoss()),
                                             nn.SGD(dense.trainable_params()), arg)
    dense = tiny()
    manager = nn.DynamicLossScaleUpdateCell(8.0, 2, 2)
    cell = nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(dense, nn.MSELoss()),
                                            nn.SGD(dense.trainable_params(), 0.01, momentum=0.9), manager)
    names = [p.name for p in cell.get_parameters()]
    expected = WRAP["loss_scale_cell_parameter_names"]["output"]  # MindSpore's: SGD's 'momentum', 'stat.*' too
    assert sorted(names) == sorted(expected)
    cell.set_sense_scale(ms.Tensor(4.0))
    assert float(cell.scale_sense.asnumpy()) == 4.0
    with pytest.raises(TypeError, match="'sens' must be Tensor"):
        cell.set_sense_scale(4.0)


class ClippedStep(nn.TrainOneStepCell):
    """MindSpore's documented pattern: a subclass with its own construct using self.grad."""

    def construct(self, *inputs):
        loss = self.network(*inputs)
        sens = ops.fill(loss.dtype, loss.shape, self.sens)
        grads = self.grad(self.network, self.weights)(*inputs, sens)
        grads = tuple(ops.clip_by_value(g, -0.5, 0.5) for g in grads)
        grads = self.grad_reducer(grads)
        self.optimizer(grads)
        return loss


TRAIN_STEPS = {
    "TrainOneStepCell(sgd 0.1)": lambda n, o: nn.TrainOneStepCell(n, o),
    "TrainOneStepCell(sens=4.0)": lambda n, o: nn.TrainOneStepCell(n, o, sens=4.0),
    "ClippedStep subclass": lambda n, o: ClippedStep(n, o, sens=1.0),
}


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("key", sorted(TRAIN_STEPS))
def test_train_steps_match_mindspore(key, jit):
    dense = tiny()
    cell = TRAIN_STEPS[key](nn.WithLossCell(dense, nn.MSELoss()), nn.SGD(dense.trainable_params(), 0.1))
    step = ms.jit(lambda x, y: cell(x, y)) if jit else cell
    for ref in WRAP[key]["output"]:
        loss = step(ms.Tensor(WX), ms.Tensor(WY))
        np.testing.assert_allclose(np.asarray(loss), ref["loss"], rtol=1e-6)
        # (atol: a weight near 0.04 made by subtracting numbers near 0.5 carries their float32 rounding)
        np.testing.assert_allclose(dense.weight.asnumpy(), ref["weight"], rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(dense.bias.asnumpy(), ref["bias"], rtol=1e-6, atol=1e-7)
    assert cell.sense_flag == (key != "TrainOneStepCell(sgd 0.1)")
    assert cell.reducer_flag is False and isinstance(cell.grad_reducer, nn.Identity)


def _tree_close(actual, expected):
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, tuple) and len(actual) == len(expected), (actual, expected)
        for a, e in zip(actual, expected):
            _tree_close(a, e)
    else:
        np.testing.assert_allclose(np.asarray(actual), expected, rtol=1e-6, atol=1e-7)


def test_eval_grad_and_forward_cells_match_mindspore():
    x, y = ms.Tensor(WX), ms.Tensor(WY)
    _tree_close(nn.WithEvalCell(tiny(), nn.MSELoss())(x, y), WRAP["WithEvalCell"]["output"])
    _tree_close(nn.WithGradCell(tiny(), nn.MSELoss())(x, y), WRAP["WithGradCell"]["output"])
    _tree_close(nn.WithGradCell(tiny(), nn.MSELoss(), sens=ms.Tensor(2.0))(x, y), WRAP["WithGradCell(sens=2.0)"]["output"])
    d = tiny()
    wl = nn.WithLossCell(d, nn.MSELoss())
    weights = ms.ParameterTuple(d.trainable_params())
    cases = {
        "ForwardValueAndGrad(get_by_list)": (nn.ForwardValueAndGrad(wl, weights=weights, get_by_list=True), ()),
        "ForwardValueAndGrad(get_all)": (nn.ForwardValueAndGrad(wl, get_all=True), ()),
        "ForwardValueAndGrad()": (nn.ForwardValueAndGrad(wl), ()),
        "ForwardValueAndGrad(get_all,get_by_list,sens_param)":
            (nn.ForwardValueAndGrad(wl, weights=weights, get_all=True, get_by_list=True, sens_param=True),
             (ms.Tensor(3.0),)),
    }
    for key, (cell, extra) in cases.items():
        _tree_close(cell(x, y, *extra), WRAP[key]["output"])
    with pytest.raises(TypeError, match="'weights' must be Parameters array"):
        nn.ForwardValueAndGrad(wl, get_by_list=True)


def test_micro_batch_cells_and_parameter_update_match_mindspore():
    x, y = ms.Tensor(WX), ms.Tensor(WY)
    wl = nn.WithLossCell(tiny(), nn.MSELoss())
    np.testing.assert_allclose(nn.MicroBatchInterleaved(wl, 2)(x, y), WRAP["MicroBatchInterleaved(2)"]["output"],
                               rtol=1e-6)
    accumulate = nn.GradAccumulationCell(wl, 2)
    np.testing.assert_allclose(accumulate(x, y), WRAP["GradAccumulationCell(2)"]["output"], rtol=1e-6)
    # Its gradient is the sum of the micro-batches' gradients.
    g = ms.grad(accumulate, None, wl.trainable_params())(x, y)
    g0 = ms.grad(wl, None, wl.trainable_params())(x[:2], y[:2])
    g1 = ms.grad(wl, None, wl.trainable_params())(x[2:], y[2:])
    for a, b, c in zip(g, g0, g1):
        np.testing.assert_allclose(a, b + c, rtol=1e-6)
    with pytest.raises(ValueError, match="must be large than 0"):
        nn.GradAccumulationCell(wl, 0)
    with pytest.raises(TypeError, match="must be integer"):
        nn.MicroBatchInterleaved(wl, 2.0)
    with pytest.raises(ValueError, match="must be divided by micro size"):
        nn.MicroBatchInterleaved(wl, 3)(x, y)
    p = ms.Parameter(ms.Tensor(np.zeros(2, np.float32)), name="p")
    out = nn.ParameterUpdate(p)(ms.Tensor(np.array([1.0, 2.0], np.float32)))
    _tree_close((out, p.asnumpy()), WRAP["ParameterUpdate"]["output"])  # nn.layer.basic's, against MindSpore


def test_grad_operation_forms():
    from cellkit.nn.wrap._grad import GradOperation
    w = ms.Parameter(ms.Tensor([2.0]), name="w")

    def f(x, y):
        return (w * x * y).sum()

    x, y = ms.Tensor([3.0]), ms.Tensor([5.0])
    np.testing.assert_allclose(GradOperation()(f)(x, y), [10.0])
    gx, gy = GradOperation(get_all=True)(f)(x, y)
    np.testing.assert_allclose((gx, gy), ([10.0], [6.0]))
    (gw,) = GradOperation(get_by_list=True)(f, [w])(x, y)
    np.testing.assert_allclose(gw, [15.0])
    (gx, gy), (gw,) = GradOperation(get_all=True, get_by_list=True, sens_param=True)(f, [w])(x, y, ms.Tensor(2.0))
    np.testing.assert_allclose((gx, gy, gw), ([20.0], [12.0], [30.0]))
    with pytest.raises(TypeError, match="weights must be given"):
        GradOperation(get_by_list=True)(f)(x, y)
    with pytest.raises(TypeError, match="'get_all' must be a bool"):
        GradOperation(get_all=1)


def test_distributed_grad_reducer_outside_data_parallel():
    w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
    g = (ms.Tensor([0.5, -1.0]),)
    np.testing.assert_allclose(nn.DistributedGradReducer([w])(g)[0], [0.5, -1.0])
    np.testing.assert_allclose(nn.DistributedGradReducer([w], mean=False, degree=2)(g)[0], [1.0, -2.0])
    with pytest.raises(ValueError, match="'degree' must be a positive int"):
        nn.DistributedGradReducer([w], degree=0)


def test_grad_reducer_in_data_parallel_mode():
    dense = tiny()
    try:
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=False)
        cell = nn.TrainOneStepCell(nn.WithLossCell(dense, nn.MSELoss()), nn.SGD(dense.trainable_params(), 0.1))
    finally:
        ms.reset_auto_parallel_context()
    assert cell.reducer_flag and cell.parallel_mode == "data_parallel"
    assert isinstance(cell.grad_reducer, nn.DistributedGradReducer)
    assert cell.grad_reducer.mean is False and cell.grad_reducer.degree == cell.degree >= 1
    plain = nn.TrainOneStepCell(nn.WithLossCell(tiny(), nn.MSELoss()), nn.SGD(tiny().trainable_params(), 0.1))
    assert not plain.reducer_flag and plain.parallel_mode == "stand_alone"
