import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import cellkit as ms

ALL = [("int8", np.int8, "Int8"), ("int16", np.int16, "Int16"), ("int32", np.int32, "Int32"),
       ("int64", np.int64, "Int64"), ("uint8", np.uint8, "UInt8"), ("uint16", np.uint16, "UInt16"),
       ("uint32", np.uint32, "UInt32"), ("uint64", np.uint64, "UInt64"),
       ("float16", np.float16, "Float16"), ("bfloat16", ml_dtypes.bfloat16, "BFloat16"),
       ("float32", np.float32, "Float32"), ("float64", np.float64, "Float64"),
       ("bool_", np.bool_, "Bool"), ("complex64", np.complex64, "Complex64")]


@pytest.mark.parametrize("attr,np_type,text", ALL)
def test_dtype_prints_and_compares_like_numpy(attr, np_type, text):
    t = getattr(ms, attr)
    assert str(t) == text and repr(t) == text
    assert t == np_type and t == np.dtype(np_type)
    assert np.dtype(np_type) == t
    assert hash(t) == hash(np.dtype(np_type))
    assert np.dtype(t) == np.dtype(np_type)


def test_dtypes_are_accepted_by_jax_numpy():
    assert jnp.zeros(2, jnp.float32).dtype == ms.float32
    assert jnp.zeros(2, ms.float16).dtype == np.float16
    assert jnp.ones(3, dtype=ms.int8).dtype == np.int8
    assert jnp.zeros(2, ms.bfloat16).dtype == ml_dtypes.bfloat16
    assert jnp.arange(3).astype(ms.float32).dtype == np.float32
    assert {np.dtype("float32"): "x"}[ms.float32] == "x"


def test_seed_conversion_examples():
    # The second seed's conversion cell.
    assert ms.dtype_to_nptype(ms.int32) is np.int32
    assert str(ms.pytype_to_dtype(int)) == "Int64"
    assert ms.dtype_to_pytype(ms.float64) is float
    assert repr(ms.dtype_to_nptype(ms.int32)) == "<class 'numpy.int32'>"


def test_pytype_and_pytype_round_trips():
    assert ms.pytype_to_dtype(bool) == ms.bool_
    assert ms.pytype_to_dtype(float) == ms.float64  # MindSpore 2.10's mapping
    assert ms.dtype_to_pytype(ms.int8) is int and ms.dtype_to_pytype(ms.bool_) is bool
    assert ms.dtype_to_pytype(ms.bfloat16) is float
    assert ms.dtype_to_nptype(ms.float16) is np.float16


def test_unknown_dtype_is_a_clear_error():
    with pytest.raises(TypeError, match="not a dtype cellkit knows"):
        ms.dtype.get_dtype(np.dtype("U3"))
