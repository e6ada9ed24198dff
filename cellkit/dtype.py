"""MindSpore-named dtypes that are also ordinary NumPy/JAX dtypes.

Each dtype prints as MindSpore prints it (``Int32``, ``Float32``) and compares
and hashes equal to the matching ``numpy.dtype``, so it can be passed anywhere
``jax.numpy`` takes a dtype:

>>> import jax.numpy as jnp
>>> import cellkit as ms
>>> print(ms.int32)
Int32
>>> jnp.zeros(2, ms.float32).dtype == ms.float32
True
>>> ms.dtype_to_nptype(ms.int32)
<class 'numpy.int32'>
"""

from __future__ import annotations

import builtins

import ml_dtypes
import numpy as np

__all__ = [
    "Type", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "bool_", "complex64", "complex128",
    "float8_e4m3fn", "float8_e5m2", "half", "single", "double", "int_", "uint", "float_", "byte", "short",
    "long", "ubyte", "ushort", "intc", "uintc", "intp", "uintp", "cfloat", "cdouble",
    "number_type",
    "get_dtype", "dtype_to_nptype", "dtype_to_pytype", "pytype_to_dtype",
]


class Type:
    """A MindSpore dtype: a name wrapped around a ``numpy.dtype``.

    ``np.dtype(t)`` gives the NumPy dtype (NumPy reads the ``dtype`` attribute),
    and ``t == np.float32`` holds for the matching type.

    >>> import numpy as np
    >>> import cellkit as ms
    >>> ms.float16 == np.float16, np.dtype(ms.bfloat16).name
    (True, 'bfloat16')
    """

    __slots__ = ("_name", "dtype")

    def __init__(self, name: str, np_dtype):
        self._name = name
        self.dtype = np.dtype(np_dtype)

    def __repr__(self) -> str:
        return self._name

    __str__ = __repr__

    def __eq__(self, other):
        if isinstance(other, Type):
            return self.dtype == other.dtype
        try:
            return self.dtype == np.dtype(other)
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(self.dtype)

    def __reduce__(self):
        return (get_dtype, (self.dtype,))

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize


int8 = Type("Int8", np.int8)
int16 = Type("Int16", np.int16)
int32 = Type("Int32", np.int32)
int64 = Type("Int64", np.int64)
uint8 = Type("UInt8", np.uint8)
uint16 = Type("UInt16", np.uint16)
uint32 = Type("UInt32", np.uint32)
uint64 = Type("UInt64", np.uint64)
float16 = Type("Float16", np.float16)
bfloat16 = Type("BFloat16", ml_dtypes.bfloat16)
float32 = Type("Float32", np.float32)
float64 = Type("Float64", np.float64)
bool_ = Type("Bool", np.bool_)
complex64 = Type("Complex64", np.complex64)
complex128 = Type("Complex128", np.complex128)
float8_e4m3fn = Type("Float8E4M3FN", ml_dtypes.float8_e4m3fn)
float8_e5m2 = Type("Float8E5M2", ml_dtypes.float8_e5m2)

# MindSpore's aliases (``ms.bool``, ``ms.int`` and ``ms.float`` are set in ``cellkit`` and
# ``cellkit.common.dtype``, so that this module keeps Python's builtins under those names).
half, single, double = float16, float32, float64
int_, uint, float_ = int32, uint32, float32
byte, short, long, ubyte, ushort = int8, int16, int64, uint8, uint16
intc, uintc, intp, uintp = int32, uint32, int64, uint64
cfloat, cdouble = complex64, complex128

number_type = (int8, int16, int32, int64, uint8, uint16, uint32, uint64,
               float16, bfloat16, float32, float64, complex64, complex128, float8_e4m3fn, float8_e5m2)

_BY_NUMPY = {t.dtype: t for t in number_type + (bool_,)}


def get_dtype(dtype) -> Type:
    """The MindSpore dtype for anything NumPy accepts as a dtype.

    >>> import numpy as np
    >>> import cellkit as ms
    >>> ms.dtype.get_dtype(np.float32)
    Float32
    """
    if isinstance(dtype, Type):
        return dtype
    try:
        return _BY_NUMPY[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise TypeError(f"{dtype!r} is not a dtype cellkit knows; expected one of "
                        f"{', '.join(map(str, _BY_NUMPY.values()))}") from None


def dtype_to_nptype(type_) -> type:
    """The NumPy scalar type of a dtype.

    >>> import cellkit as ms
    >>> ms.dtype_to_nptype(ms.float64)
    <class 'numpy.float64'>
    """
    return get_dtype(type_).dtype.type


_PYTYPES = {"b": builtins.bool, "i": builtins.int, "u": builtins.int,
            "f": builtins.float, "c": builtins.complex}


def dtype_to_pytype(type_) -> type:
    """The Python built-in type a dtype's values convert to.

    >>> import cellkit as ms
    >>> ms.dtype_to_pytype(ms.float64)
    <class 'float'>
    """
    t = get_dtype(type_)
    if t == bfloat16:
        return builtins.float
    return _PYTYPES[t.dtype.kind]


def pytype_to_dtype(obj) -> Type:
    """MindSpore 2.10's dtype for a Python type (``int`` → Int64, ``float`` → Float64).

    (A Python float *value* still becomes a Float32 Tensor; this maps types.)

    >>> import cellkit as ms
    >>> ms.pytype_to_dtype(int), ms.pytype_to_dtype(float), ms.pytype_to_dtype(bool)
    (Int64, Float64, Bool)
    """
    if isinstance(obj, Type):
        return obj
    if obj is builtins.bool:
        return bool_
    if obj is builtins.int:
        return int64
    if obj is builtins.float:
        return float64
    if obj is builtins.complex:
        return complex128
    return get_dtype(obj)
