"""Shape and layout in ``mindspore.numpy``: reshaping, joining, splitting, flipping, indexing.

As MindSpore: ``split``/``array_split``/``hsplit``/... give a tuple for a number of sections
and a list for a list of indices; ``broadcast_arrays``, ``meshgrid`` and ``atleast_*`` of several
inputs give lists; ``argwhere`` gives int64 indices (int32 with ``jax_enable_x64`` off), ``unique``,
``unravel_index`` and ``intersect1d`` int32 ones.

>>> import cellkit as ms, cellkit.numpy as mnp
>>> x = ms.Tensor([[0, 1, 2], [3, 4, 5]], ms.int32)
>>> mnp.roll(x, 1, axis=1)
Array([[2, 0, 1],
       [5, 3, 4]], dtype=int32)
>>> [t.shape for t in mnp.split(x, [1], axis=1)]
[(2, 1), (2, 2)]
"""

from __future__ import absolute_import

import numbers

import jax.numpy as jnp
import numpy as np

from .utils import is_array, out_dtype, to_tensor
from .utils_const import check_axis, check_shape

__all__ = ["TABLE"]


def _t(x):
    return to_tensor(x)


def _reshape(x, new_shape):
    x = _t(x)
    shape = check_shape(new_shape, "reshape") if not (isinstance(new_shape, (list, tuple)) and -1 in new_shape) \
        else tuple(int(s) for s in new_shape)
    if isinstance(new_shape, numbers.Integral) and new_shape == -1:
        shape = (-1,)
    known = int(np.prod([s for s in shape if s != -1]))
    if (-1 in shape and (known == 0 or x.size % known)) or (-1 not in shape and known != x.size):
        raise ValueError(f"reshape: proposed_shape {shape} is invalid for input of size {x.size}")
    return jnp.reshape(x, shape)


def _transpose(a, axes=None):
    x = _t(a)
    if axes is not None:
        axes = tuple(check_axis(ax, x.ndim, "transpose") for ax in axes)
        if len(axes) != x.ndim or len(set(axes)) != len(axes):
            raise ValueError(f"transpose: axes must be a permutation of the {x.ndim} axes, got {axes}")
    return jnp.transpose(x, axes)


def _squeeze(a, axis=None):
    x = _t(a)
    if axis is not None:
        axes = (axis,) if isinstance(axis, numbers.Integral) else tuple(axis)
        axis = tuple(check_axis(ax, x.ndim, "squeeze") for ax in axes)
        for ax in axis:
            if x.shape[ax] != 1:
                raise ValueError(f"squeeze: cannot select an axis to squeeze out which has size not equal to "
                                 f"one (axis {ax} of shape {x.shape})")
    return jnp.squeeze(x, axis)


def _seq(arrays):
    if is_array(arrays):
        return list(_t(arrays))
    return [_t(a) for a in arrays]


def _join(fn):
    def impl(tup):
        return fn(_seq(tup))
    return impl


def _concatenate(arrays, axis=0):
    arrs = _seq(arrays)
    if axis is None:
        arrs, axis = [a.reshape(-1) for a in arrs], 0
    if len({a.ndim for a in arrs}) > 1:
        raise ValueError(f"concatenate: all inputs must have the same rank, got shapes {[a.shape for a in arrs]}")
    return jnp.concatenate(arrs, axis=axis)


def _atleast(fn):
    def impl(*arys):
        out = [fn(_t(a)) for a in arys]
        return out[0] if len(out) == 1 else out
    return impl


def _split(fn, name, axis_default=0):
    def impl(x, indices_or_sections, axis=axis_default):
        x = _t(x)
        axis = check_axis(axis, x.ndim, name)
        if isinstance(indices_or_sections, numbers.Integral) and name == "split" \
                and x.shape[axis] % indices_or_sections:
            raise ValueError(f"split: the size of axis {axis} ({x.shape[axis]}) must be divisible by "
                             f"{indices_or_sections}")
        if isinstance(indices_or_sections, (list, tuple)):
            return list(fn(x, list(indices_or_sections), axis=axis))
        return tuple(fn(x, indices_or_sections, axis=axis))
    return impl


def _split_at(axis, name):
    def impl(x, indices_or_sections):
        x = _t(x)
        if x.ndim <= axis:
            raise ValueError(f"{name}: needs an input of at least {axis + 1} dimensions, got {x.ndim}")
        return _split(jnp.array_split if name != "split" else jnp.split, "split")(x, indices_or_sections, axis)
    return impl


