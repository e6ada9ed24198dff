"""Behaviours MindSpore programs rely on, against MindSpore 2.10's recorded ones
(``tests/fixtures/record/record_members_behaviour.py``): ``load_param_into_net``'s ``strict_load``
and return value, ``HyperMap``/``Map`` over any mix of tuples, lists and ParameterTuples,
``clip_by_global_norm`` over a ParameterTuple, and ``TrainOneStepCell``'s attributes used by a
model-zoo subclass, eagerly, in GRAPH_MODE and under ``cellkit.jit``."""

import builtins
import warnings

import numpy as np
import pytest

import cellkit as ms
from cellkit import nn, ops
from cellkit.ops import composite as C
from cellkit.ops import functional as F
from ms_fixtures import load

REC = load("members_behaviour")
W = np.array([[0.5, -1.0], [2.0, 0.25]], np.float32)
B = np.array([0.1, -0.2], np.float32)
ONES = np.ones((2, 2), np.float32)


def dense():
    return nn.Dense(2, 2, weight_init=ms.Tensor(W), bias_init=ms.Tensor(B))


def values(net):
    return {p.name: p.asnumpy() for p in net.get_parameters()}


def assert_values(got, want, **tol):
    assert sorted(got) == sorted(want)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], **tol)


# ----- load_param_into_net ------------------------------------------------------------------------------

def P(value, name):
    return ms.Parameter(ms.Tensor(value), name=name)


CASES = {
    "weight_only": lambda: {"weight": P(ONES, "weight")},
    "extra_key": lambda: {"weight": P(ONES, "weight"), "bias": P(np.ones(2, np.float32), "bias"),
                          "step": P(np.array(3, np.int32), "step")},
    "prefixed": lambda: {"backbone.weight": P(ONES, "backbone.weight"),
                         "backbone.bias": P(np.ones(2, np.float32), "backbone.bias")},
    "prefixed_partial": lambda: {"backbone.weight": P(ONES, "backbone.weight")},
    "float16": lambda: {"weight": P(ONES.astype(np.float16), "weight"), "bias": P(np.ones(2, np.float32), "bias")},
    "empty": lambda: {},
    "wrong_shape": lambda: {"weight": P(np.ones((3, 2), np.float32), "weight")},
}


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("case", sorted(CASES))
def test_load_param_into_net_as_mindspore(case, strict):
    want = REC[f"load/{case}/strict={strict}"]
    net = dense()
    if "error" in want:
        with pytest.raises(getattr(builtins, want["error"])):
            ms.load_param_into_net(net, CASES[case](), strict_load=strict)
        assert_values(values(net), {"weight": W, "bias": B})
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Parameters not loaded are warned about, as MindSpore logs them
        got = ms.load_param_into_net(net, CASES[case](), strict_load=strict)
    assert [list(got[0]), list(got[1])] == want["output"]["returned"]
    assert_values(values(net), want["output"]["values"])


# ----- HyperMap, Map, clip_by_global_norm -----------------------------------------------------------------

add = C.MultitypeFuncGraph("add")


@add.register("Tensor", "Tensor")
def _add(x, y):
    return x + y


scale = C.MultitypeFuncGraph("scale")


@scale.register("Number", "Tensor")
def _scale(s, x):
    return x * s


def pt():
    return ms.ParameterTuple([ms.Parameter(ms.Tensor(np.array([1.0, 2.0], np.float32)), name="p0"),
                              ms.Parameter(ms.Tensor(np.array([3.0], np.float32)), name="p1")])


def seq(kind):
    xs = [ms.Tensor(np.array([10.0, 20.0], np.float32)), ms.Tensor(np.array([30.0], np.float32))]
    return {"tuple": tuple(xs), "list": list(xs), "ParameterTuple": pt()}[kind]


def check_sequence(out, want):
    assert type(out).__name__ == want["type"]
    assert len(out) == len(want["values"])
    for o, w in zip(out, want["values"]):
        np.testing.assert_allclose(o, w, rtol=1e-6)


KINDS = ["tuple", "list", "ParameterTuple"]


@pytest.mark.parametrize("b", KINDS)
@pytest.mark.parametrize("a", KINDS)
@pytest.mark.parametrize("mapper", ["HyperMap", "Map"])
def test_hypermap_and_map_over_any_mix_of_sequences(mapper, a, b):
    fn = getattr(C, mapper)()
    check_sequence(fn(add, seq(a), seq(b)), REC[f"{mapper}/{a}+{b}"]["output"])


