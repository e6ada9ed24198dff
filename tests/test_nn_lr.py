"""Learning-rate schedules (``nn.learning_rate_schedule``) and lists (``nn.dynamic_lr``) against MindSpore 2.10.

The references are in tests/fixtures/mindspore/lr_{schedules,dynamic}.json, recorded
by tests/fixtures/record/record_lr.py.
"""

import builtins
import importlib

import jax.numpy as jnp
import numpy as np
import optax
import pytest

import cellkit as ms
from cellkit import nn
from ms_fixtures import load

SCHEDULES = load("lr_schedules")
DYNAMIC = load("lr_dynamic")
STEPS = SCHEDULES["steps"]["output"]


def _build(name):
    cls = getattr(nn, name.split("(")[0])
    case = SCHEDULES[name]
    return cls(*case["inputs"], **case["kwargs"])


SCHEDULE_CASES = sorted(k for k, v in SCHEDULES.items() if "(" in k and "SGD" not in k)


@pytest.mark.parametrize("name", SCHEDULE_CASES)
def test_schedule_matches_mindspore(name):
    case = SCHEDULES[name]
    if "error" in case:
        with pytest.raises(getattr(builtins, case["error"])):
            _build(name)
        return
    lr = _build(name)
    eager = np.array([np.asarray(lr(ms.Tensor(int(s), ms.int32))) for s in STEPS])
    np.testing.assert_allclose(eager.ravel(), case["output"].ravel(), rtol=2e-6, atol=1e-9)
    # The same under jit, stepping a traced global step (as an optimizer calls it), with no retrace.
    fn = ms.jit(lambda s: lr(s))
    traced = np.array([np.asarray(fn(ms.Tensor([int(s)], ms.int32))) for s in STEPS])
    np.testing.assert_allclose(traced.ravel(), case["output"].ravel(), rtol=2e-6, atol=1e-9)
    assert fn.trace_count == 1
    assert lr(ms.Tensor(3, ms.int32)).dtype == jnp.float32
    assert isinstance(lr, nn.LearningRateSchedule) and isinstance(lr, nn.Cell)


@pytest.mark.parametrize("name, make", [
    ("ExponentialDecayLR(0.1,0.9,4,is_stair=True)", lambda: optax.exponential_decay(0.1, 4, 0.9, staircase=True)),
    ("CosineDecayLR(0.01,0.1,8)", lambda: optax.cosine_decay_schedule(0.1, 8, alpha=0.1)),
    ("PolynomialDecayLR(0.1,0.01,5,0.5)", lambda: optax.polynomial_schedule(0.1, 0.01, 0.5, 5)),
    ("WarmUpLR(0.1,5)", lambda: optax.linear_schedule(0.0, 0.1, 5)),
])
def test_schedules_agree_with_optax(name, make):
    sched = make()
    values = [float(sched(int(s))) for s in STEPS]
    np.testing.assert_allclose(values, SCHEDULES[name]["output"].ravel(), rtol=2e-6, atol=1e-9)
    assert _build(name).schedule is not None


def test_schedule_as_optimizer_learning_rate():
    ref = SCHEDULES["SGD(PolynomialDecayLR(0.1,0.01,2,1.0)) 3 steps"]["output"]
    for jit in (False, True):
        w = ms.Parameter(ms.Tensor(np.array([1.0, 2.0], np.float32)), name="w")
        sched = nn.PolynomialDecayLR(0.1, 0.01, 2, 1.0)
        opt = nn.SGD([w], learning_rate=sched)
        step = ms.jit(lambda g: opt(g)) if jit else opt
        out = []
        for _ in range(3):
            step((ms.Tensor(np.array([0.1, -0.2], np.float32)),))
            out.append(w.asnumpy())
        np.testing.assert_allclose(out, ref, rtol=1e-6)
        assert opt.get_lr_parameter(w) is sched
        np.testing.assert_allclose(opt.get_lr(), 0.01, rtol=1e-6)  # at step 3, past the decay


def test_schedule_errors_name_the_argument():
    with pytest.raises(TypeError, match="For 'ExponentialDecayLR', the 'learning_rate' must be float"):
        nn.ExponentialDecayLR(1, 0.9, 4)
    with pytest.raises(ValueError, match="'decay_steps' must be int and must > 0"):
        nn.InverseDecayLR(0.1, 0.9, 0)
    with pytest.raises(ValueError, match="'max_lr' must be greater than the 'min_lr'"):
        nn.CosineDecayLR(0.1, 0.1, 3)
    with pytest.raises(NotImplementedError, match="LearningRateSchedule must define construct"):
        nn.LearningRateSchedule()(ms.Tensor(1, ms.int32))


@pytest.mark.parametrize("name", sorted(DYNAMIC))
def test_dynamic_lr_matches_mindspore(name):
    case = DYNAMIC[name]
    fn = getattr(nn, name.split("(")[0])
    if "error" in case:
        with pytest.raises(getattr(builtins, case["error"])) as info:
            fn(*case["inputs"])
        assert str(info.value) == case["message"]
        return
    out = fn(*case["inputs"])
    assert isinstance(out, list) and len(out) == len(case["output"])
    np.testing.assert_allclose(out, case["output"], rtol=1e-12)


def test_module_paths_and_exports():
    lrs = importlib.import_module("cellkit.nn.learning_rate_schedule")
    dyn = importlib.import_module("cellkit.nn.dynamic_lr")
    assert lrs.__all__ == ["LearningRateSchedule", "ExponentialDecayLR", "NaturalExpDecayLR", "InverseDecayLR",
                           "CosineDecayLR", "PolynomialDecayLR", "WarmUpLR"]
    assert len(dyn.__all__) == 7
    for name in lrs.__all__ + dyn.__all__:
        assert getattr(nn, name) is getattr(lrs if name in lrs.__all__ else dyn, name)


def test_dynamic_list_drives_an_optimizer():
    lr = nn.cosine_decay_lr(0.01, 0.1, 4, 1, 2)
    w = ms.Parameter(ms.Tensor([1.0]), name="w")
    opt = nn.SGD([w], learning_rate=lr)
    for _ in range(4):
        opt((ms.Tensor([1.0]),))
    np.testing.assert_allclose(w.asnumpy(), [1.0 - sum(lr)], rtol=1e-6)
