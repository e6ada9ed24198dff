"""Assignment into a Tensor, ``x[index] = value``, as a function returning the new array.

A Tensor is an immutable ``jax.Array``, so :func:`set_item` computes the array
that ``x`` becomes; :mod:`cellkit.rewrite` rebinds the assigned name to it.
MindSpore's rules hold:

* the value is converted to ``x``'s dtype (a float into an int Tensor truncates,
  out-of-range integers wrap, a float32 beyond float16's range becomes ``inf``);
* it broadcasts to the indexed region;
* a concrete integer index outside the axis raises IndexError (JAX would drop it);
* a concrete index array that repeats a row keeps the last write, as MindSpore does
  (XLA leaves the order of repeated writes open; a traced index keeps XLA's order);
* a boolean mask selects elements: a value broadcastable to one selected
  element is written with ``where`` (so it works under ``jit``), a value with one
  entry per True element needs a concrete mask.

>>> import cellkit as ms
>>> x = ms.Tensor([1, 2, 3], ms.int32)
>>> set_item(x, 0, 2.7).tolist()
[2, 2, 3]
>>> y = ms.Tensor([[1., 2.], [3., 4.]])
>>> set_item(y, y > 2, 0.).tolist()
[[1.0, 2.0], [0.0, 0.0]]
>>> set_item(y, (slice(None), -1), ms.Tensor([7., 8.])).tolist()
[[1.0, 7.0], [3.0, 8.0]]
>>> set_item(x, 5, 1)
Traceback (most recent call last):
...
IndexError: Index 5 is out of bounds for axis 0 with size 3
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["set_item", "aug_item", "cast_value", "normalize_index", "assignment_error"]


def _unwrap(x):
    if hasattr(x, "__cellkit_value__"):
        return x.__cellkit_value__()
    return x


def cast_value(value, dtype):
    """``value`` as an array of ``dtype`` by MindSpore's conversion (truncate, wrap, overflow to inf)."""
    value = _unwrap(value)
    if isinstance(value, jax.Array):
        return value if value.dtype == dtype else jax.lax.convert_element_type(value, dtype)
    if isinstance(value, (list, tuple)):
        value = [_unwrap(v) for v in value]
        if any(isinstance(v, jax.Array) for v in value):
            return jax.lax.convert_element_type(jnp.stack([jnp.asarray(v) for v in value]), dtype)
    with np.errstate(all="ignore"):
        host = np.asarray(value)
        if host.dtype.kind in "iub" and np.dtype(dtype).kind in "iu":
            # wrap like a C cast (NumPy refuses out-of-range Python ints for small types)
            host = host.astype(np.int64).astype(dtype)
        else:
            host = host.astype(dtype)
    return host  # JAX takes NumPy values as they are: no separate transfer


def normalize_index(index):
    """``index`` with Parameters unwrapped and lists (at any position) as arrays."""
    items = index if isinstance(index, tuple) else (index,)
    out = []
    for i in items:
        i = _unwrap(i)
        if isinstance(i, list):
            i = np.asarray([_unwrap(v) for v in i]) if not any(isinstance(_unwrap(v), jax.Array) for v in i) \
                else jnp.asarray([_unwrap(v) for v in i])
        out.append(i)
    return tuple(out) if isinstance(index, tuple) else out[0]


def _dims(i) -> int:
    """How many axes of the indexed array an index item consumes."""
    if i is None or i is Ellipsis or isinstance(i, (bool, np.bool_)):
        return 0
    if np.dtype(getattr(i, "dtype", np.int32)).kind == "b":
        return getattr(i, "ndim", 0)
    return 1


def _check_bounds(items, shape) -> None:
    """IndexError, with MindSpore's message, for a concrete integer outside its axis."""
    used = sum(_dims(i) for i in items)
    if used > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    axis = 0
    for i in items:
        if i is Ellipsis:
            axis += len(shape) - used
            continue
        n = _dims(i)
        if n == 1 and not isinstance(i, (slice, jax.core.Tracer)):
            host = np.asarray(i)
            if host.dtype.kind in "iu" and host.size:
                size = shape[axis]
                bad = host[(host >= size) | (host < -size)]
                if bad.size:
                    raise IndexError(f"Index {int(bad.reshape(-1)[0])} is out of bounds for axis {axis} "
                                     f"with size {size}")
        axis += n


