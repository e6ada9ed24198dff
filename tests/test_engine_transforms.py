"""vjp, jvp, jacfwd, jacrev, hessian, hvp, vmap, GradOperation and grad(sens_param): against
MindSpore 2.10's recorded values, against the same computation in raw JAX on the Cell's
arrays, composed with each other and with cellkit.jit, with assigned Parameters written back."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads
from ms_fixtures import load

import cellkit as ms
from cellkit import nn, ops

W = np.array([.3, -.2, .7], np.float32)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor(W), name="w")

    def construct(self, x, y):
        return ops.sin(x) * self.w + x * y * y


def raw_net(w, x, y):
    return jnp.sin(x) * w + x * y * y


class Counted(nn.Cell):
    """An MLP layer that counts its calls in a Parameter (state assigned in the forward pass)."""

    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor(np.arange(6).reshape(3, 2) / 5 - .5, ms.float32), name="w")
        self.b = ms.Parameter(ms.Tensor(np.array([.1, -.3]), ms.float32), name="b")
        self.calls = ms.Parameter(ms.Tensor(0.0), name="calls", requires_grad=False)

    def construct(self, x):
        ops.assign(self.calls, self.calls + 1)
        return jnp.tanh(x @ self.w + self.b)


def raw_counted(w, b, x):
    return jnp.tanh(x @ w + b)


def sq(x):
    return x * x


def two_out(x):
    return x * x, x + 1


def mul3(x, y):
    return x * y, x + y, y


def mul2(x, y):
    return 2 * x + y, y ** 3


def mulsum(x, y):
    return (x * y).sum()


def stop_fn(x, y):
    return (x * ops.stop_gradient(x * y)).sum()


def add3(x, y, z):
    return x + y + z


def mulsub(x, y):
    return x * y, x - y


def vjp_case(fn, *inputs, v, weights=None, has_aux=False):
    res = ms.vjp(fn, *inputs, weights=weights, has_aux=has_aux)
    return (res[0], res[1](v)) + tuple(res[2:])


def per_example(xs):
    lin_w = ms.Parameter(ms.Tensor([0.5, -1.0, 2.0]), name="w")

    def loss(x):
        return ops.tanh((x * lin_w).sum()) ** 2

    return ms.vmap(ms.grad(loss, None, [lin_w]))(xs)


def _net_call(f):
    n = Net()
    return f(n)


# The same computations as tests/fixtures/record/record_autograd.py, by case name.
CASES = {
    "vjp/net": lambda x, y, v: vjp_case(Net(), x, y, v=v),
    "vjp/net_weights": lambda x, y, v: _net_call(lambda n: vjp_case(n, x, y, v=v, weights=n.trainable_params())),
    "vjp/single": lambda x, v: vjp_case(sq, x, v=v),
    "vjp/aux": lambda x, y, v: vjp_case(mul2, x, y, v=v, has_aux=True),
    "vjp/aux3": lambda x, y, v: vjp_case(mul3, x, y, v=v, has_aux=True),
    "jvp/net": lambda x, y, v: ms.jvp(Net(), (x, y), (v, v)),
    "jvp/single": lambda x, v: ms.jvp(sq, x, v),
    "jvp/two_out": lambda x, v: ms.jvp(two_out, x, v),
    "jvp/aux3": lambda x, y, v: ms.jvp(mul3, (x, y), (v, v), has_aux=True),
    "grad/sens": lambda x, v: ms.grad(sq, sens_param=True)(x, v),
    "grad/net_weights_sens": lambda x, y, v: _net_call(
        lambda n: ms.grad(n, (0, 1), n.trainable_params(), sens_param=True)(x, y, v)),
    "gradop/default": lambda x, y: ops.GradOperation()(Net())(x, y),
    "gradop/get_all": lambda x, y: ops.GradOperation(get_all=True)(mulsum)(x, y),
    "gradop/get_all_single": lambda x: ops.GradOperation(get_all=True)(sq)(x),
    "gradop/get_by_list": lambda x, y: _net_call(lambda n: ops.GradOperation(get_by_list=True)(n, n.trainable_params())(x, y)),
    "gradop/all_list_sens": lambda x, y, v: _net_call(
        lambda n: ops.GradOperation(True, True, True)(n, n.trainable_params())(x, y, v)),
    "gradop/sens": lambda x, v: ops.GradOperation(sens_param=True)(sq)(x, v),
    "stop_gradient/grad": lambda x, y: ms.grad(stop_fn, (0, 1))(x, y),
    "vmap/axes": lambda x, y, z: ms.vmap(add3, in_axes=(0, 1, None), out_axes=1)(x, y, z),
    "vmap/out_axes": lambda x, y: ms.vmap(mulsub, in_axes=(0, None), out_axes=(1, 0))(x, y),
    "vmap/per_example_grad": per_example,
}


def assert_same(got, want, rtol=1e-5, atol=1e-6):
    """Equal values and equal nesting (tuples stay tuples, bare arrays stay bare)."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)), f"expected a tuple of {len(want)}, got {type(got).__name__}"
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, rtol, atol)
    else:
        assert not isinstance(got, (tuple, list)), f"expected one array, got a {type(got).__name__}"
        np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=atol)


