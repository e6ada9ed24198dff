"""Buffer donation in ``cellkit.jit``: the old values of written Parameters are donated, never one the user holds."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit import nn, ops
from cellkit.engine import donation


class Net(nn.Cell):
    """Dense, BatchNorm (moving statistics written in training mode), Dense."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(4, 8)
        self.bn = nn.BatchNorm1d(8)
        self.fc2 = nn.Dense(8, 3)

    def construct(self, x):
        return self.fc2(ops.relu(self.bn(self.fc1(x))))


X = jnp.asarray(np.random.default_rng(0).normal(size=(6, 4)), jnp.float32)
Y = jnp.asarray([0, 1, 2, 0, 1, 2], jnp.int32)


def _train(donate=None, opt_cls=nn.Adam):
    """A MindSpore-style step (Cell and optimizer through the closure); returns (step, net, opt)."""
    ms.set_seed(0)
    net = Net()
    net.set_train()
    opt = opt_cls(net.trainable_params(), learning_rate=0.1)
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    grad_fn = ms.value_and_grad(lambda x, y: loss_fn(net(x), y), None, opt.parameters)

    def step(x, y):
        loss, grads = grad_fn(x, y)
        opt(grads)
        return loss
    return ms.jit(step, donate=donate), net, opt


def _state(*cells):
    return {f"{i}.{n}": np.asarray(p.value) for i, c in enumerate(cells) for n, p in c.parameters_and_names()}


@pytest.fixture(autouse=True)
def _one_thread(monkeypatch):
    """Each test starts as if only this thread had called cellkit.jit (another test may have used threads)."""
    monkeypatch.setattr(donation, "_owner", [None])
    monkeypatch.setattr(donation, "shared", [False])


@pytest.fixture
def spy(monkeypatch):
    """The lists of values each call donated (held here, so their arrays can be inspected afterwards)."""
    seen = []
    protect = donation.protect

    def record(values):
        protect(values)
        seen.append(values)
    monkeypatch.setattr(donation, "protect", record)
    return seen


def _reference(steps):
    step, net, opt = _train(donate=False)
    for _ in range(steps):
        step(X, Y)
    return _state(net, opt)


def _assert_same(state, ref):
    assert state.keys() == ref.keys()
    for k in ref:
        np.testing.assert_allclose(state[k], ref[k], rtol=1e-6, atol=1e-7, err_msg=k)


def test_written_parameters_are_donated_and_results_unchanged(spy):
    step, net, opt = _train()
    for _ in range(3):
        step(X, Y)
    # Weights, both Adam moments, BatchNorm's moving statistics, global_step and Adam's beta1_power and
    # beta2_power were donated...
    n_written = len(net.trainable_params()) * 3 + 2 + 1 + 2
    assert [len(v) for v in spy] == [n_written] * 3
    # ...and consumed: the old arrays are deleted, the Parameters hold new, valid ones.
    assert all(v.is_deleted() for values in spy for v in values)
    assert not any(p.value.is_deleted() for p in net.get_parameters())
    _assert_same(_state(net, opt), _reference(3))


def test_compiled_step_aliases_every_written_buffer():
    step, net, opt = _train()
    mem = step.lower(X, Y).compile().memory_analysis()
    written = {id(p): p for p in list(net.get_parameters()) + list(opt.get_parameters())
               if p.name != "learning_rate"}
    assert mem.alias_size_in_bytes == sum(p.nbytes for p in written.values())
    plain = ms.jit(step.fn, donate=False).lower(X, Y).compile().memory_analysis()
    assert plain.alias_size_in_bytes == 0
    assert mem.argument_size_in_bytes == plain.argument_size_in_bytes


@pytest.mark.parametrize("take", ["value", "numpy_view", "asnumpy", "list", "clone"])
def test_a_value_the_user_holds_stays_valid(take, spy):
    step, net, opt = _train()
    step(X, Y)
    before = np.array(net.fc1.weight.value)
    if take == "value":
        held = net.fc1.weight.value
    elif take == "numpy_view":
        held = np.asarray(net.fc1.weight)
    elif take == "asnumpy":
        held = net.fc1.weight.asnumpy()
    elif take == "list":
        held = [p.value for p in opt.moment1]
        before = np.array(held[0])
    else:
        clone = net.fc1.weight.clone()
        held = clone.value
    step(X, Y)
    first = held[0] if take == "list" else held
    if isinstance(first, jax.Array):
        assert not first.is_deleted()
    np.testing.assert_array_equal(np.asarray(first), before)
    if take == "clone":
        np.testing.assert_array_equal(np.asarray(clone.value), before)
    assert not np.array_equal(np.asarray(net.fc1.weight.value), before)   # the Parameter moved on
    _assert_same(_state(net, opt), _reference(2))


def test_an_argument_that_is_a_written_parameters_value_stays_valid():
    w = ms.Parameter(ms.Tensor([1.0, 2.0], ms.float32), name="w")
    step = ms.jit(lambda x: ops.assign(w, w + x))
    step(w.value)                      # the argument is w's old value: not donated
    assert w.asnumpy().tolist() == [2.0, 4.0]
    x = w.value
    step(x)
    assert not x.is_deleted() and x.tolist() == [2.0, 4.0] and w.asnumpy().tolist() == [4.0, 8.0]


