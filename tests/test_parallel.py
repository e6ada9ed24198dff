"""cellkit.parallel on 8 simulated CPU devices (the root conftest sets XLA_FLAGS)."""

import importlib.util
import os
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

import cellkit as ms
from cellkit import initializer as ckinit
from cellkit import nn, ops, parallel
from cellkit.common.initializer import initializer

pytestmark = pytest.mark.skipif(jax.device_count() < 8, reason="needs 8 devices (root conftest.py)")

RTOL, ATOL = 2e-5, 2e-6


@pytest.fixture(scope="module")
def mesh8():
    return parallel.make_mesh((8,), ("data",))


@pytest.fixture(scope="module")
def mesh_model():
    return parallel.make_mesh((8,), ("model",))


@pytest.fixture(scope="module")
def mesh2d():
    return parallel.make_mesh((2, 4), ("data", "model"))


class MLP(nn.Cell):
    """fc1 column-parallel, fc2 row-parallel when ``tp`` (Megatron's layout, MindSpore's (out, in) weights)."""

    def __init__(self, d_in=16, hidden=32, d_out=8, tp=False):
        super().__init__()
        self.fc1 = nn.Dense(d_in, hidden, weight_sharding=P("model", None) if tp else None,
                            bias_sharding=P("model") if tp else None)
        self.fc2 = nn.Dense(hidden, d_out, weight_sharding=P(None, "model") if tp else None)

    def construct(self, x):
        return self.fc2(ops.relu(self.fc1(x)))


def data(batch=16, d_in=16, d_out=8, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(batch, d_in)).astype(np.float32),
            rng.normal(size=(batch, d_out)).astype(np.float32))


def make_step(net, lr=0.1, **jit_options):
    weights = net.trainable_params()
    grad_fn = ms.value_and_grad(lambda x, y: ops.mean((net(x) - y) ** 2), None, weights)

    def step(x, y):
        loss, grads = grad_fn(x, y)
        for p, g in zip(weights, grads):
            ops.assign(p, p - lr * g)
        return loss

    return ms.jit(step, **jit_options)


def train(net, batches, **jit_options):
    step = make_step(net, **jit_options)
    losses = [float(step(x, y)) for x, y in batches]
    return losses, {p.name: np.asarray(p.value) for p in net.get_parameters()}, step


def shard_shapes(array):
    return sorted(tuple(s.data.shape) for s in array.addressable_shards)


def placed(array, mesh, spec):
    """Is ``array`` laid out as ``spec`` on ``mesh`` (trailing Nones or not)?"""
    return array.sharding.is_equivalent_to(NamedSharding(mesh, spec), array.ndim)


def per_device_bytes(arrays):
    total = {}
    for a in arrays:
        for s in a.addressable_shards:
            total[s.device] = total.get(s.device, 0) + s.data.nbytes
    return total


def test_the_suite_runs_on_8_simulated_devices():
    assert jax.device_count() == 8 and jax.devices()[0].platform == "cpu"


# ----- meshes and annotations ----------------------------------------------------------

def test_make_mesh_has_auto_axes_and_explicit_meshes_are_refused(mesh2d):
    assert mesh2d.axis_types == (AxisType.Auto, AxisType.Auto)
    assert dict(mesh2d.shape) == {"data": 2, "model": 4}
    explicit = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))
    with pytest.raises(ValueError, match="Explicit.*Auto"):
        parallel.initialize(nn.Dense(2, 2), explicit)
    with pytest.raises(TypeError, match="Mesh"):
        parallel.initialize(nn.Dense(2, 2), "data")


