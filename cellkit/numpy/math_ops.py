"""Arithmetic, reductions, products and statistics (``mindspore.numpy.math_ops``).

The functions are built from the tables in the private modules (``_registry.install``), so each
is one line: MindSpore's signature, the JAX function and MindSpore's dtype rule.

>>> from cellkit.numpy import math_ops
>>> math_ops.true_divide([1, 2], 2)
Array([0.5, 1. ], dtype=float32)
"""

from __future__ import absolute_import

from ._registry import install
from ._tables import ALL

math_module = [
    "mean", "inner", "add", "subtract", "multiply", "divide", "true_divide", "power", "dot", "outer",
    "tensordot", "absolute", "std", "var", "average", "not_equal", "minimum", "matmul", "square", "sqrt",
    "reciprocal", "log", "maximum", "heaviside", "amax", "amin", "hypot", "float_power", "floor", "ptp",
    "deg2rad", "rad2deg", "count_nonzero", "positive", "negative", "clip", "floor_divide", "remainder", "mod",
    "fix", "fmod", "trunc", "exp", "expm1", "fabs", "exp2", "kron", "promote_types", "divmod", "diff", "cbrt",
    "cross", "ceil", "trapz", "abs", "max", "min", "gcd", "lcm", "log1p", "logaddexp", "log2", "logaddexp2",
    "log10", "convolve", "ediff1d", "nansum", "nanmean", "nanvar", "nanstd", "cumsum", "nancumsum", "sin",
    "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
    "arctan2", "cov", "multi_dot", "nanmax", "nanmin", "argmax", "argmin", "searchsorted", "interp", "sum",
    "corrcoef", "gradient", "sign", "copysign", "radians", "digitize", "bincount", "histogram", "histogramdd",
    "histogram2d", "polyadd", "polysub", "polyval", "polyder", "polymul", "polyint", "result_type", "unwrap",
    "cumprod", "ravel_multi_index", "norm", "bitwise_and", "bitwise_or", "bitwise_xor", "invert",
    "bitwise_not", "rint", "correlate",
]

__all__ = math_module + ['around', 'round', 'matrix_power']

install({name: ALL[name] for name in __all__}, globals())
