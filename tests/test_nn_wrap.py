import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit import engine, nn

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
    assert names == ["0.weight", "0.bias", "2.weight", "2.bias", "global_step", "learning_rate",
                     "moments.0.weight", "moments.0.bias", "moments.2.weight", "moments.2.bias"]


def test_dropout_network_draws_fresh_masks_in_jit():
    ms.set_seed(1)
    net = nn.SequentialCell([nn.Dense(3, 32), nn.Dropout(p=0.5), nn.Dense(32, 1)])
    net.set_train()
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.0))
    step = ms.jit(lambda x, y: train(x, y))
    losses = {float(step(X, Y)) for _ in range(3)}  # lr 0: only the mask changes the loss
    assert len(losses) == 3 and step.trace_count == 1
