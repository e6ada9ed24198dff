"""Every public member MindSpore 2.10's optimizers, Parameter, ParameterTuple and Tensor have, cellkit has.

``tests/fixtures/mindspore/members.json`` (``record_members.py``) lists, for each object, every
public name ``dir()`` gives with its kind. Each recorded name must be present on cellkit's same
object with the same kind (a method is callable; an attribute or property is a value), or be
listed in ``REFUSED`` with the reason (a line in docs/differences.md), or in ``ELSEWHERE`` (checked
by another test file). The values of the descriptive optimizer members, dynamic learning rates and
checkpoint resume are compared with ``optim_members`` (``record_optim_members.py``).
"""

from __future__ import annotations

import json
import pathlib
import re

import jax
import numpy as np
import pytest

import cellkit as ms
from cellkit import nn
from cellkit.nn.optim.ms_members import MissingKernel
from members_check import CELL_REFUSED, CELL_SIGNATURES, missing_members
from ms_fixtures import ROOT, load

MEMBERS = json.loads((ROOT / "members.json").read_text())
DIFFERENCES = (pathlib.Path(__file__).resolve().parent.parent / "docs" / "differences.md").read_text()
REF = load("optim_members")


def check_members(key, obj, refused, signatures=None):
    """:func:`members_check.missing_members` with the refusals that apply to ``key``'s own members."""
    own = MEMBERS[key]["members"]
    return missing_members(key, obj, {n: r for n, r in refused.items() if n in own},
                           {n: r for n, r in (signatures or {}).items() if n in own})


# ----- optimizers -------------------------------------------------------------------------------

def dense():
    return nn.Dense(3, 2)


OPTIMIZERS = {
    "Adam": lambda p: nn.Adam(p, learning_rate=0.01),
    "AdamWeightDecay": lambda p: nn.AdamWeightDecay(p, learning_rate=0.01),
    "Momentum": lambda p: nn.Momentum(p, learning_rate=0.01, momentum=0.9),
    "SGD": lambda p: nn.SGD(p, learning_rate=0.01),
    "Lamb": lambda p: nn.Lamb(p, learning_rate=0.01),
    "LARS": lambda p: nn.LARS(nn.Momentum(p, learning_rate=0.01, momentum=0.9)),
    "Adagrad": lambda p: nn.Adagrad(p, learning_rate=0.01),
    "RMSProp": lambda p: nn.RMSProp(p, learning_rate=0.01),
    "FTRL": lambda p: nn.FTRL(p),
    "ProximalAdagrad": lambda p: nn.ProximalAdagrad(p),
    "LazyAdam": lambda p: nn.LazyAdam(p, learning_rate=0.01),
    "AdaMax": lambda p: nn.AdaMax(p, learning_rate=0.01),
    "Adadelta": lambda p: nn.Adadelta(p, learning_rate=0.01),
    "Rprop": lambda p: nn.Rprop(p, learning_rate=0.01),
    "ASGD": lambda p: nn.ASGD(p, learning_rate=0.01),
    "AdaFactor": lambda p: nn.AdaFactor(p),
    "Adam(dynamic_lr)": lambda p: nn.Adam(p, learning_rate=nn.PolynomialDecayLR(0.1, 0.01, 10, 0.5)),
    "Momentum(groups)": lambda p: nn.Momentum([{"params": p[:1], "lr": 0.1}, {"params": p[1:]}],
                                              learning_rate=0.01, momentum=0.9),
}

# Members every Cell has: tests/test_members.py checks them on nn.Cell.
CELL_MEMBERS = frozenset(MEMBERS["nn.Cell(nn.Dense)"]["members"])

OPTIMIZER_REFUSED = {
    "broadcast_params": "MindSpore's parallel optimizer only; RuntimeError pointing to jax.sharding",
    "init_ada_factor_state": "AdaFactor's state is built with the optax state; RuntimeError",
}
# Kernel attributes: cellkit's Primitive where it has one, else a MissingKernel that raises
# NotImplementedError naming the Primitive and saying to call the optimizer itself.
KERNELS = ("opt", "sparse_opt", "fused_opt", "fused_ada_factor", "lars", "cast", "assign", "assignadd",
           "assignsub", "fill", "ones_like", "select", "sign", "maximum", "pow", "squeeze")


