import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit import engine, nn, ops

from engine_cases import Network, leak_check, X, net, reference  # noqa: F401 (leak_check: an autouse fixture)

# ----- jit: capture and write-back ---------------------------------------------------

def test_seed_modify_parameter_on_a_global_net():
    @ms.jit
    def modify_parameter():
        b_hat = ms.Tensor([7, 8, 9])
        ops.assign(net.b, b_hat)
        return True

    assert bool(modify_parameter())
    np.testing.assert_array_equal(net.b.asnumpy(), [7., 8., 9.])
    net.b.set_data(ms.Tensor([1., 2., 3.]))


def test_captured_parameters_are_inputs_not_constants():
    local = Network()

    @ms.jit
    def f(x):
        return local(x)

    np.testing.assert_allclose(f(X), reference(local.w, local.b, X), rtol=1e-6)
    local.b.set_data(ms.Tensor([10., 20., 30.]))
    local.w[0, 0] = 100.
    np.testing.assert_allclose(f(X), reference(local.w, local.b, X), rtol=1e-6)
    assert f.trace_count == 1 and f.discovery_count == 1


def test_every_assignment_form_is_written_back():
    p = ms.Parameter(ms.Tensor([1., 2., 3.]), name="p")
    q = ms.Parameter(ms.Tensor([0., 0.]), name="q")
    r = ms.Parameter(ms.Tensor([5.]), name="r")

    @ms.jit
    def f(x, arg_param):
        ops.assign(p, p * x)
        q.set_data(q + 1)
        r[0] = r[0] + 10.
        arg_param[1] = 42.
        ops.Assign()(p, p + 1)
        return p.sum()

    s = ms.Parameter(ms.Tensor([0., 0.]), name="s")
    out = f(ms.Tensor(2.0), s)
    np.testing.assert_array_equal(p.asnumpy(), [3., 5., 7.])
    np.testing.assert_array_equal(q.asnumpy(), [1., 1.])
    np.testing.assert_array_equal(r.asnumpy(), [15.])
    np.testing.assert_array_equal(s.asnumpy(), [0., 42.])
    assert float(out) == 15.
    f(ms.Tensor(1.0), s)
    np.testing.assert_array_equal(p.asnumpy(), [4., 6., 8.])
    np.testing.assert_array_equal(r.asnumpy(), [25.])
    assert f.trace_count == 1


def test_reads_after_writes_see_new_values_and_only_written_are_updated():
    a = ms.Parameter(ms.Tensor(1.0), name="a")
    b = ms.Parameter(ms.Tensor(2.0), name="b")
    before = b.value

    @ms.jit
    def f():
        ops.assign(a, a + 1)
        return a * b

    assert float(f()) == 4.0
    assert b.value is before  # read-only: not rewritten


def test_write_only_parameter_is_captured():
    t = ms.Parameter(ms.Tensor([0., 0.]), name="t")

    @ms.jit
    def f(x):
        ops.assign(t, x)

    f(ms.Tensor([3., 4.]))
    np.testing.assert_array_equal(t.asnumpy(), [3., 4.])
    f(ms.Tensor([5., 6.]))
    np.testing.assert_array_equal(t.asnumpy(), [5., 6.])
    assert f.trace_count == 1


def test_no_retrace_on_hits_and_retrace_on_new_shapes():
    n = Network()

    @ms.jit
    def f(net, x):
        return net(x)

    for _ in range(3):
        f(n, X)
    assert f.trace_count == 1
    f(n, ms.Tensor(np.ones((4, 5)), ms.float32))
    assert f.trace_count == 2


def test_two_cells_of_one_structure_share_a_compilation():
    n1, n2 = Network(), Network()
    n2.b.set_data(ms.Tensor([0., 0., 0.]))

    @ms.jit
    def f(net, x):
        return net(x)

    np.testing.assert_allclose(f(n1, X), reference(n1.w, n1.b, X), rtol=1e-6)
    np.testing.assert_allclose(f(n2, X), reference(n2.w, n2.b, X), rtol=1e-6)
    assert f.trace_count == 1


def test_different_static_attributes_do_not_share():
    class Scale(nn.Cell):
        def __init__(self, k):
            super().__init__()
            self.k = k
            self.w = ms.Parameter(ms.Tensor([1.0]), name="w")

        def construct(self, x):
            return x * self.w * self.k

    @ms.jit
    def f(net, x):
        return net(x)

    assert float(f(Scale(2), ms.Tensor(1.0))[0]) == 2.0
    assert float(f(Scale(3), ms.Tensor(1.0))[0]) == 3.0
    assert f.trace_count == 2


