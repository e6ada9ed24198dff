"""cellkit.nn.optim.host_steps: a small model's first eager updates are computed with NumPy."""

import numpy as np
import pytest

import cellkit as ms
from cellkit import host_ops, nn
from cellkit.nn.optim import host_steps
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
    rows = host_steps.MAX_ELEMENTS // 64 + 1
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