@pytest.mark.parametrize("key", sorted(OPTIMIZERS))
def test_optimizer_members(key):
    opt = OPTIMIZERS[key](dense().trainable_params())
    assert check_members(f"nn.{key}", opt, {**CELL_REFUSED, **OPTIMIZER_REFUSED}, CELL_SIGNATURES) == []
    for name in KERNELS:
        kernels = getattr(opt, name, ())
        for kernel in kernels if isinstance(kernels, tuple) else (kernels,):
            if isinstance(kernel, MissingKernel):
                with pytest.raises(NotImplementedError, match="call the optimizer itself"):
                    kernel()


def test_refused_names_are_documented():
    for name in [*OPTIMIZER_REFUSED, *KERNELS, *PARAMETER_REFUSED, *TENSOR_REFUSED]:
        assert re.search(rf"`(\w+\.)?{re.escape(name)}`", DIFFERENCES), name


def test_refusals_say_what_to_do():
    w = ms.Parameter(ms.Tensor([1.0]), name="w")
    with pytest.raises(RuntimeError, match="jax.sharding"):
        nn.Momentum([w], 0.1, 0.9).broadcast_params(True)
    with pytest.raises(RuntimeError, match="build a new AdaFactor"):
        nn.AdaFactor([w]).init_ada_factor_state(0.9)


# ----- optimizer member values against MindSpore ------------------------------------------------

def pair():
    rng = np.random.default_rng(0)
    return [ms.Parameter(ms.Tensor(rng.normal(size=(2, 3)).astype(np.float32)), name="weight"),
            ms.Parameter(ms.Tensor(rng.normal(size=(2,)).astype(np.float32)), name="bias")]


VALUE_OPTS = {
    "Adam": lambda p: nn.Adam(p, learning_rate=0.01),
    "Adam(dynamic_lr)": lambda p: nn.Adam(p, learning_rate=nn.PolynomialDecayLR(0.1, 0.01, 10, 0.5)),
    "Adam(list_lr,loss_scale)": lambda p: nn.Adam(p, learning_rate=[0.1, 0.05, 0.01], loss_scale=4.0,
                                                 weight_decay=0.1),
    "Momentum": lambda p: nn.Momentum(p, learning_rate=0.01, momentum=0.9),
    "Momentum(groups)": lambda p: nn.Momentum([{"params": p[:1], "lr": 0.1, "weight_decay": 0.01},
                                               {"params": p[1:]}], learning_rate=0.01, momentum=0.9),
    "Momentum(order_params)": lambda p: nn.Momentum([{"params": p[:1]}, {"params": p[1:], "lr": 0.2},
                                                     {"order_params": p[::-1]}], learning_rate=0.01, momentum=0.9),
    "SGD": lambda p: nn.SGD(p, learning_rate=0.01),
    "AdamWeightDecay": lambda p: nn.AdamWeightDecay(p, learning_rate=0.01),
    "RMSProp": lambda p: nn.RMSProp(p, learning_rate=0.01),
    "Adagrad": lambda p: nn.Adagrad(p, learning_rate=0.01),
}


def _close(got, expected, what):
    if isinstance(expected, (tuple, list)):
        assert len(got) == len(expected), what
        for g, e in zip(got, expected):
            _close(g, e, what)
    elif isinstance(expected, np.ndarray) or isinstance(expected, float):
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6, err_msg=what)
    else:
        assert got == expected, what


