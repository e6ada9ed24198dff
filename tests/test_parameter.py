import copy

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit import ops
from cellkit.common.initializer import initializer
from conftest import x64

INT = "Int64" if x64() else "Int32"


def test_repr_matches_mindspore_exactly():
    w = ms.Parameter(ms.Tensor(np.ones((5, 3)), ms.float32), name="w")
    assert repr(w) == "Parameter (name=w, shape=(5, 3), dtype=Float32, requires_grad=True)"
    assert str(w) == repr(w)


def test_construction_dtypes():
    assert ms.Parameter(2.0, name="x").dtype == ms.float32
    z = ms.Parameter(default_input=5, name="z", requires_grad=False)
    assert str(z) == "Parameter (name=z, shape=(), dtype=Int32, requires_grad=False)"
    assert str(ms.Parameter(ms.Tensor(np.arange(6).reshape(2, 3)), name="t").dtype) == INT
    assert ms.Parameter(np.ones(2, np.float16), name="h").dtype == ms.float16
    with pytest.raises(TypeError, match="default_input"):
        ms.Parameter(True, name="b")
    with pytest.raises(TypeError, match="default_input"):
        ms.Parameter(None, name="n")


def test_lazy_initializer_parameter():
    p = ms.Parameter(initializer("ones", [1, 2, 3], ms.float32), name="y")
    assert p.has_init
    assert p.shape == (1, 2, 3) and p.dtype == ms.float32 and p.size == 6 and p.ndim == 3
    assert p.has_init  # shape and dtype did not need the value
    assert p.init_data() is p and not p.has_init
    np.testing.assert_array_equal(p.asnumpy(), np.ones((1, 2, 3)))


def test_lazy_parameter_materialises_on_first_use():
    p = ms.Parameter(initializer("zeros", (2,), ms.float32), name="q")
    assert float((p + 1).sum()) == 2.0
    assert not p.has_init


