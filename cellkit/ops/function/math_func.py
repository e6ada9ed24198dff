"""Elementwise math, comparison, logical and bitwise ops (MindSpore's ``ops/function/math_func.py``).

Most ops are one line of :data:`RENAMES`: the JAX function with the same arguments.
As in MindSpore, two inputs that do not broadcast raise ``ValueError``, and the ops in
:data:`FLOAT_ONLY` refuse integer and bool inputs with ``TypeError`` (MindSpore has no
integer kernel for them); ops whose arguments differ from JAX's are small functions.

>>> import cellkit as ms
>>> x = ms.Tensor([1., 4., 9.])
>>> ms.ops.sqrt(x)
Array([1., 2., 3.], dtype=float32)
>>> ms.ops.div(ms.Tensor([7., -7.]), 2., rounding_mode="floor")
Array([ 3., -4.], dtype=float32)
>>> ms.ops.add(ms.Tensor([1., 2.]), ms.Tensor([1., 2., 3.]))
Traceback (most recent call last):
...
ValueError: ops.add: the inputs' shapes (2,) and (3,) do not broadcast
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import jax.scipy.special as jss

from ._utils import _v, exporter

__all__ = []
_public = exporter(__all__)


def _frac(x):
    return x - jnp.trunc(x)


def _xdivy(x, y):
    return jnp.where(x == 0, jnp.zeros_like(x / y), x / y)


def _truncate_div(x, y):
    out = jnp.true_divide(x, y)
    if jnp.issubdtype(jnp.result_type(x, y), jnp.integer):
        return jnp.trunc(out).astype(jnp.result_type(x, y))
    return jnp.trunc(out)


def _int_div(x, y):
    """Division where two integer inputs give the truncated integer quotient (MindSpore's RealDiv)."""
    if jnp.issubdtype(jnp.result_type(x, y), jnp.integer):
        return _truncate_div(x, y)
    return jnp.true_divide(x, y)


def _inv(x):
    if jnp.issubdtype(jnp.result_type(x), jnp.integer):
        return _truncate_div(jnp.ones((), jnp.result_type(x)), x)
    return jnp.reciprocal(x)


def _heaviside(x, values):
    return jnp.heaviside(x, values).astype(jnp.result_type(x, values))


def _lgamma(x):
    x = jnp.asarray(x)
    return jax.lax.lgamma(x if jnp.issubdtype(x.dtype, jnp.inexact) else x.astype(jnp.promote_types(x.dtype, jnp.float32)))


def _ldexp(x, other):
    return x * jnp.exp2(other).astype(jnp.result_type(x, jnp.float32))


def _sgn(x):
    if jnp.iscomplexobj(x):
        mag = jnp.abs(x)
        return jnp.where(mag == 0, 0, x / jnp.where(mag == 0, 1, mag))
    return jnp.sign(x)


# name: (JAX function, MindSpore signature) — the op is that function, with Parameters accepted.
RENAMES = {
    # arithmetic
    "add": (jnp.add, "(input, other)"),
    "tensor_add": (jnp.add, "(input, other)"),
    "sub": (jnp.subtract, "(input, other)"),
    "tensor_sub": (jnp.subtract, "(input, other)"),
    "mul": (jnp.multiply, "(input, other)"),
    "multiply": (jnp.multiply, "(input, other)"),
    "tensor_mul": (jnp.multiply, "(input, other)"),
    "true_divide": (jnp.true_divide, "(dividend, divisor)"),
    "tensor_div": (_int_div, "(x, y)"),
    "floor_divide": (jnp.floor_divide, "(input, other)"),
    "floor_div": (jnp.floor_divide, "(x, y)"),
    "floordiv": (jnp.floor_divide, "(input, other)"),
    "tensor_floordiv": (jnp.floor_divide, "(input, other)"),
    "floor_mod": (jnp.remainder, "(x, y)"),
    "floormod": (jnp.remainder, "(x, y)"),
    "remainder": (jnp.remainder, "(input, other)"),
    "tensor_mod": (jnp.remainder, "(x, y)"),
    "fmod": (jnp.fmod, "(input, other)"),
    "truncate_mod": (jnp.fmod, "(x, y)"),
    "truncate_div": (_truncate_div, "(x, y)"),
    "xdivy": (_xdivy, "(x, y)"),
    "xlogy": (jss.xlogy, "(input, other)"),
    "pow": (jnp.power, "(input, exponent)"),
    "tensor_pow": (jnp.power, "(input, exponent)"),
    "pows": (jnp.power, "(input, exponent)"),
    "float_power": (jnp.float_power, "(input, exponent)"),
    "neg": (jnp.negative, "(input)"),
    "negative": (jnp.negative, "(input)"),
    "positive": (jnp.positive, "(input)"),
    "abs": (jnp.abs, "(input)"),
    "absolute": (jnp.abs, "(input)"),
    "sign": (jnp.sign, "(input)"),
    "sgn": (_sgn, "(input)"),
    "signbit": (jnp.signbit, "(input)"),
    "copysign": (jnp.copysign, "(x, other)"),
    "square": (jnp.square, "(input)"),
    "sqrt": (jnp.sqrt, "(x)"),
    "rsqrt": (jax.lax.rsqrt, "(input)"),
    "reciprocal": (jnp.reciprocal, "(input)"),
    "inv": (_inv, "(x)"),
    "maximum": (jnp.maximum, "(input, other)"),
    "minimum": (jnp.minimum, "(input, other)"),
    "fmax": (jnp.fmax, "(input, other)"),
    "fmin": (jnp.fmin, "(input, other)"),
    "hypot": (jnp.hypot, "(input, other)"),
    "gcd": (jnp.gcd, "(input, other)"),
    "lcm": (jnp.lcm, "(input, other)"),
    "ldexp": (_ldexp, "(x, other)"),
    "nextafter": (jnp.nextafter, "(input, other)"),
    "heaviside": (_heaviside, "(input, values)"),
    # rounding
    "floor": (jnp.floor, "(input)"),
    "ceil": (jnp.ceil, "(input)"),
    "trunc": (jnp.trunc, "(input)"),
    "frac": (_frac, "(x)"),
    # exponentials and logarithms
    "exp": (jnp.exp, "(input)"),
    "tensor_exp": (jnp.exp, "(input)"),
    "exp2": (jnp.exp2, "(input)"),
    "expm1": (jnp.expm1, "(input)"),
    "tensor_expm1": (jnp.expm1, "(input)"),
    "log": (jnp.log, "(input)"),
    "log2": (jnp.log2, "(input)"),
    "log10": (jnp.log10, "(input)"),
    "log1p": (jnp.log1p, "(input)"),
    "logaddexp": (jnp.logaddexp, "(input, other)"),
    "logaddexp2": (jnp.logaddexp2, "(input, other)"),
    # trigonometric and hyperbolic
    "sin": (jnp.sin, "(input)"),
    "cos": (jnp.cos, "(input)"),
    "tan": (jnp.tan, "(input)"),
    "sinh": (jnp.sinh, "(input)"),
    "cosh": (jnp.cosh, "(input)"),
    "tanh": (jnp.tanh, "(input)"),
    "asin": (jnp.arcsin, "(input)"),
    "arcsin": (jnp.arcsin, "(x)"),
    "acos": (jnp.arccos, "(input)"),
    "arccos": (jnp.arccos, "(input)"),
    "atan": (jnp.arctan, "(input)"),
    "arctan": (jnp.arctan, "(input)"),
    "asinh": (jnp.arcsinh, "(input)"),
    "arcsinh": (jnp.arcsinh, "(input)"),
    "acosh": (jnp.arccosh, "(input)"),
    "arccosh": (jnp.arccosh, "(input)"),
    "atanh": (jnp.arctanh, "(input)"),
    "arctanh": (jnp.arctanh, "(input)"),
    "atan2": (jnp.arctan2, "(input, other)"),
    "arctan2": (jnp.arctan2, "(input, other)"),
    "deg2rad": (jnp.deg2rad, "(x)"),
    "rad2deg": (jnp.rad2deg, "(x)"),
    "sinc": (jnp.sinc, "(input)"),
    # special functions
    "erf": (jax.lax.erf, "(input)"),
    "erfc": (jax.lax.erfc, "(input)"),
    "erfinv": (jax.lax.erf_inv, "(input)"),
    "lgamma": (_lgamma, "(input)"),
    "digamma": (jax.lax.digamma, "(input)"),
    "i0": (jnp.i0, "(input)"),
    "bessel_i0": (jss.i0, "(x)"),
    "bessel_i0e": (jss.i0e, "(x)"),
    "bessel_i1": (jss.i1, "(x)"),
    "bessel_i1e": (jss.i1e, "(x)"),
    "igamma": (jss.gammainc, "(input, other)"),
    "igammac": (jss.gammaincc, "(input, other)"),
    "zeta": (jss.zeta, "(input, other)"),
    # complex parts
    "real": (jnp.real, "(input)"),
    "imag": (jnp.imag, "(input)"),
    "conj": (jnp.conj, "(input)"),
    "angle": (jnp.angle, "(input)"),
    # comparison
    "gt": (jnp.greater, "(input, other)"),
    "greater": (jnp.greater, "(input, other)"),
    "tensor_gt": (jnp.greater, "(input, other)"),
    "ge": (jnp.greater_equal, "(input, other)"),
    "greater_equal": (jnp.greater_equal, "(input, other)"),
    "tensor_ge": (jnp.greater_equal, "(input, other)"),
    "lt": (jnp.less, "(input, other)"),
    "less": (jnp.less, "(input, other)"),
    "tensor_lt": (jnp.less, "(input, other)"),
    "le": (jnp.less_equal, "(input, other)"),
    "less_equal": (jnp.less_equal, "(input, other)"),
    "tensor_le": (jnp.less_equal, "(input, other)"),
    "eq": (jnp.equal, "(input, other)"),
    "equal": (jnp.equal, "(input, other)"),
    "ne": (jnp.not_equal, "(input, other)"),
    "not_equal": (jnp.not_equal, "(input, other)"),
    "isnan": (jnp.isnan, "(input)"),
    "isinf": (jnp.isinf, "(input)"),
    "isfinite": (jnp.isfinite, "(input)"),
    "isneginf": (jnp.isneginf, "(input)"),
    "isposinf": (jnp.isposinf, "(input)"),
    "isreal": (jnp.isreal, "(input)"),
    # logical and bitwise
    "logical_and": (jnp.logical_and, "(input, other)"),
    "logical_or": (jnp.logical_or, "(input, other)"),
    "logical_xor": (jnp.logical_xor, "(input, other)"),
    "logical_not": (jnp.logical_not, "(input)"),
    "bitwise_and": (jnp.bitwise_and, "(input, other)"),
    "bitwise_or": (jnp.bitwise_or, "(input, other)"),
    "bitwise_xor": (jnp.bitwise_xor, "(input, other)"),
    "invert": (jnp.invert, "(x)"),
    "bitwise_left_shift": (jnp.left_shift, "(input, other)"),
    "bitwise_right_shift": (jnp.right_shift, "(input, other)"),
}

# Ops MindSpore computes for floating (and complex) inputs only: integer or bool inputs are a TypeError.
FLOAT_ONLY = {
    "floor", "ceil", "isinf", "isneginf", "isposinf", "deg2rad", "rad2deg", "xdivy",
    "exp", "expm1", "tensor_exp", "tensor_expm1", "log", "log2", "log10", "log1p", "logaddexp", "logaddexp2", "sin", "cos", "tan", "sinh",
    "cosh", "tanh", "asin", "arcsin", "acos", "arccos", "atan", "arctan", "asinh", "arcsinh", "acosh", "arccosh",
    "atanh", "arctanh", "bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "erf", "erfc", "erfinv", "digamma", "i0", "igamma", "igammac", "zeta", "rsqrt",
    "xlogy", "hypot", "nextafter", "atan2", "arctan2",
}
# Ops MindSpore computes for integer (and bool) inputs only: floating inputs are a TypeError.
INT_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor", "invert", "bitwise_left_shift", "bitwise_right_shift",
            "gcd", "lcm"}


