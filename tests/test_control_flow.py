"""ForiLoop, WhileLoop and Scan with Parameters assigned in the body (against MindSpore 2.10's
values and jax.lax), and Python control flow on traced values under cellkit.jit / GRAPH_MODE."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ms_fixtures import load

import cellkit as ms
from cellkit import nn, ops

OPS = load("autograd_ops")
X = jnp.asarray([1., 2., 3.], jnp.float32)


def fori_body(i, v):
    return v * 2 + i


CASES = {
    "ForiLoop/basic": lambda x: ops.ForiLoop()(0, 4, fori_body, x),
    "ForiLoop/grad": lambda x: ms.grad(lambda x: ops.ForiLoop()(0, 3, fori_body, x).sum())(x),
    "WhileLoop/basic": lambda x: ops.WhileLoop()(lambda v: v[0] < 10, lambda v: v * 2, x),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_loops_against_mindspore(name):
    case = OPS[name]
    np.testing.assert_allclose(CASES[name](*[jnp.asarray(a) for a in case["inputs"]]), case["output"], rtol=1e-6)


def test_scan_matches_lax_scan():
    # (MindSpore 2.10's own Scan fails on this case inside MindSpore: the fixture records its TypeError.)
    assert OPS["Scan/basic"]["error"] == "TypeError"
    body = lambda c, x: (c + x, c * x)  # noqa: E731
    c, ys = ops.Scan()(body, jnp.zeros(1, jnp.float32), X.reshape(3, 1))
    rc, rys = jax.lax.scan(body, jnp.zeros(1, jnp.float32), X.reshape(3, 1))
    np.testing.assert_allclose(c, rc)
    np.testing.assert_allclose(ys, rys)


class Accumulate(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor([0.5, -1.0, 2.0]), name="w")
        self.total = ms.Parameter(ms.Tensor(0.0), name="total", requires_grad=False)

    def construct(self, x):
        def body(i, h):
            h = jnp.tanh(h * self.w)
            ops.assign(self.total, self.total + h.sum())
            return h

        return ops.ForiLoop()(0, 3, body, x)


def raw_accumulate(w, x):
    total = 0.0
    h = x
    for _ in range(3):
        h = jnp.tanh(h * w)
        total = total + h.sum()
    return h, total


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_parameters_assigned_in_the_body_are_written_back(jit):
    net = Accumulate()
    run = ms.jit(lambda x: ms.value_and_grad(lambda x: net(x).sum(), None, [net.w])(x)) if jit else \
        (lambda x: ms.value_and_grad(lambda x: net(x).sum(), None, [net.w])(x))
    (value, (gw,)) = run(X)
    h, total = raw_accumulate(net.w.value, X)
    np.testing.assert_allclose(value, h.sum(), rtol=1e-6)
    np.testing.assert_allclose(net.total.value, total, rtol=1e-6)
    np.testing.assert_allclose(gw, jax.grad(lambda w: raw_accumulate(w, X)[0].sum())(net.w.value), rtol=1e-5)
    run(X)
    np.testing.assert_allclose(net.total.value, 2 * total, rtol=1e-6)


def test_while_and_scan_carry_state_and_random_keys():
    count = ms.Parameter(ms.Tensor(0, ms.int32), name="count", requires_grad=False)

    def body(v):
        ops.assign(count, count + 1)
        return v * 2

    np.testing.assert_allclose(ms.jit(lambda x: ops.WhileLoop()(lambda v: v[0] < 10, body, x))(X), [16, 32, 48])
    assert int(count.value) == 4
    ms.set_seed(1)
    _, draws = ops.Scan()(lambda c, x: (c, ops.uniform((2,), ms.Tensor(0.), ms.Tensor(1.))), 0.0, None, length=3)
    assert len({tuple(np.asarray(d).tolist()) for d in draws}) == 3  # a fresh key on every iteration


class Branch(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(2, 2)
        self.calls = ms.Parameter(ms.Tensor(0.0), name="calls", requires_grad=False)

    def construct(self, x):
        out = self.fc(x)
        ops.assign(self.calls, self.calls + 1)
        if out.sum() > 0:
            return out * 2
        return -out


def test_python_control_flow_falls_back_to_op_by_op():
    net = Branch()
    x = jnp.ones((1, 2), jnp.float32)
    want = net(x)
    step = ms.jit(lambda x: net(x))
    with pytest.warns(RuntimeWarning, match=r"test_control_flow.py:\d+ \(if out.sum\(\) > 0:\).*op by op"):
        np.testing.assert_allclose(step(x), want)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once
        np.testing.assert_allclose(step(x), want)
        ms.set_context(mode=ms.GRAPH_MODE)
        with pytest.warns(RuntimeWarning, match="op by op"):
            np.testing.assert_allclose(net(x), want)
    assert float(net.calls.value) == 4  # state written back on every call, compiled or not
    with pytest.raises(TypeError, match=r"test_control_flow.py:\d+ \(if out.sum\(\) > 0:\).*ops.select"):
        jax.jit(lambda x: step(x))(x)


def test_python_control_flow_on_a_mapped_value_names_the_place_and_the_fix():
    net = Branch()
    x = jnp.ones((3, 2), jnp.float32)
    with pytest.raises(TypeError, match=r"vmap\(Branch\): .*mapped value at .*test_control_flow.py:\d+ "
                                        r"\(if out.sum\(\) > 0:\).*To map it, .*ops.select"):
        ms.vmap(net)(x)
    assert float(net.calls.value) == 0  # nothing written back by the failed call