def _tile(a, reps):
    if not isinstance(reps, (numbers.Integral, list, tuple)) or isinstance(reps, bool):
        raise TypeError(f"tile: reps must be an int or a tuple of ints, got {reps!r}")
    return jnp.tile(_t(a), reps)


def _roll(a, shift, axis=None):
    x = _t(a)
    if axis is not None:
        axes = (axis,) if isinstance(axis, numbers.Integral) else tuple(axis)
        axes = tuple(check_axis(ax, x.ndim, "roll") for ax in axes)
        axis = axes if len(axes) > 1 or not isinstance(axis, numbers.Integral) else axes[0]
        if isinstance(axis, tuple) and isinstance(shift, numbers.Integral):
            shift = (shift,) * len(axis)
    return jnp.roll(x, shift, axis)


def _append(arr, values, axis=None):
    return jnp.append(_t(arr), _t(values), axis=axis)


def _where(condition, x=None, y=None):
    if x is None or y is None:
        raise TypeError("where: x and y must both be given (mindspore.numpy.where has no one-argument form; "
                        "use nonzero or argwhere)")
    return jnp.where(_t(condition), *_promote(_t(x), _t(y)))


def _promote(a, b):
    from .dtypes import promote
    try:
        dtype = np.dtype(promote(a.dtype, b.dtype))
    except TypeError:
        dtype = jnp.promote_types(a.dtype, b.dtype)
    return a.astype(dtype), b.astype(dtype)


def _take(a, indices, axis=None, mode="clip"):
    if mode not in ("clip", "wrap", "raise"):
        raise ValueError(f"take: mode must be 'clip', 'wrap' or 'raise', got {mode!r}")
    return jnp.take(_t(a), _t(indices), axis=axis, mode="clip" if mode == "raise" else mode)


def _choose(a, choices, mode="clip"):
    idx = _t(a)
    choices = _seq(choices)
    n = len(choices)
    if mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = jnp.clip(idx, 0, n - 1)
    else:
        raise ValueError(f"choose: mode must be 'clip' or 'wrap', got {mode!r}")
    stacked = jnp.stack(jnp.broadcast_arrays(*choices, idx)[:-1])
    return jnp.take_along_axis(stacked, jnp.broadcast_to(idx, stacked.shape[1:])[None], axis=0)[0]


def _select(condlist, choicelist, default=0):
    conds = _seq(condlist)
    choices = _seq(choicelist)
    return jnp.select(conds, choices, default)


def _piecewise(x, condlist, funclist, *args, **kw):
    x = _t(x)
    conds = _seq(condlist) if isinstance(condlist, (list, tuple)) else [_t(condlist)]
    funcs = list(funclist)
    values = [f(x, *args, **kw) if callable(f) else to_tensor(f) for f in funcs]
    out = jnp.zeros(x.shape, values[0].dtype if values else x.dtype)
    if len(funcs) == len(conds) + 1:
        rest = ~jnp.any(jnp.stack(conds), axis=0) if conds else jnp.ones(x.shape, bool)
        out = jnp.where(rest, values[-1], out)
    for cond, value in zip(conds, values):
        out = jnp.where(cond, value, out)
    return out


def _unique(x, return_inverse=False):
    x = _t(x)
    if return_inverse:
        values, inverse = jnp.unique(x, return_inverse=True)
        return values, inverse.reshape(-1).astype(jnp.int32)
    return jnp.unique(x)


def _unravel(indices, shape, order="C"):
    return tuple(i.astype(jnp.int32) for i in jnp.unravel_index(_t(indices), check_shape(shape, "unravel_index"))) \
        if order == "C" else tuple(i.astype(jnp.int32) for i in reversed(
            jnp.unravel_index(_t(indices), tuple(reversed(check_shape(shape, "unravel_index"))))))


def _intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    out = jnp.intersect1d(_t(ar1), _t(ar2), assume_unique=assume_unique, return_indices=return_indices)
    if return_indices:
        return out[0], out[1].astype(jnp.int32), out[2].astype(jnp.int32)
    return out


def _array_str(a):
    return np.array2string(np.asarray(_t(a)))


def _apply_along_axis(func1d, axis, arr, *args, **kwargs):
    return jnp.apply_along_axis(func1d, axis, _t(arr), *args, **kwargs)