def _is_float(x):
    dt = getattr(x, "dtype", None)
    if dt is None:
        return isinstance(x, (float, complex))
    return jnp.issubdtype(dt, jnp.inexact)


def _is_int(x):
    dt = getattr(x, "dtype", None)
    if dt is None:
        return isinstance(x, int)
    return jnp.issubdtype(dt, jnp.integer) or dt == jnp.bool_


def _shape_error(name, args, err):
    shapes = " and ".join(str(jnp.shape(a)) for a in args if hasattr(a, "shape"))
    return ValueError(f"ops.{name}: the inputs' shapes {shapes} do not broadcast")


def elementwise(name, jax_fn, doc, kind=None):
    """The MindSpore op ``name`` computed by ``jax_fn``: Parameters accepted, shape mismatches a
    ``ValueError`` and, for ``kind`` "float" or "int", inputs of the other kind a ``TypeError``."""
    def op(*args, **kwargs):
        args = [_v(a) for a in args]
        arrays = [a for a in args if hasattr(a, "dtype")] or args[:1]
        if kind == "float" and not any(_is_float(a) for a in arrays):
            raise TypeError(f"ops.{name}: the input must be a floating-point tensor, got "
                            f"{getattr(arrays[0], 'dtype', type(arrays[0]).__name__)}")
        if kind == "int" and not all(_is_int(a) for a in arrays):
            raise TypeError(f"ops.{name}: the inputs must be integer or bool tensors, got "
                            f"{', '.join(str(getattr(a, 'dtype', type(a).__name__)) for a in arrays)}")
        try:
            return jax_fn(*args, **{k: _v(v) for k, v in kwargs.items()})
        except TypeError as e:
            if "incompatible shapes" in str(e):
                raise _shape_error(name, args, e) from None
            raise
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"MindSpore ``ops.{name}{doc}``: ``{jax_fn.__module__}.{jax_fn.__name__}``."
    op.__wrapped__ = jax_fn
    return op


