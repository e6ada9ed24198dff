"""Math Primitives (MindSpore's ``ops/operations/math_ops.py``): one table line each.

>>> import cellkit as ms
>>> from cellkit.ops import operations as P
>>> P.ReduceMax(keep_dims=True)(ms.Tensor([[1., 5.], [3., 2.]]), 1)
Array([[5.],
       [3.]], dtype=float32)
>>> P.CumSum(exclusive=True)(ms.Tensor([1., 2., 3.]), 0)
Array([0., 1., 3.], dtype=float32)
>>> index, value = P.ArgMaxWithValue(axis=1)(ms.Tensor([[1., 5.], [3., 2.]]))
>>> index.tolist(), value.tolist()
([1, 0], [5.0, 3.0])
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import function as F
from ..function._utils import _v
from ..primitive import REQUIRED, install_primitives

__all__ = []


def _reduce(op, keyword):
    """A ReduceX Primitive's call ``(x, axis=())``: ``()`` reduces every axis."""
    def call(x, axis=(), *, keep_dims, skip_mode=False):
        return op(x, None if axis == () or axis == [] else axis, **{keyword: keep_dims})
    call.__name__ = f"reduce_{op.__name__}"
    return call


def _reduce_std(x, *, axis, unbiased, keep_dims):
    return F.std_mean(x, None if axis == () or axis == [] else axis, int(unbiased), keep_dims)


def _with_value(arg, reduce):
    """ArgMaxWithValue / ArgMinWithValue: ``(index, value)`` over ``axis``."""
    def call(x, *, axis, keep_dims):
        x = _v(x)
        return arg(x, axis, keep_dims), reduce(x, axis=axis, keepdims=keep_dims)
    call.__name__ = f"{arg.__name__}_with_value"
    return call


def _arg(fn):
    def call(x, *, axis, output_type):
        return fn(_v(x), axis=axis).astype(jax.dtypes.canonicalize_dtype(output_type))
    call.__name__ = fn.__name__
    return call


def _cumulative(fn, identity):
    """CumSum / CumProd / CumulativeLogsumexp ``(x, axis)`` with ``exclusive`` and ``reverse``."""
    def call(x, axis, *, exclusive, reverse):
        x = _v(x)
        axis = int(axis) % x.ndim
        if reverse:
            x = jnp.flip(x, axis)
        out = fn(x, axis)
        if exclusive:
            pad = [(0, 0)] * x.ndim
            pad[axis] = (1, 0)
            out = jnp.pad(jax.lax.slice_in_dim(out, 0, x.shape[axis] - 1, axis=axis), pad,
                          constant_values=identity)
        return jnp.flip(out, axis) if reverse else out
    call.__name__ = fn.__name__
    return call


def _binary(fn):
    def call(x, y):
        return fn(_v(x), _v(y))
    call.__name__ = fn.__name__
    return call


def _div_no_nan(x, y):
    x, y = _v(x), _v(y)
    return jnp.where(y == 0, jnp.zeros((), jnp.result_type(x, y)), x / jnp.where(y == 0, 1, y))


def _mul_no_nan(x, y):
    x, y = _v(x), _v(y)
    return jnp.where(y == 0, jnp.zeros((), jnp.result_type(x, y)), x * y)


def _addn(inputs):
    return F.addn(inputs)


def _lp_norm(x, *, axis, p, keep_dims, epsilon):
    x = _v(x)
    axis = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    if p == 0:
        return jnp.sum(x != 0, axis=axis, keepdims=keep_dims).astype(x.dtype)
    return jnp.linalg.vector_norm(x, ord=p, axis=axis, keepdims=keep_dims)


def _euclidean_norm(x, axes, *, keep_dims):
    x = _v(x)
    axes = tuple(int(a) for a in np.asarray(axes).reshape(-1))
    return jnp.sqrt(jnp.sum(jnp.square(x), axis=axes, keepdims=keep_dims))


def _square_sum_all(x, y):
    return jnp.sum(jnp.square(_v(x))), jnp.sum(jnp.square(_v(y)))


def _squared_difference(x, y):
    return jnp.square(F.sub(x, y))


def _count_nonzero(x, *, dims):
    return F.count_nonzero(x, () if dims is None else dims)


def _polygamma(n, x):
    return F.polygamma(n, x)


def _logit(x, *, eps):
    return F.logit(x, None if eps < 0 else eps)


def _nan_to_num(x, *, nan, posinf, neginf):
    return F.nan_to_num(x, nan, posinf, neginf)


def _is_close(x, y, *, rtol, atol, equal_nan):
    return F.isclose(x, y, rtol, atol, equal_nan)


