"""ops.jet, ops.derivative and ops.linearize (cellkit.engine.taylor): against MindSpore 2.10's recorded
results (tests/fixtures/record/record_taylor.py, same case names), and, where MindSpore's Taylor mode
stops (Parameters, ops.Neg, ops without a JAX Taylor rule, jit/vmap/grad around it), against raw JAX."""

import builtins

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import jet as jax_jet
from ms_fixtures import load

import cellkit as ms
from cellkit import nn, ops

W3 = np.array([.5, -1., 2.], np.float32)


class SinExp(nn.Cell):
    def __init__(self):
        super().__init__()
        self.sin = ops.Sin()
        self.exp = ops.Exp()

    def construct(self, x):
        return self.exp(self.sin(x))


class MatMulNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.matmul = ops.MatMul()

    def construct(self, x, y):
        return self.matmul(x, y)


class Scaled(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor(W3), name="w")

    def construct(self, x):
        return ops.sin(x * self.w)


class WithConstant(nn.Cell):
    def __init__(self):
        super().__init__()
        self.c = ms.Tensor(W3)

    def construct(self, x):
        return ops.sin(x) * self.c


class Negated(nn.Cell):
    def __init__(self):
        super().__init__()
        self.neg = ops.Neg()

    def construct(self, x):
        return self.neg(ops.sin(x))


def sincos(x):
    return ops.sin(x) * ops.cos(x)


def mixed(x, y):
    return x * y + ops.exp(x)


def two(x):
    return ops.sin(x), x * x


def cube(x):
    return x * x * x


def sq(x):
    return x * x


def sinx(x):
    return ops.sin(x) * x


def lin_case(fn, inputs, *vs):
    out, jvp_fn = ops.linearize(fn, inputs)
    return (out,) + tuple(jvp_fn(v) for v in vs)


CASES = {
    "jet/doc": lambda p, s: ops.jet(SinExp(), p, s),
    "derivative/doc": lambda p: ops.derivative(SinExp(), p, 3),
    "derivative/sincos_1": lambda x: ops.derivative(sincos, x, 1),
    "derivative/sincos_2": lambda x: ops.derivative(sincos, x, 2),
    "derivative/sincos_4": lambda x: ops.derivative(sincos, x, 4),
    "derivative/cube_3": lambda x: ops.derivative(cube, x, 3),
    "derivative/tuple_2": lambda x, y: ops.derivative(mixed, (x, y), 2),
    "derivative/tuple_1": lambda x, y: ops.derivative(mixed, (x, y), 1),
    "derivative/two_out": lambda x: ops.derivative(two, x, 2),
    "derivative/int": lambda x: ops.derivative(sincos, x, 2),
    "derivative/order_0": lambda x: ops.derivative(sincos, x, 0),
    "derivative/order_float": lambda x: ops.derivative(sincos, x, 1.5),
    "derivative/parameter": lambda x: ops.derivative(Scaled(), x, 2),
    "derivative/constant": lambda x: ops.derivative(WithConstant(), x, 2),
    "derivative/neg": lambda x: ops.derivative(Negated(), x, 2),
    "jet/two_out": lambda x, s: ops.jet(two, x, s),
    "jet/tuple": lambda x, y, s: ops.jet(mixed, (x, y), (s, s)),
    "jet/one_term": lambda x, s: ops.jet(sincos, x, s),
    "jet/int": lambda x, s: ops.jet(sincos, x, s),
    "jet/bad_shape": lambda x, s: ops.jet(sincos, x, s),
    "jet/tensor_and_tuple": lambda x, s: ops.jet(sincos, x, (s,)),
    "jet/dtype_mismatch": lambda x, s: ops.jet(sincos, x, s),
    "jet/tuple_lengths": lambda x, y, s: ops.jet(mixed, (x, y), (s,)),
    "linearize/doc": lambda x, y, a, b: lin_case(MatMulNet(), (x, y), (a, b)),
    "linearize/doc_list": lambda x, y, a, b: lin_case(MatMulNet(), [x, y], [a, b]),
    "linearize/single": lambda x, v, w: lin_case(sinx, x, v, w),
    "linearize/two_out": lambda x, v: lin_case(two, x, v),
    "linearize/int": lambda x, v: lin_case(sq, x, v),
    "linearize/bad_inputs": lambda: ops.linearize(sinx, 3.0),
    "linearize/bad_v": lambda x, v: lin_case(sinx, x, v),
}


