"""Products, differences, statistics, polynomials and histograms of ``mindspore.numpy``.

MindSpore's dtype rules, measured against MindSpore 2.10: integer products stay integer
(``dot``, ``matmul``, ``outer``, ``convolve``); ``clip`` and ``round`` keep the input's dtype;
``gradient``, ``trapz``, ``interp``, ``cov``/``corrcoef`` and ``polyval`` of integers are
float32; ``bincount`` and ``histogram``'s counts are float32; index results (``searchsorted``,
``digitize``, ``ravel_multi_index``) are int32.

>>> import cellkit as ms, cellkit.numpy as mnp
>>> mnp.bincount(ms.Tensor([0, 2, 2], ms.int32))
Array([1., 0., 2.], dtype=float32)
>>> mnp.polyval(ms.Tensor([1, 0, -1], ms.int32), 2)
Array(3., dtype=float32)
>>> mnp.clip(ms.Tensor([1, 5, 9], ms.int32), 2.5, 6.5)
Array([2, 5, 6], dtype=int32)
"""

from __future__ import absolute_import

import numbers

import jax.numpy as jnp
import numpy as np

from . import dtypes
from ._elementwise import BINARY, binary
from .utils import cast, is_array, to_tensor

__all__ = ["TABLE"]


def _t(x):
    return to_tensor(x)


def _f(x):
    x = _t(x)
    return x if jnp.issubdtype(x.dtype, jnp.inexact) else x.astype(jnp.float32)


def _same(a, b):
    from ._elementwise import _promote
    return _promote(_t(a), _t(b))


def _contract(fn, name):
    def impl(a, b):
        a, b = _same(a, b)
        try:
            return fn(a, b)
        except TypeError as e:
            raise ValueError(f"{name}: shapes {a.shape} and {b.shape} are not aligned: {e}") from None
    return impl


def _matmul(x1, x2, dtype=None):
    out = _contract(jnp.matmul, "matmul")(x1, x2)
    return cast(out, dtypes.check_dtype(dtype))


def _tensordot(a, b, axes=2):
    a, b = _same(a, b)
    return jnp.tensordot(a, b, axes)


def _clip(x, xmin, xmax, dtype=None):
    x = _t(x)
    if xmin is None and xmax is None:
        raise ValueError("clip: one of xmin or xmax must be given")
    lo = None if xmin is None else (jnp.asarray(xmin, x.dtype) if isinstance(xmin, numbers.Number) else _t(xmin))
    hi = None if xmax is None else (jnp.asarray(xmax, x.dtype) if isinstance(xmax, numbers.Number) else _t(xmax))
    out = x
    if lo is not None:
        out = jnp.maximum(out, lo)
    if hi is not None:
        out = jnp.minimum(out, hi)
    return cast(out, dtypes.check_dtype(dtype))


def _around(a, decimals=0):
    x = _t(a)
    return jnp.round(x, decimals).astype(x.dtype)


def _diff(a, n=1, axis=-1, prepend=None, append=None):
    x = _t(a)
    kw = {k: _t(v) for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return jnp.diff(x, n, axis, **kw)


def _ediff1d(ary, to_end=None, to_begin=None):
    x = _t(ary)
    return jnp.ediff1d(x, None if to_end is None else _t(to_end), None if to_begin is None else _t(to_begin))


def _gradient(f, *varargs, axis=None, edge_order=1):
    x = _f(f)
    spacing = [_t(v) if isinstance(v, (list, tuple)) else v for v in varargs]
    if edge_order != 1:
        return _np_gradient(x, spacing, axis, edge_order)
    out = jnp.gradient(x, *spacing, axis=axis)
    return list(out) if isinstance(out, (list, tuple)) else out


def _np_gradient(x, spacing, axis, edge_order):
    out = np.gradient(np.asarray(x), *[np.asarray(s) for s in spacing], axis=axis, edge_order=edge_order)
    if isinstance(out, (list, tuple)):
        return [jnp.asarray(o, x.dtype) for o in out]
    return jnp.asarray(out, x.dtype)


def _trapz(y, x=None, dx=1.0, axis=-1):
    return jnp.trapezoid(_f(y), None if x is None else _f(x), dx, axis)


def _interp(x, xp, fp, left=None, right=None):
    return jnp.interp(_f(x), _f(xp), _f(fp), left, right)


def _conv(fn):
    def impl(a, v, mode):
        a, v = _same(a, v)
        return fn(a, v, mode).astype(a.dtype)
    return impl


def _cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, dtype=None):
    out = jnp.cov(_f(m), None if y is None else _f(y), rowvar, bias, ddof,
                  None if fweights is None else _t(fweights), None if aweights is None else _t(aweights))
    return cast(out, dtypes.check_dtype(dtype))


def _corrcoef(x, y=None, rowvar=True, dtype=None):
    out = jnp.corrcoef(_f(x), None if y is None else _f(y), rowvar)
    return cast(out, dtypes.check_dtype(dtype))


def _poly(fn):
    def impl(a1, a2):
        a, b = _same(a1, a2)
        return fn(a, b).astype(a.dtype)
    return impl


def _polyval(p, x):
    return jnp.polyval(_f(p), _f(x))


def _polyder(p, m=1):
    x = _t(p)
    return jnp.polyder(x, m).astype(x.dtype)


def _polyint(p, m=1, k=None):
    return jnp.polyint(_f(p), m, k)


def _unwrap(p, discont=dtypes.pi, axis=-1):
    return jnp.unwrap(_f(p), discont, axis)


def _divmod(x1, x2, dtype=None):
    return (binary(BINARY["floor_divide"][1], "arith")(x1, x2, dtype),
            binary(BINARY["remainder"][1], "arith")(x1, x2, dtype))