@pytest.mark.parametrize("mapper", ["HyperMap", "Map"])
def test_hypermap_partial_over_a_parameter_tuple(mapper):
    out = getattr(C, mapper)()(F.partial(scale, 2.0), pt())
    check_sequence(out, REC[f"{mapper}/partial/ParameterTuple"]["output"])
    check_sequence(C.HyperMap(add)(pt(), seq("list")), REC["HyperMap/bound/ParameterTuple+list"]["output"])


def test_hypermap_nested_gives_tuples_at_every_level():
    want = REC["HyperMap/nested"]["output"]
    out = C.HyperMap()(add, (seq("tuple"), seq("list")), [seq("list"), pt()])
    assert type(out).__name__ == want["type"] and [type(o).__name__ for o in out] == want["inner"]
    for o, w in zip(out, want["values"]):
        for oi, wi in zip(o, w):
            np.testing.assert_allclose(oi, wi, rtol=1e-6)


@pytest.mark.parametrize("kind", KINDS)
def test_clip_by_global_norm_over_a_parameter_tuple(kind):
    x = pt() if kind == "ParameterTuple" else seq(kind)
    check_sequence(ops.clip_by_global_norm(x, 1.0), REC[f"clip_by_global_norm/{kind}"]["output"])


# ----- TrainOneStepCell -----------------------------------------------------------------------------------

GRADIENT_CLIP_TYPE = 1
GRADIENT_CLIP_VALUE = 1.0
clip_grad = C.MultitypeFuncGraph("clip_grad")


@clip_grad.register("Number", "Number", "Tensor")
def _clip_grad(clip_type, clip_value, grad):
    if clip_type not in (0, 1):
        return grad
    dt = F.dtype(grad)
    if clip_type == 0:
        return ops.clip_by_value(grad, F.cast(F.tuple_to_array((-clip_value,)), dt),
                                 F.cast(F.tuple_to_array((clip_value,)), dt))
    return nn.ClipByNorm()(grad, F.cast(F.tuple_to_array((clip_value,)), dt))


class ClipTrainOneStepCell(nn.TrainOneStepCell):
    """As the model zoo's BERT/GPT training cells: clip the gradients with hyper_map, reduce, update."""

    def __init__(self, network, optimizer, sens=1.0):
        super().__init__(network, optimizer, sens)
        self.hyper_map = C.HyperMap()
        self.cast = ops.Cast()

    def construct(self, x, y):
        weights = self.weights
        loss = self.network(x, y)
        grads = self.grad(self.network, weights)(x, y, self.cast(F.tuple_to_array((self.sens,)), ms.float32))
        grads = self.hyper_map(F.partial(clip_grad, GRADIENT_CLIP_TYPE, GRADIENT_CLIP_VALUE), grads)
        grads = self.grad_reducer(grads)
        self.optimizer(grads)
        return loss


X = np.array([[1.0, 2.0], [-1.0, 0.5], [3.0, -2.0], [0.0, 1.0]], np.float32)
Y = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, -1.0], [0.5, 0.5]], np.float32)
STEPS = {"ClipTrainOneStepCell": (ClipTrainOneStepCell, {}), "TrainOneStepCell/sens=2": (nn.TrainOneStepCell,
                                                                                         {"sens": 2.0})}


def run(name, how):
    cls, kwargs = STEPS[name]
    net = dense()
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    step = cls(loss_net, nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9), **kwargs)
    step.set_train()
    call = ms.jit(step) if how == "jit" else step
    if how == "graph":
        ms.set_context(mode=ms.GRAPH_MODE)
    try:
        losses = [float(call(ms.Tensor(X), ms.Tensor(Y))) for _ in range(5)]
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    return losses, values(net)


@pytest.mark.parametrize("how", ["eager", "graph", "jit"])
@pytest.mark.parametrize("name", sorted(STEPS))
def test_train_one_step_subclass_matches_mindspore(name, how):
    want = REC[f"train/{name}/{'graph' if how == 'graph' else 'pynative'}"]["output"]
    losses, got = run(name, how)
    np.testing.assert_allclose(losses, want["losses"], rtol=2e-5)
    assert_values(got, want["values"], rtol=2e-5, atol=1e-6)


def test_train_one_step_attributes_as_mindspore():
    want = REC["train/attributes"]["output"]
    net = dense()
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    step = nn.TrainOneStepCell(loss_net, nn.Momentum(net.trainable_params(), 0.1, 0.9))
    got = {"sens": step.sens, "reducer_flag": step.reducer_flag, "grad_reducer": type(step.grad_reducer).__name__,
           "grad": type(step.grad).__name__, "weights": [p.name for p in step.weights],
           "weights_type": type(step.weights).__name__, "network": type(step.network).__name__,
           "optimizer": type(step.optimizer).__name__, "network.requires_grad": loss_net.requires_grad,
           "requires_grad": step.requires_grad, "parallel_mode": step.parallel_mode,
           "sense_flag": step.sense_flag, "use_graceful_exit": step.use_graceful_exit}
    assert got == want


