"""Small eager ops that compute, run by NumPy (cellkit.host_compute through cellkit.host_ops).

Correctly rounded operations must give XLA's bits (flush-to-zero included); the
transcendental functions, sums and matrix products must be within a few ulps of
XLA's. The reference is always ``jax.jit`` of the same function.
"""

import jax
import jax.numpy as jnp
from jax import lax
import numpy as np
import pytest

import cellkit as ms
from cellkit import host_compute, host_ops, nn, ops
from compile_count import compiles

SPECIAL = np.array([np.nan, -0.0, 1.4e-45, np.inf, -np.inf, 1e-39, 3.0, -2.5, 0.5, -0.5, 1.5, 2.5], np.float32)


def _data(shape, dtype=np.float32, seed=0):
    x = np.random.default_rng(seed).normal(size=shape).astype(dtype)
    flat = x.reshape(-1)
    flat[: min(flat.size, SPECIAL.size)] = SPECIAL[: flat.size].astype(dtype)
    return jnp.asarray(x)


def _planned(fn, arrays):
    p = host_ops.plan(fn, arrays)
    assert isinstance(p, host_ops.Plan) and not p.exact, p
    return host_ops.run(p, arrays), jax.jit(fn)(*arrays)


def _bits(a):
    return np.asarray(a).view(np.uint8)


EXACT = [
    ("add", lambda a, b: a + b),
    ("sub", lambda a, b: a - b),
    ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / b),
    ("max", jnp.maximum),
    ("min", jnp.minimum),
    ("neg and abs", lambda a, b: (-a, jnp.abs(b))),
    ("sqrt", lambda a, b: jnp.sqrt(a)),
    ("square and cube", lambda a, b: (jnp.square(a), a ** 3, a ** -2)),
    ("comparisons", lambda a, b: (a < b, a <= b, a == b, a != b)),
    ("floor ceil sign", lambda a, b: (jnp.floor(a), jnp.ceil(a), jnp.sign(a))),
    ("round half even", lambda a, b: jnp.round(a * 2)),
    ("round half away", lambda a, b: jax.lax.round(a * 2)),
    ("fmod", lambda a, b: jax.lax.rem(a, b)),
    ("where", lambda a, b: jnp.where(a > 0, a, b * 2)),   # (where(a > b, a, b) is XLA's max: flushes)
    ("clip", lambda a, b: jnp.clip(a, -1.0, 1.0)),
    ("float to int", lambda a, b: (a * 1e9).astype(jnp.int32)),
    ("float to uint8", lambda a, b: (a * 100).astype(jnp.uint8)),
    ("int to float", lambda a, b: (a * 1e9).astype(jnp.int32).astype(jnp.float32)),
    ("float to bool", lambda a, b: a.astype(jnp.bool_)),
    ("reduce max and argmax", lambda a, b: (a.max(1), b.argmax(1), b.argmin(0))),
    ("pad and update", lambda a, b: jax.lax.dynamic_update_slice(jnp.pad(a, ((1, 0), (0, 2))), b[:2], (3, 1))),
    ("arange", lambda a, b: a + jnp.arange(a.shape[1], dtype=a.dtype)),
]


@pytest.mark.parametrize("name,fn", EXACT, ids=[c[0] for c in EXACT])
def test_correctly_rounded_ops_give_xla_bits(name, fn):
    a, b = _data((4, 6)), _data((4, 6), seed=1)
    got, want = _planned(fn, [a, b])
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert g.dtype == w.dtype and g.shape == w.shape and not g.weak_type
        np.testing.assert_array_equal(_bits(g), _bits(w))


def test_subnormals_are_flushed_as_xla_does():
    x = jnp.asarray(np.array([1e-39, -1e-39, 1e-30, 0.0], np.float32))
    # (constants as arguments: XLA's simplifier would drop a * 1.0, computing nothing and flushing nothing)
    got, want = _planned(lambda a, one, zero: (a * one, a * 1e-10, a + zero, -a, jnp.abs(a), a > zero),
                         [x, jnp.float32(1.0), jnp.float32(0.0)])
    for g, w in zip(got, want):
        np.testing.assert_array_equal(_bits(g), _bits(w))
    assert host_compute.flush(np.float32([1e-39]))[0] == 0