for _name, (_fn, _sig) in RENAMES.items():
    _kind = "float" if _name in FLOAT_ONLY else "int" if _name in INT_ONLY else None
    globals()[_name] = elementwise(_name, _fn, _sig, _kind)
    __all__.append(_name)


def _float_input(name, x):
    x = _v(x)
    if not _is_float(x):
        raise TypeError(f"ops.{name}: the input must be a floating-point tensor, got "
                        f"{getattr(x, 'dtype', type(x).__name__)}")
    return x


def _check_broadcast(name, *arrays):
    try:
        return jnp.broadcast_shapes(*(jnp.shape(a) for a in arrays))
    except ValueError:
        raise ValueError(f"ops.{name}: the inputs' shapes {' and '.join(str(jnp.shape(a)) for a in arrays)} "
                         "do not broadcast") from None


@_public
def div(input, other, *, rounding_mode=None):  # noqa: A002
    """``input / other``; ``rounding_mode`` "floor" rounds down, "trunc" toward zero.

    >>> import cellkit as ms
    >>> ms.ops.div(ms.Tensor([7., -7.]), 2., rounding_mode="trunc")
    Array([ 3., -3.], dtype=float32)
    """
    x, y = _v(input), _v(other)
    _check_broadcast("div", x, y)
    if rounding_mode is None:
        return jnp.true_divide(x, y)
    if rounding_mode == "floor":
        return jnp.floor_divide(x, y) if _is_int(x) and _is_int(y) else jnp.floor(jnp.true_divide(x, y))
    if rounding_mode == "trunc":
        return _truncate_div(x, y)
    raise ValueError(f"ops.div: rounding_mode must be None, 'floor' or 'trunc', got {rounding_mode!r}")


