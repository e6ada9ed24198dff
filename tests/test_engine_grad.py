import jax
import jax.numpy as jnp
from jax.test_util import check_grads
import numpy as np
import pytest

import cellkit as ms
from cellkit import nn, ops

from engine_cases import Network, leak_check, X  # noqa: F401 (leak_check: an autouse fixture)

# ----- grad ---------------------------------------------------------------------------

w = ms.Parameter(ms.Tensor([2., 3.]), name="w")
bb = ms.Parameter(ms.Tensor([1.]), name="bb")
nog = ms.Parameter(ms.Tensor([5.]), name="nog", requires_grad=False)
xv, yv = ms.Tensor([1., 2.]), ms.Tensor([3., 4.])


def f_scalar(x, y):
    return (x * w * y).sum() + bb.sum() * nog.sum()


def _eq(a, b):
    if isinstance(b, tuple):
        assert isinstance(a, tuple) and len(a) == len(b), (a, b)
        for u, v in zip(a, b):
            _eq(u, v)
    else:
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


GX, GY, GW, GB = (np.array(v) for v in ([6., 12.], [2., 6.], [3., 8.], [5.]))


@pytest.mark.parametrize("pos,weights,expected", [
    (0, None, GX),
    ((0,), None, GX),
    ((0, 1), None, (GX, GY)),
    ((1, 0), None, (GY, GX)),
    (0, "wb", (GX, (GW, GB))),
    (0, "w", (GX, GW)),
    (0, "[w]", (GX, (GW,))),
    (0, "[]", (GX, ())),
    ((0, 1), "wb", ((GX, GY), (GW, GB))),
    (None, "wb", (GW, GB)),
    (None, "w", GW),
    (None, "[w]", (GW,)),
])
def test_grad_return_structure_matches_mindspore(pos, weights, expected):
    weights = {None: None, "wb": ms.ParameterTuple((w, bb)), "w": w, "[w]": [w], "[]": []}[weights]
    _eq(ms.grad(f_scalar, pos, weights)(xv, yv), expected)
    value, grads = ms.value_and_grad(f_scalar, pos, weights)(xv, yv)
    assert float(value) == 2 * 3 + 2 * 3 * 4 + 5
    _eq(grads, expected)


def test_grad_against_jax_grad_reference():
    ref = jax.grad(lambda x, wv: (x * wv * yv).sum(), argnums=(0, 1))(xv, w.value)
    _eq(ms.grad(f_scalar, 0, [w])(xv, yv), (ref[0], (ref[1],)))


def test_requires_grad_false_weight_gets_zeros():
    _eq(ms.grad(f_scalar, None, [bb, nog])(xv, yv), (GB, [0.]))


def test_nonscalar_and_tuple_outputs_use_ones_sensitivity():
    _eq(ms.grad(lambda x: x * w + bb, None, [bb])(xv), ([2.],))
    _eq(ms.grad(lambda x, y: ((x * w).sum(), y * w), (0, 1), [w])(xv, yv), (([2., 3.], [2., 3.]), ([4., 6.],)))


def test_has_aux():
    def f(x, y):
        return (x * w).sum(), y * 2, x + 1
    grads, aux = ms.grad(f, 0, has_aux=True)(xv, yv)
    _eq(grads, [2., 3.])
    _eq(aux, ([6., 8.], [2., 3.]))
    value, grads = ms.value_and_grad(f, 0, has_aux=True)(xv, yv)
    _eq(value, (8., [6., 8.], [2., 3.]))
    with pytest.raises(ValueError, match="has_aux=True"):
        ms.grad(lambda x: x.sum(), 0, has_aux=True)(xv)


def test_return_ids():
    got = ms.grad(f_scalar, 0, None, return_ids=True)(xv, yv)
    assert got[0] == 0
    _eq(got[1], GX)
    out = ms.grad(f_scalar, None, [w, bb], return_ids=True)(xv, yv)
    assert out[0][0] == "w" and out[1][0] == "bb"
    _eq(out[0][1], GW)


