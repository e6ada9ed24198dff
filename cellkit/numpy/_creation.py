"""Array creation in ``mindspore.numpy``: from data, filled, ranges, grids, triangles, windows.

MindSpore's defaults: Python ints make int32 and floats float32 (``array([1, 2])``,
``arange(5)``, ``full(2, 7)``), the filled constructors and ``linspace``/``logspace``/
``geomspace``/``eye``/the windows are float32, index helpers (``indices``, ``tril_indices``,
``diag_indices``) int32; a ``dtype=`` may also be a name (``"int64"``).

>>> import cellkit.numpy as mnp
>>> mnp.arange(3), mnp.arange(0, 1, 0.5)
(Array([0, 1, 2], dtype=int32), Array([0. , 0.5], dtype=float32))
>>> mnp.linspace(0, 1, 3), mnp.full((2,), 7)
(Array([0. , 0.5, 1. ], dtype=float32), Array([7, 7], dtype=int32))
>>> mnp.mgrid[0:2, 0:2].shape, mnp.ones(2, "int8")
((2, 2, 2), Array([1, 1], dtype=int8))
"""

from __future__ import absolute_import

import numbers

import jax
import jax.numpy as jnp
import numpy as np

from ..parameter import Parameter
from ..random import next_key
from ..tensor import host_to_device
from . import dtypes
from .utils import cast, is_array, to_tensor
from .utils_const import check_shape

__all__ = ["TABLE", "mgrid", "ogrid", "NdGrid", "MGridClass", "OGridClass"]


def _dt(dtype, where):
    d = dtypes.check_dtype(dtype, where)
    return None if d is None else jax.dtypes.canonicalize_dtype(np.dtype(d))


def _data(obj, where):
    if not (is_array(obj) or isinstance(obj, (numbers.Number, list, tuple, np.generic))) or isinstance(obj, str):
        raise TypeError(f"{where}: input data must be `int`, `float`, `bool`, `Tensor`, `list`, `tuple`, "
                        f"but got {type(obj)}")
    return to_tensor(obj, where)


def _array(obj, dtype=None, copy=True, ndmin=0):
    x = cast(_data(obj, "array"), _dt(dtype, "array"))
    if ndmin > x.ndim:
        x = x.reshape((1,) * (ndmin - x.ndim) + x.shape)
    source = obj.value if isinstance(obj, Parameter) else obj
    return jnp.array(x) if copy and x is source else x   # (data converted here is already a new array)


def _asarray(a, dtype=None):
    return cast(_data(a, "asarray"), _dt(dtype, "asarray"))


def _asfarray(a, dtype=dtypes.float32):
    d = _dt(dtype, "asfarray")
    if d is None or not jnp.issubdtype(d, jnp.floating):
        d = np.dtype(np.float32)
    return _data(a, "asfarray").astype(d)


def _filled(value, name):
    def impl(shape, dtype=dtypes.float32):   # (made with NumPy: no executable per shape)
        return host_to_device(np.full(check_shape(shape, name), value, _dt(dtype, name) or np.float32))
    return impl


def _full(shape, fill_value, dtype=None):
    if isinstance(fill_value, str) or not (is_array(fill_value) or isinstance(fill_value, (numbers.Number, list, tuple))):
        raise TypeError(f"full: fill value should be int, float, bool, list, tuple, Tensor, but got "
                        f"{type(fill_value)}")
    value = to_tensor(fill_value)
    return jnp.broadcast_to(value, check_shape(shape, "full")).astype(_dt(dtype, "full") or value.dtype)


def _like(value, name):
    def impl(a, dtype=None, shape=None):
        x = to_tensor(a)
        shape = x.shape if shape is None else check_shape(shape, name)
        return host_to_device(np.full(shape, value, _dt(dtype, name) or x.dtype))
    return impl


