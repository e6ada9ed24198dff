"""MindSpore 2.10's other optimizers (Adagrad, ProximalAdagrad, Adadelta, FTRL, AdaMax, LazyAdam, Rprop, ASGD)
against its own numbers, and Lamb against optax.

References: tests/fixtures/mindspore/optim_steps.{json,npz}, recorded by
tests/fixtures/record/record_optim.py (three steps from fc.weight = [1, 2],
fc.bias = [0.5]; every Parameter of the optimizer after each step).
"""

import builtins
import warnings

import jax.numpy as jnp
import numpy as np
import optax
import pytest

import cellkit as ms
from cellkit import nn
from ms_fixtures import load

REF = load("optim_steps")
GRADS = REF["grads"]["output"]

MAKERS = {
    "Adagrad()": lambda p: nn.Adagrad(p),
    "Adagrad(accum=0.5,learning_rate=0.1)": lambda p: nn.Adagrad(p, accum=0.5, learning_rate=0.1),
    "Adagrad(learning_rate=0.1,update_slots=False)": lambda p: nn.Adagrad(p, learning_rate=0.1, update_slots=False),
    "Adagrad(learning_rate=0.1,weight_decay=0.1,loss_scale=2.0)":
        lambda p: nn.Adagrad(p, learning_rate=0.1, weight_decay=0.1, loss_scale=2.0),
    "Adadelta()": lambda p: nn.Adadelta(p),
    "Adadelta(learning_rate=0.5,rho=0.8,epsilon=0.01)": lambda p: nn.Adadelta(p, learning_rate=0.5, rho=0.8,
                                                                             epsilon=0.01),
    "AdaMax(learning_rate=0.1)": lambda p: nn.AdaMax(p, learning_rate=0.1),
    "AdaMax(learning_rate=0.1,eps=0.1,weight_decay=0.1)": lambda p: nn.AdaMax(p, learning_rate=0.1, eps=0.1,
                                                                             weight_decay=0.1),
    "ProximalAdagrad(learning_rate=0.1)": lambda p: nn.ProximalAdagrad(p, learning_rate=0.1),
    "ProximalAdagrad(learning_rate=0.1,l1=0.5,l2=0.2)": lambda p: nn.ProximalAdagrad(p, learning_rate=0.1, l1=0.5,
                                                                                     l2=0.2),
    "FTRL(learning_rate=0.1)": lambda p: nn.FTRL(p, learning_rate=0.1),
    "FTRL(learning_rate=0.1,l1=0.01,l2=0.1,lr_power=-0.7)":
        lambda p: nn.FTRL(p, learning_rate=0.1, l1=0.01, l2=0.1, lr_power=-0.7),
    "FTRL(learning_rate=0.1,l1=0.01,l2=0.1)": lambda p: nn.FTRL(p, learning_rate=0.1, l1=0.01, l2=0.1),
    "FTRL(learning_rate=0.1,lr_power=-0.7)": lambda p: nn.FTRL(p, learning_rate=0.1, lr_power=-0.7),
    "Rprop(learning_rate=0.1)": lambda p: nn.Rprop(p, learning_rate=0.1),
    "Rprop(learning_rate=0.1,etas=(0.4,1.5),step_sizes=(0.01,0.12))":
        lambda p: nn.Rprop(p, learning_rate=0.1, etas=(0.4, 1.5), step_sizes=(0.01, 0.12)),
    "LazyAdam(learning_rate=0.1)": lambda p: nn.LazyAdam(p, learning_rate=0.1),
    "LazyAdam(learning_rate=0.1,use_nesterov=True,weight_decay=0.1)":
        lambda p: nn.LazyAdam(p, learning_rate=0.1, use_nesterov=True, weight_decay=0.1),
    "ASGD(learning_rate=0.1)": lambda p: nn.ASGD(p, learning_rate=0.1),
    "ASGD(learning_rate=0.1,lambd=0.1,alpha=0.5,t0=1.0)":
        lambda p: nn.ASGD(p, learning_rate=0.1, lambd=0.1, alpha=0.5, t0=1.0),
    "Adagrad(accum=1)": lambda p: nn.Adagrad(p, accum=1),
    "Adagrad(accum=-0.1)": lambda p: nn.Adagrad(p, accum=-0.1),
    "Adadelta(rho=1.5)": lambda p: nn.Adadelta(p, rho=1.5),
    "AdaMax(beta1=1.0)": lambda p: nn.AdaMax(p, beta1=1.0),
    "FTRL(lr_power=0.5)": lambda p: nn.FTRL(p, lr_power=0.5),
    "FTRL(learning_rate=[0.1,0.2])": lambda p: nn.FTRL(p, learning_rate=[0.1, 0.2]),
    "Rprop(etas=(0.5,0.9))": lambda p: nn.Rprop(p, etas=(0.5, 0.9)),
    "Rprop(step_sizes=(1.0,0.5))": lambda p: nn.Rprop(p, step_sizes=(1.0, 0.5)),
    "Rprop(etas=[0.5,1.2])": lambda p: nn.Rprop(p, etas=[0.5, 1.2]),
    "Lamb(learning_rate=0.1,eps=0.0)": lambda p: nn.Lamb(p, learning_rate=0.1, eps=0.0),
}
# No CPU kernel for LAMB in MindSpore 2.10: those cases recorded a RuntimeError (see test_lamb_is_optax_lamb).
NO_KERNEL = {"Lamb(learning_rate=0.1)", "Lamb(learning_rate=0.1,weight_decay=0.1)"}


