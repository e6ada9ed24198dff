"""cellkit.eager_jit and engine.backward: eager ops and eager backward passes as one executable each,
with PyNative's semantics (Python runs with concrete values, same results, errors and warnings)."""

import contextlib
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from compile_count import compiles

import cellkit as ms
from cellkit import eager_jit, host_ops, nn, ops
from cellkit.eager_jit import eager_jit as wrap


@contextlib.contextmanager
def eager_jit_off():
    eager_jit.set_enabled(False)
    try:
        yield
    finally:
        eager_jit.set_enabled(True)


@contextlib.contextmanager
def host_compute_off():
    # (small ops that compute would run with NumPy, compiling nothing: cellkit.host_compute)
    host_ops.set_compute(False)
    try:
        yield
    finally:
        host_ops.set_compute(True)


@host_compute_off()
def test_a_multi_primitive_op_is_one_executable_with_the_same_values():
    def op(x, axis=-1):
        e = jnp.exp(x - jnp.max(x, axis=axis, keepdims=True))
        return e / jnp.sum(e, axis=axis, keepdims=True) * 2.0 + 1.0
    x = jnp.asarray(np.random.default_rng(0).normal(size=(7, 13)), jnp.float32)
    with eager_jit_off(), compiles() as plain:
        expected = op(x, axis=0)
    fused = wrap(op)
    y = jnp.asarray(np.random.default_rng(1).normal(size=(11, 5)), jnp.float32)
    with compiles() as one:
        got = fused(y, axis=0)
    assert plain["n"] >= 4 and one["n"] == 1
    np.testing.assert_allclose(fused(x, axis=0), expected, rtol=1e-6)
    y1 = y + 1
    with compiles() as again:
        fused(y1, axis=0)
    assert again["n"] == 0 and got.shape == (11, 5)


def test_registered_ops_and_tensor_methods_are_wrapped_and_stateful_families_are_not():
    assert getattr(ops.softmax, "_cellkit_eager_wrapped", False)
    assert getattr(ops.function.math_func.addcmul, "_cellkit_eager_wrapped", False)
    assert not getattr(ops.function.random_func.dropout, "_cellkit_eager_wrapped", False)
    assert not getattr(ops.function.parameter_func.assign_add, "_cellkit_eager_wrapped", False)
    x = ms.Tensor([1.0, 2.0])
    assert getattr(type(x).unsqueeze, "_cellkit_eager_wrapped", False)
    assert not getattr(type(x).asnumpy, "_cellkit_eager_wrapped", False)


def test_a_parameter_argument_reaches_the_op_itself():
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    p = ms.Parameter(ms.Tensor(table), name="table_eager")
    out = ops.embedding(ms.Tensor([0, 2], ms.int32), p, max_norm=1.0)   # renormalises the used rows in place
    assert np.all(np.linalg.norm(np.asarray(p.value)[[0, 2]], axis=1) <= 1.0 + 1e-5)
    np.testing.assert_allclose(out, np.asarray(p.value)[[0, 2]], rtol=1e-6)


def test_an_op_reading_a_parameter_or_the_key_stream_runs_op_by_op():
    w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w_eager")

    @wrap
    def scaled(x):
        return x * w.value

    assert np.allclose(scaled(jnp.ones(2)), [1.0, 2.0])
    w.set_data(ms.Tensor([3.0, 4.0]))
    assert np.allclose(scaled(jnp.ones(2)), [3.0, 4.0])    # never a stale constant

    @wrap
    def noisy(x):
        return x + ms.ops.randn(x.shape)

    ms.set_seed(1)
    a = noisy(jnp.zeros(3))
    b = noisy(jnp.zeros(3))
    assert not np.allclose(a, b)                          # a fresh draw on every call
    ms.set_seed(1)
    assert np.allclose(noisy(jnp.zeros(3)), a)


def test_python_values_warnings_and_value_checks_stay_eager():
    @wrap
    def size(x):
        return x.size * 2
    assert size(jnp.ones(3)) == 6 and type(size(jnp.ones(3))) is int

    @wrap
    def warns(x):
        warnings.warn("every call")
        return x + 1
    for _ in range(2):
        with pytest.warns(UserWarning, match="every call"):
            warns(jnp.ones(2))

    logits, labels = jnp.zeros((2, 3), jnp.float32), ms.Tensor([0, 5], ms.int32)
    with eager_jit_off(), pytest.raises(Exception) as plain:
        ops.nll_loss(logits, labels)
    with pytest.raises(type(plain.value)) as fused:
        ops.nll_loss(logits, labels)
    assert str(fused.value) == str(plain.value)


@host_compute_off()
def test_a_changing_float_compiles_max_static_executables_then_runs_op_by_op():
    @wrap
    def scale(x, s, power=1):
        return jnp.sin(x) ** power * s
    x = jnp.ones(3)
    before = eager_jit.stats()["compiled"]
    with compiles() as c:
        for i in range(eager_jit.MAX_STATIC + 6):
            assert np.allclose(scale(x, 0.5 + i), np.sin(1.0) * (0.5 + i))
    assert eager_jit.stats()["compiled"] - before == eager_jit.MAX_STATIC
    assert c["n"] <= eager_jit.MAX_STATIC + 3
    # Only that call form: a value compiled before keeps its executable, another form is compiled whole.
    with compiles() as c:
        assert np.allclose(scale(x, 0.5), np.sin(1.0) * 0.5)
    assert c["n"] == 0
    with compiles() as c:
        assert np.allclose(scale(x, 0.5, power=2), np.sin(1.0) ** 2 * 0.5)
    assert c["n"] == 1 and eager_jit.stats()["compiled"] - before == eager_jit.MAX_STATIC + 1


