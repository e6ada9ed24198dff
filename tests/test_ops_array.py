"""Array, indexing and sort ops against MindSpore 2.10 (fixtures ``ops_array``, ``ops_array_prim``)."""

import builtins

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import cellkit as ms
from cellkit import ops
from cellkit.ops import operations as P
from ms_fixtures import load
from ops_cases import assert_matches, tensor_args, to_cellkit

CASES = load("ops_array")
PRIM_CASES = load("ops_array_prim")


@pytest.mark.parametrize("name", sorted(CASES))
def test_functional_op_matches_mindspore(name):
    case = CASES[name]
    args, kwargs = tensor_args(case)
    fn = getattr(ops, case["op"])
    if "error" in case:
        with pytest.raises(getattr(builtins, case["error"])):
            np.asarray(jax.tree.leaves(fn(*args, **kwargs))[0])
        return
    assert_matches(fn(*args, **kwargs), case["output"], name)


@pytest.mark.parametrize("name", sorted(PRIM_CASES))
def test_primitive_matches_mindspore(name):
    case = PRIM_CASES[name]
    args, _ = tensor_args(case)
    prim = getattr(P, case["op"])(*to_cellkit(case["ctor"]))
    assert_matches(prim(*args), case["output"], name)


X = np.random.RandomState(1).permutation(12).reshape(3, 4).astype(np.float32) * 0.37 - 2.0
I2 = ms.Tensor([[0, 2], [1, 1], [3, 0]])
ND = ms.Tensor([[0, 1], [2, 3], [0, 1]])
ONE_ONE = ms.Tensor([[1, 1]])  # concrete outside the traced function: a multiplying scatter's gradient needs it
K1 = ms.Tensor(1)

