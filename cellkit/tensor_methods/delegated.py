"""Tensor methods that are a ``cellkit.ops`` function with the Tensor as first argument, and the rest of
the methods MindSpore 2.10's Tensor has that the other families lack (linear algebra, ``kthvalue``,
``index_put``, ``renorm``, ...).

``OPS`` is the table: one line per method, ``name: ops function`` (the same name unless given), so
``x.det()`` is ``ops.det(x)`` with MindSpore's semantics as ``ops`` has them. ``METHODS`` adds the ones
``ops`` lacks, each a few lines over ``jax.numpy``/``jax.scipy``.

>>> import cellkit as ms
>>> x = ms.Tensor([[2.0, 1.0], [1.0, 3.0]])
>>> round(float(x.det()), 4), x.flipud().tolist()
(5.0, [[1.0, 3.0], [2.0, 1.0]])
>>> values, indices = ms.Tensor([[3.0, 1.0, 2.0]]).kthvalue(2)
>>> values.tolist(), indices.tolist()
([2.0], [2])
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np

from ._common import arr, dims_arg
from .random import uniform
from ..random import next_key

__all__ = ["METHODS", "PROPERTIES", "ADAPTERS", "OPS", "UNSUPPORTED", "from_numpy", "from_dlpack"]

# Tensor method -> cellkit.ops function taking the Tensor first.
OPS = {name: name for name in (
    "addr", "adjoint", "angle", "approximate_equal", "cholesky", "cholesky_inverse", "cholesky_solve",
    "copysign", "cov", "det", "diagflat", "diagonal_scatter", "diff", "dsplit", "eigvals", "fills", "fliplr",
    "flipud", "fold", "gcd", "ger", "heaviside", "hsplit", "hypot", "i0", "igamma", "igammac", "inv",
    "inverse", "invert", "isreal", "lcm", "ldexp", "log_matrix_determinant", "logaddexp", "logaddexp2",
    "logcumsumexp", "logdet", "lu_solve", "matrix_determinant", "matrix_power", "nanmedian", "nanquantile",
    "nextafter", "positive", "quantile", "random_categorical", "reverse_sequence", "rot90", "select_scatter",
    "sgn", "signbit", "slice_scatter", "slogdet", "soft_shrink", "svd", "unique_with_pad",
    "unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_prod", "vsplit", "xdivy")}
# Tensor.scatter_<op>(indices, updates) is the functional tensor_scatter_<op> (nd indices), not the
# in-place ops.scatter_<op> on a Parameter.
OPS.update({f"scatter_{op}": f"tensor_scatter_{op}" for op in ("div", "max", "min", "mul", "sub")})


def _value(a):
    return a.__cellkit_value__() if hasattr(a, "__cellkit_value__") else a


def _delegate(fname):
    def method(self, *args, **kwargs):
        from .. import ops
        return getattr(ops, fname)(self, *(_value(a) for a in args), **kwargs)
    method.__doc__ = f"``cellkit.ops.{fname}`` with this Tensor as its first argument."
    return method


def _kthvalue(x, k, dim=-1, keepdim=False):
    """The ``k``-th smallest entries along ``dim`` (1-based) and their indices."""
    order = jnp.argsort(x, axis=dim, stable=True)
    index = jnp.take(order, k - 1, axis=dim)
    values = jnp.take_along_axis(x, jnp.expand_dims(index, dim), axis=dim)
    if not keepdim:
        values = jnp.squeeze(values, dim)
    else:
        index = jnp.expand_dims(index, dim)
    return values, index


def _index_put(x, indices, values, accumulate=False):
    index = tuple(arr(i) for i in indices)
    ref = x.at[index]
    return ref.add(arr(values)) if accumulate else ref.set(arr(values))


def from_numpy(array):
    """A Tensor holding a copy of the NumPy ``array`` (MindSpore's ``Tensor.from_numpy``)."""
    return jnp.asarray(np.asarray(array))


def from_dlpack(dlpack):
    """A Tensor from a DLPack capsule or an object with ``__dlpack__``."""
    return jnp.from_dlpack(dlpack)


def _renorm(x, p, axis, maxnorm):
    """Each slice along ``axis`` scaled down to ``p``-norm ``maxnorm`` where it is larger."""
    others = tuple(i for i in range(x.ndim) if i != axis % x.ndim)
    norm = jnp.sum(jnp.abs(x) ** p, axis=others, keepdims=True) ** (1.0 / p)
    return jnp.where(norm > maxnorm, x * (maxnorm / (norm + 1e-7)), x).astype(x.dtype)


def _sum_to_size(x, *size):
    """``x`` summed to ``size`` (broadcastable to ``x``'s shape)."""
    size = dims_arg(size)
    lead = x.ndim - len(size)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(size) if n == 1 and x.shape[lead + i] != 1)
    return jnp.sum(x, axis=axes, keepdims=True).reshape(size)


