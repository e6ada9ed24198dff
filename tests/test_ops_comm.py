"""Collective ops and Primitives: MindSpore's recorded world of one process
(tests/fixtures/record/record_ops_comm.py), and the same ops over a mapped axis (vmap, shard_map)
against jax.lax's collectives and NumPy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec as PS
from jax.test_util import check_grads

import cellkit as ms
from cellkit import ops
from cellkit.ops import operations as P
from ms_fixtures import load
from ops_replay import assert_same, to_cellkit

DATA = load("ops_comm")
FUNCS = sorted(n for n in DATA if n[0].islower())
PRIMS = sorted(n for n in DATA if n[0].isupper() and "__" in n)

# MindSpore's CPU build has no kernel for most collectives (RuntimeError, or TypeError with no message
# for a dtype): there a group of one is checked against the op's one-member meaning.
GROUP_OF_ONE = {
    "all_reduce": lambda x, **k: (x, None),
    "all_gather_into_tensor": lambda out, x, **k: (x, None),
    "reduce_scatter_tensor": lambda out, x, **k: (x, None),
    "all_to_all_single": lambda out, x, **k: (x, None),
    "AllReduce": lambda x: x, "ReduceScatter": lambda x: x, "AlltoAll": lambda x: x, "Reduce": lambda x: x,
    "Broadcast": lambda xs: tuple(xs), "CollectiveGather": lambda x: x, "CollectiveScatter": lambda x: x,
    "Barrier": lambda: None, "AlltoAllV": lambda x, s, r: np.ravel(x),
}
# In-place cases: MindSpore writes into a Tensor; cellkit writes into a Parameter.
INPLACE_WITH_KERNEL_MISSING = {
    "all_gather_into_tensor__inplace": 1, "reduce_scatter_tensor__inplace": 1, "all_to_all_single__inplace": 1,
}
# Where cellkit's exception type differs from MindSpore's (docs/differences.md).
DIFFERENT_ERRORS = {
    "AllReduce__bad_op": "ValueError",  # MindSpore: RuntimeError from its CPU kernel when called
    "AllReduce__max": None, "AllReduce__prod": None,  # MindSpore's CPU kernel reduces only with sum
}


def no_kernel(case):
    return case.get("error") == "RuntimeError" or (case.get("error") == "TypeError" and not case.get("message"))


@pytest.fixture(autouse=True)
def _restore_inplace():
    yield
    ops.set_comm_ops_inplace(True)


@pytest.mark.parametrize("name", FUNCS)
def test_functional_matches_mindspore(name):
    case = DATA[name]
    op = name.split("__")[0]
    fn = getattr(ops, op)
    ops.set_comm_ops_inplace(case.get("inplace", True))
    inputs = [to_cellkit(v) for v in case["inputs"]]
    kwargs = {k: to_cellkit(v) for k, v in case["kwargs"].items()}
    if name.endswith("__inplace") and op != "barrier":
        dest = 0
        if isinstance(inputs[dest], list):
            inputs[dest] = [ms.Parameter(t, name=f"out{i}") for i, t in enumerate(inputs[dest])]
            params = inputs[dest]
        else:
            inputs[dest] = params = ms.Parameter(inputs[dest], name="dest")
        handle = fn(*inputs, **kwargs)
        assert handle is None
        after = [p.value for p in params] if isinstance(params, list) else params.value
        if name in INPLACE_WITH_KERNEL_MISSING or no_kernel(case):
            np.testing.assert_array_equal(np.asarray(after if not isinstance(after, list) else after[0]),
                                          case["inputs"][INPLACE_WITH_KERNEL_MISSING.get(name, 1)][0]
                                          if isinstance(case["inputs"][1], list) else case["inputs"][1])
        else:
            assert_same(after, case["output"][1], name)
        return
    if "error" in case and not no_kernel(case):
        with pytest.raises(Exception) as info:
            fn(*inputs, **kwargs)
        assert type(info.value).__name__ == DIFFERENT_ERRORS.get(name, case["error"]), str(info.value)
        return
    out = fn(*inputs, **kwargs)
    if "error" in case:  # no kernel in MindSpore's CPU build
        expected = GROUP_OF_ONE.get(op, lambda *a, **k: None)(*case["inputs"], **case["kwargs"])
    else:
        expected = case["output"]
    if expected is None:
        assert out is None
    elif op == "all_to_all":
        assert_same(out[0], (case["inputs"][1][0],), name)
    else:
        assert_same(out[0], expected[0], name)
        assert out[1] is None


@pytest.mark.parametrize("name", PRIMS)
def test_primitive_matches_mindspore(name):
    case = DATA[name]
    op = name.split("__")[0]
    inputs = [to_cellkit(v) for v in case["inputs"]]
    expected_error = DIFFERENT_ERRORS.get(name, case.get("error"))
    if expected_error is not None and (not no_kernel(case) or name in DIFFERENT_ERRORS):
        with pytest.raises(Exception) as info:
            getattr(P, op)(*case["ctor"])(*inputs)
        assert type(info.value).__name__ == expected_error, str(info.value)
        return
    out = getattr(P, op)(*case["ctor"])(*inputs)
    if "output" in case and name not in DIFFERENT_ERRORS:
        assert_same(out, case["output"], name)
    else:
        expected = GROUP_OF_ONE[op](*case["inputs"])
        if expected is None:
            assert out is None
        else:
            assert_same(out, expected, name)


def test_reduce_op_constants():
    assert {k: getattr(ops.ReduceOp, k) for k in DATA["ReduceOp"]["output"]} == DATA["ReduceOp"]["output"]


def test_inplace_into_an_array_names_the_fix():
    x = ms.Tensor([1., 2.])
    assert ops.all_reduce(x) is None  # a group of one leaves it as it is
    with pytest.raises(TypeError, match="set_comm_ops_inplace"):
        ops.all_gather_into_tensor(ms.Tensor([0., 0.]), x)
    assert ops.all_reduce(x, async_op=True).wait() is None


def test_group_that_is_not_bound_or_created():
    with pytest.raises(ValueError, match="shard_map"):
        P.AllReduce(group="tp")(ms.Tensor([1.]))


# -- over a mapped axis ------------------------------------------------------------------------

X = np.arange(24, dtype=np.float32).reshape(4, 6) - 7.0


def vmapped(fn):
    return jax.vmap(fn, axis_name="g")(jnp.asarray(X))


@pytest.mark.parametrize("op, ref", [("sum", np.sum), ("max", np.max), ("min", np.min), ("prod", np.prod),
                                     ("avg", np.mean)])
def test_all_reduce_over_axis(op, ref):
    expected = np.broadcast_to(ref(X, axis=0), X.shape)
    np.testing.assert_allclose(vmapped(lambda x: P.AllReduce(op, "g")(x)), expected, rtol=1e-5)
    ops.set_comm_ops_inplace(False)
    np.testing.assert_allclose(vmapped(lambda x: ops.all_reduce(x, op, "g")[0]), expected, rtol=1e-5)


def test_gather_scatter_broadcast_over_axis():
    np.testing.assert_array_equal(vmapped(lambda x: P.AllGather("g")(x[None]))[1], X)
    # each member keeps its block of the sum
    got = vmapped(lambda x: P.ReduceScatter("sum", "g")(x.reshape(2, 3)[jnp.array([0, 1, 0, 1])]))
    summed = X.reshape(4, 2, 3)[:, [0, 1, 0, 1]].sum(0)
    np.testing.assert_allclose(got, summed.reshape(4, 1, 3), rtol=1e-6)
    got = vmapped(lambda x: P.ReduceScatter("max", "g")(x.reshape(2, 3)[jnp.array([0, 1, 0, 1])]))
    np.testing.assert_allclose(got, X.reshape(4, 2, 3)[:, [0, 1, 0, 1]].max(0).reshape(4, 1, 3))
    got = vmapped(lambda x: P.Broadcast(2, "g")((x,))[0])
    np.testing.assert_array_equal(got, np.broadcast_to(X[2], X.shape))
    ops.set_comm_ops_inplace(False)
    got = vmapped(lambda x: ops.all_gather_into_tensor(None, x[None], group="g")[0])
    np.testing.assert_array_equal(got[3], X)


def test_all_to_all_over_axis():
    # member i's block j goes to member j: a transpose of the (member, block) grid
    got = vmapped(lambda x: P.AlltoAll(4, 0, 0, "g")(x[:4]))
    np.testing.assert_array_equal(got, X[:, :4].T)
    with pytest.raises(ValueError, match="split_count"):
        vmapped(lambda x: P.AlltoAll(2, 0, 0, "g")(x))


@pytest.mark.skipif(jax.device_count() < 4, reason="needs 4 devices (root conftest.py)")
def test_shard_map_group_is_the_mesh_axis():
    mesh = jax.make_mesh((4,), ("dp",))
    x = jax.device_put(jnp.asarray(X), jax.NamedSharding(mesh, PS("dp")))
    f = jax.shard_map(lambda b: P.AllReduce(group="dp")(b), mesh=mesh, in_specs=PS("dp"), out_specs=PS("dp"))
    np.testing.assert_allclose(f(x), np.broadcast_to(X.sum(0), X.shape))
    g = jax.shard_map(lambda b: jax.lax.psum(b, "dp"), mesh=mesh, in_specs=PS("dp"), out_specs=PS("dp"))
    np.testing.assert_array_equal(f(x), g(x))


def test_all_reduce_gradient_over_axis():
    def f(x):
        return jax.vmap(lambda r: P.AllReduce("sum", "g")(r) * r, axis_name="g")(x).sum()

    check_grads(f, (jnp.asarray(X[:, :3]),), order=1, modes=["rev"], atol=1e-2, rtol=1e-2)


def test_fused_matmul_collectives():
    a, b = jnp.asarray(X[:, :4]), jnp.asarray(X[:4, :3])
    out, gathered = ops.all_gather_matmul(a, b, None, 1)
    np.testing.assert_allclose(out, X[:, :4] @ X[:4, :3], rtol=1e-6)
    np.testing.assert_array_equal(gathered, X[:, :4])
    with pytest.raises(ValueError, match="world_size"):
        ops.all_gather_matmul(a, b, None, 2)
    # over an axis of 4 members, each holding one row of a
    out = jax.vmap(lambda r: ops.all_gather_matmul(r[None], b, "g", 4, gather_output=False)[0], axis_name="g")(a)
    np.testing.assert_allclose(out, np.broadcast_to(X[:, :4] @ X[:4, :3], (4, 4, 3)), rtol=1e-5)
    # each member's product summed, member i keeping row i
    got = jax.vmap(lambda r: ops.matmul_reduce_scatter(jnp.tile(r[None], (4, 1)), b, "g", 4), axis_name="g")(a)
    np.testing.assert_allclose(got[:, 0], np.broadcast_to(X[:, :4].sum(0) @ X[:4, :3], (4, 3)), rtol=1e-5)