INEXACT = [
    ("exp log tanh", lambda a: (jnp.exp(a), jnp.log(jnp.abs(a) + 1), jnp.tanh(a)), 4),
    ("sigmoid", jax.nn.sigmoid, 4),
    ("trigonometry", lambda a: (jnp.sin(a), jnp.cos(a), jnp.arctan2(a, 2.0)), 4),
    ("softmax", lambda a: jax.nn.softmax(a, axis=-1), 8),
    ("log_softmax", lambda a: jax.nn.log_softmax(a, axis=-1), 8),
    ("gelu tanh", lambda a: jax.nn.gelu(a, approximate=True), 8),
    ("gelu erf", lambda a: jax.nn.gelu(a, approximate=False), 8),
    ("erf_inv", lambda a: jax.scipy.special.erfinv(jnp.tanh(a)), 64),   # (XLA's polynomial: tens of ulps)
    ("sum and mean", lambda a: (a.sum(), a.mean(1), (a * a).sum(0)), 8),
    ("matmul", lambda a: (a @ a.T, jnp.einsum("ij,kj->ik", a, a), a[None] @ a.T[None]), 8),
    ("layer norm", lambda a: (a - a.mean(-1, keepdims=True)) * jax.lax.rsqrt(a.var(-1, keepdims=True) + 1e-5), 16),
]


# Relative to 1 near zero: sums and products of mixed signs, and gelu's cancellation near its minimum.
ABSOLUTE = ("sum and mean", "matmul", "layer norm", "gelu tanh", "gelu erf")


@pytest.mark.parametrize("name,fn,ulps", INEXACT, ids=[c[0] for c in INEXACT])
def test_transcendentals_sums_and_products_are_within_a_few_ulps(name, fn, ulps):
    a = jnp.asarray(np.random.default_rng(3).normal(size=(6, 16)).astype(np.float32))
    got, want = _planned(fn, [a])
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert g.dtype == w.dtype and g.shape == w.shape
        scale = np.maximum(np.abs(np.asarray(w)), 1.0 if name in ABSOLUTE else 0)
        np.testing.assert_array_less(np.abs(np.asarray(g) - np.asarray(w)),
                                     ulps * np.finfo(np.float32).eps * scale + np.finfo(np.float32).tiny)


def test_float64_when_enabled():
    if not jax.config.jax_enable_x64:
        pytest.skip("64-bit mode is off")
    a = jnp.asarray(np.random.default_rng(4).normal(size=(5, 5)))
    got, want = _planned(lambda x: (x * x + 1.0, jnp.exp(x), x @ x), [a])
    for g, w in zip(got, want):
        assert g.dtype == jnp.float64
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-14, atol=1e-14)


