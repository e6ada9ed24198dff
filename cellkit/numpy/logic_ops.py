"""Comparisons and tests (``mindspore.numpy.logic_ops``).

The functions are built from the tables in the private modules (``_registry.install``), so each
is one line: MindSpore's signature, the JAX function and MindSpore's dtype rule.

>>> from cellkit.numpy import logic_ops
>>> logic_ops.logical_xor([True, False], [True, True])
Array([False,  True], dtype=bool)
"""

from __future__ import absolute_import

from ._registry import install
from ._tables import ALL

logic_module = [
    "not_equal", "less_equal", "less", "greater_equal", "greater", "equal", "isfinite", "isnan", "isinf",
    "isposinf", "isneginf", "isscalar", "logical_and", "logical_not", "logical_or", "logical_xor", "in1d",
    "isin", "isclose", "signbit", "sometrue", "array_equal", "array_equiv", "setdiff1d",
]

__all__ = logic_module + []

install({name: ALL[name] for name in __all__}, globals())
