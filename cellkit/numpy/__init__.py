"""``mindspore.numpy`` on JAX: MindSpore's NumPy-style functions, at MindSpore's signatures and dtypes.

``import cellkit.numpy as mnp`` (or, with the ``mindspore`` alias, ``import mindspore.numpy as
mnp``) gives every public name of MindSpore 2.10's ``mindspore.numpy``. The functions are
``jax.numpy`` underneath, built from one table line each (``_registry``); what differs from
``jax.numpy`` is MindSpore's:

- Python numbers, lists and tuples are 32-bit Tensors (int32, float32, bool), also with
  ``jax_enable_x64`` on; the default float is float32 (``arange(0., 1., .5)``, ``linspace``,
  ``ones``, ``mean``/``std`` of integers, ``divide`` of integers);
- each function's own dtype rule where MindSpore's differs from NumPy's (``sum`` of int32 is
  int64, ``mean`` of int32 is int32, ``sin`` of int8 is float16, ``bincount`` is float32);
  where MindSpore gives int64/float64 and ``jax_enable_x64`` is off, the result is the 32-bit
  type (docs/differences.md);
- ``dtype=`` may be a dtype or a name (``"int32"``); ``rand``/``randn``/``randint`` draw from
  cellkit's key stream (``set_seed``).

>>> import cellkit.numpy as mnp
>>> x = mnp.arange(6).reshape(2, 3)
>>> mnp.roll(x, 1, axis=1)
Array([[2, 0, 1],
       [5, 3, 4]], dtype=int32)
>>> mnp.mean(mnp.array([[1., 2.], [3., 4.]]), axis=0)
Array([2., 3.], dtype=float32)
"""

from __future__ import absolute_import

from . import array_creations, array_ops, dtypes, fft, logic_ops, math_ops, utils, utils_const
from .array_creations import *  # noqa: F401,F403
from .array_creations import array_creations_module, copy, mgrid, ogrid
from .array_ops import *  # noqa: F401,F403
from .array_ops import array_ops_module
from .dtypes import (NINF, PINF, bool_, float16, float32, float64, float_, inf, int8, int16, int32, int64, int_,
                     nan, numeric_types, pi, uint, uint8, uint16, uint32, uint64)
from .logic_ops import *  # noqa: F401,F403
from .logic_ops import logic_module
from .math_ops import *  # noqa: F401,F403
from .math_ops import around, math_module, matrix_power, round  # noqa: A004 - MindSpore's name

__all__ = (array_creations_module + array_ops_module + logic_module + math_module
           + ["int_", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float_",
              "float16", "float32", "float64", "bool_", "inf", "PINF", "NINF", "nan", "pi", "numeric_types",
              "copy", "round", "around", "matrix_power", "fft", "dtypes", "utils", "utils_const",
              "array_creations", "array_ops", "logic_ops", "math_ops", "array_creations_module",
              "array_ops_module", "logic_module", "math_module", "absolute_import"])
__all__ = list(dict.fromkeys(__all__))