def _promote_types(type1, type2):
    return dtypes.promote(dtypes.check_dtype(type1), dtypes.check_dtype(type2))


def _result_type(*arrays_and_dtypes):
    out = None
    for item in arrays_and_dtypes:
        if is_array(item) or isinstance(item, (numbers.Number, list, tuple)):
            d = dtypes.get_dtype(to_tensor(item).dtype)
        else:
            d = dtypes.check_dtype(item)
        out = d if out is None else dtypes.promote(out, d)
    return out


def _searchsorted(a, v, side="left", sorter=None):
    x = _t(a)
    if sorter is not None:
        x = x[_t(sorter)]
    return jnp.searchsorted(x, _t(v), side=side).astype(jnp.int32)


def _digitize(x, bins, right=False):
    return jnp.digitize(_t(x), _t(bins), right).astype(jnp.int32)


def _bincount(x, weights=None, minlength=0, length=None):
    idx = _t(x)
    w = None if weights is None else _f(weights)
    if length is None:
        length = max(int(jnp.max(idx)) + 1 if idx.size else 0, minlength)
    return jnp.bincount(idx, w, minlength, length=length).astype(jnp.float32)


def _bins(bins):
    return bins if isinstance(bins, numbers.Integral) else _t(bins)


def _histogram(a, bins=10, range=None, weights=None, density=False):  # noqa: A002 - MindSpore's names
    x = _f(a)
    w = None if weights is None else _f(weights)
    hist, edges = jnp.histogram(x, _bins(bins), range, w, density)
    return hist.astype(jnp.float32), edges if not isinstance(bins, numbers.Integral) else edges.astype(x.dtype)


def _histogram2d(x, y, bins=10, range=None, weights=None, density=False):  # noqa: A002
    w = None if weights is None else _f(weights)
    hist, ex, ey = jnp.histogram2d(_f(x), _f(y), bins, range, w, density)
    return hist.astype(jnp.float32), ex.astype(jnp.float32), ey.astype(jnp.float32)


def _histogramdd(sample, bins=10, range=None, weights=None, density=False):  # noqa: A002
    w = None if weights is None else _f(weights)
    hist, edges = jnp.histogramdd(_f(sample), bins, range, w, density)
    return hist.astype(jnp.float32), [e.astype(jnp.float32) for e in edges]


def _ravel_multi_index(multi_index, dims, mode="clip", order="C"):
    idx = tuple(_t(i) for i in multi_index)
    return jnp.ravel_multi_index(idx, tuple(dims), mode=mode, order=order).astype(jnp.int32)


def _matrix_power(a, n):
    return jnp.linalg.matrix_power(_t(a), n)


def _multi_dot(arrays):
    return jnp.linalg.multi_dot([_t(a) for a in arrays])


TABLE = {
    "dot": ("a, b", _contract(jnp.dot, "dot")), "inner": ("a, b", _contract(jnp.inner, "inner")),
    "outer": ("a, b", _contract(jnp.outer, "outer")), "kron": ("a, b", _contract(jnp.kron, "kron")),
    "matmul": ("x1, x2, dtype=None", _matmul), "tensordot": ("a, b, axes=2", _tensordot),
    "cross": ("a, b, axisa=-1, axisb=-1, axisc=-1, axis=None",
              lambda a, b, aa, ab, ac, axis: jnp.cross(*_same(a, b), aa, ab, ac, axis)),
    "multi_dot": ("arrays", _multi_dot), "matrix_power": ("a, n", _matrix_power),
    "clip": ("x, xmin, xmax, dtype=None", _clip),
    "around": ("a, decimals=0", _around), "round": ("a, decimals=0", _around),
    "diff": ("a, n=1, axis=-1, prepend=None, append=None", _diff),
    "ediff1d": ("ary, to_end=None, to_begin=None", _ediff1d),
    "gradient": ("f, *varargs, axis=None, edge_order=1", _gradient),
    "trapz": ("y, x=None, dx=1.0, axis=-1", _trapz),
    "interp": ("x, xp, fp, left=None, right=None", _interp),
    "convolve": ("a, v, mode='full'", _conv(jnp.convolve)),
    "correlate": ("a, v, mode='valid'", _conv(jnp.correlate)),
    "cov": ("m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, dtype=None", _cov),
    "corrcoef": ("x, y=None, rowvar=True, dtype=None", _corrcoef),
    "polyadd": ("a1, a2", _poly(jnp.polyadd)), "polysub": ("a1, a2", _poly(jnp.polysub)),
    "polymul": ("a1, a2", _poly(jnp.polymul)), "polyval": ("p, x", _polyval),
    "polyder": ("p, m=1", _polyder), "polyint": ("p, m=1, k=None", _polyint),
    "unwrap": ("p, discont=pi, axis=-1", _unwrap),
    "divmod": ("x1, x2, dtype=None", _divmod),
    "promote_types": ("type1, type2", _promote_types), "result_type": ("*arrays_and_dtypes", _result_type),
    "searchsorted": ("a, v, side='left', sorter=None", _searchsorted),
    "digitize": ("x, bins, right=False", _digitize),
    "bincount": ("x, weights=None, minlength=0, length=None", _bincount),
    "histogram": ("a, bins=10, range=None, weights=None, density=False", _histogram),
    "histogram2d": ("x, y, bins=10, range=None, weights=None, density=False", _histogram2d),
    "histogramdd": ("sample, bins=10, range=None, weights=None, density=False", _histogramdd),
    "ravel_multi_index": ("multi_index, dims, mode='clip', order='C'", _ravel_multi_index),
}