@_public
def divide(input, other, *, rounding_mode=None):  # noqa: A002
    """The same as :func:`div`."""
    return div(input, other, rounding_mode=rounding_mode)


@_public
def subtract(input, other, *, alpha=1):  # noqa: A002
    """``input - alpha * other``."""
    x, y = _v(input), _v(other)
    _check_broadcast("subtract", x, y)
    return jnp.subtract(x, y if alpha == 1 else alpha * y)


@_public
def round(input, *, decimals=0):  # noqa: A001,A002
    """Round half to even, to ``decimals`` places."""
    return jnp.round(_v(input), decimals)


@_public
def addcmul(input, tensor1, tensor2, value=1):  # noqa: A002
    """``input + value * tensor1 * tensor2``."""
    x, a, b = _v(input), _v(tensor1), _v(tensor2)
    _check_broadcast("addcmul", x, a, b)
    return x + _v(value) * a * b


@_public
def addcdiv(input, tensor1, tensor2, value=1):  # noqa: A002
    """``input + value * tensor1 / tensor2``."""
    x, a, b = _v(input), _v(tensor1), _v(tensor2)
    _check_broadcast("addcdiv", x, a, b)
    return x + _v(value) * a / b


@_public
def lerp(input, end, weight):  # noqa: A002
    """``input + weight * (end - input)``."""
    x, e, w = _v(input), _v(end), _v(weight)
    _check_broadcast("lerp", x, e, w)
    return x + w * (e - x)