def test_annotate_globs_regexes_first_match_and_spec_forms():
    net = nn.SequentialCell([MLP(), MLP()])
    parallel.annotate(net, [
        ("0.fc1.weight", ("model", None)),      # a tuple becomes a PartitionSpec
        (re.compile(r"\.fc1\."), "model"),       # a regex found anywhere; a single axis name
        ("*.bias", None),                        # None: replicated
        ("1.*", P(None, "model")),
    ])
    got = {p.name: p.sharding for p in net.get_parameters()}
    assert got == {
        "0.fc1.weight": P("model", None), "0.fc1.bias": P("model"),
        "0.fc2.weight": None, "0.fc2.bias": P(),
        "1.fc1.weight": P("model"), "1.fc1.bias": P("model"),
        "1.fc2.weight": P(None, "model"), "1.fc2.bias": P(),
    }
    # Parameters no rule matches keep their annotation (here: from Dense's keywords).
    tp = MLP(tp=True)
    parallel.annotate(tp, {"fc2.bias": P()})
    assert tp.fc1.weight.sharding == P("model", None) and tp.fc2.weight.sharding == P(None, "model")


def test_annotate_refuses_malformed_rules():
    with pytest.raises(TypeError, match="glob string or a compiled regex"):
        parallel.annotate(MLP(), [(3, P())])
    with pytest.raises(TypeError, match="pairs"):
        parallel.annotate(MLP(), ["fc1.weight"])
    with pytest.raises(TypeError, match="PartitionSpec"):
        parallel.annotate(MLP(), {"*": 3})


def test_shardings_that_do_not_fit_name_the_parameter(mesh2d):
    with pytest.raises(ValueError, match="'weight'.*names 3 dimensions"):
        nn.Dense(4, 8).shard(mesh2d, {"weight": P("model", None, None)})
    with pytest.raises(ValueError, match="'weight'.*axis 'tensor'.*\\('data', 'model'\\)"):
        nn.Dense(4, 8).shard(mesh2d, {"weight": P("tensor")})
    with pytest.raises(ValueError, match="'bias'.*size 6.*4 shards"):
        nn.Dense(4, 6).shard(mesh2d, {"bias": P("model")})
    with pytest.raises(ValueError, match="size 4.*8 shards"):
        nn.Dense(4, 8).shard(mesh2d, {"weight": P(None, ("data", "model"))})


def test_dense_sharding_keywords_store_the_annotation():
    d = nn.Dense(4, 8, weight_sharding=P("model", None), bias_sharding=P("model"))
    assert d.weight.sharding == P("model", None) and d.bias.sharding == P("model")
    assert nn.Dense(4, 8, has_bias=False, weight_sharding=P()).bias is None
    assert nn.Dense(4, 8).weight.sharding is None


# ----- lazy init straight onto the mesh --------------------------------------------------

class Mixed(nn.Cell):
    def __init__(self):
        super().__init__()
        self.a = ms.Parameter(initializer("normal", (16, 8)), name="a")
        self.b = ms.Parameter(initializer(ckinit.TruncatedNormal(0.5), (16, 8)), name="b")
        self.c = ms.Parameter(initializer("zeros", (8,)), name="c")
        self.e = ms.Parameter(initializer(np.arange(16, dtype=np.float32).reshape(2, 8)), name="e")
        self.f = ms.Parameter(initializer("xavier_uniform", (16, 8), ms.float16), name="f")
        self.g = nn.Dense(8, 16)


MIXED_RULES = {"a": P("model"), "b": P(None, "model"), "c": P("model"), "e": P(None, "model"),
               "f": P(("data", "model")), "g.weight": P("model", "data")}


def test_initialize_equals_eager_init_for_the_same_seed(mesh2d):
    ms.set_seed(7)
    eager = Mixed()
    jax.tree_util.tree_leaves(eager)  # makes them, in flattening order
    after_eager = jax.random.key_data(ms.random.next_key())

    ms.set_seed(7)
    lazy = Mixed()
    assert all(p.has_init for p in lazy.get_parameters())
    lazy.shard(mesh2d, MIXED_RULES)
    after_sharded = jax.random.key_data(ms.random.next_key())

    np.testing.assert_array_equal(after_eager, after_sharded)  # the stream advanced alike
    for pe, ps in zip(eager.get_parameters(), lazy.get_parameters()):
        assert ps.dtype == pe.dtype and not ps.has_init
        # Equal up to rounding: XLA may fuse the shard-wise math differently from eager ops.
        np.testing.assert_allclose(np.asarray(ps.value, np.float32), np.asarray(pe.value, np.float32),
                                   rtol=1e-5, atol=1e-7, err_msg=ps.name)
        assert placed(ps.value, mesh2d, MIXED_RULES.get(ps.name, P())), ps.name
    assert shard_shapes(lazy.a.value) == [(4, 8)] * 8
    assert shard_shapes(lazy.f.value) == [(2, 8)] * 8
    assert shard_shapes(lazy.g.weight.value) == [(4, 4)] * 8
    assert shard_shapes(lazy.e.value) == [(2, 2)] * 8
    assert lazy.g.bias.sharding == P()  # unannotated: replicated, and now annotated so


