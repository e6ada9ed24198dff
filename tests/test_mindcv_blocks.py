"""The pieces of mindcv's light-weight families in training against MindSpore 2.10.

Depthwise and grouped convolutions, BatchNorm in training mode (batch statistics, the update of
the moving statistics with mindcv's ``momentum=0.99, eps=1e-3`` and the defaults), ReLU, ReLU6 and
HSwish: the loss, every gradient, the moving statistics and the eval output after one SGD step of
the blocks of ``fixtures/record/mindcv_blocks.py``, and the activations' gradients at their kinks,
as ``record_mindcv_blocks.py`` recorded them.
"""

import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import cellkit
from cellkit import ops
from ms_fixtures import load

sys.path.insert(0, str(pathlib.Path(__file__).parent / "fixtures" / "record"))
import mindcv_blocks as B  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5


@pytest.fixture(scope="module")
def recorded():
    return load("mindcv_blocks")


@pytest.mark.parametrize("name", list(B.BLOCKS))
def test_block_training_step(recorded, name):
    expected = recorded[name]["output"]
    net, x, cot = B.build(cellkit, name)
    got = B.step(cellkit, net, x, cot)
    np.testing.assert_allclose(got["loss"], expected["loss"], rtol=RTOL, err_msg=f"{name}: loss")
    np.testing.assert_allclose(got["grad_input"], expected["grad_input"], rtol=RTOL, atol=ATOL,
                               err_msg=f"{name}: input gradient")
    assert sorted(got["grads"]) == sorted(expected["grads"])
    for p, g in expected["grads"].items():
        np.testing.assert_allclose(got["grads"][p], g, rtol=RTOL, atol=ATOL, err_msg=f"{name}: gradient of {p}")
    assert sorted(got["stats"]) == sorted(expected["stats"])
    for p, v in expected["stats"].items():
        np.testing.assert_allclose(got["stats"][p], v, rtol=RTOL, atol=ATOL, err_msg=f"{name}: {p} after the step")
    np.testing.assert_allclose(got["after_step"], expected["after_step"], rtol=RTOL, atol=ATOL,
                               err_msg=f"{name}: eval output after one SGD step")


@pytest.mark.parametrize("name", list(B.KINKS))
def test_activation_gradient_at_kinks(recorded, name):
    case = recorded[f"kink/{name}"]
    (x,) = case["inputs"]
    got = cellkit.grad(getattr(ops, name))(cellkit.Tensor(x))
    np.testing.assert_array_equal(np.asarray(got), case["output"], err_msg=f"ops.{name}: gradient at {x}")


@pytest.mark.skipif(not jax.config.jax_enable_x64, reason="finite differences across ReLU kinks need float64")
@pytest.mark.parametrize("name", list(B.BLOCKS))
def test_block_gradients_match_finite_differences(name):
    """The same blocks in training mode, in float64, against finite differences (steps far
    smaller than any pre-activation's distance from a kink)."""
    net, x, cot = B.build(cellkit, name)
    net.set_train(True)
    leaves, tree = jax.tree_util.tree_flatten(net)

    def f(x, leaves):
        n = jax.tree_util.tree_unflatten(tree, leaves)
        return (n(x) * cot.astype(jnp.float64)).sum()

    leaves = [jnp.asarray(v, jnp.float64) for v in leaves]
    check_grads(f, (jnp.asarray(x, jnp.float64), leaves), order=1, modes=["rev"], atol=1e-5, rtol=1e-5, eps=1e-6)
