"""Data parallelism from MindSpore's auto-parallel context, on the 8 simulated CPU devices."""

import jax
import numpy as np
import pytest

import cellkit as ms
from cellkit import nn, parallel_context


@pytest.fixture(autouse=True)
def _reset():
    ms.reset_auto_parallel_context()
    yield
    ms.reset_auto_parallel_context()


def _train(steps=2, lr=0.1):
    ms.set_seed(0)
    net = nn.Dense(4, 2)
    opt = nn.SGD(net.trainable_params(), learning_rate=lr)
    loss_fn = nn.MSELoss()
    grad_fn = ms.value_and_grad(lambda x, y: loss_fn(net(x), y), None, opt.parameters)

    @ms.jit
    def step(x, y):
        loss, grads = grad_fn(x, y)
        scale = parallel_context.gradient_scale()
        opt(tuple(g * scale for g in grads))
        return loss

    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 4)).astype(np.float32)
    y = rng.standard_normal((16, 2)).astype(np.float32)
    losses = []
    for _ in range(steps):
        xs, ys = parallel_context.shard_batch(ms.Tensor(x), ms.Tensor(y))
        losses.append(float(step(xs, ys)))
    return net.weight.asnumpy(), losses, xs


def test_context_defaults_and_refusals():
    assert ms.get_auto_parallel_context("parallel_mode") == ms.ParallelMode.STAND_ALONE
    assert ms.get_auto_parallel_context("device_num") == 1
    with pytest.raises(ValueError, match="only support"):
        ms.set_auto_parallel_context(parallel_mode="foo")
    with pytest.raises(ValueError, match="not supported by cellkit; supported: 'stand_alone', 'data_parallel'"):
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.SEMI_AUTO_PARALLEL)
    with pytest.raises(ValueError, match="device_num"):
        ms.set_auto_parallel_context(device_num=jax.device_count() + 1)
    with pytest.raises(ValueError, match="unknown setting"):
        ms.set_auto_parallel_context(gradient_mean=True)
    assert ms.get_auto_parallel_context("parallel_mode") == "stand_alone"  # refusals change nothing
    assert ms.context.ParallelMode is ms.ParallelMode


@pytest.mark.skipif(jax.device_count() < 8, reason="needs the 8 simulated devices of conftest.py")
def test_data_parallel_step_matches_stand_alone_and_splits_the_batch():
    w_single, losses_single, x_single = _train()
    assert len(x_single.sharding.device_set) == 1
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
    assert ms.get_auto_parallel_context("device_num") == 8
    w_dp, losses_dp, x_dp = _train()
    assert len(x_dp.sharding.device_set) == 8
    assert [s.data.shape for s in x_dp.addressable_shards][0] == (2, 4)
    np.testing.assert_allclose(losses_dp, losses_single, rtol=1e-5)
    np.testing.assert_allclose(w_dp, w_single, rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(jax.device_count() < 8, reason="needs the 8 simulated devices of conftest.py")
def test_gradients_summed_over_devices_when_not_mean():
    w_scaled, _, _ = _train(steps=1, lr=0.1 * 4)
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=False, device_num=4)
    assert parallel_context.gradient_scale() == 4.0
    w_sum, _, x = _train(steps=1, lr=0.1)
    assert len(x.sharding.device_set) == 4
    np.testing.assert_allclose(w_sum, w_scaled, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="batch of 6 does not split over device_num=4"):
        parallel_context.shard_batch(np.zeros((6, 2), np.float32))