FIX = load("autograd_transforms")


@pytest.mark.parametrize("name", sorted(FIX))
def test_against_mindspore(name):
    case = FIX[name]
    assert name in CASES, f"no cellkit counterpart for recorded case {name}"
    got = CASES[name](*[ms.Tensor(a) for a in case["inputs"]])
    assert_same(got, case["output"])


X = np.array([[1., 2., 3.], [-1., .5, 2.]], np.float32)


def test_transforms_match_raw_jax_on_the_cells_arrays():
    net = Counted()
    w, b = net.w.value, net.b.value
    x = jnp.asarray(X)
    loss = lambda x: (net(x) ** 2).sum()  # noqa: E731
    raw_loss = lambda x: (raw_counted(w, b, x) ** 2).sum()  # noqa: E731
    v = jnp.ones((2, 2), jnp.float32)
    out, f = ms.vjp(net, x, weights=[net.w, net.b])
    (gx,), (gw, gb) = f(v)
    rout, rf = jax.vjp(raw_counted, w, b, x)
    rgw, rgb, rgx = rf(v)
    for a, b_ in ((out, rout), (gx, rgx), (gw, rgw), (gb, rgb)):
        np.testing.assert_allclose(a, b_, rtol=1e-6)
    t = jnp.full_like(x, .5)
    np.testing.assert_allclose(ms.jvp(net, x, t)[1], jax.jvp(lambda x: raw_counted(w, b, x), (x,), (t,))[1], rtol=1e-6)
    np.testing.assert_allclose(ops.jacfwd(net)(x), jax.jacfwd(lambda x: raw_counted(w, b, x))(x), rtol=1e-6)
    np.testing.assert_allclose(ops.jacrev(net)(x), jax.jacrev(lambda x: raw_counted(w, b, x))(x), rtol=1e-6)
    np.testing.assert_allclose(ops.hessian(loss)(x), jax.hessian(raw_loss)(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ops.hvp(loss, x, t), jax.jvp(jax.grad(raw_loss), (x,), (t,))[1], rtol=1e-5)
    # Hessian-vector product with respect to the weights, forward over reverse through the Cell
    tw, tb = jnp.full_like(w, .1), jnp.full_like(b, -.2)
    hw, hb = ops.hvp(loss, x, (tw, tb), weights=[net.w, net.b])
    raw_w = lambda w, b: (raw_counted(w, b, x) ** 2).sum()  # noqa: E731
    rhw, rhb = jax.jvp(jax.grad(raw_w, (0, 1)), (w, b), (tw, tb))[1]
    np.testing.assert_allclose(hw, rhw, rtol=1e-5)
    np.testing.assert_allclose(hb, rhb, rtol=1e-5)
    # every call above ran the forward pass once, and its count was written back
    assert float(net.calls.value) == 7


def test_jacobian_layouts_and_aux():
    x, y = jnp.asarray(W), jnp.asarray([1., 2., 3.])
    jx, jy = ops.jacrev(mul2, grad_position=(0, 1))(x, y)[0]
    np.testing.assert_allclose(jx, 2 * np.eye(3))
    np.testing.assert_allclose(jy, np.eye(3))
    jac, aux = ops.jacfwd(mul3, has_aux=True)(x, y)
    np.testing.assert_allclose(jac, np.diag(np.asarray(y)))
    assert isinstance(aux, tuple) and len(aux) == 2
    with pytest.raises(ValueError, match="has_aux=True"):
        ops.jacrev(sq, has_aux=True)(x)
    with pytest.raises(IndexError, match="grad_position 3"):
        ops.jacfwd(mulsum, grad_position=3)(x, y)


def test_grad_of_grad_with_weights_matches_jax():
    net = Counted()
    x = jnp.asarray(X)

    def loss(x):
        return (net(x) ** 2).sum()

    inner = ms.grad(loss, None, [net.w])

    def gnorm(x):
        return (inner(x)[0] ** 2).sum()

    got = ms.grad(gnorm, None, [net.w, net.b])(x)
    w, b = net.w.value, net.b.value
    raw = lambda w, b: (jax.grad(lambda w: (raw_counted(w, b, x) ** 2).sum())(w) ** 2).sum()  # noqa: E731
    want = jax.grad(raw, (0, 1))(w, b)
    for g, r in zip(got, want):
        np.testing.assert_allclose(g, r, rtol=1e-5)
    check_grads(raw, (w, b), order=1, modes=["rev"], atol=1e-2, rtol=1e-2)


def test_transforms_inside_jit_write_back_and_compile_once():
    net = Counted()
    x = jnp.asarray(X)

    @ms.jit
    def step(x):
        out, f = ms.vjp(net, x, weights=[net.w])
        _, gw = f(jnp.ones_like(out))
        _, t = ms.jvp(net, x, jnp.ones_like(x))
        h = ops.hvp(lambda x: (net(x) ** 2).sum(), x, jnp.ones_like(x))
        per = ops.vmap(ms.grad(lambda x: (net(x) ** 2).sum(), None, [net.b]))(x)
        return gw[0], t, h, per

    gw, t, h, per = step(x)
    assert float(net.calls.value) == 4
    step(x)
    assert float(net.calls.value) == 8 and step.trace_count == 1
    w, b = net.w.value, net.b.value
    np.testing.assert_allclose(gw, jax.vjp(lambda w: raw_counted(w, b, x), w)[1](jnp.ones((2, 2), jnp.float32))[0], rtol=1e-6)
    raw_b = jax.vmap(jax.grad(lambda b, x: (raw_counted(w, b, x) ** 2).sum()), (None, 0))(b, x)
    np.testing.assert_allclose(per[0], raw_b, rtol=1e-6)
    net.w.set_data(net.w.value * 2)  # a new value takes effect without recompiling
    np.testing.assert_allclose(step(x)[0], jax.vjp(lambda w: raw_counted(w, b, x), w * 2)[1](jnp.ones((2, 2), jnp.float32))[0],
                               rtol=1e-6)
    assert step.trace_count == 1


def test_vmap_cell_argument_and_ensemble():
    cells = [Counted() for _ in range(3)]
    for k, c in enumerate(cells):
        c.w.set_data(c.w.value + k)
    ensemble = nn.CellList(cells)
    x = jnp.asarray(X)
    out = ops.vmap(ensemble, in_axes=None)(x)
    for k, c in enumerate(cells):
        np.testing.assert_allclose(out[k], raw_counted(c.w.value, c.b.value, x), rtol=1e-6)
        assert float(c.calls.value) == 1  # each member's own state written back
    # the same through stacked Parameters of one Cell passed with in_axes=0, inside jit
    stacked = Counted()
    stacked.w.set_data(jnp.stack([c.w.value for c in cells]), slice_shape=True)
    stacked.b.set_data(jnp.stack([c.b.value for c in cells]), slice_shape=True)
    stacked.calls.set_data(jnp.zeros(3), slice_shape=True)
    run = ms.jit(lambda net, x: ops.vmap(lambda n, x: n(x), in_axes=(0, None))(net, x))
    np.testing.assert_allclose(run(stacked, x), out, rtol=1e-6)
    np.testing.assert_allclose(stacked.calls.value, [1, 1, 1])


def test_vmap_errors_name_the_problem():
    counter = Counted()

    def count(x):
        ops.assign(counter.calls, counter.calls + x.sum())
        return x

    with pytest.raises(ValueError, match="'calls'"):  # unmapped state assigned per example
        ops.vmap(count)(jnp.ones((3, 2), jnp.float32))
    with pytest.raises(RuntimeError, match="in_axes has 1 entries"):
        ops.vmap(add3, in_axes=(0,))(1., 2., 3.)
    with pytest.raises(RuntimeError, match="in_axes"):
        ops.vmap(sq, in_axes="x")
    with pytest.raises(ValueError, match="structure of Cell 0"):
        ops.vmap(nn.CellList([nn.Dense(2, 3), nn.Dense(2, 4)]), in_axes=None)(jnp.ones((1, 2)))


def test_gradoperation_and_sens_errors():
    assert ops.GradOperation is ms.ops.composite.GradOperation
    with pytest.raises(TypeError, match="get_by_list=True"):
        ops.GradOperation(get_by_list=True)(sq)
    with pytest.raises(TypeError, match="must be a bool"):
        ops.GradOperation(get_all=1)
    with pytest.raises(ValueError, match="sensitivity"):
        ms.grad(sq, sens_param=True)(jnp.ones(3), jnp.ones(4))
    with pytest.raises(ValueError, match="vjp_fn's vector"):
        ms.vjp(sq, jnp.ones(3))[1](jnp.ones(4))