# name: function of one float tensor of shape (3, 4), differentiable in it
GRAD_CASES = {
    "gather": lambda x: ops.gather(x, ms.Tensor([2, 0, 2]), 0),
    "gather_batch": lambda x: ops.gather(x, I2, 1, batch_dims=1),
    "gather_elements": lambda x: ops.gather_elements(x, 1, I2),
    "gather_nd": lambda x: ops.gather_nd(x, ND),
    "index_select": lambda x: ops.index_select(x, 1, ms.Tensor([3, 3, 0])),
    "take": lambda x: ops.take(x, ms.Tensor([[1, 7]])),
    "scatter_input": lambda x: ops.scatter(x, 1, I2, ms.ops.ones((3, 2))),
    "scatter_src": lambda x: ops.scatter(ops.zeros((3, 4)), 1, I2, x[:, :2]),
    "tensor_scatter_update": lambda x: ops.tensor_scatter_update(x, ms.Tensor([[0, 1]]), x[1, 1:2] * 3),
    "tensor_scatter_add": lambda x: ops.tensor_scatter_add(x, ND, x[0, :3]),
    "tensor_scatter_mul": lambda x: ops.tensor_scatter_mul(x, ONE_ONE, x[2, :1]),
    "tensor_scatter_elements": lambda x: ops.tensor_scatter_elements(x, I2, x[:, 1:3], 1, "add"),
    "scatter_nd": lambda x: ops.scatter_nd(ms.Tensor([[1], [1]]), x[:2], (3, 4)),
    "strided_slice": lambda x: ops.strided_slice(x, (2, 3), (0, 0), (-1, -2)),
    "slice": lambda x: ops.slice(x, (1, 1), (2, -1)),
    "narrow": lambda x: ops.narrow(x, 1, 1, 2),
    "split": lambda x: ops.split(x, [1, 3], 1)[1] * 2,
    "chunk": lambda x: ops.chunk(x, 2, 0)[0],
    "unstack": lambda x: ops.unstack(x, 1)[2],
    "stack": lambda x: ops.stack([x, x * x], 1),
    "concat": lambda x: ops.concat([x, x * x], 0),
    "hstack": lambda x: ops.hstack([x, x]),
    "tile": lambda x: ops.tile(x, (2, 1)),
    "repeat_interleave": lambda x: ops.repeat_interleave(x, 2, 1),
    "broadcast_to": lambda x: ops.broadcast_to(x, (2, 3, 4)),
    "flip": lambda x: ops.flip(x, (0, 1)) * x,
    "rot90": lambda x: ops.rot90(x, 1, (0, 1)),
    "roll": lambda x: ops.roll(x, 1, 0) * x,
    "reverse_sequence": lambda x: ops.reverse_sequence(x, ms.Tensor([1, 2, 4]), 1),
    "masked_fill": lambda x: ops.masked_fill(x, x > 0, 0.5),
    "masked_scatter": lambda x: ops.masked_scatter(x, x > 0, x * 2),
    "where": lambda x: ops.where(x > 0, x * x, -x),
    "moveaxis": lambda x: ops.moveaxis(x[None], 0, 2),
    "transpose": lambda x: ops.transpose(x, (1, 0)),
    "flatten": lambda x: ops.flatten(x[None]),
    "reshape": lambda x: ops.reshape(x, (2, -1)),
    "tril": lambda x: ops.tril(x, 1),
    "triu": lambda x: ops.triu(x, -1),
    "diag": lambda x: ops.diag(x[0]),
    "diagonal": lambda x: ops.diagonal(x, 1),
    "diag_embed": lambda x: ops.diag_embed(x, 1),
    "matrix_band_part": lambda x: ops.matrix_band_part(x, 1, 0),
    "index_fill": lambda x: ops.index_fill(x, 1, ms.Tensor([0, 2]), 1.0),
    "select_scatter": lambda x: ops.select_scatter(x, x[1] * 2, 0, 0),
    "slice_scatter": lambda x: ops.slice_scatter(x, x[:, :2], 1, 0, 4, 2),
    "diagonal_scatter": lambda x: ops.diagonal_scatter(x, x[0, :3] ** 2),
    "sort": lambda x: ops.sort(x, 0, True)[0],
    "topk": lambda x: ops.topk(x, 2, dim=0, largest=False)[0],
    "unsorted_segment_sum": lambda x: ops.unsorted_segment_sum(x, ms.Tensor([0, 0, 2]), 3),
    "unsorted_segment_max": lambda x: ops.unsorted_segment_max(x, ms.Tensor([1, 0, 1]), 2),
    "meshgrid": lambda x: ops.meshgrid(x[0], x[1, :2])[0],
    "expand_as": lambda x: ops.expand_as(x[:1], x) * x,
    "matrix_diag": lambda x: ops.matrix_diag(x, 1),
    "matrix_set_diag": lambda x: ops.matrix_set_diag(x, x[0, 1:] ** 2, K1),
    "space_to_batch_nd": lambda x: ops.space_to_batch_nd(x[None, None], (1, 2), ((0, 1), (0, 0))),
    "batch_to_space_nd": lambda x: ops.batch_to_space_nd(x.reshape(4, 1, 3, 1), (2, 2), ((1, 0), (0, 1))),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients(name):
    fn = GRAD_CASES[name]
    check_grads(jax.jit(lambda x: jnp.sum(jnp.sin(fn(x)))), (jnp.asarray(X),), order=1, modes=["rev"],
                atol=5e-2, rtol=5e-2, eps=1e-2)


# Primitive: (arguments of its constructor, a call, the functional op's call)
PRIM_EQUALS_OP = {
    "Roll": ((1, 0), (X,), lambda: ops.roll(ms.Tensor(X), 1, 0)),
    "SplitV": (([1, -1], 1, 2), (X,), lambda: ops.split(ms.Tensor(X), [1, 3], 1)),
    "UniqueConsecutive": ((True, True), (ms.Tensor([1, 1, 2]),), lambda: ops.unique_consecutive(
        ms.Tensor([1, 1, 2]), True, True)),
    "UniqueWithPad": ((), (ms.Tensor([2, 2, 1]), -1), lambda: ops.unique_with_pad(ms.Tensor([2, 2, 1]), -1)),
    "TensorScatterSub": ((), (X, ms.Tensor([[0, 0]]), ms.Tensor([1.])), lambda: ops.tensor_scatter_sub(
        ms.Tensor(X), ms.Tensor([[0, 0]]), ms.Tensor([1.]))),
    "TensorScatterMax": ((), (X, ms.Tensor([[0, 0]]), ms.Tensor([9.])), lambda: ops.tensor_scatter_max(
        ms.Tensor(X), ms.Tensor([[0, 0]]), ms.Tensor([9.]))),
    "DiagPart": ((), (np.diag([1., 2.]),), lambda: ms.Tensor([1., 2.])),
    "MatrixBandPart": ((), (X, 0, 0), lambda: ops.matrix_band_part(ms.Tensor(X), 0, 0)),
    "LogSpace": ((3, 2), (ms.Tensor(0.), ms.Tensor(2.)), lambda: ops.logspace(ms.Tensor(0.), ms.Tensor(2.), 3, 2)),
    "UnsortedSegmentMin": ((), (X, ms.Tensor([0, 0, 1]), 2), lambda: ops.unsorted_segment_min(
        ms.Tensor(X), ms.Tensor([0, 0, 1]), 2)),
    "Identity": ((), (X,), lambda: ms.Tensor(X)),
    "MaskedScatter": ((), (X, ms.Tensor([True, False, True, False]), ms.ops.ones((3, 4))),
                      lambda: ops.masked_scatter(ms.Tensor(X), ms.Tensor([True, False, True, False]), ms.ops.ones((3, 4)))),
}


@pytest.mark.parametrize("name", sorted(PRIM_EQUALS_OP))
def test_primitive_equals_functional_op(name):
    ctor, args, expected = PRIM_EQUALS_OP[name]
    got = getattr(P, name)(*ctor)(*[ms.Tensor(a) if isinstance(a, np.ndarray) else a for a in args])
    for g, e in zip(jax.tree.leaves(got), jax.tree.leaves(expected())):
        np.testing.assert_allclose(g, e, rtol=1e-6)


def test_roll_follows_numpy():
    # MindSpore 2.10 has no CPU kernel for Roll, so NumPy's roll (its documented meaning) is the reference.
    for shifts, dims in ((1, 0), ((1, -2), (0, 1)), (5, None)):
        np.testing.assert_array_equal(ops.roll(ms.Tensor(X), shifts, dims), np.roll(X, shifts, dims))


def test_value_dependent_shapes_refuse_jit_clearly():
    for fn in (lambda x: ops.masked_select(x, x > 0), ops.nonzero, lambda x: ops.unique(x)[0]):
        with pytest.raises(TypeError, match="depends on the input's values"):
            jax.jit(fn)(jnp.asarray(X))
    np.testing.assert_array_equal(ops.nonzero(ms.Tensor([0, 3, 0, 1]), as_tuple=True)[0], [1, 3])


def test_fixed_shape_ops_compile():
    f = jax.jit(lambda x: (ops.topk(x, 2)[0], ops.sort(x)[1], ops.gather(x, ms.Tensor([1]), 0),
                           ops.strided_slice(x, (0, 1), (3, 4), (1, 2)), ops.one_hot(ms.Tensor([1]), 4)))
    values, idx, rows, sl, hot = f(jnp.asarray(X))
    np.testing.assert_array_equal(values, -np.sort(-X, axis=1)[:, :2])
    np.testing.assert_array_equal(rows, X[1:2])
    np.testing.assert_array_equal(sl, X[:, 1::2])
    assert hot.shape == (1, 4) and idx.dtype == np.int32


def test_moe_token_permute_reproduces_mindsporess_documented_example():
    # Ascend-only in MindSpore 2.10, so its docstring's example is the reference.
    tokens = ms.Tensor([[1, 1, 1], [7, 7, 7], [2, 2, 2], [1, 1, 1], [2, 2, 2], [3, 3, 3]], ms.float32)
    permuted, where = ops.moe_token_permute(tokens, ms.Tensor([5, 0, 3, 1, 2, 4], ms.int32))
    np.testing.assert_array_equal(permuted[:, 0], [7, 1, 2, 2, 3, 1])
    assert where.tolist() == [5, 0, 3, 1, 2, 4] and where.dtype == np.int32
    np.testing.assert_array_equal(ops.moe_token_unpermute(permuted, where), tokens)


def test_moe_token_round_trip_with_top2_probs_and_its_gradient():
    tokens = jnp.asarray(X[:, :3])
    experts = ms.Tensor([[1, 0], [0, 2], [2, 1]])
    probs = ms.Tensor([[0.25, 0.75]] * 3)
    permuted, where = ops.moe_token_permute(tokens, experts)
    assert permuted.shape == (6, 3) and sorted(where.tolist()) == list(range(6))
    np.testing.assert_allclose(ops.moe_token_unpermute(permuted, where, probs), tokens, rtol=1e-6)
    kept, _ = ops.moe_token_permute(tokens, experts, num_out_tokens=4)
    assert kept.shape == (4, 3)
    check_grads(lambda t: ops.moe_token_unpermute(ops.moe_token_permute(t, experts)[0], where, probs) ** 2,
                (tokens,), order=1, modes=["rev"], atol=5e-2, rtol=5e-2, eps=1e-2)
    with pytest.raises(ValueError, match="padded_mode"):
        ops.moe_token_permute(tokens, experts, padded_mode=True)