def _apply_over_axes(func, a, axes):
    return jnp.apply_over_axes(func, _t(a), axes)


def _broadcast_to(array, shape):
    x = _t(array)
    shape = check_shape(shape, "broadcast_to")
    try:
        return jnp.broadcast_to(x, shape)
    except ValueError as e:
        raise ValueError(f"broadcast_to: cannot broadcast {x.shape} to {shape}") from e


TABLE = {
    "transpose": ("a, axes=None", _transpose),
    "expand_dims": ("a, axis", lambda a, axis: jnp.expand_dims(_t(a), axis)),
    "squeeze": ("a, axis=None", _squeeze),
    "rollaxis": ("x, axis, start=0", lambda x, axis, start: jnp.rollaxis(_t(x), axis, start)),
    "swapaxes": ("x, axis1, axis2", lambda x, a1, a2: jnp.swapaxes(
        _t(x), check_axis(a1, _t(x).ndim, "swapaxes"), check_axis(a2, _t(x).ndim, "swapaxes"))),
    "moveaxis": ("a, source, destination", lambda a, s, d: jnp.moveaxis(_t(a), s, d)),
    "reshape": ("x, new_shape", _reshape),
    "ravel": ("x", lambda x: jnp.ravel(_t(x))),
    "concatenate": ("arrays, axis=0", _concatenate),
    "stack": ("arrays, axis=0", lambda arrays, axis: jnp.stack(_seq(arrays), axis)),
    "hstack": ("tup", _join(jnp.hstack)), "vstack": ("tup", _join(jnp.vstack)),
    "dstack": ("tup", _join(jnp.dstack)), "column_stack": ("tup", _join(jnp.column_stack)),
    "atleast_1d": ("*arys", _atleast(jnp.atleast_1d)), "atleast_2d": ("*arys", _atleast(jnp.atleast_2d)),
    "atleast_3d": ("*arys", _atleast(jnp.atleast_3d)),
    "where": ("condition, x=None, y=None", _where),
    "unique": ("x, return_inverse=False", _unique),
    "tile": ("a, reps", _tile),
    "broadcast_to": ("array, shape", _broadcast_to),
    "broadcast_arrays": ("*args", lambda *args: list(jnp.broadcast_arrays(*[_t(a) for a in args]))),
    "append": ("arr, values, axis=None", _append),
    "roll": ("a, shift, axis=None", _roll),
    "split": ("x, indices_or_sections, axis=0", _split(jnp.split, "split")),
    "array_split": ("x, indices_or_sections, axis=0", _split(jnp.array_split, "array_split")),
    "vsplit": ("x, indices_or_sections", _split_at(0, "split")),
    "hsplit": ("x, indices_or_sections", lambda x, s: _split(jnp.split, "split")(x, s, 1 if _t(x).ndim > 1 else 0)),
    "dsplit": ("x, indices_or_sections", _split_at(2, "split")),
    "flip": ("m, axis=None", lambda m, axis: jnp.flip(_t(m), axis)),
    "flipud": ("m", lambda m: jnp.flipud(_t(m))), "fliplr": ("m", lambda m: jnp.fliplr(_t(m))),
    "rot90": ("a, k=1, axes=(0, 1)", lambda a, k, axes: jnp.rot90(_t(a), k, tuple(axes))),
    "take_along_axis": ("arr, indices, axis", lambda arr, i, axis: jnp.take_along_axis(_t(arr), _t(i), axis)),
    "take": ("a, indices, axis=None, mode='clip'", _take),
    "repeat": ("a, repeats, axis=None", lambda a, r, axis: jnp.repeat(_t(a), r, axis)),
    "select": ("condlist, choicelist, default=0", _select),
    "choose": ("a, choices, mode='clip'", _choose),
    "array_str": ("a", _array_str),
    "apply_along_axis": ("func1d, axis, arr, *args, **kwargs", _apply_along_axis),
    "apply_over_axes": ("func, a, axes", _apply_over_axes),
    "piecewise": ("x, condlist, funclist, *args, **kw", _piecewise),
    "unravel_index": ("indices, shape, order='C'", _unravel),
    "argwhere": ("a", lambda a: jnp.argwhere(_t(a)).astype(out_dtype("int64"))),
    "intersect1d": ("ar1, ar2, assume_unique=False, return_indices=False", _intersect1d),
}
