"""What every checkpoint module shares: the dtype table, the error, the format's constants."""

from __future__ import annotations

import sys
from typing import NamedTuple

import ml_dtypes
import numpy as np

from ..parameter import local

__all__ = ["CheckpointError", "FORMAT_VERSION"]

FORMAT_VERSION = 1

# The largest header the safetensors reference implementation accepts.
_MAX_HEADER_BYTES = 100_000_000
_CRC_KEY = "cellkit.crc32"
_CRC_PLACEHOLDER = "00000000"


class CheckpointError(ValueError):
    """A checkpoint file is corrupt, truncated, of an unknown format or unsupported."""


class _DT(NamedTuple):
    ms: str          # MindSpore's tensor_type string in .ckpt files (str(dtype))
    np: np.dtype
    st: str | None   # the safetensors dtype code (None: none exists)


_TABLE = (
    _DT("Bool", np.dtype(np.bool_), "BOOL"),
    _DT("Int8", np.dtype(np.int8), "I8"),
    _DT("UInt8", np.dtype(np.uint8), "U8"),
    _DT("Int16", np.dtype(np.int16), "I16"),
    _DT("UInt16", np.dtype(np.uint16), "U16"),
    _DT("Int32", np.dtype(np.int32), "I32"),
    _DT("UInt32", np.dtype(np.uint32), "U32"),
    _DT("Int64", np.dtype(np.int64), "I64"),
    _DT("UInt64", np.dtype(np.uint64), "U64"),
    _DT("Float16", np.dtype(np.float16), "F16"),
    _DT("BFloat16", np.dtype(ml_dtypes.bfloat16), "BF16"),
    _DT("Float32", np.dtype(np.float32), "F32"),
    _DT("Float64", np.dtype(np.float64), "F64"),
    _DT("Complex64", np.dtype(np.complex64), "C64"),
    _DT("Complex128", np.dtype(np.complex128), None),
    _DT("Float8E4M3FN", np.dtype(ml_dtypes.float8_e4m3fn), "F8_E4M3"),
    _DT("Float8E5M2", np.dtype(ml_dtypes.float8_e5m2), "F8_E5M2"),
)
_BY_MS = {d.ms: d for d in _TABLE}
_BY_NP = {d.np: d for d in _TABLE}
_BY_ST = {d.st: d for d in _TABLE if d.st is not None}
# Types MindSpore writes that cellkit cannot represent.
_UNSUPPORTED = {"Int4": "Int4 (MindSpore's packed qint4x2)",
                "HiFloat8": "HiFloat8 (an Ascend-only 8-bit float)"}

# load_param_into_net converts within these groups unless strict_load (MindSpore's _type_convert).
_FLOATS = {np.dtype(t) for t in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64)}
_INTS = {np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64)}
# What JAX gives for 64-bit data while jax_enable_x64 is off.
_NARROW = {np.dtype(np.int64): np.dtype(np.int32), np.dtype(np.uint64): np.dtype(np.uint32),
           np.dtype(np.float64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.complex64)}


def _dtype_name(dtype) -> str:
    d = _BY_NP.get(np.dtype(dtype))
    return d.ms if d is not None else str(dtype)


def _check_host() -> None:
    if sys.byteorder != "little":
        raise NotImplementedError("cellkit checkpoints are little-endian; reading and writing them "
                                  "on a big-endian host is not supported")


def _not_traced(what: str) -> None:
    if local.frame is not None:
        raise RuntimeError(f"{what} must be called outside traced functions (cellkit.jit, "
                           "GRAPH_MODE, cellkit.grad): it reads or writes files and Parameters eagerly")


def _raw(value) -> memoryview:
    """The little-endian C-order bytes of an entry (a str as UTF-8)."""
    if isinstance(value, str):
        return memoryview(value.encode("utf-8"))
    arr = np.ascontiguousarray(np.asarray(value))
    return memoryview(arr.reshape(-1).view(np.uint8))
