"""PipelineCell, PipelineGradReducer, VirtualDatasetCellTriple in one process, and the nn names that raise."""

import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit import nn


def net_and_data():
    net = nn.Dense(3, 2, weight_init="ones", bias_init="zeros")
    net.weight.set_data(ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 10))
    x = ms.Tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
    y = ms.Tensor(np.linspace(0, 1, 8, dtype=np.float32).reshape(4, 2))
    return nn.WithLossCell(net, nn.MSELoss()), x, y


@pytest.mark.parametrize("micro_size", [1, 2, 4])
def test_pipeline_cell_sums_micro_batches_and_their_gradients(micro_size):
    loss_net, x, y = net_and_data()
    pipe = nn.PipelineCell(loss_net, micro_size)
    k = 4 // micro_size
    expected = sum(float(loss_net(x[i * k:(i + 1) * k], y[i * k:(i + 1) * k])) for i in range(micro_size))
    np.testing.assert_allclose(float(pipe(x, y)), expected, rtol=1e-6)
    weights = pipe.trainable_params()
    grad_fn = ms.value_and_grad(lambda a, b: pipe(a, b), None, weights)
    loss, grads = ms.jit(grad_fn)(x, y)
    reducer = nn.PipelineGradReducer(weights, scale_sense=2.0)
    reduced = reducer(grads)
    ref = [jnp.zeros(w.shape) for w in weights]
    for i in range(micro_size):
        _, g = ms.value_and_grad(lambda a, b: loss_net(a, b), None, weights)(x[i * k:(i + 1) * k], y[i * k:(i + 1) * k])
        ref = [r + gi for r, gi in zip(ref, g)]
    for r, got in zip(ref, reduced):
        np.testing.assert_allclose(got, r / 2.0, rtol=1e-5, atol=1e-7)


def test_pipeline_cell_arguments_and_stage_config():
    loss_net, x, _ = net_and_data()
    with pytest.raises(TypeError, match="micro_size"):
        nn.PipelineCell(loss_net, 2.0)
    with pytest.raises(TypeError, match="network"):
        nn.PipelineCell(lambda v: v, 2)
    pipe = nn.PipelineCell(loss_net, 2, stage_config={"_backbone": 1})
    assert loss_net._backbone.pipeline_stage == 1
    with pytest.raises(KeyError, match="stage_config"):
        nn.PipelineCell(loss_net, 2, stage_config={"nope": 0})
    with pytest.raises(ValueError, match="divided by micro size"):
        pipe(x[:3], x[:3])


def test_virtual_dataset_cell_triple_calls_backbone():
    class Three(nn.Cell):
        def construct(self, a, b, c):
            return a * b - c
    out = nn.VirtualDatasetCellTriple(Three())(ms.Tensor([2.0]), ms.Tensor([3.0]), ms.Tensor([1.0]))
    np.testing.assert_allclose(out, [5.0])


@pytest.mark.parametrize("make, alternative", [
    (lambda: nn.GraphCell("net.mindir"), "load_checkpoint"),
    (lambda: nn.GetNextSingleOp([ms.float32], [(1,)], "q"), "create_tuple_iterator"),
    (lambda: nn.AdaSumByGradWrapCell(None), "DistributedGradReducer"),
    (lambda: nn.AdaSumByDeltaWeightWrapCell(None), "DistributedGradReducer"),
    (lambda: nn.thor(None, 0.1, 0.01, 0.9), "nn.Momentum"),
])
def test_names_without_meaning_raise_naming_the_alternative(make, alternative):
    with pytest.raises(NotImplementedError, match=alternative):
        make()