def test_what_is_left_to_xla():
    x = _data((4, 4))
    assert host_ops.plan(lambda a: a.astype(jnp.float16) * 2, [x]) is None                  # half precision
    assert host_ops.plan(lambda a: jnp.cumsum(a, 0), [x]) is host_ops.NEVER                   # another order
    assert host_ops.plan(lambda a: jnp.sort(a, 0), [x]) is host_ops.NEVER
    ints = jnp.arange(6, dtype=jnp.int32)
    assert host_ops.plan(lambda a: a // 2, [ints]) is None                                    # integer division
    big = jnp.ones((300, 300), jnp.float32)
    assert host_ops.plan(lambda a: a @ a, [big[:64, :64]]) is not None
    assert host_ops.plan(lambda a, b: a @ b, [jnp.ones((256, 64)), jnp.ones((64, 256))]) is None   # 4M MACs


def test_a_growing_decoding_loop_compiles_nothing_and_matches_jit():
    ms.set_seed(1)
    q, k, v = nn.Dense(16, 16), nn.Dense(16, 16), nn.Dense(16, 16)
    ln = nn.LayerNorm((16,))
    x = ms.Tensor(np.random.default_rng(0).normal(size=(1, 1, 16)).astype(np.float32))
    cache_k = cache_v = ops.zeros((1, 0, 16), ms.float32)

    def step(x, cache_k, cache_v):
        h = ln(x)
        cache_k, cache_v = ops.cat((cache_k, k(h)), axis=1), ops.cat((cache_v, v(h)), axis=1)
        att = ops.softmax(ops.matmul(q(h), cache_k.swapaxes(1, 2)) / 4.0, axis=-1)
        return x + ops.matmul(att, cache_v) * 0.5, cache_k, cache_v

    step(x, cache_k, cache_v)   # the first shapes (the zero-length cache) may compile
    y, ck, cv = step(x, cache_k, cache_v)
    with compiles() as made:
        for _ in range(12):
            y, ck, cv = step(y, ck, cv)
    assert made["n"] == 0
    want = jax.jit(step)(y, ck, cv)
    for g, w in zip(step(y, ck, cv), want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-6, atol=2e-6)


def test_a_signature_keeps_its_bits_past_the_hot_count():
    x = jnp.asarray(np.random.default_rng(5).normal(size=(3, 7)).astype(np.float32))
    first = ops.softmax(x, axis=-1)
    for _ in range(host_ops.HOT + 5):
        last = ops.softmax(x, axis=-1)
    np.testing.assert_array_equal(_bits(first), _bits(last))


def test_gradients_are_jax_own():
    w = ms.Parameter(ms.Tensor(np.random.default_rng(6).normal(size=(4, 3)).astype(np.float32)), name="w")
    x = ms.Tensor(np.random.default_rng(7).normal(size=(2, 4)).astype(np.float32))

    def loss(x):
        return ops.softmax(ops.matmul(x, w) * 2.0, axis=-1).sum() + (x * x).mean()

    value, grad = ms.value_and_grad(loss)(x)
    raw = lambda a: jax.nn.softmax(a @ np.asarray(w.value) * 2.0, axis=-1).sum() + (a * a).mean()   # noqa: E731
    want_value, want_grad = jax.value_and_grad(raw)(np.asarray(x))
    np.testing.assert_allclose(float(value), float(want_value), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(grad), np.asarray(want_grad), rtol=1e-5, atol=1e-6)


def test_switching_host_computing_off_compiles_again():
    x = jnp.asarray(np.random.default_rng(8).normal(size=(3, 5)).astype(np.float32))
    host_ops.set_compute(False)
    try:
        with compiles() as made:
            y = x * 3.0 + 1.0
        assert made["n"] >= 1
    finally:
        host_ops.set_compute(True)
    with compiles() as made:
        z = x * 3.0 + 1.0
    assert made["n"] == 0
    # Two correctly rounded ops, one executable each or both on the host: the same bits.
    np.testing.assert_array_equal(_bits(y), _bits(z))


def test_errors_are_the_ops_own():
    a, b = jnp.ones((2, 3)), jnp.ones((4, 5))
    with pytest.raises(TypeError, match="add got incompatible shapes"):
        a + b
    with pytest.raises(ValueError):
        ops.matmul(a, b)


def test_which_signatures_run_on_the_host_does_not_depend_on_call_order():
    # A first call in half precision (not computed on the host) must not stop later float32 calls from
    # running there: the float32 result is the same whether or not float16 came first.
    from cellkit.eager_jit import host_first
    tanh = host_first(jax.jit(jnp.tanh))
    x = jnp.asarray(np.random.default_rng(9).uniform(0.2, 2.0, (2, 3)).astype(np.float32))
    fresh = np.asarray(host_first(jax.jit(jnp.tanh))(x))
    tanh(x.astype(jnp.float16))
    np.testing.assert_array_equal(_bits(tanh(x)), _bits(fresh))
    np.testing.assert_array_equal(_bits(ops.Tanh()(x)), _bits(ops.tanh(x)))


def _loss_parts(x, w, labels):
    h = ops.matmul(x, w)
    h = ops.gelu(h, approximate="tanh") * 0.5 + ops.exp(-h * h)
    logp = ops.log_softmax(h / 2.0, axis=-1)
    picked = (logp * ops.one_hot(labels, 3, ms.Tensor(1.0), ms.Tensor(0.0))).sum(-1)
    return -picked.mean() + ops.sqrt((w * w).sum() + 1.0)


def _raw_loss(x, w, labels):
    h = x @ w
    h = jax.nn.gelu(h, approximate=True) * 0.5 + jnp.exp(-h * h)
    logp = jax.nn.log_softmax(h / 2.0, axis=-1)
    return -(logp * jax.nn.one_hot(labels, 3)).sum(-1).mean() + jnp.sqrt((w * w).sum() + 1.0)


def test_forward_values_under_an_eager_grad_come_from_the_host_and_gradients_are_jax_own():
    rng = np.random.default_rng(10)
    x = ms.Tensor(rng.normal(size=(5, 4)).astype(np.float32))
    w = ms.Parameter(ms.Tensor(rng.normal(size=(4, 3)).astype(np.float32)), name="w")
    labels = ms.Tensor(np.array([0, 2, 1, 1, 0], np.int32))
    grad_fn = ms.value_and_grad(_loss_parts, (0,), [w])
    grad_fn(x, w, labels)   # the backward pass compiles once for this structure
    with compiles() as made:
        value, (gx, (gw,)) = grad_fn(x, w, labels)
    assert made["n"] == 0   # the forward ops ran on the host, the backward pass was read back
    want_value, (want_gx, want_gw) = jax.value_and_grad(_raw_loss, (0, 1))(
        np.asarray(x), np.asarray(w.value), np.asarray(labels))
    np.testing.assert_allclose(float(value), float(want_value), rtol=2e-6)
    assert np.shape(gx) == want_gx.shape and np.shape(gw) == want_gw.shape
    np.testing.assert_allclose(np.asarray(gx), np.asarray(want_gx), rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(np.asarray(gw), np.asarray(want_gw), rtol=2e-5, atol=2e-6)


def test_forward_mode_and_second_order_through_host_linearized_ops():
    from jax.test_util import check_grads

    def f(a):
        return ops.softmax(ops.tanh(a) * 3.0, axis=-1) * ops.exp(a / 4.0)
    a = jnp.asarray(np.random.default_rng(11).normal(size=(2, 5)).astype(np.float32))
    check_grads(f, (a,), order=2, modes=("fwd", "rev"), atol=5e-2, rtol=5e-2)
    jf = jax.jacfwd(f)(a)
    want = jax.jacfwd(lambda b: jax.nn.softmax(jnp.tanh(b) * 3.0, axis=-1) * jnp.exp(b / 4.0))(a)
    np.testing.assert_allclose(np.asarray(jf), np.asarray(want), rtol=1e-5, atol=1e-6)


_X = np.random.default_rng(12).normal(size=(3, 5)).astype(np.float32) * 3
_X[0, :4] = [np.nan, np.inf, -np.inf, -0.0]
_Y = np.random.default_rng(13).normal(size=(3, 5)).astype(np.float32)
_I = np.random.default_rng(14).integers(-7, 7, size=(3, 5)).astype(np.int32)
SEMANTICS = [   # (name, function of two arrays, the arrays): NaN, infinities, -0 and integers included
    ("mod", lambda a, c: a % c, (_X, _Y)), ("floor divide", lambda a, c: a // c, (_X, _Y)),
    ("power", lambda a, c: jnp.abs(a) ** c, (_X, _Y)), ("round and rint", lambda a, c: (jnp.round(a), jnp.rint(c)), (_X, _Y)),
    ("sign and clip", lambda a, c: (jnp.sign(a), jnp.clip(a, -1, 1)), (_X, _Y)),
    ("max, argmax, argmin, nanmax", lambda a, c: (a.max(1), a.argmax(1), a.argmin(0), jnp.nanmax(a, 1)), (_X, _Y)),
    ("float to int, uint8, bool", lambda a, c: (a.astype(jnp.int32), a.astype(jnp.uint8), a.astype(bool)), (_X, _Y)),
    ("mean, var, logsumexp", lambda a, c: (a.mean(0), c.var(1), jax.nn.logsumexp(c, 1)), (_X, _Y)),
    ("fmax and hypot", lambda a, c: (jnp.fmax(a, c), jnp.hypot(a, c)), (_X, _Y)),
    ("activations", lambda a, c: (jax.nn.softplus(a), jax.nn.relu6(a), jax.nn.silu(c), jax.nn.sigmoid(a)), (_X, _Y)),
    ("predicates", lambda a, c: (jnp.isnan(a), jnp.isinf(a), jnp.isfinite(a)), (_X, _Y)),
    ("products", lambda a, c: (c @ c.T, jnp.einsum("ij,ij->i", c, c), c.prod(1), jnp.outer(c[0], c[1])), (_X, _Y)),
    ("logic", lambda a, c: ((c > 0).all(1), (c > 0).any(0)), (_X, _Y)),
    ("norm and trunc", lambda a, c: (jnp.linalg.norm(c, axis=1), jnp.trunc(a)), (_X, _Y)),
    ("logs", lambda a, c: (jnp.log2(jnp.abs(c)), jnp.log10(jnp.abs(c)), jnp.cbrt(c), jnp.exp2(c)), (_X, _Y)),
    ("nextafter and heaviside", lambda a, c: (jnp.nextafter(a, c), jnp.heaviside(c, 0.5)), (_X, _Y)),
    ("pad, roll, tril", lambda a, c: (jnp.pad(c, ((1, 2), (0, 1)), constant_values=3.0), jnp.roll(c, 2, 1), jnp.tril(c)),
     (_X, _Y)),
    ("integers", lambda p, q: (p * q, p ** 2, p.mean(), p.sum(0), jnp.abs(p), jnp.sign(p), p @ q.T), (_I, _I[::-1])),
    ("integers to float", lambda p, q: p.astype(jnp.float32) / 3, (_I, _I)),
    ("float to an integer power (a bias correction)", lambda a, p: (jnp.float32(0.9) ** jnp.abs(p),
                                                                   jnp.abs(a[1:]) ** p[1:]), (_X, _I)),
]


def _host_and_xla(fn, arrays):
    """(host result, XLA result) pairs of ``fn`` on these arrays, NumPy arrays of the same dtype and shape."""
    arrays = [jnp.asarray(a) for a in arrays]
    p = host_ops.plan(fn, arrays)
    assert isinstance(p, host_ops.Plan), p
    got, want = host_ops.run(p, arrays), jax.jit(fn)(*arrays)
    pairs = [(np.asarray(g), np.asarray(w)) for g, w in zip(jax.tree_util.tree_leaves(got),
                                                            jax.tree_util.tree_leaves(want))]
    assert all(g.dtype == w.dtype and g.shape == w.shape for g, w in pairs)
    return pairs


@pytest.mark.parametrize("name,fn,arrays", SEMANTICS, ids=[c[0] for c in SEMANTICS])
def test_what_runs_on_the_host_means_what_xla_computes(name, fn, arrays):
    for g, w in _host_and_xla(fn, arrays):
        if np.issubdtype(w.dtype, np.floating):
            np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        else:
            np.testing.assert_array_equal(g, w)


_R = np.random.default_rng(21)
_IMG = _R.normal(size=(2, 6, 9, 8)).astype(np.float32)
_W = _R.normal(size=(4, 6, 3, 3)).astype(np.float32)
WINDOWED = [   # (name, function, arrays, exact): XLA's convolutions and window reductions on the host
    ("conv same", lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME"), (_IMG, _W), False),
    ("conv stride, negative padding", lambda x, w: lax.conv_general_dilated(x, w, (1, 2), ((-1, 2), (1, -1))),
     (_IMG, _W), False),
    ("conv dilations", lambda x, w: lax.conv_general_dilated(x, w, (1, 1), ((2, 2), (1, 1)), lhs_dilation=(2, 2),
                                                             rhs_dilation=(2, 1)), (_IMG, _W), False),
    ("conv groups", lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", feature_group_count=2),
     (_IMG, _W[:, :3]), False),
    ("depthwise conv", lambda x, w: lax.conv_general_dilated(x, w, (2, 2), "SAME", feature_group_count=6),
     (_IMG, _R.normal(size=(6, 1, 3, 3)).astype(np.float32)), False),
    ("conv NHWC", lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
     (_IMG.transpose(0, 2, 3, 1), _W.transpose(2, 3, 1, 0)), False),
    ("transposed conv", lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW")),
     (_IMG, _R.normal(size=(5, 6, 2, 2)).astype(np.float32)), False),
    ("conv 1d and 3d", lambda x, w: (lax.conv_general_dilated(x[:, :, 0], w[:, :, 0], (2,), ((2, 1),)),
                                     lax.conv_general_dilated(x[:, :, None], w[:, :, None, :2], (1, 1, 1), "SAME")),
     (_IMG, _W), False),
    ("max pool", lambda x: (lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID"),
                            lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2), "SAME"),
                            lax.reduce_window(x, jnp.inf, lax.min, (1, 2, 2, 1), (1, 1, 1, 1), "VALID",
                                              window_dilation=(1, 1, 2, 1))), (_IMG,), True),
    ("sum pool", lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 1, 3, 3), (1, 1, 2, 2),
                                             ((0, 0), (0, 0), (1, 1), (1, 1))), (_IMG,), False),
    ("integer max pool", lambda x: lax.reduce_window(x, np.int32(np.iinfo(np.int32).min), lax.max, (1, 1, 2, 2), (1, 1, 2, 2),
                                                     "VALID"), ((_IMG * 10).astype(np.int32),), True),
]