def test_structural_change_is_seen():
    class Grow(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = ms.Parameter(ms.Tensor(2.0), name="w")

        def construct(self, x):
            out = x * self.w
            if hasattr(self, "extra"):
                out = out + self.extra
            return out

    g = Grow()

    @ms.jit
    def f(x):
        return g(x)

    assert float(f(ms.Tensor(1.0))) == 2.0
    g.extra = ms.Parameter(ms.Tensor(5.0), name="extra")
    assert float(f(ms.Tensor(1.0))) == 7.0
    g.extra.set_data(ms.Tensor(6.0))
    assert float(f(ms.Tensor(1.0))) == 8.0


def test_set_train_on_a_captured_model_retraces_and_caches_both():
    d = nn.Dropout(p=0.5)

    @ms.jit
    def f(x):
        return d(x)

    x = ops.ones((100,))
    d.set_train(False)
    np.testing.assert_array_equal(f(x), x)
    d.set_train(True)
    assert float((f(x) == 0).sum()) > 10
    d.set_train(False)
    np.testing.assert_array_equal(f(x), x)
    assert f.trace_count == 2


def test_rebinding_a_global_is_seen():
    global rebound
    rebound = Network()

    @ms.jit
    def f(x):
        return rebound(x)

    first = np.asarray(f(X))
    rebound = Network()
    rebound.b.set_data(ms.Tensor([100., 100., 100.]))
    np.testing.assert_allclose(f(X), reference(rebound.w, rebound.b, X), rtol=1e-6)
    assert not np.allclose(first, f(X))


def test_unrelated_cell_construction_does_not_recompile():
    n = Network()

    @ms.jit
    def f(x):
        return n(x)

    f(X)
    nn.Dense(3, 3)  # a structural change elsewhere
    f(X)
    assert f.trace_count == 1


def test_jit_on_construct_and_bound_methods():
    class J(Network):
        @ms.jit
        def construct(self, x):
            ops.assign(self.b, self.b + 1)
            return ops.matmul(x, self.w) + self.b

    j = J()
    out = j(X)
    np.testing.assert_array_equal(j.b.asnumpy(), [2., 3., 4.])
    np.testing.assert_allclose(out, reference(j.w, j.b, X), rtol=1e-6)
    n = Network()
    bound = ms.jit(n.construct)
    np.testing.assert_allclose(bound(X), reference(n.w, n.b, X), rtol=1e-6)


def test_static_argnums_and_kwargs_and_containers():
    n = Network()

    @ms.jit(static_argnums=(1,))
    def f(x, power, *, scale):
        return (n(x) ** power) * scale

    np.testing.assert_allclose(f(X, 2, scale=3.0), reference(n.w, n.b, X) ** 2 * 3, rtol=1e-5)

    @ms.jit
    def g(pair, mode):
        a, b = pair
        return a(X) + b(X) if mode == "add" else a(X) - b(X)

    n2 = Network()
    np.testing.assert_allclose(g((n, n2), "sub"), 0 * reference(n.w, n.b, X), atol=1e-6)
    np.testing.assert_allclose(g([n, n2], "add"), 2 * reference(n.w, n.b, X), rtol=1e-6)


def test_nested_jit_runs_inline():
    p = ms.Parameter(ms.Tensor(1.0), name="p")

    @ms.jit
    def inner(x):
        ops.assign(p, p + x)
        return p

    @ms.jit
    def outer(x):
        return inner(x) * 2

    assert float(outer(ms.Tensor(2.0))) == 6.0
    assert float(p) == 3.0


def test_outputs_that_are_parameters_become_values():
    p = ms.Parameter(ms.Tensor([1., 2.]), name="p")
    out = ms.jit(lambda: p)()
    assert isinstance(out, jax.Array) and out.tolist() == [1., 2.]


# ----- errors ------------------------------------------------------------------------

def test_tracer_leak_into_a_parameter_is_refused():
    g = ms.Parameter(ms.Tensor([1., 2.]), name="g")

    @jax.jit
    def bad(x):
        ops.assign(g, x)
        return x

    with pytest.raises(RuntimeError, match="Parameter 'g': a traced value was assigned"):
        bad(jnp.ones(2, jnp.float32))
    np.testing.assert_array_equal(g.asnumpy(), [1., 2.])


def test_mutating_structure_inside_jit_is_refused():
    n = Network()

    @ms.jit
    def f(x):
        n.extra_attr = 1
        return n(x)

    with pytest.raises(RuntimeError, match="cannot set attribute 'extra_attr' inside a traced function"):
        f(X)
    assert not hasattr(n, "extra_attr")


def test_shape_change_inside_jit_is_refused():
    p = ms.Parameter(ms.Tensor([1., 2.]), name="p")

    @ms.jit
    def f():
        p.set_data(ms.Tensor([1., 2., 3.]), slice_shape=True)

    with pytest.raises(ValueError, match="shape cannot change inside a traced function"):
        f()


def test_assign_checks():
    p = ms.Parameter(ms.Tensor([1., 2.]), name="p")
    with pytest.raises(ValueError, match="Parameter 'p'.*shape"):
        ops.assign(p, ms.Tensor([1., 2., 3.]))
    with pytest.raises(TypeError, match="Parameter 'p'.*Int32|Parameter 'p'.*Float64"):
        ops.assign(ms.Parameter(ms.Tensor([1, 2], ms.int32), name="p"), ms.Tensor([1.5, 2.5]))
    with pytest.raises(TypeError, match="must be a Parameter"):
        ops.assign(ms.Tensor([1.]), ms.Tensor([2.]))
    np.testing.assert_array_equal(p.asnumpy(), [1., 2.])


# ----- random state --------------------------------------------------------------------

def test_dropout_in_jit_fresh_mask_each_call_and_reproducible():
    d = nn.Dropout(p=0.5)
    d.set_train()
    f = ms.jit(lambda x: d(x))
    x = ops.ones((64,))
    ms.set_seed(3)
    first = [np.asarray(f(x)) for _ in range(3)]
    assert not np.array_equal(first[0], first[1])
    ms.set_seed(3)
    second = [np.asarray(f(x)) for _ in range(3)]
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    assert f.trace_count == 1


def test_eager_random_is_reproducible():
    ms.set_seed(5)
    a = [np.asarray(ops.rand(3)) for _ in range(2)]
    ms.set_seed(5)
    b = [np.asarray(ops.rand(3)) for _ in range(2)]
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a[0], a[1])