def _triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """(the solution ``X`` of ``A X = b``, a copy of ``A``); ``A`` triangular."""
    A = arr(A)
    solution = jax.scipy.linalg.solve_triangular(A, b, lower=not upper, trans=1 if transpose else 0,
                                                 unit_diagonal=unitriangular)
    return solution, A


def _geqrf(x):
    """QR in Householder form: (``R`` above the diagonal and the reflectors below, ``tau``)."""
    from jax._src.lax.linalg import geqrf  # LAPACK's geqrf; JAX exports only its consumers
    return geqrf(x)


def _orgqr(x, input2):
    """``Q`` from :meth:`geqrf`'s output (``input2``: its ``tau``)."""
    return jax.lax.linalg.householder_product(x, arr(input2))


def _ormqr(x, input2, input3, left=True, transpose=False):
    """``op(Q) @ input3`` (``left``) or ``input3 @ op(Q)``, ``Q`` from :meth:`geqrf`'s output (``input2``: its
    ``tau``)."""
    return jax.lax.linalg.ormqr(x, arr(input2), arr(input3), left=left, transpose=transpose)


def _col2im(x, output_size, kernel_size, dilation, padding_value, stride):
    """MindSpore's ``Col2Im``: ``(N, C, kh*kw, L)`` columns summed back into ``(N, C, H, W)``."""
    from .. import ops
    n, c, k, length = x.shape
    return ops.fold(x.reshape(n, c * k, length), arr(output_size), kernel_size, dilation, padding_value, stride)


def _inplace_update(x, v, indices):
    """``x`` with rows ``indices`` replaced by ``v`` (a new Tensor)."""
    return x.at[arr(indices)].set(arr(v))


def _cauchy(x, median=0.0, sigma=1.0):
    """Values from the Cauchy distribution in ``x``'s shape and dtype (a new Tensor)."""
    return (median + sigma * jax.random.cauchy(next_key(), x.shape)).astype(x.dtype)


def _log_normal(x, mean=1.0, std=2.0):
    """Values ``exp(N(mean, std))`` in ``x``'s shape and dtype (a new Tensor)."""
    return jnp.exp(mean + std * jax.random.normal(next_key(), x.shape)).astype(x.dtype)


def _uniform(x, from_=0.0, to=1.0, generator=None):
    """Values drawn uniformly from ``[from_, to)`` in ``x``'s shape and dtype (a new Tensor)."""
    return uniform(x, from_, to)


def _itemset(x, *args):
    """``x`` with one entry set: ``itemset(index, value)`` or ``itemset(value)`` for a 1-element Tensor
    (a new Tensor; arrays are immutable)."""
    if len(args) == 1:
        return jnp.full_like(x, args[0])
    index, value = args
    if isinstance(index, int):
        index = np.unravel_index(index, x.shape)
    return x.at[tuple(index)].set(value)