@pytest.mark.parametrize("key", sorted(VALUE_OPTS))
def test_member_values_match_mindspore(key):
    ref = REF[f"values/{key}"]
    opt = VALUE_OPTS[key](pair())
    out = ref["output"]
    for name, expected in out.items():
        if name in ("init_params_names", "parameter_names", "group_lr_names", "weight_decay", "group_params") \
                or expected == "<absent>":  # MindSpore's AdamWeightDecay does not record its arguments
            continue
        if name in ("decay_weight", "scale_grad", "flatten_gradients", "gradients_centralization"):
            grads = tuple(ms.Tensor(np.full(p.shape, 0.5, np.float32)) for p in opt.parameters)
            got = getattr(opt, name)(grads)
        elif name == "init_args":
            got = {k: v for k, v in opt.init_args.items()}
            if not expected and key == "AdamWeightDecay":  # not recorded by MindSpore's AdamWeightDecay
                continue
            assert set(got) == set(expected), key
            for k in expected:
                assert got[k] == pytest.approx(expected[k]) if isinstance(expected[k], float) \
                    else got[k] == expected[k], (key, k)
            continue
        else:
            got = getattr(opt, name)
        _close(got, expected, f"{key}.{name}")
    assert [p.name for p in opt.parameters] == out["parameter_names"]
    if key != "AdamWeightDecay":  # MindSpore's AdamWeightDecay does not record its arguments
        assert [p.name for p in opt.init_params["params"] if isinstance(p, ms.Parameter)] == out["init_params_names"]
    _close(opt.get_weight_decay(), out["weight_decay"], f"{key}.get_weight_decay()")
    if opt.is_group:
        assert [getattr(lr, "name", None) for lr in opt.group_lr] == out["group_lr_names"]
        assert [p.name for p in opt.group_params] == out["group_params"]


# ----- dynamic learning rates ---------------------------------------------------------------------

LR_OPTS = {
    "Adam(PolynomialDecayLR)": lambda p: nn.Adam(p, learning_rate=nn.PolynomialDecayLR(0.1, 0.01, 3, 0.5)),
    "Momentum(list)": lambda p: nn.Momentum(p, learning_rate=[0.1, 0.05, 0.02, 0.01, 0.005], momentum=0.9),
    "SGD(Tensor)": lambda p: nn.SGD(p, learning_rate=ms.Tensor(np.array([0.3, 0.2, 0.1, 0.05, 0.01], np.float32))),
    "Adam(CosineDecayLR)": lambda p: nn.Adam(p, learning_rate=nn.CosineDecayLR(0.01, 0.1, 4)),
    "Momentum(groups,dynamic)": lambda p: nn.Momentum(
        [{"params": p[:1], "lr": nn.ExponentialDecayLR(0.1, 0.5, 2)}, {"params": p[1:]}],
        learning_rate=[0.1, 0.05, 0.02, 0.01, 0.005], momentum=0.9),
}


@pytest.mark.parametrize("key", sorted(LR_OPTS))
def test_dynamic_learning_rate_matches_mindspore(key):
    opt = LR_OPTS[key](pair())
    assert opt.dynamic_lr
    for step, expected in enumerate(REF[f"lr/{key}"]["output"]):
        _close(opt.get_lr(), expected["get_lr"], f"{key} get_lr() at step {step}")
        if "learning_rate(step)" in expected:
            _close(opt.learning_rate(ms.Tensor(step, ms.int32)), expected["learning_rate(step)"],
                   f"{key} learning_rate({step})")
        opt(tuple(ms.Tensor(np.full(p.shape, 0.1, np.float32)) for p in opt.parameters))


# ----- checkpoints resume both ways ----------------------------------------------------------------

def resume_params():
    rng = np.random.default_rng(5)
    return [ms.Parameter(ms.Tensor(rng.normal(size=(2, 16)).astype(np.float32)), name="w"),
            ms.Parameter(ms.Tensor(rng.normal(size=(2,)).astype(np.float32)), name="b")]


