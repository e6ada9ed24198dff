import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from conftest import x64

INT = np.int64 if x64() else np.int32
FLOAT64 = np.float64 if x64() else np.float32


def test_python_scalars_follow_mindspore_rules():
    assert ms.Tensor(1.5).dtype == np.float32
    assert ms.Tensor(3).dtype == INT
    assert ms.Tensor(True).dtype == np.bool_
    assert ms.Tensor([1, 2, 3]).dtype == INT
    assert ms.Tensor([1, 2.5]).dtype == np.float32
    assert ms.Tensor([True, False]).dtype == np.bool_
    assert ms.Tensor([]).dtype == np.float32


def test_numpy_keeps_its_dtype_within_jax_precision():
    assert ms.Tensor(np.arange(3)).dtype == INT
    assert ms.Tensor(np.ones(2)).dtype == FLOAT64
    assert ms.Tensor(np.ones(2, np.float16)).dtype == np.float16
    assert ms.Tensor(np.ones(2, np.uint8)).dtype == np.uint8


def test_tensor_is_a_jax_array_and_isinstance_works():
    t = ms.Tensor([1.0, 2.0], ms.float32)
    assert isinstance(t, jax.Array)
    assert isinstance(t, ms.Tensor)
    assert isinstance(jnp.ones(2), ms.Tensor)
    assert isinstance(ms.Parameter(t, name="p"), ms.Tensor)
    assert not isinstance(np.ones(2), ms.Tensor)


def test_dtype_argument_casts():
    assert ms.Tensor([1, 2], ms.float32).dtype == np.float32
    np.testing.assert_array_equal(ms.Tensor(3.7, ms.int32), 3)


def test_tensor_does_not_alias_numpy_input():
    a = np.ones(3, np.float32)
    t = ms.Tensor(a)
    a[0] = 5
    assert float(t[0]) == 1.0


def test_python_int_overflow_is_refused():
    with pytest.raises(OverflowError, match="does not fit Int32"):
        ms.Tensor(2 ** 40, ms.int32)
    with pytest.raises(OverflowError):
        ms.Tensor([1, 2 ** 40], ms.int32)
    assert int(ms.Tensor(2 ** 31 - 1, ms.int32)) == 2 ** 31 - 1


def test_init_form_and_bad_input():
    from cellkit.common.initializer import One
    np.testing.assert_array_equal(ms.Tensor(shape=(2, 2), dtype=ms.float32, init=One()), np.ones((2, 2)))
    with pytest.raises(ValueError, match="needs input_data"):
        ms.Tensor()
    with pytest.raises(TypeError, match="cannot convert"):
        ms.Tensor(object())