def _full_like(a, fill_value, dtype=None, shape=None):
    x = to_tensor(a)
    shape = x.shape if shape is None else check_shape(shape, "full_like")
    return jnp.broadcast_to(to_tensor(fill_value), shape).astype(_dt(dtype, "full_like") or x.dtype)


def _number(v, where):
    if is_array(v):
        v = np.asarray(v).item()
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{where}: must be real number, not {type(v).__name__}")
    return v


def _arange(start, stop=None, step=None, dtype=None):
    start = _number(start, "arange")
    stop = None if stop is None else _number(stop, "arange")
    step = 1 if step is None else _number(step, "arange")
    if step == 0:
        raise ZeroDivisionError("arange: step must not be zero")
    if stop is None:
        start, stop = 0, start
    floaty = any(isinstance(v, float) for v in (start, stop, step))
    out = np.arange(start, stop, step, dtype=np.float64 if floaty else np.int64)
    return host_to_device(out.astype(_dt(dtype, "arange") or (np.float32 if floaty else np.int32)))


def _num(num, where):
    if isinstance(num, bool) or not isinstance(num, numbers.Integral):
        raise TypeError(f"{where}: num must be an int, got {num!r}")
    if num <= 0:
        raise ValueError(f"{where}: num must be positive, got {num}")
    return int(num)


def _endpoints(start, stop):
    return _f(to_tensor(start)), _f(to_tensor(stop))


def _f(x):
    return x if jnp.issubdtype(x.dtype, jnp.inexact) else x.astype(jnp.float32)


def _linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    a, b = _endpoints(start, stop)
    out, step = jnp.linspace(a, b, _num(num, "linspace"), endpoint=endpoint, retstep=True, axis=axis)
    out = cast(out, _dt(dtype, "linspace"))
    return (out, jnp.asarray(step, jnp.float32)) if retstep else out


def _logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    a, b = _endpoints(start, stop)
    out = jnp.power(jnp.asarray(base, a.dtype), jnp.linspace(a, b, _num(num, "logspace"), endpoint=endpoint, axis=axis))
    return _to_int_rounded(out, _dt(dtype, "logspace"))


def _geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    a, b = _endpoints(start, stop)
    out = jnp.geomspace(a, b, _num(num, "geomspace"), endpoint=endpoint, axis=axis)
    return _to_int_rounded(out, _dt(dtype, "geomspace"))


def _to_int_rounded(out, dtype):
    """Powers as an integer dtype: rounded first (float32 powers fall just short of 16, 32, ...)."""
    if dtype is not None and jnp.issubdtype(dtype, jnp.integer):
        out = jnp.round(out)
    return cast(out, dtype)


def _int_arg(v, where):
    if isinstance(v, bool) or not isinstance(v, (numbers.Integral, np.integer)):
        raise TypeError(f"{where}: Input tensor dimensions should be integers, got {v!r}")
    return int(v)


def _eye(N, M=None, k=0, dtype=dtypes.float32):  # noqa: N803 - MindSpore's names
    M = N if M is None else M
    return host_to_device(np.eye(_int_arg(N, "eye"), _int_arg(M, "eye"), k, dtype=_dt(dtype, "eye") or np.float32))


def _identity(n, dtype=dtypes.float32):
    return host_to_device(np.identity(_int_arg(n, "identity"), dtype=_dt(dtype, "identity") or np.float32))


def _tri(N, M=None, k=0, dtype=dtypes.float32):  # noqa: N803
    return host_to_device(np.tri(_int_arg(N, "tri"), None if M is None else _int_arg(M, "tri"), k,
                                 dtype=_dt(dtype, "tri") or np.float32))


def _square(m):
    """A vector as the square matrix of its rows (NumPy's and MindSpore's ``tril``/``triu`` of 1-D)."""
    x = to_tensor(m)
    return jnp.broadcast_to(x, (x.shape[0], x.shape[0])) if x.ndim == 1 else x


