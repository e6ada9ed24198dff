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
    with pytest.raises(TypeError, match="needs input_data"):
        ms.Tensor()
    with pytest.raises(TypeError, match="cannot convert"):
        ms.Tensor(object())


# ----- construction and the defects fixed with it, against MindSpore 2.10 (tensor_construct) ----------

from ms_fixtures import load  # noqa: E402
from cellkit.common.initializer import One, initializer  # noqa: E402

CONSTRUCT = load("tensor_construct")


class _Net(ms.nn.Cell):
    def __init__(self):
        super().__init__()
        self.t = ms.Tensor([1.0, 2.0])

    def replace(self):
        self.t = ms.Parameter(ms.Tensor([3.0, 4.0]), name="t")
        return ([p.name for p in self.get_parameters()], self.t)


CONSTRUCT_CALLS = {
    "tensor_dtype": lambda d: ms.Tensor(d, dtype=ms.float16),
    "tensor_init": lambda: ms.Tensor(shape=(2, 3), dtype=ms.float32, init=One()).init_data(),
    "tensor_init_default_dtype": lambda: ms.Tensor(shape=(2,), init=One()).init_data(),
    "tensor_const_arg": lambda d: ms.Tensor(d, const_arg=True),
    "lower_tensor": lambda: ms.tensor([1.0, 2.0]),
    "lower_tensor_dtype": lambda: ms.tensor([1, 2], ms.float32),
    "from_numpy": lambda a: ms.from_numpy(a),
    "tensor_from_numpy": lambda a: ms.Tensor.from_numpy(a),
    "is_tensor_array": lambda: ms.is_tensor(ms.Tensor([1.0])),
    "is_tensor_numpy": lambda a: ms.is_tensor(a),
    "isinstance_parameter": lambda: isinstance(ms.Parameter(ms.Tensor([1.0]), name="w"), ms.Tensor),
    "tensor_no_data": lambda: ms.Tensor(),
    "parameter_tuple_duplicate_names": lambda: ms.ParameterTuple(
        (ms.Parameter(ms.Tensor([1.0]), name="w"), ms.Parameter(ms.Tensor([2.0]), name="w"))),
    "initializer_negative_shape": lambda: initializer("ones", [-1, 2]).init_data(),
    "set_seed_float": lambda: ms.set_seed(1.5),
    "cell_tensor_to_parameter": lambda: _Net().replace(),
}


def _same(got, want):
    if isinstance(want, np.ndarray):
        got = np.asarray(got)
        assert got.shape == want.shape and got.dtype == jax.dtypes.canonicalize_dtype(want.dtype)
        np.testing.assert_array_equal(got, want)
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    else:
        assert got == want


@pytest.mark.parametrize("name", sorted(CONSTRUCT))
def test_construction_matches_mindspore(name):
    case = CONSTRUCT[name]
    call = CONSTRUCT_CALLS[name]
    if "error" in case:
        with pytest.raises(getattr(__builtins__, case["error"], None) or Exception) as info:
            call(*case["inputs"])
        assert type(info.value).__name__ == case["error"], (name, info.value)
    else:
        _same(call(*case["inputs"]), case["output"])


def test_every_construction_case_is_replayed():
    assert set(CONSTRUCT_CALLS) == set(CONSTRUCT)


def test_isinstance_holds_for_tracers_and_from_numpy_copies():
    assert jax.jit(lambda t: jnp.asarray(isinstance(t, ms.Tensor)))(jnp.ones(2))
    a = np.ones(2, np.float32)
    t = ms.from_numpy(a)
    a[0] = 3
    assert float(t[0]) == 1.0
    with pytest.raises(TypeError, match="expected a numpy.ndarray"):
        ms.from_numpy([1, 2])


def test_cell_replaces_a_tensor_attribute_with_a_parameter_in_a_traced_step():
    net = _Net()
    names, t = net.replace()
    assert names == ["t"] and isinstance(t, ms.Parameter)
    net.t = ms.Tensor([5.0, 6.0])  # a Tensor over a Parameter sets its data
    assert isinstance(net.t, ms.Parameter)
    np.testing.assert_array_equal(net.t.value, [5.0, 6.0])


CONVERSIONS = [   # (NumPy data, dtype asked)
    (np.array([1e-40, -1e-40, 1e-46, 3.4e38, np.nan, 1 / 3, 0.1, -0.0], np.float64), np.float32),
    (np.array([1.7, -2.5, 0.0, 255.9], np.float32), np.int32),
    (np.array([0.0, 1.5, -0.0, np.nan], np.float32), np.bool_),
    (np.array([1, -1, 2 ** 20 + 1, 7], np.int64), np.float32),
    (np.array([1, 0, 3], np.int32), np.uint8),
    (np.array([[1.25, -3.5]], np.float16), np.float32),
]


@pytest.mark.parametrize("data, dtype", CONVERSIONS, ids=lambda v: str(getattr(v, "dtype", v)))
def test_a_numpy_array_converted_to_another_dtype_is_made_without_a_compilation(data, dtype):
    from compile_count import compiled_names
    with compiled_names() as made:
        got = ms.Tensor(data, dtype)
    want = jnp.array(data, dtype=dtype, copy=True)   # (JAX converts with NumPy too, then compiles a copy)
    assert made == []
    assert got.dtype == want.dtype and got.weak_type == want.weak_type and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got).view(np.uint8), np.asarray(want).view(np.uint8))
    before = data.copy()
    data[...] = 0   # (the tensor never shares the NumPy array's memory)
    np.testing.assert_array_equal(np.asarray(got).view(np.uint8), np.asarray(want).view(np.uint8))
    data[...] = before