RESUME_OPTS = {
    "Adam": lambda p: nn.Adam(p, learning_rate=0.05, weight_decay=0.01),
    "Momentum": lambda p: nn.Momentum(p, learning_rate=0.05, momentum=0.9),
    "SGD": lambda p: nn.SGD(p, learning_rate=0.05, momentum=0.8, dampening=0.1),
    "SGD(momentum=0)": lambda p: nn.SGD(p, learning_rate=0.05),
    "RMSProp": lambda p: nn.RMSProp(p, learning_rate=0.05),
    "AdamWeightDecay": lambda p: nn.AdamWeightDecay(p, learning_rate=0.05, weight_decay=0.1),
    "AdaMax": lambda p: nn.AdaMax(p, learning_rate=0.05),
    "Adam(PolynomialDecayLR)": lambda p: nn.Adam(p, learning_rate=nn.PolynomialDecayLR(0.1, 0.01, 3, 0.5)),
    "Momentum(groups)": lambda p: nn.Momentum(
        [{"params": p[:1], "weight_decay": 0.01, "lr": 0.1}, {"params": p[1:]}],
        learning_rate=0.05, momentum=0.9),
}


def _step(opt, grads):
    for gw, gb in grads:
        opt((ms.Tensor(gw), ms.Tensor(gb)))


def _assert_state(opt, expected, what):
    got = {p.name: p.asnumpy() for p in opt.get_parameters()}
    assert sorted(got) == sorted(expected), what
    for name, value in expected.items():
        np.testing.assert_allclose(got[name], value, rtol=2e-5, atol=1e-6, err_msg=f"{what}: {name}")


@pytest.mark.parametrize("key", sorted(RESUME_OPTS))
def test_checkpoint_from_mindspore_resumes(key):
    """MindSpore's checkpoint after two steps, loaded into cellkit: steps 3 and 4 give MindSpore's state."""
    ref = REF[f"resume/{key}"]["output"]
    opt = RESUME_OPTS[key](resume_params())
    assert [n for n, _ in opt.parameters_and_names()] == ref["names"]
    not_loaded = ms.load_param_into_net(opt, ms.load_checkpoint(str(ROOT / "optim_resume" / ref["ckpt"])))
    assert not_loaded == ([], [])
    _assert_state(opt, ref["state2"], f"{key} loaded")
    _step(opt, ref["grads"][2:])
    _assert_state(opt, ref["state4"], f"{key} after steps 3-4")


@pytest.mark.parametrize("key", sorted(RESUME_OPTS))
def test_checkpoint_to_mindspore_has_its_state(key, tmp_path):
    """cellkit's state after two steps is MindSpore's, name by name, in a checkpoint MindSpore reads."""
    ref = REF[f"resume/{key}"]["output"]
    opt = RESUME_OPTS[key](resume_params())
    _step(opt, ref["grads"][:2])
    path = tmp_path / "opt.ckpt"
    ms.save_checkpoint(opt, str(path), format="ckpt")
    saved = ms.load_checkpoint(str(path))
    assert sorted(saved) == sorted(ref["state2"])
    _assert_state(opt, ref["state2"], f"{key} after steps 1-2")