def _tuple32(arrays):
    return tuple(a.astype(jnp.int32) for a in arrays)


def _indices(dimensions, dtype=dtypes.int32, sparse=False):
    out = jnp.indices(check_shape(dimensions, "indices"), dtype=_dt(dtype, "indices"), sparse=sparse)
    return list(out)


def _meshgrid(*xi, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    return list(jnp.meshgrid(*[to_tensor(x) for x in xi], sparse=sparse, indexing=indexing))


class NdGrid:
    """``mgrid``/``ogrid``: index with slices for a grid (int32 for int steps, float32 for ``Nj``)."""

    def __init__(self, sparse=False):
        self.sparse = sparse

    def __getitem__(self, keys):
        single = isinstance(keys, slice)
        keys = (keys,) if single else tuple(keys)
        axes = []
        for s in keys:
            start = 0 if s.start is None else s.start
            step = 1 if s.step is None else s.step
            if isinstance(step, complex):
                axes.append(jnp.linspace(start, s.stop, int(abs(step)), dtype=jnp.float32))
            else:
                floaty = any(isinstance(v, float) for v in (start, s.stop, step))
                axes.append(jnp.asarray(np.arange(start, s.stop, step), jnp.float32 if floaty else jnp.int32))
        if single:
            return axes[0]
        grids = jnp.meshgrid(*axes, indexing="ij", sparse=self.sparse)
        return list(grids) if self.sparse else jnp.stack(grids)


class MGridClass(NdGrid):
    def __init__(self):
        super().__init__(sparse=False)


class OGridClass(NdGrid):
    def __init__(self):
        super().__init__(sparse=True)


mgrid = MGridClass()
ogrid = OGridClass()


def _window(fn):
    def impl(M):  # noqa: N803
        return fn(_int_arg(M, "window")).astype(jnp.float32)
    return impl


def _hist_edges(a, bins=10, range=None, weights=None):  # noqa: A002 - MindSpore's name
    x = _f(to_tensor(a))
    if not isinstance(bins, numbers.Integral):
        return _f(to_tensor(bins))
    return jnp.histogram_bin_edges(x, bins, range=range).astype(x.dtype)


def _pad(arr, pad_width, mode="constant", stat_length=None, constant_values=0, end_values=0,
         reflect_type="even", **kwargs):
    x = to_tensor(arr)
    if isinstance(pad_width, (list, tuple)):
        pad_width = np.asarray(pad_width).tolist()
    kw = {}
    if mode == "constant":
        kw["constant_values"] = constant_values
    elif mode == "linear_ramp":
        kw["end_values"] = end_values
    elif mode in ("reflect", "symmetric"):
        kw["reflect_type"] = reflect_type
    elif mode in ("maximum", "minimum", "mean", "median"):
        kw["stat_length"] = stat_length
    elif mode == "empty":
        mode, kw = "constant", {"constant_values": 0}
    elif callable(mode):
        kw.update(kwargs)
    return jnp.pad(x, pad_width, mode=mode, **kw).astype(x.dtype)


def _rand(*shape, dtype=dtypes.float32):
    shape = check_shape(shape[0] if len(shape) == 1 and isinstance(shape[0], (list, tuple)) else shape, "rand")
    return jax.random.uniform(next_key(), shape, _dt(dtype, "rand"))


def _randn(*shape, dtype=dtypes.float32):
    shape = check_shape(shape[0] if len(shape) == 1 and isinstance(shape[0], (list, tuple)) else shape, "randn")
    return jax.random.normal(next_key(), shape, _dt(dtype, "randn"))


def _randint(minval, maxval=None, shape=None, dtype=dtypes.int32):
    if maxval is None:
        minval, maxval = 0, minval
    shape = (1,) if shape is None else check_shape(shape, "randint")
    return jax.random.randint(next_key(), shape, minval, maxval, _dt(dtype, "randint"))


def _copy(a):
    return jnp.array(to_tensor(a))


TABLE = {
    "array": ("obj, dtype=None, copy=True, ndmin=0", _array),
    "asarray": ("a, dtype=None", _asarray), "asfarray": ("a, dtype=float32", _asfarray),
    "ones": ("shape, dtype=float32", _filled(1, "ones")), "zeros": ("shape, dtype=float32", _filled(0, "zeros")),
    "empty": ("shape, dtype=float32", _filled(0, "empty"), "filled with zeros"),
    "full": ("shape, fill_value, dtype=None", _full),
    "ones_like": ("a, dtype=None, shape=None", _like(1, "ones_like")),
    "zeros_like": ("a, dtype=None, shape=None", _like(0, "zeros_like")),
    "empty_like": ("prototype, dtype=None, shape=None", _like(0, "empty_like"), "filled with zeros"),
    "full_like": ("a, fill_value, dtype=None, shape=None", _full_like),
    "arange": ("start, stop=None, step=None, dtype=None", _arange),
    "linspace": ("start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0", _linspace),
    "logspace": ("start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0", _logspace),
    "geomspace": ("start, stop, num=50, endpoint=True, dtype=None, axis=0", _geomspace),
    "eye": ("N, M=None, k=0, dtype=float32", _eye), "identity": ("n, dtype=float32", _identity),
    "tri": ("N, M=None, k=0, dtype=float32", _tri),
    "tril": ("m, k=0", lambda m, k: jnp.tril(_square(m), k)),
    "triu": ("m, k=0", lambda m, k: jnp.triu(_square(m), k)),
    "diag": ("v, k=0", lambda v, k: jnp.diag(to_tensor(v), k)),
    "diagflat": ("v, k=0", lambda v, k: jnp.diagflat(to_tensor(v), k)),
    "diagonal": ("a, offset=0, axis1=0, axis2=1", lambda a, o, a1, a2: jnp.diagonal(to_tensor(a), o, a1, a2)),
    "diag_indices": ("n, ndim=2", lambda n, ndim: _tuple32(jnp.diag_indices(n, ndim))),
    "tril_indices": ("n, k=0, m=None", lambda n, k, m: _tuple32(jnp.tril_indices(n, k, m))),
    "triu_indices": ("n, k=0, m=None", lambda n, k, m: _tuple32(jnp.triu_indices(n, k, m))),
    "tril_indices_from": ("arr, k=0", lambda a, k: _tuple32(jnp.tril_indices_from(to_tensor(a), k))),
    "triu_indices_from": ("arr, k=0", lambda a, k: _tuple32(jnp.triu_indices_from(to_tensor(a), k))),
    "indices": ("dimensions, dtype=int32, sparse=False", _indices),
    "meshgrid": ("*xi, sparse=False, indexing='xy'", _meshgrid),
    "ix_": ("*args", lambda *args: tuple(jnp.ix_(*[to_tensor(a) for a in args]))),
    "vander": ("x, N=None, increasing=False", lambda x, n, inc: jnp.vander(to_tensor(x), n, inc)),
    "hamming": ("M", _window(jnp.hamming)), "hanning": ("M", _window(jnp.hanning)),
    "bartlett": ("M", _window(jnp.bartlett)), "blackman": ("M", _window(jnp.blackman)),
    "histogram_bin_edges": ("a, bins=10, range=None, weights=None", _hist_edges),
    "pad": ("arr, pad_width, mode='constant', stat_length=None, constant_values=0, end_values=0, "
            "reflect_type='even', **kwargs", _pad),
    "rand": ("*shape, dtype=float32", _rand, "draws from cellkit's key stream (set_seed)"),
    "randn": ("*shape, dtype=float32", _randn, "draws from cellkit's key stream (set_seed)"),
    "randint": ("minval, maxval=None, shape=None, dtype=int32", _randint,
                "draws from cellkit's key stream (set_seed)"),
    "copy": ("a", _copy),
}
