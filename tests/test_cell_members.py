"""Cell's members from ``cell_members.py`` and ``cell_state.py`` against MindSpore 2.10's recorded
behaviour (``tests/fixtures/record/record_members_behaviour.py``): flags, set_grad, the accepted
graph/Ascend knobs, scopes, apply, to, buffers, state_dict and load_state_dict."""

import builtins
import warnings

import jax
import numpy as np
import pytest

import cellkit as ms
from cellkit import nn
from ms_fixtures import load

REC = load("members_behaviour")
W = np.array([[0.5, -1.0], [2.0, 0.25]], np.float32)
B = np.array([0.1, -0.2], np.float32)
X = np.array([[1.0, 2.0], [-1.0, 0.5], [3.0, -2.0], [0.0, 1.0]], np.float32)
ONES = np.ones((2, 2), np.float32)


def dense():
    return nn.Dense(2, 2, weight_init=ms.Tensor(W), bias_init=ms.Tensor(B))


def raises_as_recorded(case, fn):
    want = REC[case]
    with pytest.raises(getattr(builtins, want["error"])):
        fn()


def test_flags_and_knobs_as_mindspore():
    want = REC["cell/flags"]["output"]
    net = nn.SequentialCell([dense(), nn.ReLU()])
    out = {"set_grad_returns_self": net.set_grad() is net, "requires_grad": net.requires_grad,
           "child_requires_grad": net[0].requires_grad}
    net.add_flags(a=1)
    out["flags"] = dict(net.get_flags())
    net.add_flags_recursive(b=True)
    out["child_flags"] = dict(net[0].get_flags())
    net.set_train(True)
    out["flags_after_set_train"] = {**net.get_flags(), "training": net.training}
    net[0].to_float(ms.float16)
    out["to_float_flags"] = {**net[0].get_flags(), "training": True,
                             **{k: getattr(net[0], k) for k in ("fp16", "fp32", "bf16")}}
    out["mixed_precision_type"] = str(net[0].mixed_precision_type)
    out["set_boost_returns_self"] = net.set_boost("less_bn") is net
    out["boost_flags"] = {**net[1].get_flags(), "training": net[1].training}
    out["set_broadcast_flag"] = type(net.set_broadcast_flag()).__name__
    out["set_comm_fusion"] = type(net.set_comm_fusion(3)).__name__
    out["comm_fusion"] = getattr(net[0].weight, "comm_fusion", 3)  # Parameter.comm_fusion: another change
    out["set_data_parallel"] = repr(net.set_data_parallel())
    out["offload"] = repr(net.offload())
    net.generate_scope()
    out["scopes"] = [c.get_scope() for _, c in net.cells_and_names()]
    net.update_cell_prefix()
    out["prefixes"] = [c.param_prefix for _, c in net.cells_and_names()]
    out["parameters_broadcast_dict"] = list(net.parameters_broadcast_dict())
    out["init_parameters_data"] = sorted(p.name for p in net.init_parameters_data())
    order = []
    net.apply(lambda c: order.append(type(c).__name__))
    out["apply_order"] = order
    out["get_sub_cell"] = type(net.get_sub_cell("0")).__name__
    assert out == want


def test_set_train_records_no_flag_here():
    # MindSpore's set_train goes through add_flags_recursive(training=...); cellkit sets `training`
    # directly, so get_flags() does not list it (the attribute itself is the same).
    net = dense().set_train(True)
    assert net.training is True and "training" not in net.get_flags()


@pytest.mark.parametrize("case, call", [
    ("cell/set_boost/bad", lambda: dense().set_boost("O1")),
    ("cell/set_comm_fusion/bad", lambda: dense().set_comm_fusion(-1)),
    ("cell/offload/bad", lambda: dense().offload("x")),
    ("cell/set_inputs/both", lambda: dense().set_inputs(ms.Tensor(X), x=ms.Tensor(X))),
    ("cell/get_sub_cell/missing", lambda: nn.SequentialCell([dense()]).get_sub_cell("0.zz")),
    ("cell/to/int32", lambda: dense().to(ms.int32)),
])
def test_bad_arguments_raise_as_mindspore(case, call):
    raises_as_recorded(case, call)


def test_check_names_finds_repeated_names():
    net = nn.Cell()
    net.insert_child_to_cell("a", dense())
    net.insert_child_to_cell("b", dense())
    raises_as_recorded("cell/check_names/duplicate", net.check_names)
    net.check_names_and_refresh_name()
    assert [p.name for p in net.get_parameters()] == ["a.weight", "a.bias", "b.weight", "b.bias"]