def params():
    return [ms.Parameter(ms.Tensor(np.array([1.0, 2.0], np.float32)), name="fc.weight"),
            ms.Parameter(ms.Tensor(np.array([0.5], np.float32)), name="fc.bias")]


def make(key, ps):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return MAKERS[key](ps)


def test_every_reference_is_covered():
    assert set(MAKERS) | NO_KERNEL == set(REF) - {"grads"}
    assert all(REF[k].get("error") == "RuntimeError" for k in NO_KERNEL)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("key", sorted(k for k in MAKERS if "output" in REF[k]))
def test_three_steps_match_mindspore(key, jit):
    ref = REF[key]["output"]
    ps = params()
    opt = make(key, ps)
    # Parameter names (and so checkpoints) as MindSpore's, its beta powers included.
    assert [n for n, _ in opt.parameters_and_names()] == ref["names"]
    step = ms.jit(lambda g: opt(g)) if jit else opt
    for s, (gw, gb) in enumerate(GRADS):
        result = step((ms.Tensor(np.asarray(gw, np.float32)), ms.Tensor(np.asarray(gb, np.float32))))
        assert len(result) == 2
        values = {p.name: p.asnumpy() for p in opt.get_parameters()}
        for name, expected in ref["steps"][s].items():
            if name == "global_step":
                assert int(values[name].reshape(-1)[0]) == int(expected.reshape(-1)[0])
                continue
            np.testing.assert_allclose(values[name], expected, rtol=2e-6, atol=2e-6,
                                       err_msg=f"{key}: {name} after step {s + 1}")
    if jit:
        assert step.trace_count == 1


@pytest.mark.parametrize("key", sorted(k for k in MAKERS if "error" in REF[k]))
def test_refusals_match_mindspore(key):
    with pytest.raises(getattr(builtins, REF[key]["error"])):
        make(key, params())


def test_state_is_not_trainable_and_groups_work():
    a, b = params()
    opt = nn.Adagrad([{"params": [a], "lr": 0.5}, {"params": [b], "weight_decay": 0.1}], accum=0.1,
                     learning_rate=0.1)
    assert [p.name for p in opt.accum] == ["accum.fc.weight", "accum.fc.bias"]
    assert not any(p.requires_grad for p in opt.accum)
    opt((ms.Tensor([1.0, 1.0]), ms.Tensor([1.0])))
    np.testing.assert_allclose(a.asnumpy(), [1.0 - 0.5 / np.sqrt(1.1), 2.0 - 0.5 / np.sqrt(1.1)], rtol=1e-6)
    gb = 1.0 + 0.1 * 0.5
    np.testing.assert_allclose(b.asnumpy(), [0.5 - 0.1 * gb / np.sqrt(0.1 + gb * gb)], rtol=1e-6)


def test_lamb_is_optax_lamb():
    ps = params()
    opt = nn.Lamb(ps, learning_rate=0.1, weight_decay=0.1)
    assert [p.name for p in opt.moments1] == ["lamb_m.fc.weight", "lamb_m.fc.bias"]
    tx = optax.lamb(0.1, b1=float(np.float32(0.9)), b2=float(np.float32(0.999)), eps=1e-6, weight_decay=0.1)
    ref = tuple(jnp.asarray(p.value) for p in ps)
    state = tx.init(ref)
    for gw, gb in GRADS:
        g = (jnp.asarray(gw, jnp.float32), jnp.asarray(gb, jnp.float32))
        opt(g)
        updates, state = tx.update(g, state, ref)
        ref = optax.apply_updates(ref, updates)
        for p, r in zip(ps, ref):
            np.testing.assert_allclose(p.asnumpy(), r, rtol=1e-6, atol=1e-7)


def test_update_slots_false_warns():
    with pytest.warns(UserWarning, match="updates the accumulator all the same"):
        nn.Adagrad(params(), update_slots=False)