def test_a_model_larger_than_one_device_is_made_in_shards_only(mesh_model, monkeypatch):
    # 4 layers of 512x512 float32 = 4 MiB; pretend each device holds 1.5 MiB.
    budget = 3 * 2**19
    with parallel.abstract():
        net = nn.SequentialCell([nn.Dense(512, 512, weight_sharding=P("model", None),
                                          bias_sharding=P("model")) for _ in range(4)])
    total = sum(p.nbytes for p in net.get_parameters())
    assert total > budget
    assert all(isinstance(p.value, parallel.AbstractValue) for p in net.get_parameters())

    def eager_init(*_):
        raise AssertionError("an initializer ran eagerly, making a full array")

    monkeypatch.setattr(ckinit.Initializer, "__call__", eager_init)
    programs = []
    real_jit = jax.jit

    def spy_jit(fn, **options):  # look at the one program initialize compiles, then run it
        jitted = real_jit(fn, **options)

        def call(*args):
            programs.append(jitted.lower(*args).compile())
            with jax.transfer_guard_host_to_device("disallow"):  # nothing comes from the host
                return jitted(*args)
        return call

    monkeypatch.setattr(jax, "jit", spy_jit)
    parallel.initialize(net, mesh_model)
    monkeypatch.setattr(jax, "jit", real_jit)

    assert len(programs) == 1
    memory = programs[0].memory_analysis()  # per device
    assert memory.output_size_in_bytes < total // 8 + 1024
    assert memory.temp_size_in_bytes < 512 * 512 * 4  # never one whole weight on a device

    arrays = [p.value for p in net.get_parameters()]
    used = per_device_bytes(arrays)
    assert len(used) == 8 and all(b == total // 8 for b in used.values()) and max(used.values()) < budget
    for layer in net:
        assert shard_shapes(layer.weight.value) == [(64, 512)] * 8
        assert shard_shapes(layer.bias.value) == [(64,)] * 8
        assert {s.device for s in layer.weight.value.addressable_shards} == set(jax.devices())
    # No full-size single-device copy survives anywhere.
    assert not [a for a in jax.live_arrays() if a.shape == (512, 512) and len(a.sharding.device_set) == 1]


def test_abstract_cells_hold_no_arrays(mesh_model):
    before = {id(a) for a in jax.live_arrays()}
    with parallel.abstract():
        net = MLP(tp=True)
        kept = ms.Parameter(ms.Tensor([1., 2.]), name="kept")  # an array the code made: kept
    new = [a for a in jax.live_arrays() if id(a) not in before]
    assert [a.shape for a in new] == [(2,)]
    assert isinstance(kept.value, jax.Array)
    assert net.fc1.weight.shape == (32, 16) and net.fc1.weight.dtype == ms.float32
    assert repr(net.fc2.bias) == "Parameter (name=fc2.bias, shape=(8,), dtype=Float32, requires_grad=True)"
    # Abstract Cells are pytrees of ShapeDtypeStructs: jax.eval_shape runs them.
    out = jax.eval_shape(lambda n, x: n(x), net, jax.ShapeDtypeStruct((4, 16), jnp.float32))
    assert out.shape == (4, 8)
    # Outside the block Parameters are lazy as usual.
    assert nn.Dense(2, 2).weight.has_init
    # Using an abstract value says what to do.
    with pytest.raises((AttributeError, TypeError)) as err:
        net(np.ones((1, 16), np.float32))
    assert re.search("abstract.*parallel.initialize.*set_data", str(err.value) + "\n".join(err.value.__notes__))

    parallel.initialize(net, mesh_model)  # (values: see the tensor-parallel training test)
    assert shard_shapes(net.fc1.weight.value) == [(4, 16)] * 8
    assert shard_shapes(net.fc2.weight.value) == [(8, 4)] * 8


def test_set_data_gives_an_abstract_parameter_its_value(mesh_model):
    with parallel.abstract():
        d = nn.Dense(4, 8, weight_sharding=P("model"))
    d.weight.set_data(ms.Tensor(np.ones((8, 4)), ms.float32))  # e.g. from a checkpoint
    parallel.initialize(d, mesh_model)
    np.testing.assert_array_equal(np.asarray(d.weight.value), np.ones((8, 4)))
    assert shard_shapes(d.weight.value) == [(1, 4)] * 8
    assert shard_shapes(d.bias.value) == [(8,)] * 8


def test_a_shape_only_parameter_without_initializer_is_refused(mesh_model):
    shapes = jax.tree.map(lambda v: jax.ShapeDtypeStruct(v.shape, v.dtype), nn.Dense(2, 8))
    with pytest.raises(ValueError, match="'weight' holds only a ShapeDtypeStruct.*set_data"):
        parallel.initialize(shapes, mesh_model)


def test_shared_parameters_and_shared_initializers_are_made_once(mesh_model):
    ms.set_seed(1)
    lazy = initializer("normal", (8, 8))
    p, q = ms.Parameter(lazy, name="p"), ms.Parameter(lazy, name="q")
    q.sharding = P(None, "model")  # one LazyInit, two layouts
    cell = nn.Cell()
    cell.p, cell.q, cell.again = p, q, ms.ParameterTuple([p])
    parallel.shard(cell, mesh_model, {"p": P("model")})
    np.testing.assert_array_equal(np.asarray(p.value), np.asarray(q.value))
    assert shard_shapes(p.value) == [(1, 8)] * 8 and shard_shapes(q.value) == [(8, 1)] * 8
    ms.set_seed(1)
    np.testing.assert_allclose(np.asarray(p.value), np.asarray(initializer("normal", (8, 8)).init_data()),
                               rtol=1e-6)


def test_concrete_parameters_are_moved_with_device_put(mesh2d):
    net = MLP()
    before = {p.name: np.asarray(p.value) for p in net.get_parameters()}  # made on first use
    assert all(len(p.value.sharding.device_set) == 1 for p in net.get_parameters())
    net.shard(mesh2d, {"fc1.weight": P("model", None)})
    assert placed(net.fc1.weight.value, mesh2d, P("model", None))
    assert placed(net.fc2.weight.value, mesh2d, P())
    for p in net.get_parameters():
        np.testing.assert_array_equal(np.asarray(p.value), before[p.name])


def test_initialize_inside_a_traced_function_is_refused(mesh8):
    net = nn.Dense(2, 8)

    @ms.jit
    def f():
        parallel.initialize(net, mesh8)
        return net.weight.sum()

    with pytest.raises(RuntimeError, match="cannot run inside cellkit.jit"):
        f()


# ----- cellkit.jit keeps Parameter shardings ---------------------------------------------

def test_written_values_keep_the_parameters_sharding(mesh_model):
    w = ms.Parameter(ms.Tensor(np.zeros((8, 4)), ms.float32), name="w")
    r = ms.Parameter(ms.Tensor(np.zeros((8, 4)), ms.float32), name="r")
    cell = nn.Cell()
    cell.w, cell.r = w, r
    parallel.shard(cell, mesh_model, {"w": P("model", None)})

    @ms.jit
    def step(x):
        # A value computed from replicated data: XLA alone would not shard it like w.
        ops.assign(w, ops.ones((8, 4)) * x)
        ops.assign(r, r + x)
        return x * 2

    for i in range(3):
        step(jnp.float32(i))
    assert step.trace_count == 1
    assert placed(w.value, mesh_model, P("model", None))
    assert shard_shapes(w.value) == [(1, 4)] * 8
    assert placed(r.value, mesh_model, P())
    np.testing.assert_array_equal(np.asarray(w.value), np.full((8, 4), 2.))
    np.testing.assert_array_equal(np.asarray(r.value), np.full((8, 4), 3.))


def test_an_annotation_without_placement_uses_the_context_mesh(mesh_model):
    w = ms.Parameter(ms.Tensor(np.zeros((8, 2)), ms.float32), name="w", sharding=P("model"))

    @ms.jit
    def step():
        ops.assign(w, w + 1)

    step()  # no mesh anywhere: the annotation cannot apply, the value stays where it was
    assert len(w.value.sharding.device_set) == 1
    with jax.set_mesh(mesh_model):
        step()  # the context mesh is part of jax.jit's cache key: traced again, constrained
    assert step.trace_count == 2
    assert w.value.sharding.spec == P("model") and shard_shapes(w.value) == [(1, 2)] * 8
    np.testing.assert_array_equal(np.asarray(w.value), np.full((8, 2), 2.))


# ----- cellkit.jit in_shardings / out_shardings: fn's own arguments and outputs ----------

def test_in_and_out_shardings_describe_fns_own_arguments(mesh8):
    rows = NamedSharding(mesh8, P("data"))
    replicated = NamedSharding(mesh8, P())
    seen = []

    def f(x, scale):
        seen.append(x.shape)
        return x * scale, x.sum()

    g = ms.jit(f, in_shardings=(rows, None), out_shardings=(rows, replicated))
    y, s = g(np.ones((16, 2), np.float32), 3.0)
    assert y.sharding == rows and shard_shapes(y) == [(2, 2)] * 8
    assert s.sharding == replicated and float(s) == 32.
    # A single sharding applies to every argument (jax.jit's rule).
    h = ms.jit(lambda a, b: a + b, in_shardings=rows)
    assert shard_shapes(h(np.ones((8, 3), np.float32), np.ones((8, 3), np.float32))) == [(1, 3)] * 8


def test_in_shardings_with_cells_trees_static_and_keyword_arguments(mesh8):
    rows = NamedSharding(mesh8, P("data"))
    net = MLP().shard(mesh8)

    def f(net, batch, power, *, bias):
        x, y = batch["x"], batch["y"]
        assert x.shape == (16, 16)
        return ops.mean((net(x) - y) ** power) + bias

    x, y = data()
    # Static arguments take no entry (as in jax.jit); None for the Cell; a prefix for the dict.
    g = ms.jit(f, static_argnums=2, in_shardings=(None, rows))
    loss = g(net, {"x": x, "y": y}, 2, bias=jnp.float32(1.))
    np.testing.assert_allclose(float(loss), float(np.mean((np.asarray(net(x)) - y) ** 2)) + 1, rtol=1e-5)
    g2 = ms.jit(f, static_argnums=2, in_shardings=(None, {"x": rows, "y": None}))
    np.testing.assert_allclose(float(g2(net, {"x": x, "y": y}, 2, bias=jnp.float32(1.))), float(loss), rtol=1e-6)
    # Parameters inside a tree argument are skipped by a broadcast sharding.
    k = ms.jit(lambda pair: pair[0](pair[1]), in_shardings=rows)
    assert k((net, x)).sharding.spec == P("data")

    with pytest.raises(ValueError, match="entry 0 is for a MLP; it must be None"):
        ms.jit(f, static_argnums=2, in_shardings=(rows, rows))(net, {"x": x, "y": y}, 2, bias=1.)
    with pytest.raises(ValueError, match="3 entries but the call has 2 non-static"):
        ms.jit(f, static_argnums=2, in_shardings=(None, rows, None))(net, {"x": x, "y": y}, 2, bias=1.)


def test_in_shardings_on_a_bound_method_skip_self(mesh8):
    rows = NamedSharding(mesh8, P("data"))

    class Scaled(nn.Cell):
        def __init__(self):
            super().__init__()
            self.s = ms.Parameter(ms.Tensor(2.0), name="s")

        def forward(self, x):
            return x * self.s

    cell = Scaled()
    f = ms.jit(cell.forward, in_shardings=(rows,))
    out = f(np.ones((8, 2), np.float32))
    assert out.sharding.spec == P("data")
    np.testing.assert_array_equal(np.asarray(out), np.full((8, 2), 2.))


# ----- training on a mesh equals training on one device -----------------------------------

SEED = 11
BATCHES = [data(seed=i) for i in range(4)]


@pytest.fixture(scope="module")
def one_device():
    """Losses and final weights of the same training on one device (annotations have no mesh here)."""
    ms.set_seed(SEED)
    losses, weights, _ = train(MLP(tp=True), BATCHES)
    assert losses[-1] < losses[0]
    return losses, weights


def assert_same_training(got, expected):
    np.testing.assert_allclose(got[0], expected[0], rtol=RTOL, atol=ATOL)
    for name, w in expected[1].items():
        np.testing.assert_allclose(got[1][name], w, rtol=RTOL, atol=ATOL, err_msg=name)


def test_data_parallel_training_matches_one_device(mesh8, one_device):
    ms.set_seed(SEED)
    net = MLP().shard(mesh8)  # no rules: replicated weights
    rows = NamedSharding(mesh8, P("data"))
    on_mesh = [(jax.device_put(x, rows), jax.device_put(y, rows)) for x, y in BATCHES]
    assert shard_shapes(on_mesh[0][0]) == [(2, 16)] * 8
    losses, weights, step = train(net, on_mesh)

    assert_same_training((losses, weights), one_device)
    assert step.trace_count == 1
    for p in net.get_parameters():
        assert placed(p.value, mesh8, P()), p.name
        assert shard_shapes(p.value) == [p.shape] * 8


def test_tensor_parallel_mlp_matches_one_device(mesh_model, one_device):
    ms.set_seed(SEED)
    with parallel.abstract():
        net = MLP(tp=True)
    parallel.initialize(net, mesh_model)
    losses, weights, step = train(net, BATCHES)

    assert_same_training((losses, weights), one_device)
    assert step.trace_count == 1
    expected = {"fc1.weight": (P("model", None), (4, 16)), "fc1.bias": (P("model"), (4,)),
                "fc2.weight": (P(None, "model"), (8, 4)), "fc2.bias": (P(), (8,))}
    for p in net.get_parameters():
        spec, shard = expected[p.name]
        assert placed(p.value, mesh_model, spec), p.name
        assert shard_shapes(p.value) == [shard] * 8, p.name


def test_data_and_tensor_parallel_on_a_2d_mesh_by_rules(mesh2d, one_device):
    ms.set_seed(SEED)
    net = MLP().shard(mesh2d, {"fc1.*": P("model"), "fc2.weight": P(None, "model")})
    rows = NamedSharding(mesh2d, P("data"))
    losses, weights, _ = train(net, BATCHES, in_shardings=(rows, rows))

    assert_same_training((losses, weights), one_device)
    assert shard_shapes(net.fc1.weight.value) == [(8, 16)] * 8
    assert shard_shapes(net.fc1.bias.value) == [(8,)] * 8
    assert shard_shapes(net.fc2.weight.value) == [(8, 8)] * 8
    assert placed(net.fc2.weight.value, mesh2d, P(None, "model"))


# ----- the benchmark ---------------------------------------------------------------------

def test_data_parallel_benchmark_smoke(capsys):
    from benchmarks import data_parallel

    result = data_parallel.main(["--smoke"])
    assert set(result["seconds_per_step"]) == {1, 8} and result["ratio_8_to_1"] > 0
    assert "ratio" in capsys.readouterr().out


@pytest.mark.skipif(not os.environ.get("CELLKIT_MULTIPROCESS"),
                    reason="starts 3 processes (about 30 s on 2 cores); set CELLKIT_MULTIPROCESS=1")
def test_two_processes_train_like_one_process():
    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "examples", "multihost_cpu.py")
    spec = importlib.util.spec_from_file_location("multihost_cpu", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = module.main()  # asserts that both processes and the 1-process run agree
    assert len(result["two_processes"]) == 2