def test_attributes_and_array_interop():
    p = ms.Parameter(ms.Tensor([[1., 2.], [3., 4.]]), name="p")
    assert p.name == "p" and p.requires_grad
    assert p.data is p
    assert isinstance(p.value, jax.Array)
    np.testing.assert_allclose(jnp.sin(p), np.sin([[1, 2], [3, 4]]), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(p), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(ops.matmul(ms.Tensor([[1., 0.]]), p) + p[0], [[2., 4.]])
    np.testing.assert_array_equal(p * 2 - 1, [[1, 3], [5, 7]])
    np.testing.assert_array_equal(2 ** p, [[2, 4], [8, 16]])
    np.testing.assert_array_equal(jnp.ones(2) + p, [[2, 3], [4, 5]])
    np.testing.assert_array_equal(p @ p, [[7, 10], [15, 22]])
    np.testing.assert_array_equal(-p, [[-1, -2], [-3, -4]])
    assert bool((p == p).all())
    assert p.sum() == 10 and p.T.shape == (2, 2) and p.reshape(-1).shape == (4,)
    assert len(p) == 2 and p.itemsize == 4 and p.nbytes == 16
    assert {p: 1}[p] == 1  # hashable by identity
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        p.nope


def test_requires_grad_settable_and_name_validation():
    p = ms.Parameter(ms.Tensor([1.]), name="p")
    p.requires_grad = False
    assert "requires_grad=False" in repr(p)
    with pytest.raises(ValueError, match="non-empty string"):
        p.name = 5


def test_item_and_slice_assignment_in_place():
    b = ms.Parameter(ms.Tensor([1., 2., 3.]), name="b")
    b[0] = 10.
    b[1:] = ms.Tensor([5, 6])
    np.testing.assert_array_equal(b.asnumpy(), [10, 5, 6])
    b[ms.Tensor([True, False, True])] = 0.
    np.testing.assert_array_equal(b.asnumpy(), [0, 5, 0])
    assert b.dtype == ms.float32


def test_item_assignment_overflow_and_lossy_dtype_refused():
    q = ms.Parameter(ms.Tensor([1, 2], ms.int32), name="q")
    with pytest.raises(OverflowError, match="Parameter 'q'"):
        q[0] = 2 ** 40
    with pytest.raises(TypeError, match="Parameter 'q'"):
        q[0] = 1.5
    np.testing.assert_array_equal(q.asnumpy(), [1, 2])


def test_set_data_casts_and_returns_self():
    x = ms.Parameter(ms.Tensor(np.ones((1, 2)), ms.float32), name="x", requires_grad=True)
    y = x.set_data(ms.Tensor(np.zeros((1, 2)), ms.float32))
    assert y is x
    assert str(y) == "Parameter (name=x, shape=(1, 2), dtype=Float32, requires_grad=True)"
    x.set_data(ms.Tensor([[3, 4]]))  # int into float: cast
    assert x.dtype == ms.float32
    np.testing.assert_array_equal(x.asnumpy(), [[3, 4]])
    z = x.set_data(ms.Tensor(np.ones((1, 4)), ms.float32), slice_shape=True)
    assert str(z) == "Parameter (name=x, shape=(1, 4), dtype=Float32, requires_grad=True)"
    np.testing.assert_array_equal(z.asnumpy(), [[1, 1, 1, 1]])


def test_set_data_refuses_shape_change_and_keeps_old_value():
    b = ms.Parameter(ms.Tensor([1., 2., 3.]), name="b")
    with pytest.raises(ValueError) as err:
        b.set_data(ms.Tensor([1., 2.]))
    msg = str(err.value)
    assert "Parameter 'b'" in msg and "(2,)" in msg and "(3,)" in msg and "slice_shape=True" in msg
    np.testing.assert_array_equal(b.asnumpy(), [1, 2, 3])


def test_set_data_refuses_lossy_dtype_and_overflow():
    q = ms.Parameter(ms.Tensor([1, 2], ms.int32), name="q")
    with pytest.raises(TypeError, match="Parameter 'q'.*Float32.*Int32"):
        q.set_data(ms.Tensor([1.5, 2.5], ms.float32))
    with pytest.raises(OverflowError, match="Parameter 'q'"):
        q.set_data([2 ** 40, 1])
    with pytest.raises(TypeError, match="Parameter 'q'"):
        q.set_data("nope")
    np.testing.assert_array_equal(q.asnumpy(), [1, 2])


def test_set_data_does_not_alias_numpy():
    a = np.zeros(2, np.float32)
    p = ms.Parameter(ms.Tensor([1., 1.]), name="p")
    p.set_data(a)
    a[0] = 7
    np.testing.assert_array_equal(p.asnumpy(), [0, 0])


def test_clone_is_independent_and_keeps_name():
    x = ms.Parameter(default_input=initializer("ones", [1, 2, 3], ms.float32))
    assert str(x) == "Parameter (name=Parameter, shape=(1, 2, 3), dtype=Float32, requires_grad=True)"
    x_clone = x.clone()
    x_clone.name = "x_clone"
    assert str(x_clone) == "Parameter (name=x_clone, shape=(1, 2, 3), dtype=Float32, requires_grad=True)"
    x_clone[0, 0, 0] = 5.
    assert float(x[0, 0, 0]) == 1.0
    zeros = x.clone(init="zeros")
    assert float(zeros.sum()) == 0 and zeros.shape == x.shape
    assert x.copy().name == x.name


def test_deepcopy():
    p = ms.Parameter(ms.Tensor([1., 2.]), name="p", requires_grad=False)
    q = copy.deepcopy(p)
    assert q is not p and q.name == "p" and not q.requires_grad
    q[0] = 3.
    assert float(p[0]) == 1.


def test_init_data_returns_parameter():
    x = ms.Parameter(ms.Tensor(np.ones((1, 2)), ms.float32), name="x", requires_grad=True)
    assert str(x.init_data()) == "Parameter (name=x, shape=(1, 2), dtype=Float32, requires_grad=True)"
    np.testing.assert_array_equal(x.init_data().asnumpy(), [[1, 1]])


def test_parameter_tuple():
    x = ms.Parameter(default_input=ms.Tensor(np.arange(2 * 3).reshape((2, 3))), name="x")
    y = ms.Parameter(default_input=initializer("ones", [1, 2, 3], ms.float32), name="y")
    z = ms.Parameter(default_input=2.0, name="z")
    params = ms.ParameterTuple((x, y, z))
    params_copy = params.clone("params_copy")
    assert str(params) == (
        f"(Parameter (name=x, shape=(2, 3), dtype={INT}, requires_grad=True), "
        "Parameter (name=y, shape=(1, 2, 3), dtype=Float32, requires_grad=True), "
        "Parameter (name=z, shape=(), dtype=Float32, requires_grad=True))")
    assert str(params_copy) == (
        f"(Parameter (name=params_copy.x, shape=(2, 3), dtype={INT}, requires_grad=True), "
        "Parameter (name=params_copy.y, shape=(1, 2, 3), dtype=Float32, requires_grad=True), "
        "Parameter (name=params_copy.z, shape=(), dtype=Float32, requires_grad=True))")
    assert isinstance(params, tuple)
    params_copy[2][()] = 9.
    assert float(z) == 2.0
    with pytest.raises(TypeError, match="element 1 is a int"):
        ms.ParameterTuple((x, 3))
    with pytest.raises(ValueError, match="prefix"):
        params.clone("")


def test_parameter_is_a_pytree():
    p = ms.Parameter(ms.Tensor([1., 2.]), name="p", requires_grad=False)
    leaves, treedef = jax.tree_util.tree_flatten(p)
    assert len(leaves) == 1
    q = jax.tree_util.tree_unflatten(treedef, [leaves[0] * 3])
    assert isinstance(q, ms.Parameter) and q.name == "p" and not q.requires_grad
    np.testing.assert_array_equal(q.asnumpy(), [3, 6])
    assert jax.jit(lambda p: p * 2)(p).tolist() == [2., 4.]
