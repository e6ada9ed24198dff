"""``mindspore.numpy``'s dtypes, constants and dtype rules.

The dtypes are cellkit's (``Int32`` prints as MindSpore prints it and equals ``numpy.int32``);
``int_`` and ``uint`` are the 32-bit types and ``float_`` is float32, as in MindSpore.
``promotion_rule`` is MindSpore's table for two Tensor dtypes; ``rule_for_trigonometric`` the
float dtype the trigonometric functions compute an integer input in.

>>> import cellkit.numpy as mnp
>>> print(mnp.int_, mnp.float_, mnp.uint)
Int32 Float32 UInt32
>>> mnp.promote_types(mnp.uint8, mnp.int8)
Int16
>>> mnp.pi, mnp.inf
(3.141592653589793, inf)
"""

from __future__ import absolute_import

from ..dtype import (bool_, float16, float32, float64, get_dtype, int8, int16, int32, int64, uint8,
                     uint16, uint32, uint64)

__all__ = ["inf", "PINF", "NINF", "nan", "pi", "int_", "int8", "int16", "int32", "int64", "uint", "uint8",
           "uint16", "uint32", "uint64", "float_", "float16", "float32", "float64", "bool_", "numeric_types",
           "dtype_tuple", "dtype_map", "all_types", "promotion_rule", "rule_for_trigonometric", "check_dtype"]

inf = float("inf")
PINF = float("inf")
NINF = float("-inf")
nan = float("nan")
pi = 3.141592653589793

int_ = int32
uint = uint32
float_ = float32

numeric_types = ["int_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float_", "float16", "float32", "float64", "bool_"]

dtype_tuple = (int_, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float_, float16,
               float32, float64, bool_)

dtype_map = {"int": int_, "int8": int8, "int16": int16, "int32": int32, "int64": int64, "uint": uint,
             "uint8": uint8, "uint16": uint16, "uint32": uint32, "uint64": uint64, "float": float_,
             "float16": float16, "float32": float32, "float64": float64, "bool": bool_}

all_types = ["np.int_", "np.int8", "np.int16", "np.int32", "np.int64", "np.uint", "np.uint8", "np.uint16",
             "np.uint32", "np.uint64", "np.float64", "np.float16", "np.float32", "np.float64", "np.bool_"]

_U = (uint8, uint16, uint32, uint64)
_I = (int8, int16, int32, int64)
_F = (float16, float32, float64)


def _rules():
    rule = {}
    for i, a in enumerate(_U):
        for b in _U[i + 1:]:
            rule[(a, b)] = b
    signed = {uint8: (int16, int16, int32, int64), uint16: (int32, int32, int32, int64),
              uint32: (int64, int64, int64, int64), uint64: (float64, float64, float64, float64)}
    for u, outs in signed.items():
        rule.update({(u, s): o for s, o in zip(_I, outs)})
    floats = {uint8: (float16, float32, float64), uint16: (float16, float32, float32),
              uint32: (float16, float32, float64), uint64: (float16, float32, float64)}
    for u, outs in floats.items():
        rule.update({(u, f): o for f, o in zip(_F, outs)})
    for i, a in enumerate(_I):
        for b in _I[i + 1:]:
            rule[(a, b)] = b
        rule.update({(a, f): f for f in _F})
    rule.update({(float16, float32): float32, (float16, float64): float64, (float32, float64): float64})
    rule.update({(bool_, t): t for t in _U + _I + _F})
    return rule


promotion_rule = _rules()

rule_for_trigonometric = {float16: float16, float32: float32, float64: float64, int8: float16, int16: float32,
                          int32: float32, int64: float32, uint8: float16, uint16: float32, uint32: float32,
                          uint64: float32, bool_: float16}


def check_dtype(dtype, where="dtype"):
    """A dtype argument as a cellkit dtype: a dtype, a NumPy/JAX type, or one of ``dtype_map``'s names."""
    if dtype is None:
        return None
    if isinstance(dtype, str):
        if dtype not in dtype_map:
            raise TypeError(f"{where}: only {all_types} and their MindSpore names are allowed as dtype, "
                            f"got {dtype!r}")
        return dtype_map[dtype]
    try:
        return get_dtype(dtype)
    except (TypeError, ValueError, KeyError) as e:
        raise TypeError(f"{where}: expected a dtype, got {dtype!r}") from e


def promote(dtype1, dtype2):
    """MindSpore's promotion of two Tensor dtypes (``promotion_rule``)."""
    dtype1, dtype2 = get_dtype(dtype1), get_dtype(dtype2)
    if dtype1 == dtype2:
        return dtype1
    found = promotion_rule.get((dtype1, dtype2)) or promotion_rule.get((dtype2, dtype1))
    if found is None:
        raise TypeError(f"input dtype: {dtype1}, {dtype2} are not all mindspore datatypes.")
    return found
