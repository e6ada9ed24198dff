"""cellkit.host_steps: a small model's first eager optimizer updates and backward passes are computed with NumPy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit import host_ops, nn
from cellkit import host_steps
from compile_count import compiles

OPTIMIZERS = {
    "Adam": lambda ps: nn.Adam(ps, learning_rate=0.01),
    "AdamWeightDecay": lambda ps: nn.AdamWeightDecay(ps, learning_rate=0.01, weight_decay=0.1),
    "Momentum": lambda ps: nn.Momentum(ps, learning_rate=0.1, momentum=0.9),
    "SGD": lambda ps: nn.SGD(ps, learning_rate=0.1, weight_decay=0.01),
}


def _setup(make, steps, shapes=((4, 3), (4,))):
    params = [ms.Parameter(np.linspace(-1, 1, int(np.prod(s)), dtype=np.float32).reshape(s), name=f"p{i}")
              for i, s in enumerate(shapes)]
    rng = np.random.default_rng(0)
    grads = [tuple(ms.Tensor(rng.normal(size=p.shape).astype(np.float32)) for p in params) for _ in range(steps)]
    return params, make(params), grads


def _train(make, steps, shapes=((4, 3), (4,))):
    params, opt, grads = _setup(make, steps, shapes)
    for g in grads:
        opt(g)
    return [np.asarray(p.value) for p in params], opt


@pytest.fixture
def restore_host_compute():
    yield
    host_ops.set_compute(True)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_the_first_updates_compile_nothing_and_match_the_compiled_update(name, restore_host_compute):
    params, opt, grads = _setup(OPTIMIZERS[name], 3)
    with compiles() as made:
        for g in grads:
            opt(g)
    assert made["n"] == 0
    got = [np.asarray(p.value) for p in params]
    assert all(plan is not None and plan.calls == 3 for plan in opt._update_fn.plans.values())
    host_ops.set_compute(False)
    want, opt = _train(OPTIMIZERS[name], 3)
    assert all(plan is None for plan in opt._update_fn.plans.values())
    for g, w in zip(got, want):   # (NumPy rounds a * b + c twice, XLA's fused multiply-add once)
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


def test_the_compiled_update_takes_over_after_steps_and_runs_are_repeatable():
    params = [ms.Parameter(np.ones((5, 2), np.float32), name="w")]
    opt = OPTIMIZERS["Adam"](params)
    grads = (ms.Tensor(np.full((5, 2), 0.5, np.float32)),)
    opt(grads)
    with compiles() as on_host:
        for _ in range(host_steps.STEPS - 1):
            opt(grads)
    with compiles() as taking_over:
        opt(grads)
    assert on_host["n"] == 0 and taking_over["n"] >= 1
    assert [plan.calls for plan in opt._update_fn.plans.values()] == [host_steps.STEPS]
    first, _ = _train(OPTIMIZERS["Adam"], host_steps.STEPS + 3)
    again, _ = _train(OPTIMIZERS["Adam"], host_steps.STEPS + 3)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)


def test_a_large_model_is_compiled_from_the_first_update():
    rows = host_steps.MAX_ELEMENTS // 64 // 3 + 1   # (parameters, gradients and momenta)
    _, opt = _train(OPTIMIZERS["Momentum"], 1, shapes=((rows, 64),))
    assert opt._update_fn.plans == {}


def test_inside_jit_the_update_is_the_compiled_one():
    params = [ms.Parameter(np.ones((3,), np.float32), name="w")]
    opt = nn.Momentum(params, learning_rate=0.1, momentum=0.9)

    @ms.jit
    def step(g):
        opt((g,))
        return params[0].value

    out = step(ms.Tensor(np.ones(3, np.float32)))
    np.testing.assert_allclose(np.asarray(out), 0.9, rtol=1e-6)
    assert opt._update_fn.plans == {}


class _ConvNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, weight_init="normal")
        self.pool = nn.MaxPool2d(2, 2)
        self.dense = nn.Dense(4 * 4 * 4, 3, weight_init="normal")

    def construct(self, x):
        return self.dense(_flatten(self.pool(ms.ops.relu(self.conv(x)))))


def _flatten(x):
    return x.reshape(x.shape[0], -1)


def test_a_small_models_first_backward_passes_run_on_the_host_then_compile():
    ms.set_seed(3)
    net = _ConvNet()
    loss_fn = nn.CrossEntropyLoss()
    grad_fn = ms.value_and_grad(lambda x, y: loss_fn(net(x), y), None, net.trainable_params())
    rng = np.random.default_rng(4)
    x = ms.Tensor(rng.normal(size=(2, 2, 8, 8)).astype(np.float32))
    y = ms.Tensor(np.array([0, 2], np.int32))
    grad_fn(x, y)                              # (the first call builds the plans)
    with compiles() as on_host:
        for _ in range(host_steps.STEPS - 2):
            loss, grads = grad_fn(x, y)
    assert on_host["n"] == 0
    names = [p.name for p in net.trainable_params()]
    values = [jnp.asarray(p.value) for p in net.trainable_params()]

    def raw(*ws):   # the same network in raw JAX
        p = dict(zip(names, ws))
        h = jax.lax.conv_general_dilated(jnp.asarray(x), p["conv.weight"], (1, 1), "SAME")   # (no bias: MindSpore's default)
        h = jax.lax.reduce_window(jax.nn.relu(h), -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
        logits = h.reshape(2, -1) @ p["dense.weight"].T + p["dense.bias"]
        return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(2), jnp.asarray(y)])
    want_loss, want = jax.value_and_grad(raw, argnums=tuple(range(len(values))))(*values)
    np.testing.assert_allclose(float(loss), float(want_loss), rtol=1e-6)
    for g, w in zip(grads, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6 * float(np.abs(w).max()))
    with compiles() as taking_over:
        for _ in range(3):
            _, later = grad_fn(x, y)
    assert taking_over["n"] >= 1               # the compiled backward pass from the STEPS-th call on
    for g, w in zip(later, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6 * float(np.abs(w).max()))


def test_the_update_is_traced_with_jax_functions_inline_and_python_loops_give_the_same_values():
    # (traced under jax.disable_jit: jnp's jitted functions are inlined, not traced per shape)
    params, opt, grads = _setup(OPTIMIZERS["Adam"], 1)
    opt(grads[0])
    (plan,) = opt._update_fn.plans.values()
    assert isinstance(plan, host_ops.Plan) and plan.calls == 1
    assert not [e for e in plan.jaxpr.jaxpr.eqns if e.primitive.name in ("pjit", "jit")]

    def looped(x):
        return jax.lax.fori_loop(0, 3, lambda i, c: c * 2.0 + i, x) + jnp.sum(x)
    step = host_steps.HostFirst(jax.jit(looped))
    x = jnp.arange(4.0, dtype=jnp.float32)
    with compiles() as made:
        got = step(x)
    assert made["n"] == 0
    np.testing.assert_array_equal(np.asarray(got), np.asarray(jax.jit(looped)(x)))
