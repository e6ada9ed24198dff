"""Cell.recompute and ms.recompute: same values and gradients as without, state written back once,
the same random mask in the recomputed forward pass, fewer saved activations, clear policy errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit import nn, ops
from cellkit.engine import POLICIES


class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(8, 8)
        self.drop = nn.Dropout(p=0.5)
        self.calls = ms.Parameter(ms.Tensor(0.0), name="calls", requires_grad=False)

    def construct(self, x):
        ops.assign(self.calls, self.calls + 1)
        return self.drop(jnp.tanh(self.fc(x)))


def _grads(block, x, seed):
    ms.set_seed(seed)
    return ms.value_and_grad(lambda x: (block(x) ** 2).sum(), None, block.trainable_params())(x)


@pytest.mark.parametrize("policy", [None, "dots_saveable"])
def test_recompute_gives_the_same_values_gradients_and_writes(policy):
    x = jnp.asarray(np.random.default_rng(0).standard_normal((4, 8)), jnp.float32)
    plain = Block().set_train()
    again = Block().set_train()
    for p, q in zip(plain.get_parameters(), again.get_parameters()):
        q.set_data(p.value)
    again.recompute(policy=policy)
    (lp, gp), (lr, gr) = _grads(plain, x, 3), _grads(again, x, 3)
    np.testing.assert_allclose(lr, lp, rtol=1e-6)  # the same Dropout mask, recomputed or not
    for a, b in zip(gr, gp):   # (two backward executables: float32 rounding, relative to the largest entry)
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6 * float(np.abs(b).max()))
    assert float(again.calls.value) == 1 == float(plain.calls.value)
    if policy is None:
        step = ms.jit(lambda x: _grads(again, x, 3)[0])
        step(x), step(x)
        assert float(again.calls.value) == 3


def test_recompute_saves_activations_in_the_jaxpr():
    net = nn.SequentialCell([nn.Dense(16, 16) for _ in range(4)])
    x = jnp.ones((2, 16), jnp.float32)

    def saved(cell):
        f = lambda x: ms.grad(lambda x: jnp.tanh(cell(x)).sum())(x)  # noqa: E731
        return str(jax.make_jaxpr(f)(x)).count("remat")

    assert saved(net) == 0
    for layer in net:
        layer.recompute()
    assert saved(net) > 0


def test_functional_recompute_and_policy_errors():
    net = nn.Dense(3, 2)
    x = jnp.ones((2, 3), jnp.float32)
    np.testing.assert_allclose(ms.recompute(net, x), net(x))  # eagerly, a plain call
    g1 = ms.grad(lambda x: ms.recompute(net, x, policy="everything_saveable").sum())(x)
    g2 = ms.grad(lambda x: net(x).sum())(x)
    np.testing.assert_allclose(g1, g2, rtol=1e-6)
    assert "dots_saveable" in POLICIES
    with pytest.raises(ValueError, match="unknown policy 'fast'"):
        nn.Dense(2, 2).recompute(policy="fast")
    with pytest.raises(ValueError, match="takes arguments"):
        ms.grad(lambda x: ms.recompute(net, x, policy="save_only_these_names").sum())(x)
    with pytest.raises(TypeError, match="block must be"):
        ms.recompute(3, x)