def test_to_casts_floating_parameters_and_buffers():
    want = REC["cell/to/float16"]["output"]
    net = nn.SequentialCell([dense()])
    net.register_buffer("steps", ms.Tensor(np.array([1, 2], np.int32)))
    net.register_buffer("scale", ms.Tensor(np.array([0.5], np.float32)))
    weight = net[0].weight
    assert net.to(ms.float16) is net and net[0].weight is weight
    got = {"weight": str(net[0].weight.dtype), "steps": str(ms.dtype.get_dtype(net.steps.dtype)),
           "scale": str(ms.dtype.get_dtype(net.scale.dtype))}
    assert got == {k: want[k] for k in got}
    np.testing.assert_array_equal(net[0].weight.asnumpy(), want["weight_values"])
    assert net(ms.Tensor(X, ms.float16)).dtype == np.float16
    cpu = jax.devices("cpu")[0]
    assert net.to("CPU")[0].weight.value.devices() == {cpu}
    with pytest.raises(ValueError, match="device"):
        net.to("Ascend")


def test_to_empty_and_apply_and_set_grad_of_containers():
    net = nn.SequentialCell([dense(), nn.CellList([dense()])])
    assert net.set_grad() is None  # SequentialCell's set_grad: recursive, returns None (MindSpore's)
    assert all(c.requires_grad for _, c in net.cells_and_names())
    net.to_empty()
    np.testing.assert_array_equal(net[0].weight.asnumpy(), np.zeros((2, 2), np.float32))


