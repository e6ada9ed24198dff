"""cellkit.host_ops: eager data-movement ops run with NumPy give XLA's bits, with no compilation per shape,
and only where that is the same computation."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from compile_count import compiled_names, compiles

import cellkit as ms
from cellkit import eager_jit, host_ops, ops


def _data(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape).astype(dtype)
    if np.dtype(dtype).kind == "f" and x.size >= 4:   # bits NumPy and XLA could treat differently
        flat = x.reshape(-1)
        flat[:4] = [np.nan, -0.0, np.finfo(dtype).smallest_subnormal, np.inf]
    return jnp.asarray(x)


# (name, function of the arrays, input shapes): each only moves data.
MOVES = [
    ("reshape", lambda a: jnp.reshape(a, (-1, 3)), [(5, 6)]),
    ("swapaxes", lambda a: jnp.swapaxes(a, 0, 2), [(2, 3, 5)]),
    ("transpose", lambda a: jnp.transpose(a, (1, 2, 0)), [(2, 3, 5)]),
    ("concatenate", lambda a, b: jnp.concatenate([a, b], axis=1), [(2, 3, 4), (2, 1, 4)]),
    ("stack", lambda a, b: jnp.stack([a, b], axis=-1), [(3, 4), (3, 4)]),
    ("split", lambda a: jnp.split(a, [1, 3], axis=1), [(2, 5)]),
    ("squeeze", lambda a: jnp.squeeze(a, 1), [(3, 1, 4)]),
    ("expand_dims", lambda a: jnp.expand_dims(a, (0, 2)), [(3, 4)]),
    ("broadcast_to", lambda a: jnp.broadcast_to(a, (2, 3, 4)), [(3, 1)]),
    ("strided slice", lambda a: a[1:, ::2, -3:], [(4, 7, 5)]),
    ("index", lambda a: a[:, -1], [(3, 6)]),
    ("flip", lambda a: jnp.flip(a, (0, 1)), [(3, 4)]),
    ("tile", lambda a: jnp.tile(a, (2, 1, 3)), [(2, 3)]),
    ("where on a bool mask", lambda a, b, m: jnp.where(m, a, b), [(3, 4), (3, 4), "mask"]),
    ("dynamic slice, clamped", lambda a: jax.lax.dynamic_slice(a, (5, -2), (3, 2)), [(6, 4)]),
    ("dynamic slice at an array index", lambda a, i: jax.lax.dynamic_slice_in_dim(a, i, 2, axis=1), [(3, 5), "index"]),
    ("zeros", lambda: jnp.zeros((3, 5), jnp.float32), []),
    ("int arange", lambda: jnp.arange(7, dtype=jnp.int32), []),
]


@pytest.mark.parametrize("name,fn,shapes", MOVES, ids=[m[0] for m in MOVES])
def test_a_data_movement_op_gives_xlas_bits_without_compiling(name, fn, shapes):
    special = {"mask": jnp.asarray(np.arange(12).reshape(3, 4) % 3 == 0), "index": jnp.asarray(np.int32(4))}
    arrays = [special[s] if isinstance(s, str) else _data(s, seed=i) for i, s in enumerate(shapes)]
    plan = host_ops.plan(fn, arrays)
    assert plan is not None, f"{name}: expected a host plan"
    with compiles() as made:
        got = host_ops.run(plan, arrays)
    assert made["n"] == 0
    want = jax.jit(fn)(*arrays)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert type(g) is type(w) and g.dtype == w.dtype and g.shape == w.shape and not g.weak_type
        np.testing.assert_array_equal(np.asarray(g).view(np.uint8), np.asarray(w).view(np.uint8))


COMPUTES = [
    ("add", lambda a: a + a),
    ("multiply by a constant", lambda a: a * 2.0),
    ("float to int", lambda a: a.astype(jnp.int32)),
    ("float32 to float16", lambda a: a.astype(jnp.float16)),
    ("comparison", lambda a: a > 0),
    ("sum", lambda a: a.sum(0)),
    ("a weakly typed result", lambda a: jnp.reshape(a, (-1,))[0] * 0 + 1.0),
]


@pytest.mark.parametrize("name,fn", COMPUTES, ids=[c[0] for c in COMPUTES])
def test_arithmetic_and_inexact_conversions_are_never_exact_plans(name, fn):
    # With host computing off, nothing that computes is planned; with it on (cellkit.host_compute), a plan
    # that computes is never marked exact, so it is never swapped for a compiled executable mid-run.
    host_ops.set_compute(False)
    try:
        assert host_ops.plan(fn, [_data((3, 4))]) is None
    finally:
        host_ops.set_compute(True)
    p = host_ops.plan(fn, [_data((3, 4))])
    assert not (isinstance(p, host_ops.Plan) and p.exact)


def test_integer_arithmetic_and_conversions_are_exact_on_the_host():
    x = jnp.asarray(np.array([-3, 2 ** 31 - 1, 7, -(2 ** 31)], np.int32))
    for fn in (lambda a: a.astype(jnp.int8), lambda a: a.astype(jnp.uint32), lambda a: (a > 0).astype(jnp.float32),
               lambda a: a + jnp.int32(1),   # wraps at 2**31 - 1, as XLA does
               lambda a: jnp.maximum(a - 5, jnp.int32(-4)) == a):
        p = host_ops.plan(fn, [x])
        assert isinstance(p, host_ops.Plan)
        got, want = host_ops.run(p, [x]), jax.jit(fn)(x)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_only_small_uncommitted_cpu_arrays_outside_a_trace_are_usable():
    small = jnp.zeros((4, 4))
    assert host_ops.usable([small])
    assert host_ops.usable([jnp.zeros((host_ops.MAX_ELEMENTS + 1,))])       # (plan then asks more of it)
    assert not host_ops.usable([jnp.zeros((host_ops.MAX_INPUT_ELEMENTS + 1,))])
    assert not host_ops.usable([jax.device_put(np.zeros((4, 4), np.float32), jax.devices()[0])])   # committed
    seen = []
    jax.jit(lambda a: seen.append(host_ops.usable([small])) or a)(small)
    assert seen == [False]


def test_a_host_result_never_shares_the_input_buffer():
    x = jnp.asarray(np.arange(12, dtype=np.float32))
    p = host_ops.plan(lambda a: jnp.reshape(a, (3, 4)), [x])
    y = host_ops.run(p, [x])
    jax.jit(lambda a: a * 0, donate_argnums=0)(x)   # the input's buffer may now be reused
    np.testing.assert_array_equal(y, np.arange(12, dtype=np.float32).reshape(3, 4))


def test_a_growing_concatenation_compiles_nothing_until_a_shape_is_hot():
    cache = ops.zeros((1, 0, 6), ms.float32)
    step = ms.Tensor(np.ones((1, 1, 6), np.float32))
    before = eager_jit.stats()["host"]
    with compiles() as made:
        for _ in range(23):
            cache = ops.cat((cache, step), axis=1)
            swapped = cache.swapaxes(1, 2)
    assert made["n"] == 0
    assert cache.shape == (1, 23, 6) and swapped.shape == (1, 6, 23)
    assert eager_jit.stats()["host"] - before >= 23
    # A signature called HOT times is compiled once, and gives the same result.
    a = ms.Tensor(np.arange(3 * 29, dtype=np.float32).reshape(3, 29))
    first = ops.cat((a, a), axis=0)
    with compiles(fresh=False) as made:
        for _ in range(host_ops.HOT + 2):
            last = ops.cat((a, a), axis=0)
    assert made["n"] == 1
    np.testing.assert_array_equal(first, last)


def test_under_an_eager_grad_and_inside_jit_the_op_is_traced_as_before():
    w = ms.Parameter(ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)), name="w")

    def loss(x):
        return (ops.cat((x, w.value), axis=0).swapaxes(0, 1) ** 2).sum()

    x = ms.Tensor(np.ones((1, 3), np.float32))
    g = ms.grad(loss)(x)
    np.testing.assert_allclose(g, 2 * np.ones((1, 3)))
    np.testing.assert_allclose(ms.jit(ms.grad(loss))(x), g)


def test_tensor_methods_move_data_on_the_host_and_hand_back_an_unchanged_input_itself():
    x = ms.Tensor(np.arange(2 * 3 * 37, dtype=np.float32).reshape(2, 3, 37))
    with compiles() as made:
        r = x.reshape(6, 37)
        s = x.swapaxes(0, 2)
        t = x.transpose(2, 0, 1)
        q = x.reshape(2, 3, 1, 37).squeeze(2)
        i = ms.Tensor(np.arange(41, dtype=np.int32)).astype(ms.int8)
    assert made["n"] == 0
    np.testing.assert_array_equal(r, np.asarray(x).reshape(6, 37))
    np.testing.assert_array_equal(s, np.asarray(x).swapaxes(0, 2))
    np.testing.assert_array_equal(t, np.asarray(x).transpose(2, 0, 1))
    np.testing.assert_array_equal(q, np.asarray(x))
    assert i.dtype == np.int8 and i[-1] == 40
    assert x.astype(ms.float32) is x and x.reshape(2, 3, 37) is x   # as JAX does: no copy
    assert host_ops.plan(lambda a: a.astype(jnp.float32), [x]) is host_ops.PASSTHROUGH


def test_an_input_handed_back_with_computed_outputs_is_the_array_itself():
    # (an eval-mode normalisation gives back its moving statistics: it runs on the host all the same)
    x, stat = jnp.asarray(np.arange(6, dtype=np.float32)), jnp.asarray(np.ones(3, np.float32))
    p = host_ops.plan(lambda a, s: (a * 2 + 1, s, a), [x, stat])
    assert isinstance(p, host_ops.Plan)
    y, s, a = host_ops.run(p, [x, stat])
    assert s is stat and a is x
    np.testing.assert_array_equal(y, np.arange(6) * 2 + 1)


def _attention_like(x, w):
    h = ops.matmul(x, w)                                   # (2, 5, 12)
    q, k, v = ops.split(h.reshape(2, 5, 3, 4).transpose(2, 0, 1, 3), 1, axis=0)
    q, k, v = q.squeeze(0), k.squeeze(0), v.squeeze(0)
    s = ops.softmax(ops.matmul(q, k.swapaxes(-1, -2)), axis=-1)
    return (ops.cat((ops.matmul(s, v), q), axis=-1) ** 2).sum()


def test_under_an_eager_grad_data_movement_is_on_the_host_and_the_gradient_is_unchanged():
    rng = np.random.default_rng(3)
    x = ms.Tensor(rng.normal(size=(2, 5, 6)).astype(np.float32))
    w = ms.Tensor(rng.normal(size=(6, 12)).astype(np.float32))
    before = eager_jit.stats()["host"]
    got = ms.grad(_attention_like, grad_position=(0, 1))(x, w)
    assert eager_jit.stats()["host"] > before          # the forward's reshapes, splits, ... planned
    eager_jit.set_enabled(False)
    try:
        want = ms.grad(_attention_like, grad_position=(0, 1))(x, w)
    finally:
        eager_jit.set_enabled(True)
    # (the backward pass of a small model runs on the host too: its sums add in another order)
    for g, r in zip(got, want):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6 * float(np.abs(r).max()))
    ref = jax.grad(lambda a, b: _attention_like(a, b), argnums=(0, 1))(jnp.asarray(x), jnp.asarray(w))
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6 * float(np.abs(r).max()))


def test_forward_mode_and_second_order_through_host_moved_ops():
    x = jnp.asarray(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
    t = jnp.ones_like(x)

    def f(a):
        return (ops.cat((a, a.swapaxes(0, 1).reshape(3, 4)), axis=0) ** 3).sum()

    primal, tangent = jax.jvp(f, (x,), (t,))
    ref_p, ref_t = jax.jvp(lambda a: (jnp.concatenate([a, a.T.reshape(3, 4)]) ** 3).sum(), (x,), (t,))
    np.testing.assert_allclose(primal, ref_p, rtol=1e-6)
    np.testing.assert_allclose(tangent, ref_t, rtol=1e-6)
    hess = jax.grad(lambda a: jax.grad(f)(a).sum())(x)   # the inner grad's primals are tracers: traced as before
    ref_h = jax.grad(lambda a: jax.grad(lambda b: (jnp.concatenate([b, b.T.reshape(3, 4)]) ** 3).sum())(a).sum())(x)
    np.testing.assert_allclose(hess, ref_h, rtol=1e-5)


def test_a_result_too_big_or_weakly_typed_is_left_to_jax_for_that_signature_only():
    x = jnp.arange(4.0, dtype=jnp.float32)
    assert host_ops.plan(lambda a: jnp.broadcast_to(a, (host_ops.MAX_ELEMENTS, 4)), [x]) is host_ops.UNSUITED
    assert host_ops.plan(lambda a: jnp.cumsum(jnp.reshape(a, (2, 2)), 0), [x]) is host_ops.NEVER

    @eager_jit.eager_jit
    def widen(a, n):
        return jnp.broadcast_to(a, (n, 4))

    big = widen(x, host_ops.MAX_ELEMENTS)          # compiled: too big a result for the host
    before = eager_jit.stats()["host"]
    small = widen(x, 3)                            # a new signature of the same op: on the host
    assert eager_jit.stats()["host"] == before + 1
    np.testing.assert_array_equal(big[-1], x)
    np.testing.assert_array_equal(small, np.broadcast_to(np.arange(4.0), (3, 4)))


def _conv(x, w):
    return jax.lax.conv_general_dilated(x, w, (1, 1), [(1, 1), (1, 1)], dimension_numbers=("NCHW", "OIHW", "NCHW"))


def test_large_inputs_run_here_only_where_the_op_contracts_them_into_small_arrays():
    # A layer's 3x3 convolution of 256 channels: 589,824 weights (more than MAX_ELEMENTS), small results.
    x, w = _data((1, 256, 4, 4), seed=1), _data((256, 256, 3, 3), seed=2)
    assert w.size > host_ops.MAX_ELEMENTS and host_ops.usable([x, w])
    p = host_ops.plan(_conv, [x, w])
    assert isinstance(p, host_ops.Plan) and not p.exact
    ok = lambda a: jnp.where(jnp.isfinite(a), a, 0.0)   # (the special values _data puts first)
    x, w = ok(x), ok(w)
    np.testing.assert_allclose(host_ops.run(host_ops.plan(_conv, [x, w]), [x, w]), _conv(x, w), rtol=1e-5, atol=1e-4)
    # ... but not an op that computes over them element by element, nor a large result, nor larger inputs
    assert host_ops.plan(lambda a: (a * 2.0).sum(), [w]) is None
    assert host_ops.plan(lambda a, b: _conv(a, b).sum() + (b * b).sum(), [x, w]) is None
    assert host_ops.plan(lambda a: a.T.reshape(-1, 9)[:3], [w]) is not None       # (views, a small slice)
    assert host_ops.plan(lambda a: a * 2.0, [w]) is None
    too_big = jnp.zeros((host_ops.MAX_INPUT_ELEMENTS + 1,), jnp.float32)
    assert not host_ops.usable([too_big])


def test_an_eager_layer_with_large_weights_compiles_nothing():
    rng = np.random.default_rng(0)
    net = ms.nn.Conv2d(256, 256, 3, pad_mode="pad", padding=1, has_bias=True,
                       weight_init=ms.Tensor(rng.normal(size=(256, 256, 3, 3)).astype(np.float32)),
                       bias_init=ms.Tensor(rng.normal(size=(256,)).astype(np.float32)))
    x = ms.Tensor(rng.normal(size=(1, 256, 4, 4)).astype(np.float32))
    with compiles() as made:
        y = net(x)
    assert made["n"] == 0
    ref = _conv(jnp.asarray(x), net.weight.value) + net.bias.value.reshape(1, -1, 1, 1)
    np.testing.assert_allclose(y.asnumpy(), ref, rtol=1e-5, atol=1e-4)
    with compiles() as made:
        z = ms.ops.abs(x.reshape(-1))   # (no weight: under MAX_ELEMENTS, as before)
    assert made["n"] == 0 and z.shape == (4096,)


def test_an_output_given_twice_gets_two_buffers():
    # (one buffer behind two arrays would let a donation of one corrupt the other)
    x = jnp.ones((2, 3))
    p = host_ops.plan(lambda a: (lambda y: (y, y))(a * 3), [x])
    assert p.jaxpr.jaxpr.outvars[0] is p.jaxpr.jaxpr.outvars[1]
    a, b = host_ops.run(p, [x])
    assert a.unsafe_buffer_pointer() != b.unsafe_buffer_pointer()
    np.testing.assert_array_equal(a, b)


INDICES = [(slice(None), -1), 0, -1, (Ellipsis, 1), (slice(0, 2), slice(None, None, -1)), (None, 1), (0, 1, 2),
           (slice(1, None, 2),), (slice(None), None, slice(3, 0, -2))]


def test_indexing_a_small_array_moves_data_on_the_host():
    data = np.arange(2 * 3 * 43, dtype=np.float32).reshape(2, 3, 43)
    x = ms.Tensor(data)
    with compiles() as made:
        got = [x[index] for index in INDICES]
    assert made["n"] == 0
    for index, g in zip(INDICES, got):
        np.testing.assert_array_equal(g, data[index])
        assert g.dtype == data[index].dtype
    # Array and boolean indices: JAX's own indexing, the same values as NumPy's.
    np.testing.assert_array_equal(x[ms.Tensor(np.array([1, 0], np.int32))], data[[1, 0]])
    np.testing.assert_array_equal(x[x > 200], data[data > 200])
    # On tracers: a staging trace indexes as before; an eager grad's gradient is unchanged.
    np.testing.assert_array_equal(jax.jit(lambda a: a[:, -1])(x), data[:, -1])
    g = jax.grad(lambda a: (a[1, ::-1] ** 2).sum())(x)
    want = np.zeros_like(data)
    want[1] = 2 * data[1]
    np.testing.assert_array_equal(g, want)


def test_under_an_eager_grad_concrete_arrays_move_on_the_host_but_inside_jit_they_are_staged():
    seen = []

    def loss(w, labels):
        seen.append(host_ops.ready())
        flat = labels.reshape(-1)   # (concrete: not differentiated)
        return ((w * flat.astype(jnp.float32)) ** 2).sum()

    w = ms.Tensor(np.arange(1, 7, dtype=np.float32))
    labels = ms.Tensor(np.arange(6, dtype=np.int32).reshape(2, 3))
    with compiled_names() as made:
        g = ms.grad(loss)(w, labels)
    assert seen == [True] and not {"reshape", "convert_element_type", "astype"} & set(made)   # (on the host)
    np.testing.assert_array_equal(g, 2 * np.arange(1, 7) * np.arange(6) ** 2)
    np.testing.assert_array_equal(jax.jit(jax.grad(loss))(w, labels), g)
    assert seen[1:] == [False]   # (under jit, a grad's concrete arrays are staged: nothing on the host)
    seen.clear()
    jax.vmap(lambda a: loss(a, labels))(jnp.stack([w, w]))
    assert seen == [False]   # (nor under a batching trace)


REDUCTIONS = {   # name: (call, NumPy's, exact)
    "sum": (lambda a: a.sum(), lambda a: a.sum(), False),
    "sum, MindSpore's keepdim": (lambda a: a.sum(1, keepdim=True), lambda a: a.sum(1, keepdims=True), False),
    "mean": (lambda a: a.mean(axis=1), lambda a: a.mean(axis=1), False),
    "max": (lambda a: a.max(axis=0), lambda a: a.max(axis=0), True),
    "min": (lambda a: a.min(), lambda a: a.min(), True),
    "prod": (lambda a: a.prod(axis=1), lambda a: a.prod(axis=1), False),
    "argmax": (lambda a: a.argmax(axis=1), lambda a: a.argmax(axis=1), True),
    "argmin": (lambda a: a.argmin(), lambda a: a.argmin(), True),
    "std": (lambda a: a.std(axis=1), lambda a: a.std(axis=1), False),
    "var": (lambda a: a.var(), lambda a: a.var(), False),
    "all": (lambda a: (a > -1).all(axis=0), lambda a: (a > -1).all(axis=0), True),
    "any": (lambda a: (a > 1).any(), lambda a: (a > 1).any(), True),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_tensor_reductions_of_a_small_array_compile_nothing(name):
    call, numpy_call, exact = REDUCTIONS[name]
    data = np.random.default_rng(3).normal(size=(3, 41)).astype(np.float32)
    x = ms.Tensor(data)
    with compiles() as made:
        got = call(x)
    assert made["n"] == 0
    want = numpy_call(data)
    assert got.shape == np.shape(want)
    if exact:
        np.testing.assert_array_equal(got, want)
    else:   # (the host sums in NumPy's order: float32 rounding apart from XLA's)
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(jax.jit(call)(x), got, rtol=2e-6, atol=1e-6)   # (staged as before under jit)


def test_the_transposing_properties_move_data_on_the_host():
    data = np.arange(2 * 3 * 47, dtype=np.float32).reshape(2, 3, 47)
    x = ms.Tensor(data)
    with compiles() as made:
        t, mt, t2 = x.T, x.mT, x[1].T
    assert made["n"] == 0
    np.testing.assert_array_equal(t, data.T)
    np.testing.assert_array_equal(mt, np.swapaxes(data, -1, -2))
    np.testing.assert_array_equal(t2, data[1].T)
    assert jax.jit(lambda a: a.T)(x).shape == (47, 3, 2)   # (staged as before)
    np.testing.assert_array_equal(jax.grad(lambda a: (a.T * np.arange(47.0)[:, None, None]).sum())(x),
                                  np.broadcast_to(np.arange(47.0, dtype=np.float32), data.shape))


def test_a_small_numpy_operand_of_jaxs_own_operators_and_indexing_is_an_input_too():
    rng = np.random.default_rng(5)
    data, other = (rng.normal(size=(5, 53)).astype(np.float32) for _ in range(2))
    x = ms.Tensor(data)
    index = np.array([0, 2, -1])
    with compiles() as made:
        added, reflected, compared, picked = x + other, other * x, x > other, x[index]
    assert made["n"] == 0
    np.testing.assert_array_equal(added, data + other)
    np.testing.assert_array_equal(reflected, other * data)
    np.testing.assert_array_equal(compared, data > other)
    np.testing.assert_array_equal(picked, data[index])
    kept = np.asarray(added).copy()
    other[...] = 0   # (the NumPy array was copied: a result made from it does not change)
    np.testing.assert_array_equal(added, kept)
    np.testing.assert_array_equal(x + other, data)
    # Where a NumPy array must stay a value (a shape, a boolean mask), JAX's own call gives the result.
    np.testing.assert_array_equal(x.reshape(np.array([53, 5])), data.reshape(53, 5))
    mask = np.arange(5) % 2 == 0
    np.testing.assert_array_equal(x[mask], data[mask])