def test_grad_centralization():
    """MindSpore 2.10's CPU build has no Centralization kernel (recorded); cellkit follows its definition."""
    assert REF["grad_centralization/Momentum"]["error"] == "RuntimeError"
    w, b = resume_params()
    opt = nn.Momentum([{"params": [w], "grad_centralization": True}, {"params": [b]}], 0.05, 0.9)
    assert opt.grad_centralization_flags == (True, False)
    w0 = w.asnumpy()
    g = np.arange(32, dtype=np.float32).reshape(2, 16)
    opt((ms.Tensor(g), ms.ops.ones((2,))))
    centred = g - g.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(w.asnumpy(), w0 - 0.05 * centred, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(opt.gradients_centralization((ms.Tensor(g), ms.ops.ones((2,))))[0], centred)


# ----- Parameter, ParameterTuple, Tensor ------------------------------------------------------------

# In-place Tensor methods (``addmm_``, ``index_put_``, ...): in progress elsewhere (in-place updates of
# plain Tensors), not refused.
IN_PROGRESS_ELSEWHERE = frozenset(n for n, e in MEMBERS["Tensor"]["members"].items()
                                  if e["kind"] == "method" and re.fullmatch(r"[a-z0-9_]*[a-z0-9]_", n))

TENSOR_REFUSED = {
    "real": "JAX's property (x.real); MindSpore's is a method x.real()",
    "imag": "JAX's property (x.imag); MindSpore's is a method x.imag()",
    "index_of_parent_": "view bookkeeping of MindSpore's Tensor; a jax.Array is never a view",
    "parent_tensor_": "view bookkeeping of MindSpore's Tensor; a jax.Array is never a view",
    # Present, raising TypeError with what to do (tensor_methods.delegated.UNSUPPORTED).
    **{name: "MindSpore-internal or sparse; TypeError saying what to do" for name in (
        "assign_value_cpp", "getitem_index_info", "setitem_index_info", "set_device_address", "set_init_flag",
        "set_cast_dtype", "set_dtype", "offload_file_path", "remove_hook", "set_param_info", "to_coo", "to_csr")},
}
PARAMETER_REFUSED = {
    **TENSOR_REFUSED,
    "value": "cellkit's Parameter.value is a property (the current array), read by the state engine; "
             "MindSpore's is a method value()",
    "load": "MindSpore-internal (no documented meaning)",
}


def test_parameter_tensor_members():
    p = ms.Parameter(ms.Tensor(np.ones((2, 3), np.float32)), name="w")
    t = ms.Tensor(np.ones((2, 3), np.float32))
    assert check_members("Parameter", p, PARAMETER_REFUSED) == []
    assert check_members("Tensor", t, TENSOR_REFUSED) == []
    assert check_members("ParameterTuple", ms.ParameterTuple(dense().trainable_params()), {}) == []
    with pytest.raises(TypeError, match="astype"):
        t.set_dtype(ms.float16)
    with pytest.raises(TypeError, match="BCOO"):
        t.to_coo()


MEMBER_VALUES = load("tensor_members")


@pytest.mark.parametrize("name", sorted(MEMBER_VALUES))
def test_member_value_matches_mindspore(name):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    case = MEMBER_VALUES[name]
    kind, member = name.split("/")
    if "error" in case:  # MindSpore's CPU build has no kernel for Tensor.uniform
        assert name == "tensor/uniform_shape" and ms.Tensor(x).uniform().shape == (2, 3)
        return
    want = case["output"]
    if kind == "tensor":
        got = ms.Tensor(x).is_init() if member == "is_init" else \
            ms.Tensor(x).itemset((0, 1), 9.0) if member == "itemset" else getattr(ms.Tensor(x), member)
    elif kind == "parameter_tuple":
        t = ms.ParameterTuple([ms.Parameter(ms.Tensor(x), name="w"), ms.Parameter(ms.Tensor(x[0]), name="b")])
        got = [q.name for q in t.clone("m", "zeros")] if member == "clone" else \
            getattr(t, "insert_parameter", lambda q: None)(ms.Parameter(ms.Tensor(x[0]), name="b"))
    else:
        p = ms.Parameter(ms.Tensor(x), name="w")
        if member.startswith("param_info_"):
            got = getattr(p.param_info, member[len("param_info_"):])
        elif member == "from_numpy":
            got = ms.Parameter.from_numpy(x)
        elif member == "init_mode_initializer":
            got = type(ms.Parameter(ms.common.initializer.initializer("ones", (2, 2)), name="q").init_mode).__name__
        elif member.endswith("_set"):
            setattr(p, member[:-4], want)
            got = getattr(p, member[:-4])
        elif member == "add_pipeline_stage":
            got = p.add_pipeline_stage(1)
        else:
            got = getattr(p, member)
    if isinstance(want, np.ndarray):
        np.testing.assert_array_equal(np.asarray(got), want)
    else:
        assert got == want, name


def test_hyper_map_over_parameter_tuple_and_tuple():
    """MindSpore's optimizers map over their ParameterTuple and the gradient tuple together (decay_weight)."""
    w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
    opt = nn.SGD([w], weight_decay=0.5)
    out = opt.hyper_map(lambda p, g: p + g, opt.parameters, (ms.Tensor([1.0, 1.0]),))
    assert type(out) is tuple and out[0].tolist() == [2.0, 3.0]
    assert opt.map_(lambda f, p, g: g + 0.5 * p if f else g, opt.decay_flags, opt.parameters,
                    (ms.Tensor([0.0, 0.0]),))[0].tolist() == [0.5, 1.0]
