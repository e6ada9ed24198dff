"""The tests and set operations of ``mindspore.numpy`` that are not one element-wise function.

>>> import cellkit as ms, cellkit.numpy as mnp
>>> mnp.isclose(ms.Tensor([1., 2.]), ms.Tensor([1., 2.1]))
Array([ True, False], dtype=bool)
>>> mnp.isscalar(1), mnp.isscalar([1])
(True, False)
"""

from __future__ import absolute_import

import numbers

import jax.numpy as jnp

from .utils import to_tensor

__all__ = ["TABLE"]


def _t(x):
    return to_tensor(x)


def _array_equal(a1, a2, equal_nan=False):
    a, b = _t(a1), _t(a2)
    if a.shape != b.shape:
        return jnp.asarray(False)
    return jnp.array_equal(a, b, equal_nan=equal_nan)


def _array_equiv(a1, a2):
    a, b = _t(a1), _t(a2)
    try:
        a, b = jnp.broadcast_arrays(a, b)
    except ValueError:
        return jnp.asarray(False)
    return jnp.all(a == b)


def _setdiff1d(ar1, ar2, assume_unique=False):
    return jnp.setdiff1d(_t(ar1), _t(ar2), assume_unique=assume_unique)


TABLE = {
    "isposinf": ("x", lambda x: jnp.isposinf(_t(x))), "isneginf": ("x", lambda x: jnp.isneginf(_t(x))),
    "isscalar": ("element", lambda e: isinstance(e, (numbers.Number, str, bytes))),
    "in1d": ("ar1, ar2, invert=False", lambda a, b, inv: jnp.isin(_t(a).reshape(-1), _t(b), invert=inv)),
    "isin": ("element, test_elements, invert=False", lambda e, t, inv: jnp.isin(_t(e), _t(t), invert=inv)),
    "isclose": ("a, b, rtol=1e-05, atol=1e-08, equal_nan=False",
                lambda a, b, rtol, atol, nan: jnp.isclose(_t(a), _t(b), rtol, atol, nan)),
    "array_equal": ("a1, a2, equal_nan=False", _array_equal),
    "array_equiv": ("a1, a2", _array_equiv),
    "setdiff1d": ("ar1, ar2, assume_unique=False", _setdiff1d),
}