def test_grad_argument_errors():
    with pytest.raises(ValueError, match="cannot both be None"):
        ms.grad(f_scalar, None, None)
    with pytest.raises(TypeError, match="weights\\[1\\]"):
        ms.grad(f_scalar, 0, [w, 3])
    with pytest.raises(IndexError, match="out of range"):
        ms.grad(f_scalar, 5)(xv, yv)


def test_grad_of_a_cell_and_check_grads():
    n = Network()
    grads = ms.grad(lambda x: (n(x) ** 2).sum(), None, n.trainable_params())(X)
    ref = jax.grad(lambda wv, bv: ((X @ wv + bv) ** 2).sum(), argnums=(0, 1))(n.w.value, n.b.value)
    _eq(grads, ref)

    def via_cellkit(xval):
        return ms.grad(lambda x: jnp.sum(jnp.sin(n(x))), 0)(xval)
    check_grads(lambda xval: jnp.sum(jnp.sin(n(xval))), (X,), order=1, modes=["rev"])
    np.testing.assert_allclose(via_cellkit(X), jax.grad(lambda xval: jnp.sum(jnp.sin(n(xval))))(X), rtol=1e-6)


def test_jit_of_a_grad_function_compiles_the_gradient():
    w = ms.Parameter(ms.Tensor([1., 2.]), name="w")
    x = ms.Tensor([3., 4.])
    g = ms.grad(lambda x: (x * w).sum(), None, [w])
    (want,) = g(x)
    (got,) = ms.jit(g)(x)
    _eq(got, want)
    loss, (gw,) = ms.jit(ms.value_and_grad(lambda x: (x * w * w).sum(), None, [w]))(x)
    _eq(loss, 3. + 16.)
    _eq(gw, [6., 16.])
    _eq(ms.grad(ms.jit(lambda x: (x * w).sum()))(x), [1., 2.])


def test_writes_inside_grad_are_applied_eagerly_and_in_jit():
    counter = ms.Parameter(ms.Tensor(0.0), name="counter", requires_grad=False)

    def f(x):
        ops.assign(counter, counter + 1)
        return (x * w).sum()

    g = ms.grad(f, 0)
    g(xv)
    assert float(counter) == 1.0
    jg = ms.jit(lambda x: g(x))
    _eq(jg(xv), [2., 3.])
    _eq(jg(xv), [2., 3.])
    assert float(counter) == 3.0


def test_mindspore_2_training_loop_runs_as_written():
    class SGD(nn.Cell):
        def __init__(self, params, lr):
            super().__init__()
            self.parameters = ms.ParameterTuple(params)
            self.lr = lr

        def construct(self, grads):
            for p, g in zip(self.parameters, grads):
                ops.assign(p, p - self.lr * g)
            return True

    model = nn.Dense(3, 1)
    optimizer = SGD(model.trainable_params(), 0.1)
    rng = np.random.default_rng(0)
    data = ms.Tensor(rng.normal(size=(16, 3)), ms.float32)
    label = data @ ms.Tensor([[1.], [-2.], [0.5]]) + 0.3

    def forward_fn(x, y):
        logits = model(x)
        loss = ((logits - y) ** 2).mean()
        return loss, logits

    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)

    @ms.jit
    def train_step(x, y):
        (loss, _), grads = grad_fn(x, y)
        optimizer(grads)
        return loss

    # The same steps by hand in plain JAX.
    wv, bv = model.weight.value, model.bias.value

    def ref_loss(wv, bv):
        return (((data @ wv.T + bv) - label) ** 2).mean()

    losses = [float(train_step(data, label)) for _ in range(20)]
    for i in range(20):
        lv, (gw, gb) = jax.value_and_grad(ref_loss, argnums=(0, 1))(wv, bv)
        np.testing.assert_allclose(losses[i], lv, rtol=1e-5)
        wv, bv = wv - 0.1 * gw, bv - 0.1 * gb
    np.testing.assert_allclose(model.weight.asnumpy(), wv, rtol=1e-5)
    assert losses[-1] < losses[0] / 5
    assert train_step.trace_count == 1