def _approximate_equal(x, y, *, tolerance):
    return F.approximate_equal(x, y, tolerance)


def _cummax(fn):
    def call(x, *, axis):
        return fn(x, axis)
    call.__name__ = fn.__name__
    return call


def _complex(real, imag):
    return jax.lax.complex(_v(real), _v(imag))


def _bucketize(x, *, boundaries):
    return jnp.searchsorted(jnp.asarray(boundaries, jnp.float32), _v(x), side="right").astype(jnp.int32)


def _rint(x):
    return jnp.round(_v(x))


# Name: (op, constructor arguments with MindSpore's defaults[, check])
def _bincount(array, size, weights):
    """MindSpore's ``Bincount``: ``size`` bins of ``array``'s values, summing ``weights`` (an empty
    ``weights`` counts ones); the result has the dtype of ``weights``."""
    a, w = jnp.asarray(_v(array)), jnp.asarray(_v(weights))
    n = int(np.asarray(_v(size)))
    if n < 0:
        raise ValueError(f"For 'Bincount', size must be non-negative, got {n}")
    if w.size == 0:
        w = jnp.ones(a.shape, w.dtype)
    elif w.shape != a.shape:
        raise ValueError(f"For 'Bincount', weights must have the shape of array {a.shape} or be empty, got {w.shape}")
    return jnp.zeros((n,), w.dtype).at[a.reshape(-1)].add(w.reshape(-1), mode="drop")