def _is_mask(i) -> bool:
    return getattr(i, "ndim", 0) > 0 and np.dtype(getattr(i, "dtype", np.int32)).kind == "b"


def _fits(value, inner) -> bool:
    """Does ``value`` broadcast to the shape ``inner`` (one element a mask selects)?"""
    try:
        return np.broadcast_shapes(np.shape(value), inner) == inner
    except ValueError:
        return False


def _set_masked(x, mask, value):
    mask = mask if isinstance(mask, jax.Array) else np.asarray(mask)
    k = mask.ndim
    if tuple(mask.shape) != tuple(x.shape[:k]):
        raise IndexError(f"the boolean mask's shape {tuple(mask.shape)} does not match the indexed "
                         f"tensor's shape {tuple(x.shape[:k])}")
    inner = tuple(x.shape[k:])
    if _fits(value, inner):
        return jnp.where(mask.reshape(mask.shape + (1,) * len(inner)) if inner else mask, value, x)
    if isinstance(mask, jax.core.Tracer):
        raise TypeError("x[mask] = values with one value per True element needs a concrete mask: its "
                        "positions depend on the data, which a traced function (jit, grad, vmap) cannot "
                        "have; assign a value that broadcasts to one element (x[mask] = 0.) or use "
                        "ops.masked_scatter")
    return x.at[np.nonzero(np.asarray(mask))].set(value)


def set_item(x, index, value):
    """The array ``x`` becomes after ``x[index] = value`` (MindSpore's rules, see the module)."""
    index = normalize_index(index)
    value = cast_value(value, x.dtype)
    items = index if isinstance(index, tuple) else (index,)
    _check_bounds(items, x.shape)
    if len(items) == 1 and _is_mask(items[0]):
        return _set_masked(x, items[0], value)
    if any(_is_mask(i) for i in items) and not any(isinstance(i, jax.core.Tracer) for i in items):
        items = tuple(np.nonzero(np.asarray(i)) if _is_mask(i) else (i,) for i in items)
        index = tuple(j for group in items for j in group)
    if len(items) == 1 and getattr(index, "ndim", 0) == 1 and not isinstance(index, jax.core.Tracer) \
            and np.dtype(index.dtype).kind in "iu":
        index, value = _last_wins(x, np.asarray(index), value)
    return x.at[index].set(value)


def _last_wins(x, index, value):
    """Drop all but the last write to a repeated row (MindSpore's result; XLA leaves the order open)."""
    rows = np.where(index < 0, index + x.shape[0], index)
    if np.unique(rows).size == rows.size:
        return index, value
    keep = rows.size - 1 - np.unique(rows[::-1], return_index=True)[1]
    keep.sort()
    value = jnp.broadcast_to(value, (rows.size,) + tuple(x.shape[1:]))[keep]
    return rows[keep], value


def aug_item(x, index, op, value):
    """The array ``x`` becomes after ``x[index] <op>= value`` (``op`` a binary function).

    A boolean mask with a value that broadcasts to one selected element is done with
    ``where`` over the whole array, so it works under ``jit``.
    """
    index = normalize_index(index)
    if _is_mask(index) and tuple(index.shape) == tuple(x.shape[:index.ndim]):
        inner = tuple(x.shape[index.ndim:])
        v = _unwrap(value)
        if _fits(v, inner):
            new = cast_value(op(x, v), x.dtype)
            return jnp.where(jnp.reshape(index, index.shape + (1,) * len(inner)), new, x)
    return set_item(x, index, op(x[index], value))


def assignment_error(what: str, fix: str, depth: int = 2) -> TypeError:
    """The TypeError for an assignment into a Tensor in code the rewrite did not reach."""
    import sys
    try:
        frame = sys._getframe(depth)
        where = f" in {frame.f_code.co_name}() at {frame.f_code.co_filename}:{frame.f_lineno}"
    except ValueError:
        where = ""
    return TypeError(
        f"{what}{where}: a cellkit Tensor is an immutable jax.Array, so the assignment must rebind the "
        "name. cellkit rewrites it in Cells' methods, in functions given to cellkit.jit, grad, "
        "value_and_grad and vmap, and in programs run with `python -m cellkit run`; this function "
        f"is none of those. Decorate it with @cellkit.rewrite.rewrite_function, or write {fix}")