# ----- custom bprop ------------------------------------------------------------------

class Dropout2d(nn.Cell):
    def __init__(self, keep_prob):
        super().__init__()
        self.keep_prob = keep_prob
        self.dropout2d = ops.Dropout2D(keep_prob)

    def construct(self, x):
        return self.dropout2d(x)

    def bprop(self, x, out, dout):
        _, mask = out
        dy, _ = dout
        if self.keep_prob != 0:
            dy = dy * (1 / self.keep_prob)
        dy = mask.astype(ms.float32) * dy
        return (dy.astype(x.dtype), )


def test_seed_dropout2d_bprop_gradient_is_the_mask():
    dropout_2d = Dropout2d(0.8)
    dropout_2d.bprop_debug = True
    x = ms.Tensor(np.random.default_rng(0).normal(size=(4, 8, 3, 3)), ms.float32)
    upstream = ms.Tensor(np.random.default_rng(1).normal(size=(4, 8, 3, 3)), ms.float32)

    def f(x):
        out, mask = dropout_2d(x)
        return (out * upstream).sum(), mask

    for fn in (lambda x: ms.grad(f, 0, has_aux=True)(x), ms.jit(lambda x: ms.grad(f, 0, has_aux=True)(x))):
        grads, (mask,) = fn(x)
        assert mask.dtype == np.bool_ and mask.shape == x.shape
        assert 0 < float(mask.mean()) < 1
        np.testing.assert_allclose(grads, np.asarray(mask, np.float32) * np.asarray(upstream) / 0.8, rtol=1e-6)


class Scaled(nn.Cell):
    """y = x * w, with a custom bprop giving dx = 100 * dout."""

    def __init__(self, with_param_grads=False):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor([2., 3.]), name="w")
        self.with_param_grads = with_param_grads

    def construct(self, x):
        return x * self.w

    def bprop(self, x, out, dout):
        dx = dout * 100
        if self.with_param_grads:
            return (dx,), {self.w: dout * x}
        return (dx,)


def test_bprop_cell_parameters_get_zero_outer_parameters_true_gradients():
    inner = Scaled()
    v = ms.Parameter(ms.Tensor([1., 2.]), name="v")
    f = lambda x: inner(x * v).sum()  # noqa: E731
    gx, (g_inner, gv) = ms.grad(f, 0, [inner.w, v])(xv)
    _eq(gx, np.asarray(v) * 100)
    _eq(g_inner, [0., 0.])
    _eq(gv, np.asarray(xv) * 100)


def test_bprop_can_return_parameter_gradients_opt_in():
    inner = Scaled(with_param_grads=True)
    gx, (gw,) = ms.grad(lambda x: inner(x).sum(), 0, [inner.w])(xv)
    _eq(gx, [100., 100.])
    _eq(gw, xv)
    gx2, (gw2,) = ms.jit(lambda x: ms.grad(lambda x: inner(x).sum(), 0, [inner.w])(x))(xv)
    _eq(gw2, xv)
    pure = jax.grad(lambda cell, x: cell(x).sum())(inner, xv)
    _eq(pure.w.value, xv)


def test_bprop_wrong_number_of_gradients_is_a_clear_error():
    class Bad(nn.Cell):
        def construct(self, x, y):
            return x * y

        def bprop(self, x, y, out, dout):
            return (dout,)

    with pytest.raises(ValueError, match="Bad.bprop returned 1 input gradient.*2 input"):
        ms.grad(lambda x, y: Bad()(x, y).sum(), (0, 1))(xv, yv)


def test_bprop_forward_only_and_under_jit():
    inner = Scaled()
    _eq(inner(xv), np.asarray(xv) * np.asarray(inner.w))
    _eq(ms.jit(lambda x: inner(x))(xv), np.asarray(xv) * np.asarray(inner.w))
