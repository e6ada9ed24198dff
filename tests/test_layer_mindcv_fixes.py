"""Small cases behind fixes found by running mindcv's model families, against MindSpore 2.10.

Recorded by ``tests/fixtures/record/record_layer_mindcv_fixes.py``; each case is the smallest
piece of a mindcv model that cellkit first got wrong.
"""

import pathlib
import sys

import numpy as np
import pytest

import cellkit as ms
from cellkit import nn, ops
from ms_fixtures import load

sys.path.insert(0, str(pathlib.Path(__file__).parent / "fixtures" / "record"))
from mindcv_subclasses import cells, with_grads  # noqa: E402

RTOL, ATOL = 1e-5, 1e-6
C = cells(ms)


@pytest.fixture(scope="module")
def recorded():
    return load("layer_mindcv_fixes")


def assert_close(got, want):
    if isinstance(want, dict):
        assert sorted(got) == sorted(want)
        for k in want:
            assert_close(got[k], want[k])
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_close(g, w)
    else:
        np.testing.assert_allclose(np.asarray(got), want, rtol=RTOL, atol=ATOL)


def test_layer_norm_holds_its_primitive(recorded):
    case = recorded["layer_norm_attribute"]
    x, gamma, beta = case["inputs"]
    ln = C.ChannelsFirstLayerNorm((3,), epsilon=1e-6)
    assert isinstance(ln.layer_norm, ops.LayerNorm)
    ln.gamma.set_data(ms.Tensor(gamma))
    ln.beta.set_data(ms.Tensor(beta))
    y, mean, var = ln(ms.Tensor(x))
    _, gx, gw = with_grads(ms, nn.SequentialCell([C.First(ln)]), x)
    assert_close((y, mean, var, gx, gw), case["output"])


def test_softmax_gradient_after_a_softmax_over_one_element():
    """MindSpore 2.10 (PyNative, CPU) drops the sum in later softmax gradients once it has
    differentiated a softmax over an axis of length 1 (mindcv's mobilevit at 64 pixels); cellkit's
    gradient is the true one whatever ran before (against ``jax.nn.softmax``)."""
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    x1, w1 = rng.uniform(-1, 1, (2, 3, 1)).astype(np.float32), rng.uniform(-1, 1, (2, 3, 1)).astype(np.float32)
    x, w = rng.uniform(-1, 1, (2, 3, 4)).astype(np.float32), rng.uniform(-1, 1, (2, 3, 4)).astype(np.float32)
    softmax = nn.Softmax(axis=-1)
    g1 = ms.grad(lambda t: (softmax(t) * ms.Tensor(w1)).sum())(ms.Tensor(x1))
    np.testing.assert_array_equal(np.asarray(g1), np.zeros_like(x1))
    got = ms.grad(lambda t: (softmax(t) * ms.Tensor(w)).sum())(ms.Tensor(x))
    want = jax.grad(lambda t: (jax.nn.softmax(t, -1) * w).sum())(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