def raw_sin_w(x, w):
    return jnp.sin(x * w)


# Where MindSpore's Taylor mode stops, cellkit computes; the raw JAX reference for each.
BEYOND = {
    "derivative/parameter": lambda x: (raw_sin_w(x, W3), jax.vmap(jax.grad(jax.grad(raw_sin_w)))(x, jnp.asarray(W3))),
    "derivative/neg": lambda x: (-jnp.sin(x), jnp.sin(x)),
    # MindSpore runs this one but reads the Tensor constant as its first element everywhere
    # (its Taylor pass broadcasts the constant wrongly): cellkit gives the true values.
    "derivative/constant": lambda x: (jnp.sin(x) * W3, -jnp.sin(x) * W3),
}


def assert_same(got, want, rtol=2e-5, atol=2e-5):
    """Equal values and nesting (MindSpore's lists stay lists, tuples stay tuples)."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, type(want)), f"expected a {type(want).__name__}, got {type(got).__name__}"
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, rtol, atol)
    else:
        assert not isinstance(got, (tuple, list)), f"expected one array, got a {type(got).__name__}"
        got = np.asarray(got)
        assert got.dtype == jax.dtypes.canonicalize_dtype(np.asarray(want).dtype)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


FIX = load("autograd_taylor")


@pytest.mark.parametrize("name", sorted(FIX))
def test_against_mindspore(name):
    case = FIX[name]
    assert name in CASES, f"no cellkit counterpart for recorded case {name}"
    inputs = [ms.Tensor(a) for a in case["inputs"]]
    if name in BEYOND:
        if "error" in case:
            assert case["error"] == "RuntimeError" and "taylor" in case["message"]
        else:
            wrong = np.asarray(jnp.sin(inputs[0]) * W3[0])
            np.testing.assert_allclose(case["output"][0], wrong, rtol=1e-6)
        assert_same(CASES[name](*inputs), BEYOND[name](*inputs))
    elif "error" in case:
        with pytest.raises(getattr(builtins, case["error"])):
            CASES[name](*inputs)
    else:
        assert_same(CASES[name](*inputs), case["output"])


# ----- beyond MindSpore: stateful Cells, any op, composition -----


class MLP(nn.Cell):
    """u(x) = tanh-MLP(x) * c: Parameters and a Tensor constant."""

    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(0)
        self.w1 = ms.Parameter(ms.Tensor(rng.normal(size=(1, 8)).astype(np.float32)), name="w1")
        self.b1 = ms.Parameter(ms.Tensor(rng.normal(size=(8,)).astype(np.float32)), name="b1")
        self.w2 = ms.Parameter(ms.Tensor(rng.normal(size=(8, 1)).astype(np.float32) / 3), name="w2")
        self.c = ms.Tensor(np.float32(.5))

    def construct(self, x):
        return ops.matmul(ops.tanh(ops.matmul(x, self.w1) + self.b1), self.w2) * self.c


def raw_mlp(params, x):
    w1, b1, w2 = params
    return jnp.tanh(x @ w1 + b1) @ w2 * .5


def nested(f, order):
    for _ in range(order):
        f = jax.grad(f)
    return f


def raw_d(params, xs, order):
    """The order-th derivative of u at each point by nested grad: the reference."""
    return jax.vmap(nested(lambda s: raw_mlp(params, s.reshape(1, 1)).sum(), order))(xs.ravel()).reshape(xs.shape)


XS = np.linspace(-1, 1, 6, dtype=np.float32)[:, None]


def _params(net):
    return [net.w1.value, net.b1.value, net.w2.value]


@pytest.mark.parametrize("order", [1, 2, 4])
def test_derivative_of_a_cell_with_parameters_matches_nested_grad(order):
    net = MLP()
    out, d = ops.derivative(net, ms.Tensor(XS), order)
    np.testing.assert_allclose(out, raw_mlp(_params(net), XS), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(d, raw_d(_params(net), jnp.asarray(XS), order), rtol=2e-4, atol=2e-5)


def pde_loss(net, xs):
    """A PINN residual: u'''' - u = 0 (the 4th derivative by Taylor mode)."""
    u, d4 = ops.derivative(net, xs, 4)
    return ((d4 - u) ** 2).mean()


def raw_pde_loss(params, xs):
    return ((raw_d(params, xs, 4) - raw_mlp(params, xs)) ** 2).mean()


def test_gradient_of_a_taylor_mode_residual_with_respect_to_the_parameters():
    net = MLP()
    xs = ms.Tensor(XS)
    g = ms.grad(lambda: pde_loss(net, xs), None, net.trainable_params())()
    ref = jax.grad(raw_pde_loss)(_params(net), jnp.asarray(XS))
    for a, b in zip(g, ref):
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=1e-5)
    # and a training step on it, compiled, moves the loss down
    opt = nn.Adam(net.trainable_params(), learning_rate=1e-2)
    step_fn = ms.value_and_grad(lambda xs: pde_loss(net, xs), None, opt.parameters)

    @ms.jit
    def step(xs):
        loss, grads = step_fn(xs)
        opt(grads)
        return loss

    first = float(step(xs))
    for _ in range(20):
        last = float(step(xs))
    assert last < first


def test_composition_with_jit_vmap_graph_mode_and_grad():
    net = MLP()
    xs = ms.Tensor(XS)
    want = raw_d(_params(net), jnp.asarray(XS), 3)
    np.testing.assert_allclose(ms.jit(lambda x: ops.derivative(net, x, 3)[1])(xs), want, rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(ms.vmap(lambda x: ops.derivative(net, x[None], 3)[1][0])(xs), want,
                               rtol=2e-4, atol=2e-5)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        np.testing.assert_allclose(ops.derivative(net, xs, 3)[1], want, rtol=2e-4, atol=2e-5)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    # grad of derivative with respect to the input: the 4th derivative again
    g = ms.grad(lambda x: ops.derivative(net, x, 3)[1].sum())(xs)
    np.testing.assert_allclose(g, raw_d(_params(net), jnp.asarray(XS), 4), rtol=2e-4, atol=2e-5)
    # derivative of a grad
    d = ops.derivative(ms.grad(lambda x: net(x).sum()), xs, 2)[1]
    np.testing.assert_allclose(d, want, rtol=2e-4, atol=2e-5)


OPS = {  # ops with no Taylor rule in jax.experimental.jet, and the ones MindSpore refuses
    "tan": (ops.tan, jnp.tan),
    "atan": (ops.atan, jnp.arctan),
    "lgamma": (ops.lgamma, jax.scipy.special.gammaln),
    "neg": (ops.neg, jnp.negative),
    "softplus": (ops.softplus, jax.nn.softplus),
    "sort": (lambda x: ops.sort(x * x)[0], lambda x: jnp.sort(x * x)),
    "cumprod": (lambda x: ops.cumprod(x, 0), lambda x: jnp.cumprod(x)),
    "fori_loop": (lambda x: ops.ForiLoop()(0, 3, lambda i, c: ops.sin(c) + x, x),
                  lambda x: jax.lax.fori_loop(0, 3, lambda i, c: jnp.sin(c) + x, x)),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_any_op(name):
    ours, theirs = OPS[name]
    x = jnp.array([.3, .7, 1.1], jnp.float32)
    series = ([jnp.ones_like(x), jnp.zeros_like(x), jnp.zeros_like(x)],)
    out, s = ops.jet(ours, x, jnp.stack(series[0]))
    ref = [jax.jvp(nested_jvp(theirs, k), (x,), (jnp.ones_like(x),))[1] for k in range(3)]
    np.testing.assert_allclose(out, theirs(x), rtol=1e-6)
    np.testing.assert_allclose(s, jnp.stack(ref), rtol=1e-4, atol=1e-5)


def nested_jvp(f, k):
    """x -> the k-th directional derivative of f along ones (k nested jvps)."""
    for _ in range(k):
        f = (lambda g: lambda x: jax.jvp(g, (x,), (jnp.ones_like(x),))[1])(f)
    return f


def test_jet_matches_jax_jet_on_a_general_series():
    net = MLP()
    x = jnp.asarray(XS)
    s = [jnp.full_like(x, .7), jnp.full_like(x, -.2), jnp.full_like(x, .1)]
    out, series = ops.jet(net, ms.Tensor(XS), jnp.stack(s))
    rout, rseries = jax_jet.jet(lambda x: raw_mlp(_params(net), x), (x,), (s,))
    np.testing.assert_allclose(out, rout, rtol=1e-6)
    np.testing.assert_allclose(series, jnp.stack(rseries), rtol=1e-4, atol=1e-5)


def test_parameters_written_inside_are_written_back():
    bn = nn.BatchNorm1d(1)
    bn.set_train(True)
    xs = ms.Tensor(XS)
    _, d = ops.derivative(lambda x: bn(x) ** 2, xs, 2)
    np.testing.assert_allclose(bn.moving_mean.value, [.1 * XS.mean()], atol=1e-7)
    # inside jit too
    ms.jit(lambda x: ops.derivative(lambda x: bn(x) ** 2, x, 2)[1])(xs)
    np.testing.assert_allclose(bn.moving_mean.value, [.19 * XS.mean()], atol=1e-6)


class WithBprop(nn.Cell):
    def construct(self, x):
        return x * 2

    def bprop(self, x, out, dout):
        return (dout * 3,)


class WithJvp(nn.Cell):
    def construct(self, x):
        return x * 2

    def jvp(self, primals, tangents):
        return primals[0] * 2, tangents[0] * 3


@pytest.mark.parametrize("cell", [WithBprop, WithJvp])
@pytest.mark.parametrize("transform", ["derivative", "jet"])
def test_a_cell_with_a_custom_rule_is_refused_by_name(cell, transform):
    x = ms.Tensor(np.ones(2, np.float32))
    with pytest.raises(TypeError, match=f"Cell {cell.__name__} has a custom .* ops.{transform}"):
        if transform == "derivative":
            ops.derivative(lambda x: ops.sin(cell()(x)), x, 2)
        else:
            ops.jet(cell(), x, ms.Tensor(np.ones((2, 2), np.float32)))


def test_linearize_runs_the_function_once_and_matches_jax():
    class Counting(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = ms.Parameter(ms.Tensor(W3), name="w")
            self.calls = ms.Parameter(ms.Tensor(0.), name="calls", requires_grad=False)

        def construct(self, x):
            ops.assign(self.calls, self.calls + 1)
            return ops.tanh(x * self.w) * x

    net = Counting()
    x = jnp.array([.3, -.4, 1.2], jnp.float32)
    out, jvp_fn = ops.linearize(net, ms.Tensor(x))
    f = lambda x: jnp.tanh(x * jnp.asarray(W3)) * x  # noqa: E731
    for v in (jnp.ones(3), jnp.array([1., -2., .5])):
        np.testing.assert_allclose(jvp_fn(v), jax.jvp(f, (x,), (v.astype(jnp.float32),))[1], rtol=1e-6)
    np.testing.assert_allclose(out, f(x), rtol=1e-6)
    assert float(net.calls.value) == 1
    with pytest.raises(ValueError, match="shape"):
        jvp_fn(jnp.ones(4))
    with pytest.raises(ValueError, match="1 input"):
        jvp_fn((jnp.ones(3), jnp.ones(3)))
    # composes with jit and vmap
    np.testing.assert_allclose(ms.jit(lambda v: ops.linearize(f, x)[1](v))(jnp.ones(3)),
                               jax.jvp(f, (x,), (jnp.ones(3, jnp.float32),))[1], rtol=1e-6)


def test_derivative_argument_errors_name_what_is_wrong():
    x = ms.Tensor(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="order must be an int"):
        ops.derivative(sq, x, True)
    with pytest.raises(TypeError, match="dtype bool"):
        ops.derivative(sq, ms.Tensor(np.array([True])), 1)
    with pytest.raises(ValueError, match="same order"):
        ops.jet(mixed, (x, x), (jnp.ones((2, 2), jnp.float32), jnp.ones((3, 2), jnp.float32)))
