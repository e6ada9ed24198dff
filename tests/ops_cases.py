"""Helpers for tests that replay MindSpore-recorded op cases (tests/fixtures/record/record_ops_array.py)."""

import jax
import jax.numpy as jnp
import numpy as np

import cellkit as ms

DTYPES = {str(t): t for t in ms.dtype.number_type + (ms.dtype.bool_,)}


def to_cellkit(value):
    """A recorded input as cellkit takes it: arrays become Tensors, dtype names become dtypes."""
    if isinstance(value, np.ndarray):
        return ms.Tensor(value)
    if isinstance(value, str) and value in DTYPES:
        return DTYPES[value]
    if isinstance(value, list):
        return [to_cellkit(v) for v in value]
    if isinstance(value, tuple):
        return tuple(to_cellkit(v) for v in value)
    if isinstance(value, dict):
        return {k: to_cellkit(v) for k, v in value.items()}
    return value


def expected_dtype(dtype):
    """MindSpore's dtype as JAX holds it (Int64 is Int32 without ``jax_enable_x64``)."""
    return jax.dtypes.canonicalize_dtype(dtype)


def assert_matches(got, expected, where, rtol=1e-5, atol=1e-6):
    """``got`` (cellkit) equals ``expected`` (MindSpore): structure, shapes, dtypes and values."""
    if isinstance(expected, dict):
        assert set(got) == set(expected), where
        for k in expected:
            assert_matches(got[k], expected[k], f"{where}[{k}]", rtol, atol)
    elif isinstance(expected, (list, tuple)) and not isinstance(got, (jax.Array, np.ndarray)):
        assert len(got) == len(expected), f"{where}: {len(got)} outputs, MindSpore gave {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_matches(g, e, f"{where}[{i}]", rtol, atol)
    elif isinstance(expected, np.ndarray):
        got = np.asarray(got)
        assert got.shape == expected.shape, f"{where}: shape {got.shape}, MindSpore {expected.shape}"
        assert got.dtype == expected_dtype(expected.dtype), f"{where}: dtype {got.dtype}, MindSpore {expected.dtype}"
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=where)
    else:
        if isinstance(got, (jax.Array, np.ndarray)):
            got = np.asarray(got).item()
        assert got == expected, f"{where}: {got!r}, MindSpore {expected!r}"


def tensor_args(case):
    return to_cellkit(case["inputs"]), to_cellkit(case.get("kwargs", {}))


def grad_ready(x):
    return jnp.asarray(x, jnp.float32)
