"""AdaFactor against MindSpore 2.10's own numbers; LARS against its kernel's formula.

References: tests/fixtures/mindspore/nn_loss_optim.{json,npz}, recorded by
tests/fixtures/record/record_nn_loss_optim.py (three steps from fc.weight (2, 3),
fc.bias (2,); every Parameter of the optimizer after each step). MindSpore
2.10's CPU build has no ``LARSUpdate`` kernel (the fixture records its
``RuntimeError``), so LARS is compared with a NumPy transcription of the
Ascend kernel's formula around ``Momentum``/``SGD``.
"""

import builtins

import numpy as np
import pytest

import cellkit as ms
from cellkit import nn
from ms_fixtures import load

REF = load("nn_loss_optim")
GRADS = REF["grads"]["output"]
W0 = REF["w0"]["output"]
NAMES = ("fc.weight", "fc.bias")

MAKERS = {
    "AdaFactor()": lambda p: nn.AdaFactor(p),
    "AdaFactor(warmup_init=True)": lambda p: nn.AdaFactor(p, warmup_init=True),
    "AdaFactor(beta1=0.0)": lambda p: nn.AdaFactor(p, beta1=0.0),
    "AdaFactor(weight_decay=0.1,clip_threshold=0.5,decay_rate=0.5)":
        lambda p: nn.AdaFactor(p, weight_decay=0.1, clip_threshold=0.5, decay_rate=0.5),
    "AdaFactor(learning_rate=0.1,relative_step=False)": lambda p: nn.AdaFactor(p, learning_rate=0.1,
                                                                               relative_step=False),
    "AdaFactor(learning_rate=0.1,relative_step=False,scale_parameter=False)":
        lambda p: nn.AdaFactor(p, learning_rate=0.1, relative_step=False, scale_parameter=False),
    "AdaFactor(learning_rate=[0.1,0.05,0.02],relative_step=False)":
        lambda p: nn.AdaFactor(p, learning_rate=[0.1, 0.05, 0.02], relative_step=False),
    "AdaFactor(loss_scale=2.0)": lambda p: nn.AdaFactor(p, loss_scale=2.0),
    "AdaFactor(learning_rate=0.1)": lambda p: nn.AdaFactor(p, learning_rate=0.1),
    "AdaFactor(warmup_init=True,relative_step=False)":
        lambda p: nn.AdaFactor(p, learning_rate=0.1, warmup_init=True, relative_step=False),
    "AdaFactor(relative_step=False)": lambda p: nn.AdaFactor(p, relative_step=False),
    "AdaFactor(eps=(1e-30,))": lambda p: nn.AdaFactor(p, eps=(1e-30,)),
    "AdaFactor(decay_rate=1.0)": lambda p: nn.AdaFactor(p, decay_rate=1.0),
    "AdaFactor(clip_threshold=1)": lambda p: nn.AdaFactor(p, clip_threshold=1),
    "AdaFactor(weight_decay=1.0)": lambda p: nn.AdaFactor(p, weight_decay=1.0),
    "AdamOffload(learning_rate=0.1)": lambda p: nn.AdamOffload(p, learning_rate=0.1),
    "AdamOffload(learning_rate=0.1,weight_decay=0.1,loss_scale=2.0)":
        lambda p: nn.AdamOffload(p, learning_rate=0.1, weight_decay=0.1, loss_scale=2.0),
    "LARS(optimizer=1)": lambda p: nn.LARS(1),
    "LARS(epsilon=1)": lambda p: nn.LARS(nn.SGD(p), epsilon=1),
}
LARS_RUNS = {
    "LARS(Momentum(0.1,0.9))": (lambda p: nn.LARS(nn.Momentum(p, 0.1, 0.9)),
                                dict(lr=0.1, momentum=0.9, wd=0.0, coef=0.001, clip=False, scale=1.0, all=False)),
    "LARS(Momentum(0.1,0.9,weight_decay=0.01),coefficient=0.01)":
        (lambda p: nn.LARS(nn.Momentum(p, 0.1, 0.9, weight_decay=0.01), coefficient=0.01),
         dict(lr=0.1, momentum=0.9, wd=0.01, coef=0.01, clip=False, scale=1.0, all=False)),
    "LARS(SGD(0.1,loss_scale=2),use_clip=True,lars_filter=all)":
        (lambda p: nn.LARS(nn.SGD(p, 0.1, loss_scale=2.0), use_clip=True, lars_filter=lambda x: True),
         dict(lr=0.1, momentum=0.0, wd=0.0, coef=0.001, clip=True, scale=2.0, all=True)),
}
# MindSpore's placeholders that do no work (not kept by cellkit): the step copy, the unused second-moment slots
# and beta1=0's shared dummy, Adam's beta powers (beta**global_step); a list learning rate is named 'learning_rate' (as in cellkit's other optimizers).
PLACEHOLDERS = {"beta1_power", "beta2_power", "step", "afactor_step", "Parameter$1", "exp_avg_sq_row_fc.bias", "exp_avg_sq_col_fc.bias", "exp_avg_sq_fc.weight",
                "learning_rate.learning_rate"}


def params():
    return [ms.Parameter(ms.Tensor(np.asarray(W0[n], np.float32)), name=n) for n in NAMES]


