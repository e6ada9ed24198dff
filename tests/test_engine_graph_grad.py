"""GRAPH_MODE: a gradient function called outside any jit compiles forward and backward together."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit import nn


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, pad_mode="valid", weight_init="normal")
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Dense(4 * 6 * 6, 3, weight_init="normal")
        self.flatten = nn.Flatten()

    def construct(self, x):
        return self.fc(self.flatten(nn.ReLU()(self.bn(self.conv(x)))))


@pytest.fixture
def graph_mode():
    before = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE)
    yield
    ms.set_context(mode=before)


def _setup(seed=0):
    ms.set_seed(seed)
    net = Net()
    net.set_train(True)
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")

    def forward(x, y):
        return loss_fn(net(x), y)
    return net, forward


DATA = (jnp.asarray(np.random.default_rng(0).normal(size=(4, 1, 8, 8)), jnp.float32),
        jnp.array([0, 2, 1, 2], jnp.int32))


def _steps(n=3):
    net, forward = _setup()
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    grad_fn = ms.value_and_grad(forward, None, opt.parameters)
    losses = []
    for _ in range(n):
        loss, grads = grad_fn(*DATA)
        opt(grads)
        losses.append(float(loss))
    return grad_fn, net, losses


def test_graph_mode_matches_pynative_and_compiles_once(graph_mode):
    grad_fn, net, losses = _steps()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    _, eager_net, eager_losses = _steps()
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    for p, q in zip(net.get_parameters(), eager_net.get_parameters()):   # BatchNorm statistics too
        np.testing.assert_allclose(np.asarray(p.value), np.asarray(q.value), rtol=1e-5, atol=1e-6, err_msg=p.name)
    assert grad_fn._graph_jit.trace_count == 1


def test_python_number_arguments_stay_eager_and_get_no_gradient(graph_mode):
    def f(x, scale):
        return (x * scale).sum()
    out = ms.grad(f, grad_position=(0, 1))(jnp.ones(3), 2.0)
    np.testing.assert_allclose(np.asarray(out), [2.0, 2.0, 2.0])


def test_value_dependent_python_falls_back_with_a_warning(graph_mode):
    def f(x):
        if x.sum() > 0:
            return (x ** 2).sum()
        return x.sum()
    g = ms.grad(f)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.testing.assert_allclose(np.asarray(g(jnp.array([1.0, 2.0]))), [2.0, 4.0])
    assert any("op by op" in str(w.message) or "eager" in str(w.message).lower() for w in caught)
    np.testing.assert_allclose(np.asarray(g(jnp.array([-1.0, -2.0]))), [1.0, 1.0])


def test_gradient_matches_finite_differences(graph_mode):
    w = ms.Parameter(jnp.array([0.3, -0.2, 0.5]), name="w")

    def f(x):
        return jnp.tanh(x * w).sum() ** 2
    g = ms.grad(f, grad_position=0, weights=[w])
    x = jnp.array([0.7, 1.1, -0.4])
    gx, (gw,) = g(x)

    def raw(x, w):
        return jnp.tanh(x * w).sum() ** 2
    rx, rw = jax.grad(raw, argnums=(0, 1))(x, w.value)
    np.testing.assert_allclose(np.asarray(gx), np.asarray(rx), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gw), np.asarray(rw), rtol=1e-6)