@_public
def addn(x):
    """The elementwise sum of a list or tuple of tensors of one shape.

    >>> import cellkit as ms
    >>> ms.ops.addn([ms.Tensor([1., 2.]), ms.Tensor([3., 4.])])
    Array([4., 6.], dtype=float32)
    """
    if not isinstance(x, (list, tuple)) or not x:
        raise TypeError(f"ops.addn: x must be a non-empty list or tuple of tensors, got {type(x).__name__}")
    xs = [_v(e) for e in x]
    if len({jnp.shape(e) for e in xs}) > 1:
        raise ValueError(f"ops.addn: every input must have the same shape, got {[jnp.shape(e) for e in xs]}")
    return functools.reduce(jnp.add, xs)


accumulate_n = addn
__all__.append("accumulate_n")


@_public
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    """``|input - other| <= atol + rtol * |other|`` elementwise."""
    x, y = _v(input), _v(other)
    _check_broadcast("isclose", x, y)
    return jnp.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)


@_public
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    """Whether every element of ``input`` is close to ``other`` (a Python bool)."""
    return bool(jnp.all(isclose(input, other, rtol, atol, equal_nan)))


@_public
def approximate_equal(x, y, tolerance=1e-05):
    """``|x - y| < tolerance`` elementwise."""
    x, y = _float_input("approximate_equal", x), _v(y)
    _check_broadcast("approximate_equal", x, y)
    return jnp.abs(x - y) < tolerance


@_public
def equal_ncount(x, y):
    """The number of equal elements of ``x`` and ``y``, as a one-element int32 tensor (``P.EqualCount``)."""
    x, y = _v(x), _v(y)
    _check_broadcast("equal_ncount", x, y)
    return jnp.sum(jnp.equal(x, y), dtype=jnp.int32).reshape(1)


@_public
def nan_to_num(input, nan=None, posinf=None, neginf=None):  # noqa: A002
    """NaN to ``nan`` (0.0 by default), infinities to ``posinf``/``neginf`` (the dtype's extremes by default)."""
    x = _float_input("nan_to_num", input)
    return jnp.nan_to_num(x, nan=0.0 if nan is None else nan, posinf=posinf, neginf=neginf)


@_public
def logit(input, eps=None):  # noqa: A002
    """``log(p / (1 - p))``, ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given."""
    x = _float_input("logit", input)
    if eps is not None and eps >= 0:
        x = jnp.clip(x, eps, 1 - eps)
    return jnp.log(x / (1 - x))


@_public
def polygamma(n, input):  # noqa: A002
    """The ``n``-th derivative of the digamma function."""
    return jss.polygamma(_v(n), _v(input))


@_public
def eps(x):
    """The machine epsilon of ``x``'s floating dtype, in ``x``'s shape."""
    x = _float_input("eps", x)
    return jnp.full(x.shape, jnp.finfo(x.dtype).eps, x.dtype)


@_public
def polar(abs, angle):  # noqa: A002
    """The complex tensor ``abs * (cos(angle) + i sin(angle))``."""
    r, t = _float_input("polar", abs), _v(angle)
    if jnp.shape(r) != jnp.shape(t):
        raise ValueError(f"ops.polar: abs and angle must have the same shape, got {jnp.shape(r)} and {jnp.shape(t)}")
    return jax.lax.complex(r * jnp.cos(t), r * jnp.sin(t))


@_public
def adjoint(x):
    """The conjugate transpose of the last two dimensions."""
    x = jnp.asarray(_v(x))
    if x.ndim < 2:
        raise ValueError(f"ops.adjoint: the input must have at least 2 dimensions, got shape {x.shape}")
    return jnp.conj(jnp.swapaxes(x, -1, -2))


@_public
def bucketize(input, boundaries, *, right=False):  # noqa: A002
    """The index of the bucket of ``boundaries`` (a sorted list) each element falls in."""
    side = "right" if right else "left"
    return jnp.searchsorted(jnp.asarray(boundaries), _v(input), side=side).astype(
        jnp.int64 if jax.config.jax_enable_x64 else jnp.int32)


@_public
def is_floating_point(input):  # noqa: A002
    """Whether ``input``'s dtype is a floating-point type (a Python bool)."""
    return bool(jnp.issubdtype(jnp.asarray(_v(input)).dtype, jnp.floating))


@_public
def is_complex(input):  # noqa: A002
    """Whether ``input``'s dtype is complex (a Python bool)."""
    return bool(jnp.iscomplexobj(_v(input)))


del _name, _fn, _sig, _kind
assert len(__all__) == len(set(__all__)), "duplicate names in math_func"
