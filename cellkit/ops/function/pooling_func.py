"""Pooling (MindSpore's ``max_pool2d/3d``, ``avg_pool1d/2d/3d``, ``adaptive_avg_pool1d/2d/3d``,
``adaptive_max_pool1d/2d``) and the N-d computations the pooling layers share.

Inputs are (N, C, *spatial) or unbatched (C, *spatial). ``ceil_mode`` follows
PyTorch's rule (a last window must start inside the input or its left
padding). Average pooling's divisor counts the padded cells when
``count_include_pad`` and never the cells a ceil-mode window reaches beyond
the padding. Adaptive bins: bin ``i`` of an axis of length L covers
``floor(i L / o)`` to ``ceil((i + 1) L / o)``.

>>> import cellkit as ms
>>> from cellkit import ops
>>> x = ms.Tensor([[[1., 5., 2., 4., 3.]]])
>>> ops.avg_pool1d(x, 2, 2, ceil_mode=True)
Array([[[3., 3., 3.]]], dtype=float32)
>>> ops.adaptive_max_pool2d(x, (1, 2))
Array([[[5., 4.]]], dtype=float32)
"""

from __future__ import annotations

import functools
import itertools
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from ...eager_jit import host_first
from ...tensor import default_int_dtype
from ...tiered_jit import tiered_jit
from ._utils import _v, exporter

__all__ = []
_public = exporter(__all__)


def out_size(size, k, s, lo, hi, d, ceil_mode):
    """Output length and the extra high padding a ceil-mode window needs (PyTorch's rule)."""
    span = size + lo + hi - d * (k - 1) - 1
    if span < 0:
        return 0, 0
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + lo:
        out -= 1
    extra = max(0, (out - 1) * s + d * (k - 1) + 1 - (size + lo + hi))
    return out, extra