def grads(s):
    return tuple(ms.Tensor(np.asarray(g, np.float32)) for g in GRADS[s])


def test_every_recorded_case_is_covered():
    assert set(MAKERS) | set(LARS_RUNS) == {k[len("optim/"):] for k in REF if k.startswith("optim/")}
    assert all(REF[f"optim/{k}"]["error"] == "RuntimeError" for k in LARS_RUNS)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("key", sorted(k for k in MAKERS if "output" in REF[f"optim/{k}"]))
def test_three_steps_match_mindspore(key, jit):
    ref = REF[f"optim/{key}"]["output"]
    opt = MAKERS[key](params())
    names = [n for n, _ in opt.parameters_and_names()]
    assert [n for n in names if n != "learning_rate" and n not in PLACEHOLDERS] == [n for n in ref["names"]
                                                           if n not in PLACEHOLDERS and n != "learning_rate"]
    assert not any(p.requires_grad for p in opt.get_parameters() if p.name not in NAMES)
    step = ms.jit(lambda g: opt(g)) if jit else opt
    for s in range(len(GRADS)):
        step(grads(s))
        values = {p.name: p.asnumpy() for p in opt.get_parameters()}
        for name, expected in ref["steps"][s].items():
            if name in PLACEHOLDERS or name == "learning_rate":
                continue
            if name == "global_step":
                assert int(values[name].reshape(-1)[0]) == int(expected.reshape(-1)[0])
                continue
            np.testing.assert_allclose(values[name], expected, rtol=2e-6, atol=2e-6,
                                       err_msg=f"{key}: {name} after step {s + 1}")
    if jit:
        assert step.trace_count == 1


@pytest.mark.parametrize("key", sorted(k for k in MAKERS if "error" in REF[f"optim/{k}"]))
def test_refusals_match_mindspore(key):
    error = REF[f"optim/{key}"]["error"]
    if key == "LARS(optimizer=1)":
        # MindSpore fails on an attribute of the int (AttributeError); cellkit names the argument.
        assert error == "AttributeError"
        error = "TypeError"
    with pytest.raises(getattr(builtins, error)):
        MAKERS[key](params())


def test_adafactor_compression_keeps_vector_moments_in_float16():
    opt = nn.AdaFactor(params(), compression=True)
    assert [p.dtype for p in opt.exp_avg_sq] == [ms.float16]
    ref = nn.AdaFactor(params())
    for s in range(len(GRADS)):
        opt(grads(s))
        ref(grads(s))
    np.testing.assert_allclose(opt.parameters[1].asnumpy(), ref.parameters[1].asnumpy(), rtol=1e-3)


def test_adafactor_parameter_groups():
    a, b = params()
    opt = nn.AdaFactor([{"params": [a], "lr": 0.05}, {"params": [b]}], learning_rate=0.1, relative_step=False)
    single_a = nn.AdaFactor([params()[0]], learning_rate=0.05, relative_step=False)
    single_b = nn.AdaFactor([params()[1]], learning_rate=0.1, relative_step=False)
    for s in range(len(GRADS)):
        g = grads(s)
        opt(g)
        single_a((g[0],))
        single_b((g[1],))
    np.testing.assert_allclose(a.asnumpy(), single_a.parameters[0].asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(b.asnumpy(), single_b.parameters[0].asnumpy(), rtol=1e-6)


def lars_reference(cfg):
    """NumPy: MindSpore's LARS (LARSUpdate as the Ascend kernel computes it) around Momentum / SGD."""
    ws = [np.asarray(W0[n], np.float64) for n in NAMES]
    vs = [np.zeros_like(w) for w in ws]
    out = []
    for s in range(len(GRADS)):
        for i, (n, g) in enumerate(zip(NAMES, GRADS[s])):
            g = np.asarray(g, np.float64) / cfg["scale"]
            if cfg["all"] or "bias" not in n:
                w, wd = ws[i], cfg["wd"] / cfg["scale"]
                wn, gn = np.sqrt((w * w).sum()), np.sqrt((g * g).sum())
                coeff = cfg["coef"] * wn / (gn + wd * wn + 1e-5)
                if cfg["clip"]:
                    coeff = min(max(coeff / cfg["lr"], 0.0), 1.0)
                g = coeff * (g + wd * w)
            vs[i] = cfg["momentum"] * vs[i] + g
            ws[i] = ws[i] - cfg["lr"] * vs[i]
        out.append([w.copy() for w in ws])
    return out


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("key", sorted(LARS_RUNS))
def test_lars_matches_kernel_formula(key, jit):
    make, cfg = LARS_RUNS[key]
    ps = params()
    opt = make(ps)
    assert opt.parameters[0] is ps[0] and opt.global_step is opt.opt.global_step
    step = ms.jit(lambda g: opt(g)) if jit else opt
    for s, expected in enumerate(lars_reference(cfg)):
        assert step(grads(s))
        for p, e in zip(ps, expected):
            np.testing.assert_allclose(p.asnumpy(), e, rtol=1e-5, atol=1e-6, err_msg=f"{key}: {p.name}, step {s}")
    assert int(opt.global_step.asnumpy()[0]) == len(GRADS)