def test_a_subclass_may_use_hyper_map_without_defining_it():
    class Step(nn.TrainOneStepCell):
        def construct(self, x, y):
            loss = self.network(x, y)
            grads = self.grad(self.network, self.weights)(x, y, ops.ones_like(loss) * self.sens)
            grads = self.hyper_map(F.partial(clip_grad, GRADIENT_CLIP_TYPE, GRADIENT_CLIP_VALUE), grads)
            self.optimizer(self.grad_reducer(grads))
            return loss

    net = dense()
    step = Step(nn.WithLossCell(net, nn.MSELoss()), nn.Momentum(net.trainable_params(), 0.1, 0.9))
    losses = [float(step(ms.Tensor(X), ms.Tensor(Y))) for _ in range(5)]
    np.testing.assert_allclose(losses, REC["train/ClipTrainOneStepCell/pynative"]["output"]["losses"], rtol=2e-5)


grad_scale = C.MultitypeFuncGraph("grad_scale")


@grad_scale.register("Tensor", "Tensor")
def _grad_scale(scale, grad):
    return grad * ops.Reciprocal()(scale)


class ScaledTrainOneStepCell(nn.TrainOneStepWithLossScaleCell):
    """As the model zoo's BertTrainOneStepWithLossScaleCell (the overflow check as on a CPU)."""

    def __init__(self, network, optimizer, scale_update_cell=None):
        super().__init__(network, optimizer, scale_update_cell)
        self.cast = ops.Cast()
        self.degree = 1

    def get_overflow_status(self, status, compute_output):
        overflow = ops.zeros((), ms.bool_)
        for g in compute_output:
            overflow = ops.logical_or(overflow, ops.logical_not(ops.isfinite(g).all()))
        return overflow

    def construct(self, x, y, sens=None):
        weights = self.weights
        loss = self.network(x, y)
        scaling_sens = self.scale_sense if sens is None else sens
        status, scaling_sens = self.start_overflow_check(loss, scaling_sens)
        grads = self.grad(self.network, weights)(x, y, self.cast(scaling_sens, ms.float32))
        grads = self.grad_reducer(grads)
        grads = self.hyper_map(F.partial(grad_scale, scaling_sens * self.degree), grads)
        grads = self.hyper_map(F.partial(clip_grad, GRADIENT_CLIP_TYPE, GRADIENT_CLIP_VALUE), grads)
        cond = self.get_overflow_status(status, grads)
        overflow = cond
        if sens is None:
            overflow = self.loss_scaling_manager(self.scale_sense, cond)
        if not overflow:
            self.optimizer(grads)
        return (loss, cond, scaling_sens)


# GRAPH_MODE: `if not overflow:` branches on a traced value, so the step runs op by op (cellkit.jit's
# fallback, which warns); the numbers are MindSpore's either way.
@pytest.mark.filterwarnings("ignore:cellkit.jit.*Python control flow:RuntimeWarning")
@pytest.mark.parametrize("big", [False, True], ids=["no-overflow", "overflow"])
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_loss_scale_subclass_matches_mindspore(mode, big):
    want = REC[f"train/ScaledTrainOneStepCell/{'overflow/' if big else ''}{mode}"]["output"]
    net = dense()
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    manager = nn.DynamicLossScaleUpdateCell(loss_scale_value=2.0 ** (127 if big else 10), scale_factor=2,
                                            scale_window=2)
    step = ScaledTrainOneStepCell(loss_net, nn.Momentum(net.trainable_params(), 0.1, 0.9), manager)
    step.set_train()
    if mode == "graph":
        ms.set_context(mode=ms.GRAPH_MODE)
    got = []
    try:
        for _ in range(6):
            loss, cond, scale = step(ms.Tensor(X), ms.Tensor(Y))
            got.append([float(loss), bool(cond), float(np.asarray(scale).reshape(-1)[0])])
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert [g[1] for g in got] == [w[1] for w in want["steps"]]
    np.testing.assert_allclose([g[0] for g in got], [w[0] for w in want["steps"]], rtol=2e-5)
    np.testing.assert_allclose([g[2] for g in got], [w[2] for w in want["steps"]], rtol=1e-6)
    assert_values(values(net), want["values"], rtol=2e-5, atol=1e-6)