PRIMITIVES = {
    "Bincount": (_bincount, {}),
    # arithmetic
    "Add": (F.add, {}),
    "TensorAdd": (F.add, {}),
    "AddN": (_addn, {}),
    "AccumulateNV2": (_addn, {}),
    "Sub": (F.sub, {}),
    "Mul": (F.mul, {}),
    "Div": (F.div, {}),
    "RealDiv": (F.true_divide, {}),
    "FloorDiv": (F.floor_divide, {}),
    "FloorMod": (F.floor_mod, {}),
    "Mod": (F.fmod, {}),
    "TruncateDiv": (F.truncate_div, {}),
    "TruncateMod": (F.truncate_mod, {}),
    "DivNoNan": (_div_no_nan, {}),
    "MulNoNan": (_mul_no_nan, {}),
    "Xdivy": (F.xdivy, {}),
    "Xlogy": (F.xlogy, {}),
    "Pow": (F.pow, {}),
    "Maximum": (F.maximum, {}),
    "Minimum": (F.minimum, {}),
    "Fmax": (F.fmax, {}),
    "Fmin": (F.fmin, {}),
    "Hypot": (F.hypot, {}),
    "Gcd": (F.gcd, {}),
    "Lcm": (F.lcm, {}),
    "NextAfter": (F.nextafter, {}),
    "Heaviside": (F.heaviside, {}),
    "SquaredDifference": (_squared_difference, {}),
    "SquareSumAll": (_square_sum_all, {}),
    "Addcmul": (F.addcmul, {}),
    "Addcdiv": (F.addcdiv, {}),
    "Lerp": (F.lerp, {}),
    # unary
    "Neg": (F.neg, {}),
    "Abs": (F.abs, {}),
    "Sign": (F.sign, {}),
    "Square": (F.square, {}),
    "Sqrt": (F.sqrt, {}),
    "Rsqrt": (F.rsqrt, {}),
    "Reciprocal": (F.reciprocal, {}),
    "Inv": (F.inv, {}),
    "Floor": (F.floor, {}),
    "Ceil": (F.ceil, {}),
    "Round": (F.round, {}),
    "Rint": (_rint, {}),
    "Trunc": (F.trunc, {}),
    "Exp": (F.exp, {}),
    "Expm1": (F.expm1, {}),
    "Log": (F.log, {}),
    "Log1p": (F.log1p, {}),
    "Sin": (F.sin, {}),
    "Cos": (F.cos, {}),
    "Tan": (F.tan, {}),
    "Sinh": (F.sinh, {}),
    "Cosh": (F.cosh, {}),
    "Asin": (F.asin, {}),
    "ACos": (F.acos, {}),
    "Atan": (F.atan, {}),
    "Asinh": (F.asinh, {}),
    "Acosh": (F.acosh, {}),
    "Atanh": (F.atanh, {}),
    "Atan2": (F.atan2, {}),
    "Sinc": (F.sinc, {}),
    "Erf": (F.erf, {}),
    "Erfc": (F.erfc, {}),
    "Erfinv": (F.erfinv, {}),
    "Lgamma": (F.lgamma, {}),
    "Digamma": (F.digamma, {}),
    "Polygamma": (_polygamma, {}),
    "Igamma": (F.igamma, {}),
    "Igammac": (F.igammac, {}),
    "Zeta": (F.zeta, {}),
    "Logit": (_logit, {"eps": -1.0}),
    "NanToNum": (_nan_to_num, {"nan": None, "posinf": None, "neginf": None}),
    "BesselI0": (F.bessel_i0, {}),
    "BesselI0e": (F.bessel_i0e, {}),
    "BesselI1": (F.bessel_i1, {}),
    "BesselI1e": (F.bessel_i1e, {}),
    **{f"Bessel{k}": (getattr(F, f"bessel_{k.lower()}"), {}) for k in ("J0", "J1", "Y0", "Y1", "K0", "K0e", "K1", "K1e")},
    "ComplexAbs": (F.abs, {}),
    "Real": (F.real, {}),
    "Imag": (F.imag, {}),
    "Conj": (F.conj, {}),
    "Angle": (F.angle, {}),
    "Complex": (_complex, {}),
    # comparison, logical and bitwise
    "Equal": (F.equal, {}),
    "NotEqual": (F.not_equal, {}),
    "Greater": (F.greater, {}),
    "GreaterEqual": (F.greater_equal, {}),
    "Less": (F.less, {}),
    "LessEqual": (F.less_equal, {}),
    "EqualCount": (F.equal_ncount, {}),
    "ApproximateEqual": (_approximate_equal, {"tolerance": 1e-05}),
    "IsClose": (_is_close, {"rtol": 1e-05, "atol": 1e-08, "equal_nan": False}),
    "IsNan": (F.isnan, {}),
    "IsInf": (F.isinf, {}),
    "IsFinite": (F.isfinite, {}),
    "LogicalAnd": (F.logical_and, {}),
    "LogicalOr": (F.logical_or, {}),
    "LogicalNot": (F.logical_not, {}),
    "LogicalXor": (F.logical_xor, {}),
    "BitwiseAnd": (F.bitwise_and, {}),
    "BitwiseOr": (F.bitwise_or, {}),
    "BitwiseXor": (F.bitwise_xor, {}),
    "Invert": (F.invert, {}),
    "LeftShift": (F.bitwise_left_shift, {}),
    "RightShift": (F.bitwise_right_shift, {}),
    # reductions and cumulative ops
    "ReduceSum": (_reduce(F.sum, "keepdim"), {"keep_dims": False, "skip_mode": False}),
    "ReduceMean": (_reduce(F.mean, "keep_dims"), {"keep_dims": False}),
    "ReduceMax": (_reduce(F.amax, "keepdims"), {"keep_dims": False}),
    "ReduceMin": (_reduce(F.amin, "keepdims"), {"keep_dims": False}),
    "ReduceProd": (_reduce(F.prod, "keep_dims"), {"keep_dims": False}),
    "ReduceAll": (_reduce(F.all, "keep_dims"), {"keep_dims": False}),
    "ReduceAny": (_reduce(F.any, "keep_dims"), {"keep_dims": False}),
    "ReduceStd": (_reduce_std, {"axis": [], "unbiased": True, "keep_dims": False}),
    "ArgMaxWithValue": (_with_value(F.argmax, jnp.max), {"axis": 0, "keep_dims": False}),
    "ArgMinWithValue": (_with_value(F.argmin, jnp.min), {"axis": 0, "keep_dims": False}),
    "Argmax": (_arg(jnp.argmax), {"axis": -1, "output_type": jnp.int32}),
    "Argmin": (_arg(jnp.argmin), {"axis": -1, "output_type": jnp.int32}),
    "CountNonZero": (_count_nonzero, {"dims": None}),
    "EuclideanNorm": (_euclidean_norm, {"keep_dims": False}),
    "LpNorm": (_lp_norm, {"axis": REQUIRED, "p": 2, "keep_dims": False, "epsilon": 1e-12}),
    "CumSum": (_cumulative(lambda x, a: jnp.cumsum(x, axis=a, dtype=x.dtype), 0), {"exclusive": False, "reverse": False}),
    "CumProd": (_cumulative(lambda x, a: jnp.cumprod(x, axis=a, dtype=x.dtype), 1),
                {"exclusive": False, "reverse": False}),
    "CumulativeLogsumexp": (_cumulative(lambda x, a: jax.lax.cumlogsumexp(x, axis=a), -jnp.inf),
                            {"exclusive": False, "reverse": False}),
    "Bucketize": (_bucketize, {"boundaries": REQUIRED}),
    "Cummax": (_cummax(F.cummax), {"axis": REQUIRED}),
    "Cummin": (_cummax(F.cummin), {"axis": REQUIRED}),
}
install_primitives(globals(), __all__, PRIMITIVES)