def test_an_op_the_host_runs_stays_there_whatever_floats_it_saw_before():
    # (which calls run on the host depends on the op and the call, never on the calls before it)
    @wrap
    def scale(x, s):
        return jnp.sin(x) * s
    with host_compute_off():
        for i in range(eager_jit.MAX_STATIC + 4):
            scale(jnp.ones(3), 0.25 + i)
    x = jnp.arange(12, dtype=jnp.float32).reshape(3, 4)
    with compiles() as c:
        y = scale(x, 100.5)
        value, grad = ms.value_and_grad(lambda a: scale(a, 7.5).sum())(x)
    assert c["n"] == 0
    np.testing.assert_allclose(y, np.sin(np.arange(12, dtype=np.float32)).reshape(3, 4) * 100.5, rtol=1e-6)
    np.testing.assert_allclose(grad, np.cos(np.asarray(x)) * 7.5, rtol=1e-6)
    np.testing.assert_allclose(value, (np.sin(np.asarray(x)) * 7.5).sum(), rtol=1e-5)


def test_inside_a_trace_the_op_is_called_directly():
    calls = []

    @wrap
    def op(x):
        calls.append(type(x))
        return x * 2
    jaxpr = jax.make_jaxpr(op)(jnp.ones(2))
    assert "pjit" not in str(jaxpr) and issubclass(calls[-1], jax.core.Tracer)
    assert np.allclose(ms.jit(lambda x: op(x) + 1)(jnp.ones(2)), 3.0)


class _Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(4, 8, weight_init="normal")
        self.fc2 = nn.Dense(8, 2, weight_init="normal")

    def construct(self, x):
        return self.fc2(ops.tanh(self.fc1(x)))


def test_the_eager_backward_is_one_executable_per_structure_with_pynative_semantics():
    net = _Net()
    seen = []

    def forward(x, y):
        loss = ops.mean((net(x) - y) ** 2)
        seen.append(loss.shape)                   # Python runs on every call
        if loss > 0:                              # a comparison with a concrete value
            loss = loss * 1.0
        return loss

    grad_fn = ms.value_and_grad(forward, None, net.trainable_params())
    x, y = jnp.ones((3, 4)) * 0.3, jnp.zeros((3, 2))
    x1 = x + 1
    with eager_jit_off():
        loss0, g0 = grad_fn(x, y)
    loss1, g1 = grad_fn(x, y)
    for a, b in zip(g0, g1):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    with compiles() as c:
        grad_fn(x1, y)
    assert c["n"] == 0 and len(seen) == 3 and loss0 == loss1

    def raw(ws, x):
        h = jnp.tanh(x @ ws[0].T + ws[1])
        return jnp.mean((h @ ws[2].T + ws[3] - y) ** 2)
    ws = [p.value for p in net.trainable_params()]
    for a, b in zip(g1, jax.grad(raw)(ws, x)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_a_backward_running_python_stays_op_by_op():
    calls = []

    class Doubled(nn.Cell):
        def construct(self, x):
            return x * 3

        def bprop(self, x, out, dout):
            calls.append(float(jnp.sum(dout)))     # concrete values, every backward pass
            return (dout * 2,)

    cell = Doubled()
    g = ms.grad(lambda x: ops.sum(cell(x)))
    for _ in range(2):
        assert np.allclose(g(jnp.ones(3)), 2.0)
    assert calls == [3.0, 3.0]


def test_an_op_traced_again_for_new_shapes_keeps_its_values(monkeypatch):
    # After its first trace shows no loop, an op's family (the op, its static arguments) is traced with
    # JAX's jitted functions inline (cellkit.tracing), on the host and under an eager grad alike.
    from cellkit import tracing
    monkeypatch.setattr(tracing, "_loop_free", {})

    def attend(q, k, scale=0.5):
        return jax.nn.softmax(jnp.matmul(q, k.T) * scale, axis=-1) @ k

    op = wrap(attend)
    rng = np.random.default_rng(0)
    for n in (3, 4, 5):
        q, k = (jnp.asarray(rng.normal(size=(n, 8)).astype(np.float32)) for _ in range(2))
        np.testing.assert_allclose(op(q, k, scale=0.25), attend(q, k, scale=0.25), rtol=1e-6, atol=1e-6)
        loss = lambda a, b, f: f(a, b, scale=0.25).sum()   # noqa: E731
        for g, w in zip(jax.grad(loss, (0, 1))(q, k, op), jax.grad(loss, (0, 1))(q, k, attend)):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    families = [f for f in tracing._loop_free if attend in (f[0], f[1][0])]
    assert len(families) == 2 and all(tracing._loop_free[f] for f in families)   # (host plan, JVP split)
