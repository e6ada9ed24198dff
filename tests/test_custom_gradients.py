"""Custom gradients that compose: a bprop Cell under second order, a jvp Cell under forward mode,
reverse mode, Hessian-vector products and cellkit.jit, and clear errors where a mode cannot work."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit import nn, ops

X = jnp.asarray([1., 2.], jnp.float32)
W = np.array([2., 3.], np.float32)


class CubeBprop(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor(W), name="w")

    def construct(self, x):
        return x ** 3 * self.w

    def bprop(self, x, out, dout):
        return (3 * x ** 2 * self.w * dout,)


class CubeJvp(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor(W), name="w")
        self.calls = ms.Parameter(ms.Tensor(0.0), name="calls", requires_grad=False)

    def construct(self, x):
        ops.assign(self.calls, self.calls + 1)
        return x ** 3 * self.w

    def jvp(self, primals, tangents):
        (x,), (t,) = primals, tangents
        return x ** 3 * self.w, 3 * x ** 2 * self.w * t


def raw(w, x):
    return x ** 3 * w


def test_bprop_cell_under_second_order():
    cell = CubeBprop()
    g = ms.grad(lambda x: cell(x).sum())
    gg = ms.grad(lambda x: (g(x) ** 2).sum())(X)
    w = jnp.asarray(W)
    want = jax.grad(lambda x: (jax.grad(lambda x: raw(w, x).sum())(x) ** 2).sum())(X)
    np.testing.assert_allclose(gg, want, rtol=1e-6)
    np.testing.assert_allclose(ms.jit(lambda x: ms.grad(lambda x: g(x).sum())(x))(X), 6 * X * w, rtol=1e-6)


def test_bprop_cell_refuses_forward_mode_by_name():
    with pytest.raises(TypeError, match=r"Cell CubeBprop has a custom bprop.*Define jvp\(self, primals, tangents\)"):
        ms.jvp(CubeBprop(), X, jnp.ones(2, jnp.float32))


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_jvp_cell_in_every_mode(jit):
    cell = CubeJvp()
    w = jnp.asarray(W)
    wrap = ms.jit if jit else (lambda f: f)
    t = jnp.asarray([1., -1.], jnp.float32)
    out, tangent = wrap(lambda x, t: ms.jvp(cell, x, t))(X, t)
    np.testing.assert_allclose(tangent, jax.jvp(lambda x: raw(w, x), (X,), (t,))[1], rtol=1e-6)
    gx, (gw,) = wrap(lambda x: ms.grad(lambda x: (cell(x) ** 2).sum(), 0, [cell.w])(x))(X)
    rgw, rgx = jax.grad(lambda w, x: (raw(w, x) ** 2).sum(), (0, 1))(w, X)
    np.testing.assert_allclose(gx, rgx, rtol=1e-6)
    np.testing.assert_allclose(gw, rgw, rtol=1e-6)
    h = wrap(lambda x: ops.hvp(lambda x: (cell(x) ** 2).sum(), X, t))(X)
    np.testing.assert_allclose(h, jax.jvp(jax.grad(lambda x: (raw(w, x) ** 2).sum()), (X,), (t,))[1], rtol=1e-5)
    hw = wrap(lambda x: ops.hvp(lambda x: (cell(x) ** 2).sum(), x, [t], weights=[cell.w]))(X)
    np.testing.assert_allclose(hw[0], jax.jvp(jax.grad(lambda w: (raw(w, X) ** 2).sum()), (w,), (t,))[1], rtol=1e-5)
    assert float(cell.calls.value) == 4  # the forward pass's state written back once per transform


def test_a_rule_that_disagrees_with_construct_is_what_is_used():
    class Straight(nn.Cell):  # straight-through estimator: round forward, identity backward
        def construct(self, x):
            return jnp.round(x)

        def jvp(self, primals, tangents):
            return jnp.round(primals[0]), tangents[0]

    np.testing.assert_allclose(ms.grad(lambda x: Straight()(x).sum())(X * 0.3), [1., 1.])
    np.testing.assert_allclose(ops.jacfwd(Straight())(X * 0.3), np.eye(2))


def test_both_rules_or_a_bad_rule_are_refused():
    class Both(CubeBprop):
        def jvp(self, primals, tangents):
            return primals[0], tangents[0]

    with pytest.raises(TypeError, match="Both defines both bprop and jvp"):
        Both()(X)

    class Bad(nn.Cell):
        def construct(self, x):
            return x

        def jvp(self, primals, tangents):
            return tangents[0]

    with pytest.raises(ValueError, match=r"Bad.jvp must return \(output, output tangent\)"):
        ms.jvp(Bad(), X, X)
