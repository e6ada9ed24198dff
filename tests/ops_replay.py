"""Replay MindSpore-recorded op cases (tests/fixtures/mindspore/ops_math*.json) against cellkit.

A case ``<op>__<variant>`` calls ``cellkit.ops.<op>`` (or the Primitive ``<op>``) with the recorded
inputs and compares with MindSpore's output: the values (float tolerance), the shape, and the
dtype's kind. MindSpore returns int64/float64 where cellkit without 64-bit mode returns
int32/float32, so the kinds are compared, not the widths. A refused input must raise
MindSpore's exception type, except where DIFFERENT_ERRORS says why cellkit's differs.
"""

import jax
import numpy as np
import pytest

import cellkit as ms
from ms_fixtures import load

# Where MindSpore's CPU build raises RuntimeError with no message, it has no kernel for the op:
# such cases are checked against NumPy where NUMPY_REFERENCE has the op, else only that cellkit runs.
NUMPY_REFERENCE = {
    "einsum": lambda eq, *ops: np.einsum(eq, *ops),
    "quantile": lambda x, q, axis=None: np.quantile(x, q, axis=axis),
    "nanquantile": lambda x, q, axis=None: np.nanquantile(x, q, axis=axis),
    "fmin": np.fmin,
}

DTYPES = {"Float32": ms.float32, "Float16": ms.float16, "Float64": ms.float64, "Int32": ms.int32,
          "Int64": ms.int64, "Bool": ms.bool_}


def to_cellkit(value):
    if isinstance(value, np.ndarray):
        return ms.Tensor(value)
    if isinstance(value, tuple):
        return tuple(to_cellkit(v) for v in value)
    if isinstance(value, list):
        return [to_cellkit(v) for v in value]
    if isinstance(value, str) and value in DTYPES:
        return DTYPES[value]
    return value


def kind(dtype):
    k = np.dtype(dtype).kind
    return "i" if k == "u" else k


def assert_same(ours, expected, where, rtol=1e-4, atol=1e-5):
    if isinstance(expected, (tuple, list)):
        assert isinstance(ours, (tuple, list)), f"{where}: expected a sequence, got {type(ours).__name__}"
        assert len(ours) == len(expected), f"{where}: expected {len(expected)} outputs, got {len(ours)}"
        for i, (o, e) in enumerate(zip(ours, expected)):
            assert_same(o, e, f"{where}[{i}]", rtol, atol)
        return
    if isinstance(expected, np.ndarray):
        got = np.asarray(ours)
        assert got.shape == expected.shape, f"{where}: shape {got.shape} != MindSpore's {expected.shape}"
        assert kind(got.dtype) == kind(expected.dtype), f"{where}: dtype {got.dtype} is not of the kind of {expected.dtype}"
        if expected.dtype.kind in "biu":
            np.testing.assert_array_equal(got, expected, err_msg=where)
        else:
            wide = np.complex128 if "c" in (got.dtype.kind, expected.dtype.kind) else np.float64
            np.testing.assert_allclose(got.astype(wide), expected.astype(wide), rtol=rtol, atol=atol,
                                       equal_nan=True, err_msg=where)
        return
    if isinstance(expected, (bool, int, float)):
        assert type(ours) is type(expected) or np.ndim(ours) == 0, f"{where}: {ours!r} != {expected!r}"
        assert ours == pytest.approx(expected, rel=rtol, abs=atol), f"{where}: {ours!r} != {expected!r}"
        return
    raise AssertionError(f"{where}: no comparison for {type(expected).__name__}")


def no_kernel(case):
    return case.get("error") == "RuntimeError" and not case.get("message")


def replay(fn, case, name, different_errors):
    inputs = [to_cellkit(v) for v in case["inputs"]]
    kwargs = {k: to_cellkit(v) for k, v in case["kwargs"].items()}
    op = name.split("__")[0]
    if no_kernel(case):
        out = fn(*inputs, **kwargs)  # MindSpore's CPU build has no kernel: cellkit must run
        if op in NUMPY_REFERENCE:
            ref = NUMPY_REFERENCE[op](*[np.asarray(v) if isinstance(v, jax.Array) else v for v in inputs],
                                      **{k: v for k, v in kwargs.items()})
            np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-4, atol=1e-5)
        return
    if "error" in case:
        expected = different_errors.get(name, case["error"])
        if expected is None:  # cellkit computes what MindSpore refuses (see DIFFERENT_ERRORS)
            fn(*inputs, **kwargs)
            return
        with pytest.raises(Exception) as info:
            fn(*inputs, **kwargs)
        assert type(info.value).__name__ == expected, \
            f"{name}: cellkit raised {type(info.value).__name__} ({info.value}), MindSpore {case['error']}"
        return
    assert_same(fn(*inputs, **kwargs), case["output"], name)


def cases(family):
    data = load(family)
    return data, sorted(data)