_TABLE = _R.normal(size=(10, 6)).astype(np.float32)
_IDS = np.array([[1, 2, 3], [9, 0, 1]], np.int32)
_ROWS = np.array([1, 2, 0, 4], np.int32)
WINDOWED += [   # gathers (data movement: XLA's bits), scatter-adds and a max pool's backward pass
    ("max pool backward", jax.grad(lambda x: (lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2),
                                                                "VALID") ** 2).sum()), (_IMG,), True),
    ("overlapping max pool backward", jax.grad(lambda x: (lax.reduce_window(
        x, -jnp.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2), "SAME") ** 2).sum()), (_IMG,), False),
    ("embedding lookup", lambda e, i: e[i], (_TABLE, _IDS), True),
    ("take_along_axis", lambda e, i: jnp.take_along_axis(e[:4], i[:, None], axis=1), (_TABLE, _ROWS), True),
    ("indices out of bounds: clamp, fill", lambda e, i: (e[i - 3], jnp.take(e, i * 3, axis=1, mode="fill"),
                                                          jnp.take(e, i * 3, axis=1, mode="clip")), (_TABLE, _ROWS), True),
    ("batched and sliced gathers", lambda e, i: (jax.vmap(lambda row, k: row[k])(e[:4], i), e[i[:2], i[2:]],
                                                  lax.dynamic_slice(e, (i[0], i[1]), (2, 3))), (_TABLE, _ROWS), True),
    ("scatter-add, repeated and dropped indices", lambda e, i: (e.at[i].add(1.5), e.at[i + 5].add(1.5, mode="drop")),
     (_TABLE, _IDS), True),
    ("embedding backward", jax.grad(lambda e, i: (e[i] ** 2).sum()), (_TABLE, _IDS), True),
    ("interior and negative padding", lambda e, i: (lax.pad(e, np.float32(1.5), ((1, -2, 2), (-1, 3, 1))),
                                                    lax.pad(i, np.int32(7), ((0, 0, 3), (2, -1, 1))), lax.pad(e, np.float32(0), ((-3, -1, 0), (2, 0, 0)))),
     (_TABLE, _IDS), True),
    ("conv weight gradients (the image as the window)", jax.grad(
        lambda x, w: (lax.conv_general_dilated(x, w, (2, 1), ((1, 1), (0, 2)), rhs_dilation=(1, 2)) ** 2).sum()
        + (lax.conv_general_dilated(x, w, (1, 1), "SAME") ** 2).sum(), argnums=1), (_IMG, _W), False),
    ("strided average pool backward", jax.grad(lambda x: (lax.reduce_window(x, np.float32(0), lax.add, (1, 1, 2, 2), (1, 1, 2, 2),
                                                                            "VALID") ** 2).sum()),
     (jnp.asarray(np.random.default_rng(4).normal(size=(2, 3, 6, 6)).astype(np.float32)),), False),
]