class WithBuffers(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = dense()
        self.register_buffer("running", ms.Tensor(np.array([1.0, 2.0], np.float32)))
        self.register_buffer("mask", ms.Tensor(np.array([1, 0], np.int32)), persistent=False)
        self.register_buffer("nothing", None)

    def construct(self, x):
        return self.dense(x) * self.running


def test_buffers_as_mindspore():
    want = REC["cell/buffers"]["output"]
    net = WithBuffers()
    named = list(net.named_buffers())
    assert [n for n, _ in named] == [n for n, _ in want["named_buffers"]]
    for (_, got), (_, w) in zip(named, want["named_buffers"]):
        np.testing.assert_array_equal(got, w)
    assert len(list(net.buffers(recurse=False))) == want["buffers_no_recurse"]
    assert sorted(net.state_dict()) == sorted(want["state_dict"])
    np.testing.assert_array_equal(net.get_buffer("running"), want["get_buffer"])
    np.testing.assert_allclose(net(ms.Tensor(X)), want["forward"], rtol=1e-6)
    np.testing.assert_allclose(ms.jit(net)(ms.Tensor(X)), want["forward"], rtol=1e-6)
    assert net.nothing is None


def test_a_buffer_changed_by_load_state_dict_or_to_is_read_afresh_by_jit():
    net = WithBuffers()
    step = ms.jit(lambda x: net(x))
    first = step(ms.Tensor(X))
    net.load_state_dict({"running": ms.Tensor(np.array([2.0, 4.0], np.float32))}, strict=False)
    np.testing.assert_allclose(step(ms.Tensor(X)), first * np.array([2.0, 2.0], np.float32), rtol=1e-6)
    net.to(ms.float16)
    assert ms.jit(lambda n, x: n(x))(net, ms.Tensor(X, ms.float16)).dtype == np.float16
    assert any(leaf.shape == (2,) and leaf.dtype == np.int32 for leaf in jax.tree_util.tree_leaves(net))


@pytest.mark.parametrize("case, call", [
    ("cell/register_buffer/exists", lambda: WithBuffers().register_buffer("dense", ms.Tensor([1.0]))),
    ("cell/register_buffer/dot", lambda: WithBuffers().register_buffer("a.b", ms.Tensor([1.0]))),
    ("cell/register_buffer/not_tensor", lambda: WithBuffers().register_buffer("c", [1.0])),
    ("cell/get_buffer/not_buffer", lambda: WithBuffers().get_buffer("dense")),
    ("cell/load_state_dict/shape", lambda: WithBuffers().load_state_dict(
        {"dense.weight": ms.Tensor(np.ones((3, 2), np.float32))}, strict=False)),
])
def test_buffer_and_state_dict_errors_as_mindspore(case, call):
    raises_as_recorded(case, call)


LOAD_KEYS = {"all": ["dense.weight", "dense.bias", "running"], "partial": ["dense.weight"],
             "extra": ["dense.weight", "dense.bias", "running", "extra", "dense.extra", "mask"]}


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("case", sorted(LOAD_KEYS))
def test_load_state_dict_as_mindspore(case, strict):
    want = REC[f"cell/load_state_dict/{case}/strict={strict}"]
    src = {"dense.weight": ms.Tensor(ONES), "dense.bias": ms.Tensor(np.zeros(2, np.float32)),
           "running": ms.Tensor(np.array([5.0, 6.0], np.float32)), "extra": ms.Tensor(1.0),
           "dense.extra": ms.Tensor(1.0), "mask": ms.Tensor(np.array([3, 3], np.int32))}
    net = WithBuffers()
    state = {k: src[k] for k in LOAD_KEYS[case]}
    if "error" in want:
        with pytest.raises(getattr(builtins, want["error"]), match="Error"):
            net.load_state_dict(state, strict=strict)
        return
    res = net.load_state_dict(state, strict=strict)
    out = want["output"]
    assert (list(res.missing_keys), list(res.unexpected_keys)) == (out["missing"], out["unexpected"])
    for name, value in out["values"].items():
        np.testing.assert_allclose(dict((p.name, p) for p in net.get_parameters())[name], value)
    np.testing.assert_array_equal(net.running, out["running"])
    np.testing.assert_array_equal(net.mask, out["mask"])


def test_state_dict_round_trip_hooks_and_extra_state():
    class Counter(WithBuffers):
        def get_extra_state(self):
            return {"seen": 7}

        def set_extra_state(self, state):
            self.__dict__["restored"] = state

    src, dst = Counter(), Counter()
    calls = []
    handle = src.register_state_dict_pre_hook(lambda cell, prefix, keep_vars: calls.append(("pre", prefix)))
    src.register_state_dict_post_hook(lambda cell, sd, prefix, meta: calls.append(("post", len(sd))))
    dst.register_load_state_dict_post_hook(lambda cell, keys: calls.append(("load", list(keys.missing_keys))))
    state = src.state_dict()
    assert list(state) == ["running", "_extra_state", "dense.weight", "dense.bias"]
    assert state["dense.weight"] is src.dense.weight  # references, as MindSpore's
    src.dense.weight.set_data(ms.Tensor(ONES))
    assert dst.load_state_dict(state) == ([], [])
    np.testing.assert_array_equal(dst.dense.weight.asnumpy(), ONES)
    assert dst.restored == {"seen": 7}
    handle.remove()
    src.state_dict()
    assert calls == [("pre", ""), ("post", 4), ("load", []), ("post", 4)]


def test_inputs_compile_and_deprecated_members():
    net = dense()
    assert net.get_inputs() is None
    net.set_inputs(ms.Tensor(X))
    assert len(net.get_inputs()) == 1
    assert not net.compiled
    net.compile(ms.Tensor(X))
    assert net.compiled and net.compile_cache == {net.phase}
    np.testing.assert_allclose(net.compile_and_run(ms.Tensor(X)), net(ms.Tensor(X)), rtol=1e-6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert net.cast_inputs((ms.Tensor(X),), ms.float16) is None
        assert net.remove_redundant_parameters() is None
        np.testing.assert_allclose(net.run_construct((ms.Tensor(X),), {}), net(ms.Tensor(X)), rtol=1e-6)
    assert len(caught) == 3


def test_mixed_precision_type_members():
    from cellkit.cell_members import MixedPrecisionType
    net = dense()
    assert net.mixed_precision_type is None and net.get_mixed_precision_type() == MixedPrecisionType.NOTSET
    net.set_mixed_precision_type(MixedPrecisionType.FP16)
    assert net(ms.Tensor(X)).dtype == np.float16
    net.add_flags(fp32=True)
    assert net.get_mixed_precision_type() == MixedPrecisionType.FP32
    with pytest.raises(TypeError, match="set_mixed_precision_type"):
        net.set_mixed_precision_type("fp16")


def test_instance_bookkeeping():
    before = nn.Cell.total_instance_count
    net = dense()
    assert nn.Cell.total_instance_count == before + 1
    assert net.create_time > 0 and not net.has_bprop and net.cell_type is None
    net.update_cell_type("quant")
    assert net.cell_type == "quant"
    holder = nn.Cell()
    holder.ps = [ms.Parameter(ms.Tensor([1.0]), name="q")]
    assert holder.exist_names == {"q"} and len(holder.exist_objs) == 1


def test_flags_given_to_the_constructor_are_flags():
    cell = nn.Cell(flags={"sink_mode": True})
    assert cell.sink_mode is True and cell.get_flags() == {"sink_mode": True}


def test_dense_operator_attributes_serve_a_subclass_construct():
    class MyDense(nn.Dense):
        def construct(self, x):
            x = self.bias_add(self.matmul(x, self.weight), self.bias)
            return self.reshape(x, self.shape_op(x))

    mine, ref = MyDense(2, 2, weight_init=ms.Tensor(W), bias_init=ms.Tensor(B)), dense()
    np.testing.assert_allclose(mine(ms.Tensor(X)), ref(ms.Tensor(X)), rtol=1e-6)
    np.testing.assert_allclose(ms.jit(mine)(ms.Tensor(X)), ref(ms.Tensor(X)), rtol=1e-6)
    assert not mine.activation_flag and nn.Dense(2, 2, activation="relu").activation_flag
    np.testing.assert_array_equal(mine.bias_add(ms.Tensor(np.zeros((1, 2, 1, 1), np.float32)), ms.Tensor(B))[0, :, 0, 0],
                                  B)