def test_a_parameter_shared_with_a_cell_outside_the_step():
    ms.set_seed(0)
    inner = nn.Dense(4, 3)
    other = nn.SequentialCell([inner])           # the same Parameters, reached from another Cell
    opt = nn.SGD(inner.trainable_params(), learning_rate=0.1)
    grad_fn = ms.value_and_grad(lambda x: inner(x).sum(), None, opt.parameters)

    @ms.jit
    def step(x):
        _, g = grad_fn(x)
        opt(g)
    step(X)
    step(X)
    out = other(X)                               # reads the new values: nothing deleted
    np.testing.assert_allclose(np.asarray(out), np.asarray(inner(X)))
    assert not any(p.value.is_deleted() for p in other.get_parameters())


@pytest.mark.parametrize("switch", ["jit", "context"])
def test_opt_out(switch, spy):
    if switch == "jit":
        step, net, opt = _train(donate=False)
    else:
        step, net, opt = _train()
        ms.set_context(jit_donate=False)
    try:
        step(X, Y)
        step(X, Y)
        assert spy == []
        assert step.lower(X, Y).compile().memory_analysis().alias_size_in_bytes == 0
        # A function's own switch wins over the context.
        forced, net2, _ = _train(donate=True)
        forced(X, Y)
        assert len(spy) == 1
    finally:
        ms.set_context(jit_donate=True)
    _assert_same(_state(net, opt), _reference(2))
    step(X, Y)
    assert len(spy) == (2 if switch == "context" else 1)   # the context back on: donated again


def test_a_second_thread_ends_donation(spy):
    import threading

    step, net, opt = _train()
    step(X, Y)
    assert len(spy) == 1
    done = []
    worker = threading.Thread(target=lambda: done.append(float(step(X, Y))))
    worker.start()
    worker.join()
    assert done and len(spy) == 1          # the other thread's call donated nothing...
    step(X, Y)
    assert len(spy) == 1                   # ...and from then on no call does
    _assert_same(_state(net, opt), _reference(3))


def test_bad_switches_are_refused():
    with pytest.raises(TypeError, match="donate must be True, False or None"):
        ms.jit(lambda: None, donate="yes")
    with pytest.raises(TypeError, match="jit_donate must be True or False"):
        ms.set_context(jit_donate="no")
    assert ms.get_context("jit_donate") is True


def test_nothing_is_donated_while_jax_checks_for_nans(spy):
    p = ms.Parameter(ms.Tensor([1.0, -1.0], ms.float32), name="p")
    step = ms.jit(lambda k: ops.assign(p, jnp.log(p.value * k)))
    step(1.0)
    ms.set_context(debug_nans=True)
    try:
        with pytest.raises(FloatingPointError):
            step(1.0)                           # log(-1): refused, and p keeps its value
    finally:
        ms.set_context(debug_nans=False)
    assert len(spy) == 1
    assert not p.value.is_deleted()
    np.testing.assert_allclose(p.asnumpy(), [0.0, np.nan])


def test_checkpoints_saved_between_steps(tmp_path):
    step, net, opt = _train()
    saved = []
    for i in range(3):
        step(X, Y)
        path = str(tmp_path / f"step{i}.ckpt")
        ms.save_checkpoint(net, path)
        saved.append((path, _state(net)))
    for path, state in saved:
        loaded = ms.load_checkpoint(path)
        for name, value in state.items():
            np.testing.assert_array_equal(np.asarray(loaded[name[2:]].value), value)
    _assert_same(_state(net, opt), _reference(3))


def test_a_write_the_discovery_did_not_predict_is_kept_safe():
    # The discovery trace and the compiled trace see different Python state: the first writes p,
    # the second does not (p is donated yet must come back unchanged), then the reverse for q.
    p = ms.Parameter(ms.Tensor([1.0, 2.0], ms.float32), name="p")
    q = ms.Parameter(ms.Tensor([3.0], ms.float32), name="q")
    traces = []

    @ms.jit
    def f():
        traces.append(1)
        if len(traces) == 1:
            ops.assign(p, p + 1.0)
        else:
            ops.assign(q, q * 2.0)
        return p + q

    f()
    f()
    assert len(traces) == 2
    assert p.asnumpy().tolist() == [1.0, 2.0] and q.asnumpy().tolist() == [12.0]


def test_inside_an_outer_jax_transform_nothing_is_donated(spy):
    net = nn.Dense(2, 2)
    opt = nn.SGD(net.trainable_params(), learning_rate=0.5)
    grads = (jnp.ones((2, 2)), jnp.ones((2,)))
    step = ms.jit(lambda opt: opt(grads))

    @jax.jit
    def outer(opt):          # the pure layer: opt is a value here, its Parameters hold tracers
        step(opt)
        return opt

    before = net.weight.asnumpy()
    out = outer(opt)
    np.testing.assert_allclose(np.asarray(out.parameters[0].value), before - 0.5)
    assert not net.weight.value.is_deleted() and spy == []


def test_a_failure_after_donation_names_the_lost_parameters():
    w = ms.Parameter(ms.Tensor([1.0], ms.float32), name="w")
    b = ms.Parameter(ms.Tensor([2.0], ms.float32), name="b")
    gone = jnp.ones(1) + 0.0
    gone.delete()
    with pytest.raises(RuntimeError, match=r"the Parameters 'w' \(1 in all\) no longer hold values") as info:
        donation.check_lost([w, b], [gone, b.value], ValueError("runtime failure"))
    assert isinstance(info.value.__cause__, ValueError)
    donation.check_lost([b], [b.value], ValueError("nothing lost"))   # nothing consumed: no new error
