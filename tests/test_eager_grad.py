"""Eager ops inside an eager grad: forward values from the host or one top-level executable
(cellkit.eager_grad), gradients checked against raw JAX and finite differences."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import cellkit as ms
from cellkit import eager_grad, nn, ops


def _conv_bn(x, w, gamma, beta):
    y = jax.lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)))
    mean = y.mean((0, 2, 3), keepdims=True)
    var = y.var((0, 2, 3), keepdims=True)
    y = (y - mean) / jnp.sqrt(var + 1e-5) * gamma[None, :, None, None] + beta[None, :, None, None]
    return jnp.tanh(y)


def test_a_convolution_and_batch_norm_cell_have_jax_gradients():
    ms.set_seed(3)
    net = nn.SequentialCell([nn.Conv2d(3, 4, 3, pad_mode="pad", padding=1, has_bias=False),
                             nn.BatchNorm2d(4), nn.Tanh()])
    net.set_train()
    x = ms.Tensor(np.random.default_rng(0).normal(size=(2, 3, 70, 70)).astype(np.float32))   # (big: compiled)
    params = net.trainable_params()
    value, grads = ms.value_and_grad(lambda a: net(a).sum(), None, params)(x)
    w, gamma, beta = (np.asarray(p.value) for p in params)
    want_value, want = jax.value_and_grad(lambda *ps: _conv_bn(np.asarray(x), *ps).sum(), (0, 1, 2))(w, gamma, beta)
    np.testing.assert_allclose(float(value), float(want_value), rtol=1e-4, atol=1e-3)
    for g, ref in zip(grads, want):
        assert np.shape(g) == ref.shape
        np.testing.assert_allclose(np.asarray(g), np.asarray(ref), rtol=2e-3, atol=2e-3 * float(np.abs(ref).max()))


def test_linearize_gives_jax_derivatives_in_both_modes_and_at_second_order():
    def f(x, w):
        return jnp.tanh(jax.lax.conv_general_dilated(x, w, (1, 1), "SAME")) * jnp.exp(-w.sum())
    x = jnp.asarray(np.random.default_rng(1).normal(size=(1, 2, 5, 5)).astype(np.float32))
    w = jnp.asarray(np.random.default_rng(2).normal(size=(3, 2, 3, 3)).astype(np.float32) * 0.3)
    for host in (True, False):
        op = eager_grad.linearize(f, [x, w], host=host)
        assert op is not None
        check_grads(op, (x, w), order=1, modes=("fwd", "rev"), atol=2e-2, rtol=2e-2)
        np.testing.assert_allclose(jax.jacfwd(op, 1)(x, w), jax.jacfwd(f, 1)(x, w), rtol=1e-4, atol=1e-5)
        # Only one input differentiated: the other's tangent is a symbolic zero, never made.
        np.testing.assert_allclose(jax.grad(lambda b: op(x, b).sum())(w), jax.grad(lambda b: f(x, b).sum())(w),
                                   rtol=1e-4, atol=1e-5)


def test_a_custom_vjp_inside_keeps_its_rule_and_an_integer_result_is_left_to_jax():
    @jax.custom_vjp
    def g(x):
        return x * 2
    g.defvjp(lambda x: (x * 2, None), lambda _, ct: (ct * 3,))   # (not the true derivative: on purpose)
    op = eager_grad.linearize(g, [jnp.ones(3)])
    np.testing.assert_array_equal(jax.grad(lambda x: op(x).sum())(jnp.ones(3)), np.full(3, 3.0, np.float32))
    with pytest.raises(TypeError, match="forward-mode"):   # as JAX says for g itself
        jax.jvp(op, (jnp.ones(3),), (jnp.ones(3),))
    assert eager_grad.linearize(lambda x: jnp.argmax(x), [jnp.ones(3)]) is None   # an integer output
    assert eager_grad.linearize(lambda x: (x * 2, jnp.argmax(x)), [jnp.ones(3)]) is None   # one of two
    assert eager_grad.linearize(lambda x: (), [jnp.ones(3)]) is None   # no output


def test_labels_are_not_differentiated():
    logits = jnp.asarray(np.random.default_rng(4).normal(size=(4, 5)).astype(np.float32))
    labels = jnp.asarray(np.array([1, 0, 4, 2], np.int32))

    def loss(z, y):
        return -(jax.nn.log_softmax(z) * jax.nn.one_hot(y, 5)).sum()
    op = eager_grad.linearize(loss, [logits, labels])
    np.testing.assert_allclose(jax.grad(op)(logits, labels), jax.grad(loss)(logits, labels), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(ops.cross_entropy(ms.Tensor(logits), ms.Tensor(labels), reduction="sum")),
                               float(loss(logits, labels)), rtol=1e-5)


def test_an_eager_grad_through_jaxs_own_jitted_functions_compiles_nothing():
    # log_softmax, take_along_axis, squeeze and swapaxes are jitted in JAX: their tangents are recorded
    # equation by equation (host_ops.eval_inlined), not run as executables of their own.
    from compile_count import compiles
    rng = np.random.default_rng(8)
    logits = ms.Tensor(rng.normal(size=(3, 1, 7)).astype(np.float32))
    labels = ms.Tensor(np.array([0, 6, 2], np.int32))
    loss_fn = nn.CrossEntropyLoss()

    def f(z):
        return loss_fn(z.squeeze(1).swapaxes(0, 1).swapaxes(0, 1), labels)
    with compiles() as made:
        loss, g = ms.value_and_grad(f)(logits)
    assert made["n"] == 0

    def raw(z):
        logp = jax.nn.log_softmax(z[:, 0], axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, jnp.asarray(labels)[:, None], axis=1))
    want_loss, want = jax.value_and_grad(raw)(jnp.asarray(logits))
    np.testing.assert_allclose(float(loss), float(want_loss), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-5, atol=1e-7)


def test_a_layer_with_large_weights_makes_its_forward_values_on_the_host_inside_a_grad():
    # 294,912 weights (more than host_ops.MAX_ELEMENTS), contracted into a small result: no executable
    # for the forward part; the gradients are JAX's.
    from compile_count import compiled_names
    rng = np.random.default_rng(1)
    w = rng.normal(size=(128, 256, 3, 3)).astype(np.float32) * 0.05
    net = nn.Conv2d(256, 128, 3, pad_mode="pad", padding=1, has_bias=False, weight_init=ms.Tensor(w))
    x = ms.Tensor(rng.normal(size=(1, 256, 4, 4)).astype(np.float32))
    loss = lambda a: (net(a) ** 2).mean()
    with compiled_names() as names:
        value, grads = ms.value_and_grad(loss, None, net.trainable_params())(x)
    assert "jaxpr_as_fun" not in names
    ref = lambda a, k: (jax.lax.conv_general_dilated(a, k, (1, 1), ((1, 1), (1, 1))) ** 2).mean()
    ref_value, ref_grad = jax.value_and_grad(ref, 1)(jnp.asarray(x), jnp.asarray(w))
    np.testing.assert_allclose(float(value), float(ref_value), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(grads[0]), np.asarray(ref_grad), rtol=1e-4, atol=1e-6)