# ----- modes, interplay, threads ---------------------------------------------------------

def test_graph_mode_routes_top_level_calls_through_jit():
    n = Network()
    engine._graph_call.clear_cache()  # compiled by an earlier test (or the plain run of this one)
    before = engine._graph_call.trace_count
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        out1 = n(X)
        n.b.set_data(ms.Tensor([0., 0., 0.]))
        out2 = n(X)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert engine._graph_call.trace_count == before + 1
    np.testing.assert_allclose(out2, reference(n.w, n.b, X), rtol=1e-6)
    assert not np.allclose(out1, out2)


def test_pure_layer_and_stateful_layer_together():
    n = Network()

    @jax.jit
    def pure(cell, x):
        return ms.jit(lambda c, x: c(x))(cell, x).sum()

    np.testing.assert_allclose(pure(n, X), reference(n.w, n.b, X).sum(), rtol=1e-6)
    g = jax.grad(lambda cell: ms.jit(lambda c: (c(X) ** 2).sum())(cell))(n)
    ref = jax.grad(lambda wv: ((X @ wv + n.b.value) ** 2).sum())(n.w.value)
    np.testing.assert_allclose(g.w.value, ref, rtol=1e-5)


def test_jit_with_checking_leaks():
    n = Network()
    with jax.checking_leaks():
        f = ms.jit(lambda x: ms.value_and_grad(lambda x: n(x).sum(), None, n.trainable_params())(x))
        f(X)
        f(X)


def test_frames_are_thread_local():
    n = Network()
    p = ms.Parameter(ms.Tensor(0.0), name="p")

    @ms.jit
    def step(x):
        ops.assign(p, p + 1)
        return n(x)

    errors, results = [], []

    def worker():
        try:
            for _ in range(20):
                results.append(np.asarray(n(X)))  # eager reads while other threads trace/run
                step(X)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for r in results:
        np.testing.assert_allclose(r, reference(n.w, n.b, X), rtol=1e-6)
    assert 1 <= float(p) <= 80


def test_assigning_a_python_scalar_does_not_cause_a_retrace():
    p = ms.Parameter(ms.Tensor(0.0), name="p")

    @ms.jit
    def f(x):
        return p * x

    f(ms.Tensor(1.0))
    ops.assign(p, 1.0)
    p.set_data(2.0)
    assert float(f(ms.Tensor(1.0))) == 2.0
    assert f.trace_count == 1


def test_jit_arguments_sharing_parameters_are_keyed_by_their_aliasing():
    # f(a, a, b) and f(a, b, b) have the same structure; each must read its own arguments.
    a, b = nn.Dense(2, 2), nn.Dense(2, 2)
    a.weight.set_data(ms.Tensor(np.ones((2, 2)), ms.float32))
    b.weight.set_data(ms.Tensor(np.zeros((2, 2)), ms.float32))

    @ms.jit
    def f(p, q, r):
        return p.weight.sum(), q.weight.sum(), r.weight.sum()

    assert [float(v) for v in f(a, a, b)] == [4.0, 4.0, 0.0]
    assert [float(v) for v in f(a, b, b)] == [4.0, 0.0, 0.0]
    assert [float(v) for v in f(a, a, b)] == [4.0, 4.0, 0.0]
    assert f.trace_count == 2


def test_jit_passes_a_parameter_reached_through_two_arguments_once():
    net = nn.Dense(3, 2)
    opt = nn.SGD(net.trainable_params(), learning_rate=0.1)
    grads = (ms.ops.ones((2, 3)), ms.ops.ones((2,)))

    @ms.jit
    def step(net, opt):
        opt(grads)
        return net.weight.sum()

    before = float(net.weight.value.sum())
    assert float(step(net, opt)) == pytest.approx(before - 0.6, rel=1e-5)
    assert float(net.weight.value.sum()) == pytest.approx(before - 0.6, rel=1e-5)
    entry = next(iter(step._entries.values()))
    plist = entry.plist(step._last_layout[1])
    assert len({id(p) for p in plist}) == len(plist)
