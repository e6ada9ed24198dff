import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit import ops
from cellkit.ops import function

A = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
B = np.array([[2.0, 1.0, -3.0], [0.5, -4.0, 2.0]], np.float32)

UNARY = ["exp", "log", "sqrt", "abs", "tanh", "neg", "sin", "cos", "square", "floor",
         "ceil", "sign", "erf", "isnan", "isfinite", "logical_not", "rsqrt"]
BINARY = ["gt", "ge", "lt", "le", "eq", "ne", "maximum", "minimum", "add", "sub", "mul",
          "greater", "greater_equal", "less", "less_equal", "equal", "not_equal", "pow",
          "logical_and", "logical_or"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_renames_match_jax_and_accept_parameters(name):
    jax_fn, _ = function.RENAMES[name]
    x = np.abs(A) + 0.1 if name in ("log", "sqrt", "rsqrt") else A
    p = ms.Parameter(ms.Tensor(x), name="p")
    np.testing.assert_allclose(getattr(ops, name)(p), jax_fn(jnp.asarray(x)), rtol=1e-6)


@pytest.mark.parametrize("name", BINARY)
def test_binary_renames_match_jax(name):
    jax_fn, _ = function.RENAMES[name]
    a, b = (A > 0, B > 0) if name.startswith("logical") else (np.abs(A), B) if name == "pow" else (A, B)
    p = ms.Parameter(ms.Tensor(a), name="p")
    np.testing.assert_allclose(getattr(ops, name)(p, ms.Tensor(b)), jax_fn(jnp.asarray(a), jnp.asarray(b)), rtol=1e-6)


def test_every_table_entry_is_exported_and_documented():
    doc = (pathlib.Path(__file__).parents[1] / "docs" / "ops.md").read_text()
    for name in ops.__all__:
        assert hasattr(ops, name)
        assert f"`{name}`" in doc, f"docs/ops.md does not list ops.{name}"


def test_creation_ops():
    np.testing.assert_array_equal(ops.fill(ms.float32, (2, 2), 20), np.full((2, 2), 20, np.float32))
    assert ops.fill(ms.int32, (3,), 1).dtype == np.int32
    assert ops.ones((2, 3)).dtype == np.float32 and ops.zeros(4, ms.int8).dtype == np.int8
    p = ms.Parameter(ms.Tensor(A), name="p")
    assert ops.ones_like(p).shape == (2, 3) and ops.zeros_like(p, dtype=ms.int32).dtype == np.int32
    np.testing.assert_array_equal(ops.full((2,), 7.0), [7, 7])


def test_shape_ops():
    x = ms.Tensor(np.arange(24).reshape(2, 3, 4), ms.float32)
    assert ops.reshape(x, (6, 4)).shape == (6, 4)
    assert ops.transpose(x, (2, 0, 1)).shape == (4, 2, 3)
    assert ops.concat([x, x], axis=1).shape == (2, 6, 4) and ops.cat((x, x)).shape == (4, 3, 4)
    assert ops.stack([x, x], axis=0).shape == (2, 2, 3, 4)
    assert ops.squeeze(ops.expand_dims(x, 0), 0).shape == x.shape
    assert ops.expand_dims(x, -1).shape == (2, 3, 4, 1)
    assert ops.flatten(x).shape == (2, 12)
    assert [t.shape for t in ops.split(x, 2, axis=2)] == [(2, 3, 2), (2, 3, 2)]
    assert ops.broadcast_to(ms.Tensor([1., 2.]), (3, -1)).shape == (3, 2)
    with pytest.raises(ValueError):
        ops.squeeze(x, 1)  # MindSpore silently ignores a non-1 axis; cellkit refuses


def test_reductions_use_mindspore_keyword_spellings():
    x = ms.Tensor(A)
    np.testing.assert_allclose(ops.sum(x, dim=1, keepdim=True), A.sum(1, keepdims=True))
    np.testing.assert_allclose(ops.mean(x, axis=0, keep_dims=False), A.mean(0))
    assert ops.mean(ms.Tensor([1, 2], ms.int32)).dtype == np.int32  # MindSpore: integer mean
    values, index = ops.max(x, axis=1, keepdims=False)
    np.testing.assert_array_equal(values, A.max(1))
    np.testing.assert_array_equal(index, A.argmax(1))
    values, index = ops.min(x)
    assert float(values) == A.min() and int(index) == A.argmin()
    assert int(ops.argmax(x)) == 4 and ops.argmax(x, dim=0).tolist() == [0, 1, 0]
    with pytest.raises(TypeError):
        ops.sum(x, keepdims=True)
    np.testing.assert_allclose(ops.prod(x, 1), A.prod(1), rtol=1e-6)
    np.testing.assert_allclose(ops.amax(x, 0), A.max(0))


def test_activations_and_softmax():
    x = ms.Tensor(A)
    np.testing.assert_allclose(ops.relu(x), np.maximum(A, 0))
    e = np.exp(A - A.max(-1, keepdims=True))
    np.testing.assert_allclose(ops.softmax(x), e / e.sum(-1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(ops.log_softmax(x, axis=0), jax.nn.log_softmax(A, axis=0), rtol=1e-6)
    np.testing.assert_allclose(ops.leaky_relu(x), np.where(A > 0, A, 0.2 * A), rtol=1e-6)
    # atol: one float32 ulp at the inputs' scale (whether x * c + d is a fused multiply-add moves the last
    # bit, and gelu cancels near its minimum)
    np.testing.assert_allclose(ops.gelu(x, approximate="tanh"), jax.nn.gelu(A, approximate=True), rtol=1e-6,
                               atol=2.5e-7)


def test_cast_clip_select_where():
    x = ms.Tensor(A)
    assert ops.cast(x, ms.int32).dtype == np.int32
    np.testing.assert_array_equal(ops.cast(x, ms.int32), A.astype(np.int32))
    np.testing.assert_array_equal(ops.clip_by_value(x, -1.0, 2.0), np.clip(A, -1, 2))
    np.testing.assert_array_equal(ops.clip_by_value(x, 0.0), np.maximum(A, 0))
    np.testing.assert_array_equal(ops.select(x > 0, x, ops.zeros_like(x)), np.where(A > 0, A, 0))
    np.testing.assert_array_equal(ops.where(x > 0, 1.0, -1.0), np.where(A > 0, 1.0, -1.0))
    np.testing.assert_array_equal(ops.one_hot(ms.Tensor([0, 2]), 3), np.eye(3)[[0, 2]])


def test_matmul_and_primitives():
    x, y = ms.Tensor(A), ms.Tensor(B.T)
    np.testing.assert_allclose(ops.matmul(x, y), A @ B.T, rtol=1e-6)
    np.testing.assert_allclose(ops.MatMul(transpose_b=True)(x, ms.Tensor(B)), A @ B.T, rtol=1e-6)
    np.testing.assert_allclose(ops.ReduceSum(keep_dims=True)(x, 1), A.sum(1, keepdims=True))
    assert ops.Dropout2D(0.5) == ops.Dropout2D(0.5) and ops.Dropout2D(0.5) != ops.Dropout2D(0.6)
    assert hash(ops.MatMul()) == hash(ops.MatMul())


def test_ops_work_under_jit_and_grad():
    f = jax.jit(lambda x: ops.sum(ops.relu(ops.matmul(x, x.T)), dim=0))
    np.testing.assert_allclose(f(jnp.asarray(A)), np.maximum(A @ A.T, 0).sum(0), rtol=1e-6)
    g = jax.grad(lambda x: ops.mean(ops.tanh(x)))(jnp.asarray(A))
    np.testing.assert_allclose(g, (1 - np.tanh(A) ** 2) / A.size, rtol=1e-3, atol=1e-6)


def test_ops_md_is_what_the_generator_writes():
    import importlib.util
    root = pathlib.Path(__file__).parents[1]
    spec = importlib.util.spec_from_file_location("build_ops", root / "docs" / "build_ops.py")
    build_ops = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_ops)
    assert (root / "docs" / "ops.md").read_text() == build_ops.build(), \
        "docs/ops.md is out of date: run python docs/build_ops.py"