@pytest.mark.parametrize("name,fn,arrays,exact", WINDOWED, ids=[c[0] for c in WINDOWED])
def test_convolutions_window_reductions_gathers_and_scatters_on_the_host(name, fn, arrays, exact):
    for g, w in _host_and_xla(fn, arrays):
        if exact:
            np.testing.assert_array_equal(g, w)
        else:   # (sums of gathered windows or overlapping scatters: added in another order)
            np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5 * float(np.abs(w).max()))


def test_a_large_or_batch_grouped_convolution_is_left_to_xla():
    big = jnp.zeros((1, 64, 64, 64), jnp.float32)   # 64 x 64 x 9 x 4096 multiply-adds: more than MAX_CONV_MACS
    assert host_ops.plan(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME"),
                         [big[:, :, :32, :32], jnp.zeros((64, 64, 3, 3), jnp.float32)], limit=None) is None
    x, w = jnp.asarray(_IMG), jnp.zeros((4, 6, 3, 3), jnp.float32)
    assert host_ops.plan(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", batch_group_count=2),
                         [x, w]) is None


@pytest.mark.parametrize("window, strides, dilation", [((3, 3), (1, 1), (1, 1)), ((7, 6), (2, 1), (1, 1)),
                                                       ((2, 3), (1, 2), (2, 1)), ((9, 8), (1, 1), (1, 1))])
def test_a_convolutions_columns_are_the_same_gathered_by_offset_or_by_position(window, strides, dilation):
    x = np.random.default_rng(5).normal(size=(2, 3, 9, 8)).astype(np.float32)
    by_offset, out = host_compute._columns(x, [2, 3], window, strides, dilation, by_position=False)
    by_position, out2 = host_compute._columns(x, [2, 3], window, strides, dilation, by_position=True)
    assert out == out2 and by_offset.shape == (2, 3, int(np.prod(window)), int(np.prod(out)))
    np.testing.assert_array_equal(by_offset, by_position)