def same_pads(size, k, s):
    """TensorFlow/XLA 'SAME' padding (lo, hi) of one dimension."""
    out = -(-size // s)
    total = max((out - 1) * s + k - size, 0)
    return (total // 2, total - total // 2)


def lowest(dtype):
    dtype = jnp.dtype(dtype)
    if jnp.issubdtype(dtype, jnp.floating):
        return -jnp.inf
    if jnp.issubdtype(dtype, jnp.integer):
        return jnp.iinfo(dtype).min
    raise TypeError(f"max pooling needs a real dtype, got {dtype}")


def _batched(x, nd):
    """(x with a batch axis, a function removing it again if it was added)."""
    if x.ndim == nd + 1:
        return x[None], lambda y: jax.tree.map(lambda a: a[0], y)
    return x, lambda y: y


@host_first
@functools.partial(tiered_jit, inline=True, static_argnames=("mode", "k", "s", "d", "padding", "ceil_mode",
                                                         "return_indices"))
def max_pool_core(x, *, mode, k, s, d, padding, ceil_mode, return_indices):
    """Max pooling of an (N, C, *spatial) array; ``mode`` 'VALID', 'SAME' or 'PAD' (with ``padding``)."""
    nd = len(k)
    window, strides = (1, 1) + k, (1, 1) + s
    init = np.array(lowest(x.dtype), x.dtype)
    if mode != "PAD":
        return jax.lax.reduce_window(x, init, jax.lax.max, window, strides, mode)
    pads, outs = [], []
    for i, size in enumerate(x.shape[2:]):
        p = padding[i]
        out, extra = out_size(size, k[i], s[i], p, p, d[i], ceil_mode)
        pads.append((p, p + extra))
        outs.append(out)
    if not return_indices:
        return jax.lax.reduce_window(x, init, jax.lax.max, window, strides, [(0, 0), (0, 0)] + pads,
                                     window_dilation=(1, 1) + d)
    # Max and its flat index in the unpadded spatial block: one strided slice per kernel offset, then argmax.
    xp = jnp.pad(x, ((0, 0), (0, 0)) + tuple(pads), constant_values=init)
    taps, offsets = [], []
    for offset in itertools.product(*(range(kk) for kk in k)):
        sl = tuple(slice(o * dd, o * dd + (n - 1) * ss + 1, ss) for o, dd, n, ss in zip(offset, d, outs, s))
        taps.append(xp[(slice(None), slice(None)) + sl])
        offsets.append(tuple(o * dd for o, dd in zip(offset, d)))
    stacked = jnp.stack(taps)
    best = jnp.argmax(stacked, axis=0)
    values = jnp.max(stacked, axis=0)
    off = np.array(offsets)
    index = 0
    for i in range(nd):
        base = (np.arange(outs[i]) * s[i] - pads[i][0]).reshape((-1,) + (1,) * (nd - 1 - i))
        index = index * x.shape[2 + i] + base + jnp.asarray(off[:, i])[best]
    return values, index.astype(default_int_dtype())


@host_first
@functools.partial(tiered_jit, inline=True, static_argnames=("mode", "k", "s", "padding", "ceil_mode", "include_pad",
                                                         "divisor_override"))
def avg_pool_core(x, *, mode, k, s, padding, ceil_mode, include_pad, divisor_override):
    """Average pooling of an (N, C, *spatial) array; the divisor as described in the module docstring.

    With ``mode='SAME'`` and ``include_pad=False`` the divisor is the number of
    real cells (TensorFlow's SAME average).
    """
    pads, extras = [], []
    for i, size in enumerate(x.shape[2:]):
        if mode == "SAME":
            lo, hi = same_pads(size, k[i], s[i])
            out = -(-size // s[i])
            extra = max(0, (out - 1) * s[i] + k[i] - (size + lo + hi))
        else:
            lo = hi = padding[i] if mode == "PAD" else 0
            _, extra = out_size(size, k[i], s[i], lo, hi, 1, ceil_mode)
        pads.append((lo, hi))
        extras.append(extra)
    full = [(0, 0), (0, 0)] + [(lo, hi + e) for (lo, hi), e in zip(pads, extras)]
    dtype = x.dtype if jnp.issubdtype(x.dtype, jnp.inexact) else jnp.float32
    total = jax.lax.reduce_window(x.astype(dtype), np.array(0, dtype), jax.lax.add, (1, 1) + k, (1, 1) + s, full)
    if divisor_override is not None:
        return total / np.array(divisor_override, dtype)
    # Which cells count: the padded extent, or only the real input (a constant, from the shapes).
    masks = []
    for i, size in enumerate(x.shape[2:]):
        (lo, hi), e = pads[i], extras[i]
        m = np.zeros(lo + size + hi + e, np.float32)
        m[:lo + size + hi] = 1.0 if include_pad else 0.0
        m[lo:lo + size] = 1.0
        masks.append(m)
    grid = functools.reduce(np.multiply.outer, masks)
    counts = np.lib.stride_tricks.sliding_window_view(grid, k)
    counts = counts[tuple(slice(None, None, ss) for ss in s)]
    divisor = counts.sum(axis=tuple(range(-len(k), 0)))
    return total / divisor.astype(dtype)


def adaptive_bins(size, out):
    """[(start, end)] of the ``out`` adaptive bins of an axis of length ``size``."""
    return [((i * size) // out, -(-((i + 1) * size) // out)) for i in range(out)]


def adaptive_matrix(size, out):
    """(out, size) averaging matrix of the adaptive bins."""
    m = np.zeros((out, size), np.float32)
    for i, (start, end) in enumerate(adaptive_bins(size, out)):
        m[i, start:end] = 1.0 / (end - start)
    return m


@host_first
@functools.partial(tiered_jit, inline=True, static_argnames=("output_size",))
def adaptive_avg_core(x, *, output_size):
    """Adaptive average pooling of the trailing ``len(output_size)`` axes (None keeps an axis)."""
    nd = len(output_size)
    dtype = x.dtype if jnp.issubdtype(x.dtype, jnp.inexact) else jnp.float32
    y = x.astype(dtype)
    for i, o in enumerate(output_size):
        axis = x.ndim - nd + i
        size = x.shape[axis]
        m = jnp.asarray(adaptive_matrix(size, size if o is None else o), dtype)
        y = jnp.moveaxis(jnp.tensordot(m, y, axes=((1,), (axis,)), precision=jax.lax.Precision.HIGHEST), 0, axis)
    return y


@host_first
@functools.partial(tiered_jit, inline=True, static_argnames=("output_size", "return_indices"))
def adaptive_max_core(x, *, output_size, return_indices):
    """Adaptive max pooling of the trailing axes; with ``return_indices`` the flat index in the spatial block."""
    nd = len(output_size)
    spatial = x.shape[x.ndim - nd:]
    outs = tuple(size if o is None else o for size, o in zip(spatial, output_size))
    init = np.array(lowest(x.dtype), x.dtype)
    # one (prod(out), prod(in)) membership mask of the bins, then a masked max
    masks = []
    for size, o in zip(spatial, outs):
        m = np.zeros((o, size), bool)
        for i, (start, end) in enumerate(adaptive_bins(size, o)):
            m[i, start:end] = True
        masks.append(m)
    member = functools.reduce(lambda a, b: np.einsum("ij,kl->ikjl", a, b).reshape(a.shape[0] * b.shape[0], -1),
                              masks)
    flat = x.reshape(x.shape[:x.ndim - nd] + (-1,))
    scores = jnp.where(jnp.asarray(member), flat[..., None, :], init)
    values = jnp.max(scores, axis=-1).reshape(x.shape[:x.ndim - nd] + outs)
    if not return_indices:
        return values
    index = jnp.argmax(scores, axis=-1).reshape(values.shape)
    return values, index.astype(default_int_dtype())


# --- the functions ------------------------------------------------------------------------------------

def _ints(value, nd, arg, what, allow_zero=False):
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = (int(value),) * nd
    if isinstance(value, (tuple, list)) and len(value) == 1:
        value = tuple(value) * nd
    if not isinstance(value, (tuple, list)) or len(value) != nd or not all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) and (v >= 0 if allow_zero else v > 0)
            for v in value):
        kind = "non-negative" if allow_zero else "positive"
        raise ValueError(f"For '{what}', '{arg}' must be a {kind} int or a tuple of {nd} of them, but got {value!r}.")
    return tuple(int(v) for v in value)


def _input(x, nd, what):
    x = jnp.asarray(_v(x))
    if x.ndim not in (nd + 1, nd + 2):
        raise ValueError(f"For '{what}', the input must be {nd + 1}-D or {nd + 2}-D, but got shape {x.shape}.")
    return x


def _max_pool(nd, what, x, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    x = _input(x, nd, what)
    k = _ints(kernel_size, nd, "kernel_size", what)
    s = k if stride is None or stride == 0 else _ints(stride, nd, "stride", what)
    p = _ints(padding, nd, "padding", what, allow_zero=True)
    if any(2 * pp > kk for pp, kk in zip(p, k)):
        raise ValueError(f"For '{what}', 'padding' must be at most half of 'kernel_size', but got {p} and {k}.")
    xb, restore = _batched(x, nd)
    out = max_pool_core(xb, mode="PAD", k=k, s=s, d=_ints(dilation, nd, "dilation", what), padding=p,
                        ceil_mode=bool(ceil_mode), return_indices=bool(return_indices))
    return restore(out)


@_public
def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
    """2-D max pooling; ``stride`` defaults to ``kernel_size``; -inf padding."""
    return _max_pool(2, "max_pool2d", x, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


@_public
def max_pool3d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """3-D max pooling; ``stride`` defaults to ``kernel_size``; -inf padding."""
    return _max_pool(3, "max_pool3d", x, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _avg_pool(nd, what, x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    x = _input(x, nd, what)
    k = _ints(kernel_size, nd, "kernel_size", what)
    s = _ints(stride, nd, "stride", what)
    p = _ints(padding, nd, "padding", what, allow_zero=True)
    divisor = None if not divisor_override else int(divisor_override)
    xb, restore = _batched(x, nd)
    return restore(avg_pool_core(xb, mode="PAD", k=k, s=s, padding=p, ceil_mode=bool(ceil_mode),
                                 include_pad=bool(count_include_pad), divisor_override=divisor))


@_public
def avg_pool1d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False, count_include_pad=True):
    """1-D average pooling of (N, C, L)."""
    return _avg_pool(1, "avg_pool1d", input_x, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


@_public
def avg_pool2d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=0):
    """2-D average pooling of (N, C, H, W); ``divisor_override=0`` means none."""
    return _avg_pool(2, "avg_pool2d", input_x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


@_public
def avg_pool3d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=0):
    """3-D average pooling of (N, C, D, H, W); ``divisor_override=0`` means none."""
    return _avg_pool(3, "avg_pool3d", input_x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def output_size_of(output_size, nd, what):
    if output_size is None or (isinstance(output_size, numbers.Integral) and not isinstance(output_size, bool)):
        size = (output_size,) * nd
    elif isinstance(output_size, (tuple, list)) and len(output_size) == nd:
        size = tuple(output_size)
    else:
        raise ValueError(f"For '{what}', 'output_size' must be an int or a tuple of {nd} ints (or None), "
                         f"but got {output_size!r}.")
    for v in size:
        if v is not None and (not isinstance(v, numbers.Integral) or isinstance(v, bool) or v < 1):
            raise ValueError(f"For '{what}', 'output_size' items must be positive ints or None, "
                             f"but got {output_size!r}.")
    return size


def _adaptive(nd, what, x, output_size, kind, return_indices=False):
    x = _input(x, nd, what)
    size = output_size_of(output_size, nd, what)
    if nd == 1 and (x.shape[-1] < size[0] or x.shape[-1] % size[0]):
        # MindSpore runs the 1-D ones as a regular pooling with stride L // out
        raise ValueError(f"For {what} input's last dimension must be divisible by output size {size[0]}, "
                         f"but got {x.shape[-1]}.")
    if kind == "avg":
        return adaptive_avg_core(x, output_size=size)
    return adaptive_max_core(x, output_size=size, return_indices=bool(return_indices))


@_public
def adaptive_avg_pool1d(input, output_size):  # noqa: A002
    """Adaptive average pooling of (N, C, L) to ``output_size``."""
    return _adaptive(1, "adaptive_avg_pool1d", input, output_size, "avg")


@_public
def adaptive_avg_pool2d(input, output_size):  # noqa: A002
    """Adaptive average pooling of (N, C, H, W) to ``output_size`` (None keeps an axis)."""
    return _adaptive(2, "adaptive_avg_pool2d", input, output_size, "avg")


@_public
def adaptive_avg_pool3d(input, output_size):  # noqa: A002
    """Adaptive average pooling of (N, C, D, H, W) to ``output_size`` (None keeps an axis)."""
    return _adaptive(3, "adaptive_avg_pool3d", input, output_size, "avg")


@_public
def adaptive_max_pool1d(input, output_size):  # noqa: A002
    """Adaptive max pooling of (N, C, L) to ``output_size``."""
    return _adaptive(1, "adaptive_max_pool1d", input, output_size, "max")


@_public
def adaptive_max_pool2d(input, output_size, return_indices=False):  # noqa: A002
    """Adaptive max pooling of (N, C, H, W); with ``return_indices`` also the flat H*W index of each max."""
    return _adaptive(2, "adaptive_max_pool2d", input, output_size, "max", return_indices)


def tf_pool(x, *, kernel_size, strides, pad_mode, data_format, kind):
    """MindSpore's ``MaxPool``/``AvgPool`` Primitives: 'VALID'/'SAME' over NCHW or NHWC (TF-style SAME average)."""
    x = jnp.asarray(_v(x))
    k = _ints(kernel_size if not (isinstance(kernel_size, tuple) and len(kernel_size) == 4) else kernel_size[2:],
              2, "kernel_size", kind)
    s = _ints(strides if not (isinstance(strides, tuple) and len(strides) == 4) else strides[2:], 2, "strides",
              kind)
    mode = pad_mode.upper()
    if mode not in ("VALID", "SAME"):
        raise ValueError(f"For '{kind}', 'pad_mode' must be 'VALID' or 'SAME', but got {pad_mode!r}.")
    nhwc = data_format == "NHWC"
    if nhwc:
        x = jnp.moveaxis(x, -1, 1)
    if kind == "MaxPool":
        y = max_pool_core(x, mode=mode, k=k, s=s, d=(1, 1), padding=(0, 0), ceil_mode=False, return_indices=False)
    else:
        y = avg_pool_core(x, mode=mode, k=k, s=s, padding=(0, 0), ceil_mode=False, include_pad=False,
                          divisor_override=None)
    return jnp.moveaxis(y, 1, -1) if nhwc else y
