"""Floating-point arithmetic of small eager ops done by NumPy, the way XLA's CPU code does it.

:mod:`cellkit.host_ops` moves data with NumPy for the exact bits. This module
adds the primitives that *compute*: elementwise arithmetic, transcendental
functions, reductions and ``dot_general`` on float32/float64 (and integer)
arrays. A decoding loop whose key/value cache grows by a position per token,
or a metric computed on a handful of numbers, then runs without compiling an
XLA executable for each new shape.

The results are IEEE arithmetic as XLA's CPU code does it: subnormal results
are flushed to zero (XLA runs with flush-to-zero and denormals-are-zero), an
integer power is the same chain of multiplications, integer arithmetic wraps,
a float-to-integer conversion saturates and maps NaN to 0. Additions,
multiplications, divisions, square roots, comparisons, minima and maxima are
correctly rounded in both, so they give XLA's bits. Transcendental functions
(``exp``, ``tanh``, ...) of float32 are computed in float64 and rounded once,
so they are at least as accurate as XLA's polynomials, which may differ from
them in the last bit; sums (another order) and matrix products (another
kernel) may differ in the last bit or two, as XLA's own results differ between
a fused and an unfused executable.

Each entry of :data:`PRIMITIVES` is one line: a NumPy function of an
equation's inputs and parameters. :data:`ALLOWED` refuses the equations this
module would not compute the way XLA does (a dtype, a size), and the
equation is then left to XLA.

>>> import numpy as np
>>> PRIMITIVES["integer_pow"](np.float32([1.5, -2.0]), y=3)
array([ 3.375, -8.   ], dtype=float32)
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

__all__ = ["PRIMITIVES", "ALLOWED", "BITWISE", "MAX_MACS", "MAX_CONV_MACS", "MAX_SLOW_ELEMENTS", "flush", "window"]

# A matrix product of at most this many multiply-adds (128x128 by 128x128 is 2**21) runs on the host.
MAX_MACS = 1 << 21
# A convolution of at most this many multiply-adds runs on the host (windows gathered, then a matrix
# product per feature group: a ResNet's 3x3 convolution of 64 channels on a 32x32 image is 2**25).
MAX_CONV_MACS = 1 << 25
# erf and erf_inv have no NumPy ufunc: they run element by element, on at most this many elements.
MAX_SLOW_ELEMENTS = 4096
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


_TINY = {np.dtype(np.float32): np.finfo(np.float32).tiny, np.dtype(np.float64): np.finfo(np.float64).tiny}


def flush(x):
    """``x`` with subnormal floats replaced by a zero of the same sign (XLA's CPU code flushes them)."""
    tiny = _TINY.get(x.dtype)
    if tiny is None:
        return x
    magnitude = np.abs(x)
    subnormal = (magnitude < tiny) & (magnitude > 0)
    return np.where(subnormal, np.copysign(x.dtype.type(0), x), x) if subnormal.any() else x


def _integer_pow(x, y, **_):
    # XLA's (and jax's lowering's) square-and-multiply chain, so the roundings are the same.
    if y == 0:
        return np.ones_like(x)
    reciprocal, y, acc = y < 0, abs(y), None
    while y > 0:
        if y & 1:
            acc = x if acc is None else acc * x
        y >>= 1
        if y > 0:
            x = x * x
    return (np.ones_like(acc) / acc) if reciprocal else acc


def _dot_general(lhs, rhs, dimension_numbers, preferred_element_type=None, **_):
    (lc, rc), (lb, rb) = dimension_numbers
    out = np.result_type(lhs, rhs) if preferred_element_type is None else np.dtype(preferred_element_type)
    lhs, rhs = lhs.astype(out, copy=False), rhs.astype(out, copy=False)
    lf = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
    rf = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
    batch = [lhs.shape[d] for d in lb]
    k = math.prod(lhs.shape[d] for d in lc)
    m, n = math.prod(lhs.shape[d] for d in lf), math.prod(rhs.shape[d] for d in rf)
    a = np.transpose(lhs, list(lb) + lf + list(lc)).reshape(batch + [m, k])
    b = np.transpose(rhs, list(rb) + list(rc) + rf).reshape(batch + [k, n])
    return np.matmul(a, b).reshape(batch + [lhs.shape[d] for d in lf] + [rhs.shape[d] for d in rf])


def _dilate_and_pad(x, spatial, dilation, padding, fill):
    """``x`` with ``dilation - 1`` fills between elements along the ``spatial`` axes, then padded
    (negative widths crop), as XLA's convolution and window reductions read it."""
    if any(d != 1 for d in dilation):
        shape = list(x.shape)
        for axis, d in zip(spatial, dilation):
            shape[axis] = (x.shape[axis] - 1) * d + 1 if x.shape[axis] else 0
        out = np.full(shape, fill, x.dtype)
        out[tuple(slice(None, None, dilation[spatial.index(a)]) if a in spatial else slice(None)
                  for a in range(x.ndim))] = x
        x = out
    widths = [(0, 0)] * x.ndim
    crops = [slice(None)] * x.ndim
    for axis, (lo, hi) in zip(spatial, padding):
        widths[axis] = (max(lo, 0), max(hi, 0))
        crops[axis] = slice(max(-lo, 0), x.shape[axis] + max(lo, 0) + max(hi, 0) - max(-hi, 0))
    if any(w != (0, 0) for w in widths):
        x = np.pad(x, widths, constant_values=fill)
    return x[tuple(crops)]


def _output_sizes(x, spatial, window, strides, dilation):
    """The number of window positions along each ``spatial`` axis of ``x`` (already padded)."""
    return [(x.shape[a] - (k - 1) * d - 1) // s + 1 for a, k, s, d in zip(spatial, window, strides, dilation)]


def _windows(x, spatial, window, strides, dilation):
    """For each window offset, the index of ``x``'s (already padded) strided view at it; and the output sizes."""
    out = _output_sizes(x, spatial, window, strides, dilation)
    indices = []
    for offset in itertools.product(*[range(k) for k in window]):
        index = [slice(None)] * x.ndim
        for a, o, d, s, n in zip(spatial, offset, dilation, strides, out):
            index[a] = slice(o * d, o * d + (n - 1) * s + 1, s)
        indices.append(tuple(index))
    return indices, out


def _columns(x, spatial, window, strides, dilation, by_position=None):
    """The gathered windows of ``x`` (N, C, *spatial; padded) as (N, C, K, P): element ``k`` of the window
    at output position ``p``; and the output sizes. One strided view per window offset, or, where the
    window has more offsets than there are output positions (a weight gradient: the window is the
    image), one window view per output position: the same array, from fewer, larger copies."""
    out = _output_sizes(x, spatial, window, strides, dilation)
    if by_position is None:
        by_position = math.prod(window) > math.prod(out)
    if not by_position:
        indices, _ = _windows(x, spatial, window, strides, dilation)
        cols = np.stack([x[index] for index in indices], axis=2)               # (N, C, K, *out)
        return cols.reshape(x.shape[:2] + (math.prod(window), math.prod(out))), out
    views = []
    for position in itertools.product(*[range(n) for n in out]):
        index = [slice(None)] * x.ndim
        for a, q, k, s, d in zip(spatial, position, window, strides, dilation):
            index[a] = slice(q * s, q * s + (k - 1) * d + 1, d)
        views.append(x[tuple(index)])
    cols = np.stack(views, axis=-1)                                            # (N, C, *window, P)
    return cols.reshape(x.shape[:2] + (math.prod(window), math.prod(out))), out


def _conv(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
          feature_group_count, preferred_element_type=None, **_):
    # Windows gathered (im2col) and one matrix product per feature group.
    out_dtype = np.result_type(lhs, rhs) if preferred_element_type is None else np.dtype(preferred_element_type)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    x = np.transpose(lhs, lhs_spec).astype(out_dtype, copy=False)     # (N, C, *spatial)
    w = np.transpose(rhs, rhs_spec).astype(out_dtype, copy=False)     # (O, I, *window)
    spatial = list(range(2, x.ndim))
    x = _dilate_and_pad(x, spatial, lhs_dilation, padding, 0)
    n, groups = x.shape[0], feature_group_count
    cols, out = _columns(x, spatial, w.shape[2:], window_strides, rhs_dilation)
    per_in, per_out, k, p = w.shape[1], w.shape[0] // groups, math.prod(w.shape[2:]), math.prod(out)
    cols = cols.reshape(n, groups, per_in * k, p)                              # (N, G, I*K, P)
    kernel = w.reshape(groups, per_out, per_in * k)                            # (G, O/G, I*K)
    y = np.matmul(kernel[None], cols).reshape([n, groups * per_out] + out)     # (N, O, *out)
    return np.transpose(y, np.argsort(out_spec))


def _reduce_window(ufunc, fill):
    def fn(x, window_dimensions, window_strides, padding, base_dilation, window_dilation, **_):
        axes = list(range(x.ndim))
        x = _dilate_and_pad(x, axes, base_dilation, padding, fill(x.dtype))
        indices, _ = _windows(x, axes, window_dimensions, window_strides, window_dilation)
        return functools.reduce(ufunc, (x[index] for index in indices), x.dtype.type(fill(x.dtype)))   # (from the init, as XLA: -0 + 0 is 0)
    return fn


def _select_and_scatter_add(source, operand, select_prim, window_dimensions, window_strides, padding, **_):
    # XLA's scan of each window: the current choice is kept while select(current, candidate) holds.
    greater = str(select_prim) == "ge"
    axes = list(range(operand.ndim))
    x = _dilate_and_pad(operand, axes, (1,) * operand.ndim, padding, -np.inf if greater else np.inf)
    indices, _ = _windows(x, axes, window_dimensions, window_strides, (1,) * operand.ndim)
    best, choice = x[indices[0]], np.zeros(source.shape, np.int64)
    for k, index in enumerate(indices[1:], 1):
        v = x[index]
        take = ~(best >= v) if greater else ~(best <= v)
        best, choice = np.where(take, v, best), np.where(take, k, choice)
    result = np.zeros(x.shape, source.dtype)
    for k, index in enumerate(indices):
        result[index] += np.where(choice == k, source, source.dtype.type(0))
    return result[tuple(slice(max(lo, 0), max(lo, 0) + n) for (lo, _), n in zip(padding, operand.shape))]


def _starts(index_map, batching, batch_shape, indices, ndim):
    """Each index vector's start in every operand dimension (operand batching dimensions: the batch position)."""
    vectors = indices.reshape(-1, indices.shape[-1]).astype(np.int64)
    starts = np.zeros((vectors.shape[0], ndim), np.int64)
    for k, d in enumerate(index_map):
        starts[:, d] = vectors[:, k]
    if batching[0]:
        position = np.indices(batch_shape).reshape(len(batch_shape), -1)
        for d, i in zip(*batching):
            starts[:, d] = position[i]
    return starts


def _window_index(starts, sizes):
    """Index arrays (one per operand dimension) of each start's window of ``sizes``: shape (n, *sizes)."""
    n, rank = starts.shape
    return tuple(starts[:, d].reshape((n,) + (1,) * rank)
                 + np.arange(size).reshape((1,) + tuple(size if e == d else 1 for e in range(rank)))
                 for d, size in enumerate(sizes))


def _mode(mode):
    return getattr(mode, "name", str(mode))


def _gather(operand, indices, dimension_numbers, slice_sizes, mode, fill_value=None, **_):
    dn = dimension_numbers
    batch_shape = indices.shape[:-1]
    starts = _starts(dn.start_index_map, (dn.operand_batching_dims, dn.start_indices_batching_dims),
                     batch_shape, indices, operand.ndim)
    upper = np.array(operand.shape, np.int64) - np.array(slice_sizes, np.int64)
    outside = ((starts < 0) | (starts > upper)).any(axis=1)
    got = operand[_window_index(np.clip(starts, 0, upper), slice_sizes)]
    if _mode(mode) == "FILL_OR_DROP" and outside.any():
        kind = operand.dtype.kind
        fill = (fill_value if fill_value is not None else np.nan if kind in "fc" else True if kind == "b"
                else np.iinfo(operand.dtype).min if kind == "i" else np.iinfo(operand.dtype).max)
        got[outside] = fill
    kept = [d for d in range(operand.ndim) if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    got = got.reshape(batch_shape + tuple(slice_sizes[d] for d in kept))
    rank = got.ndim
    batch_axes = [a for a in range(rank) if a not in dn.offset_dims]
    target = batch_axes + list(dn.offset_dims)     # output axis of each axis of ``got``
    return np.transpose(got, np.argsort(target))


def _scatter_add(operand, indices, updates, dimension_numbers, mode, **_):
    dn = dimension_numbers
    scatter_axes = [a for a in range(updates.ndim) if a not in dn.update_window_dims]
    batch_shape = tuple(updates.shape[a] for a in scatter_axes)
    window = [d for d in range(operand.ndim) if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    sizes = [1] * operand.ndim
    for d, a in zip(window, dn.update_window_dims):
        sizes[d] = updates.shape[a]
    starts = _starts(dn.scatter_dims_to_operand_dims, (dn.operand_batching_dims, dn.scatter_indices_batching_dims),
                     batch_shape, indices, operand.ndim)
    upper = np.array(operand.shape, np.int64) - np.array(sizes, np.int64)
    if _mode(mode) == "CLIP":
        starts = np.clip(starts, 0, upper)
    inside = ~((starts < 0) | (starts > upper)).any(axis=1)     # (XLA skips an update out of bounds)
    values = np.transpose(updates, scatter_axes + list(dn.update_window_dims)).reshape((-1,) + tuple(sizes))
    out = operand.copy()
    np.add.at(out, _window_index(starts[inside], sizes), values[inside])
    return out


def _to_integer(x, dtype):
    # XLA saturates out-of-range values and maps NaN to 0; inside the range both truncate.
    info = np.iinfo(dtype)
    out = np.where(np.isnan(x), 0, np.trunc(x)).astype(dtype)
    out = np.where(x >= info.max, info.max, out)
    return np.where(x <= info.min, info.min, out).astype(dtype)


def _convert(x, new_dtype, **_):
    new_dtype = np.dtype(new_dtype)
    if x.dtype.kind == "f" and new_dtype.kind in "iu":
        return _to_integer(x, new_dtype)
    if new_dtype == np.bool_:
        return x != 0
    return x.astype(new_dtype)


def _round(x, rounding_method):
    if int(rounding_method) == 1:       # half to even
        return np.round(x)
    whole = np.trunc(x)                 # half away from zero; x - whole is exact
    return np.where(np.abs(x - whole) >= 0.5, whole + np.sign(x), whole).astype(x.dtype)


def _reduce(ufunc):
    return lambda x, axes, **_: np.asarray(ufunc.reduce(x, axis=tuple(axes)), x.dtype)


def _arg(fn):
    return lambda x, axes, index_dtype: np.asarray(fn(x, axis=axes[0]), index_dtype)


def _slow(fn):
    """A scalar math function over a float array (computed in float64, rounded once)."""
    vec = np.frompyfunc(fn, 1, 1)
    return lambda x, **_: np.asarray(vec(x.astype(np.float64)), np.float64).astype(x.dtype)


def _erf_inv(y):
    # Newton's method on erf from a rational first guess, in float64: the float32 result is correctly
    # rounded for all but a few inputs (XLA's own is a polynomial within a few ulps).
    if y <= -1.0:
        return -math.inf if y == -1.0 else math.nan
    if y >= 1.0:
        return math.inf if y == 1.0 else math.nan
    a = 0.147
    ln = math.log(1.0 - y * y)
    t = 2.0 / (math.pi * a) + ln / 2.0
    x = math.copysign(math.sqrt(math.sqrt(t * t - ln / a) - t), y)
    for _ in range(4):
        err = math.erf(x) - y
        x -= err / (2.0 / math.sqrt(math.pi) * math.exp(-x * x))
    return x


def _sign(x, **_):
    return np.where(x == 0, x, np.sign(x))   # XLA keeps the zero's sign: sign(-0.0) is -0.0


def _select_n(which, *cases, **_):
    if which.dtype == np.bool_:
        return np.where(which, cases[1], cases[0]) if len(cases) == 2 else cases[0]
    return np.choose(which.astype(np.intp), cases)


def window(starts, sizes, shape):
    """The index of a dynamic slice or update: XLA clamps each start so the window stays inside."""
    index = []
    for start, size, dim in zip(starts, sizes, shape):
        begin = min(max(int(start), 0), dim - size)
        index.append(slice(begin, begin + size))
    return tuple(index)


def _dynamic_update_slice(x, update, *starts, **_):
    out = np.array(x, copy=True)
    out[window(starts, update.shape, x.shape)] = update
    return out


def _pad(x, padding_value, padding_config, **_):
    """``lax.pad``: interior padding first (the value between neighbours), then each edge padded, or
    cut where its padding is negative."""
    if any(interior for _, _, interior in padding_config):
        spread = [n + max(n - 1, 0) * interior for n, (_, _, interior) in zip(x.shape, padding_config)]
        out = np.full(spread, padding_value, dtype=x.dtype)
        out[tuple(slice(None, None, interior + 1) for _, _, interior in padding_config)] = x
        x = out
    x = np.pad(x, [(max(lo, 0), max(hi, 0)) for lo, hi, _ in padding_config], constant_values=padding_value)
    return x[tuple(slice(-min(lo, 0), n + min(hi, 0)) for n, (lo, hi, _) in zip(x.shape, padding_config))]


def _wide(ufunc):
    """A transcendental ufunc computed in float64 for float32 inputs and rounded once: the float32
    result is then the correctly rounded one for all but the rarest inputs."""
    def fn(*xs, **_):
        dtype = xs[0].dtype
        if dtype == np.float32:
            return ufunc(*[x.astype(np.float64) for x in xs]).astype(np.float32)
        return ufunc(*xs)
    fn.__name__ = ufunc.__name__
    return fn


def _logistic64(x):
    return 1.0 / (1.0 + np.exp(-x))


# One line per primitive: a NumPy function of the inputs and the equation's parameters.
PRIMITIVES = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "rem": np.fmod,
    "max": np.maximum, "min": np.minimum, "neg": np.negative, "abs": np.abs, "sign": _sign,
    "pow": _wide(np.power), "atan2": _wide(np.arctan2), "nextafter": np.nextafter,
    "sqrt": np.sqrt, "rsqrt": lambda x, **_: np.ones_like(x) / np.sqrt(x), "cbrt": _wide(np.cbrt),
    "square": lambda x, **_: x * x, "integer_pow": _integer_pow, "exp": _wide(np.exp), "exp2": _wide(np.exp2),
    "log": _wide(np.log), "log1p": _wide(np.log1p), "expm1": _wide(np.expm1), "tanh": _wide(np.tanh),
    "logistic": _wide(_logistic64), "sin": _wide(np.sin), "cos": _wide(np.cos), "tan": _wide(np.tan),
    "asin": _wide(np.arcsin), "acos": _wide(np.arccos), "atan": _wide(np.arctan), "sinh": _wide(np.sinh),
    "cosh": _wide(np.cosh), "asinh": _wide(np.arcsinh), "acosh": _wide(np.arccosh), "atanh": _wide(np.arctanh),
    "floor": np.floor, "ceil": np.ceil, "round": lambda x, rounding_method, **_: _round(x, rounding_method),
    "is_finite": np.isfinite, "erf": _slow(math.erf), "erfc": _slow(math.erfc), "erf_inv": _slow(_erf_inv),
    "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "eq": np.equal,
    "ne": np.not_equal, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor, "not": np.invert,
    "clamp": lambda lo, x, hi, **_: np.minimum(np.maximum(x, lo), hi),
    "reduce_sum": _reduce(np.add), "reduce_max": _reduce(np.maximum), "reduce_min": _reduce(np.minimum),
    "reduce_prod": _reduce(np.multiply), "reduce_and": _reduce(np.logical_and), "reduce_or": _reduce(np.logical_or),
    "argmax": _arg(np.argmax), "argmin": _arg(np.argmin),
    "dot_general": _dot_general, "convert_element_type": _convert, "select_n": _select_n,
    "conv_general_dilated": _conv, "reduce_window_sum": _reduce_window(np.add, lambda dtype: 0),
    "select_and_scatter_add": _select_and_scatter_add, "gather": _gather, "scatter-add": _scatter_add,
    "add_any": np.add,
    "reduce_window_max": _reduce_window(np.maximum, lambda dtype: -np.inf if dtype.kind == "f" else np.iinfo(dtype).min),
    "reduce_window_min": _reduce_window(np.minimum, lambda dtype: np.inf if dtype.kind == "f" else np.iinfo(dtype).max),
    "stop_gradient": lambda x, **_: x, "dynamic_update_slice": _dynamic_update_slice, "pad": _pad,
}


# These only copy or flip bits (XLA: no floating-point instruction, so no flushing of subnormals);
# every other primitive here reads its float inputs as zero when subnormal and flushes its results.
BITWISE = frozenset({"neg", "abs", "select_n", "stop_gradient", "dynamic_update_slice", "pad", "and", "or", "xor",
                     "not", "reduce_and", "reduce_or", "gather"})


def _floats_or_integers(eqn) -> bool:
    dtypes = [np.dtype(v.aval.dtype) for v in list(eqn.invars) + list(eqn.outvars)]
    return all(d in _FLOATS or d.kind in "biu" for d in dtypes)


def _float_only(eqn) -> bool:
    return all(np.dtype(v.aval.dtype) in _FLOATS for v in list(eqn.invars) + list(eqn.outvars))


def _small_product(eqn) -> bool:
    (lc, _), _ = eqn.params["dimension_numbers"]
    lhs, out = eqn.invars[0].aval, eqn.outvars[0].aval
    return _floats_or_integers(eqn) and math.prod(out.shape) * math.prod(lhs.shape[d] for d in lc) <= MAX_MACS


def _small_conv(eqn) -> bool:
    out, rhs = eqn.outvars[0].aval, eqn.invars[1].aval
    spec = eqn.params["dimension_numbers"].rhs_spec
    per_output = math.prod(rhs.shape) // rhs.shape[spec[0]]   # (in features of a group) x window
    return (_float_only(eqn) and eqn.params["batch_group_count"] == 1
            and math.prod(out.shape) * per_output <= MAX_CONV_MACS)


def _indexed(eqn) -> bool:   # (a gather or scatter-add: integer indices, a mode NumPy follows)
    return (_floats_or_integers(eqn) and np.dtype(eqn.invars[1].aval.dtype).kind in "iu"
            and _mode(eqn.params["mode"]) in ("CLIP", "PROMISE_IN_BOUNDS", "FILL_OR_DROP"))


def _slow_ok(eqn) -> bool:
    return _float_only(eqn) and math.prod(eqn.outvars[0].aval.shape) <= MAX_SLOW_ELEMENTS


# Which equations are computed here as XLA does (else left to XLA). Integer division and remainder
# (XLA's results for a zero divisor) and padding with interior or negative widths are not.
ALLOWED = {name: _floats_or_integers for name in PRIMITIVES}
ALLOWED.update({name: _float_only for name in (
    "div", "rem", "atan2", "nextafter", "sqrt", "rsqrt", "cbrt", "exp", "exp2", "log", "log1p", "expm1",
    "tanh", "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
    "floor", "ceil")})
ALLOWED.update({
    "round": _float_only,
    # (an integer exponent, as optax's bias corrections raise a decay to the step count: XLA converts it)
    "pow": lambda eqn: (all(np.dtype(v.aval.dtype) in _FLOATS for v in (eqn.invars[0], eqn.outvars[0]))
                        and np.dtype(eqn.invars[1].aval.dtype) in _FLOATS + (np.dtype(np.int32), np.dtype(np.int64))),
    "is_finite": lambda eqn: all(np.dtype(v.aval.dtype) in _FLOATS for v in eqn.invars),
    "dot_general": _small_product,
    "conv_general_dilated": _small_conv,
    "reduce_window_sum": _float_only, "reduce_window_max": _floats_or_integers, "reduce_window_min": _floats_or_integers,
    "select_and_scatter_add": lambda eqn: _float_only(eqn) and str(eqn.params["select_prim"]) in ("ge", "le"),
    "gather": _indexed, "scatter-add": _indexed,
    "erf": _slow_ok, "erfc": _slow_ok, "erf_inv": _slow_ok,
    "pad": _floats_or_integers,
    "argmax": lambda eqn: _floats_or_integers(eqn) and len(eqn.params["axes"]) == 1,
    "argmin": lambda eqn: _floats_or_integers(eqn) and len(eqn.params["axes"]) == 1,
})