def _move_to(x, to, blocking=True):
    """``x`` on the device ``to`` ('CPU', 'GPU', 'Ascend'; the first of JAX's devices of that kind)."""
    platform = {"CPU": "cpu", "GPU": "gpu", "Ascend": "npu"}.get(to, str(to).lower())
    try:
        devices = jax.devices(platform)
    except RuntimeError:
        raise ValueError(f"Tensor.move_to: no '{to}' device is available to JAX") from None
    out = jax.device_put(x, devices[0])
    if blocking:
        out.block_until_ready()
    return out


METHODS = {name: _delegate(fname) for name, fname in OPS.items()}
METHODS.update({
    "kthvalue": _kthvalue,
    "index_put": _index_put,
    "from_numpy": staticmethod(from_numpy),
    "renorm": _renorm,
    "sum_to_size": _sum_to_size,
    "mvlgamma": lambda x, p: jsp.multigammaln(x, p),
    "lstsq": lambda x, A: jnp.linalg.lstsq(x, arr(A))[0],
    "triangular_solve": _triangular_solve,
    "geqrf": _geqrf,
    "orgqr": _orgqr,
    "ormqr": _ormqr,
    "col2im": _col2im,
    "inplace_update": _inplace_update,
    "cauchy": _cauchy,
    "log_normal": _log_normal,
    "uniform": _uniform,
    "itemset": _itemset,
    "move_to": _move_to,
    "is_shared": lambda x: False,
    "is_init": lambda x: False,
    "set_const_arg": lambda x, const_arg=True: x,
    "data_sync": lambda x, waiting=True: x,
    "wait_pipeline": lambda x: None,
    "hooks": lambda x: {},
    "to_dlpack": lambda x: jax.dlpack.to_dlpack(x) if hasattr(jax.dlpack, "to_dlpack") else x.__dlpack__(),
    "from_dlpack": staticmethod(from_dlpack),
})

# Read-only attributes of MindSpore's Tensor, with the values a plain Tensor has there.
PROPERTIES = {
    "mH": lambda x: jnp.swapaxes(x, -1, -2).conj(),
    "strides": lambda x: tuple(int(s) for s in np.empty(x.shape, x.dtype).strides) if x.ndim else (),
    "const_arg": lambda x: False,
    "init": lambda x: None,
    "init_flag": lambda x: False,
    "init_finished": lambda x: True,
    "virtual_flag": lambda x: False,
    "param_info": lambda x: None,
    "symbolic_shape": lambda x: None,
    "delta_seed": lambda x: 0,
}
ADAPTERS = {}

_INTERNAL = ("MindSpore's Tensor bookkeeping for its graph compiler and device runtime; a jax.Array has no "
             "such state")
# Present, but raising TypeError with the reason and what to do instead.
UNSUPPORTED = {
    "assign_value_cpp": _INTERNAL + "; use Parameter.set_data or ops.assign",
    "getitem_index_info": _INTERNAL + "; index with x[...]",
    "setitem_index_info": _INTERNAL + "; use x.at[...].set(v) or x[...] = v on a Parameter",
    "set_device_address": _INTERNAL + "; use jax.device_put(x, device)",
    "set_init_flag": _INTERNAL,
    "set_cast_dtype": _INTERNAL + "; use x.astype(dtype)",
    "set_dtype": "a jax.Array's dtype cannot change in place; use x = x.astype(dtype)",
    "offload_file_path": "JAX manages device and host memory; there is no offload file",
    "remove_hook": "a jax.Array has no hooks (see register_hook); wrap the function in jax.custom_vjp",
    "set_param_info": "a plain Tensor has no ParamInfo; make it a Parameter",
    "to_coo": "cellkit has no COO/CSR sparse Tensors; use jax.experimental.sparse.BCOO.fromdense(x)",
    "to_csr": "cellkit has no COO/CSR sparse Tensors; use jax.experimental.sparse.BCSR.fromdense(x)",
}
