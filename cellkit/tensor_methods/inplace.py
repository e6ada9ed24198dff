"""In-place methods (``zero_``, ``fill_``, ``copy_``, ``add_``, ``uniform_``, ...).

Every in-place method MindSpore's Tensor has is one line of ``INPLACE``: the
function computing the new value from the current one, and the functional form
an error names. On a Parameter each method stores the new value with
``Parameter.assign_value`` (the path ``ops.assign`` takes), so under
``cellkit.jit`` the write is carried out of the compiled function like any other
Parameter update. A plain Tensor is an immutable ``jax.Array``: in code that
:mod:`cellkit.rewrite` reached, ``x.add_(y)`` became ``x = <apply>(x, "add_", y)``
(:func:`apply`: the new value in ``x``'s dtype and shape); anywhere else the
method raises TypeError saying what to write instead.

>>> import cellkit as ms
>>> p = ms.Parameter(ms.Tensor([1., 2.]), name="p")
>>> p.add_(1).mul_(2).asnumpy()
array([4., 6.], dtype=float32)
>>> apply(ms.Tensor([1, 2], ms.int32), "mul_", 2.5).tolist()
[2, 5]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ..random import next_key
from . import indexing, math as math_methods, random as random_methods
from ._common import arr
from .assignment import assignment_error, cast_value, set_item

__all__ = ["INPLACE", "METHODS", "PROPERTIES", "ADAPTERS", "apply", "array_method", "parameter_method"]

_M, _I = math_methods.METHODS, indexing.METHODS


def _index_copy(x, dim, index, tensor):
    return x.at[(slice(None),) * (dim % x.ndim) + (arr(index),)].set(cast_value(tensor, x.dtype))


def _index_put(x, indices, values, accumulate=False):
    where = tuple(arr(i) for i in indices)
    if accumulate:
        return x.at[where].add(cast_value(values, x.dtype))
    return set_item(x, where, values)


def _put(x, index, source, accumulate=False):
    flat, index = x.reshape(-1), arr(index).reshape(-1)
    source = cast_value(source, x.dtype).reshape(-1)
    flat = flat.at[index].add(source) if accumulate else flat.at[index].set(source)
    return flat.reshape(x.shape)


def _random(x, from_=0, to=None, *, generator=None):
    if to is None:
        from_, to = 0, from_ if from_ else (2 ** 31 - 1 if jnp.issubdtype(x.dtype, jnp.integer) else 2 ** 24)
    return jax.random.randint(next_key(), x.shape, from_, to).astype(x.dtype)


def _exponential(x, lambd=1, *, generator=None):
    return (jax.random.exponential(next_key(), x.shape, jnp.float32) / lambd).astype(x.dtype)


def _set(x, source=None, storage_offset=0, size=None, stride=None):
    if source is None or storage_offset or size is not None or stride is not None:
        raise TypeError("Tensor.set_() takes only a source Tensor on cellkit: a Tensor is an immutable "
                        "jax.Array with no storage to offset into or stride over")
    return arr(source)


def _delete(x, non_blocking=False):
    """Free the device buffer now (``jax.Array.delete``); a traced value has none."""
    if not isinstance(x, jax.core.Tracer):
        x.delete()


def _random_fn(fn):
    return lambda x, *args, generator=None, **kwargs: fn(x, *args, **kwargs)


# name: (function computing the new value from the current one, functional form to name in errors)
INPLACE = {
    "zero_": (lambda x: jnp.zeros_like(x), "x = ops.zeros_like(x)"),
    "fill_": (lambda x, value: jnp.full_like(x, arr(value)), "x = x.fill(value)"),
    "copy_": (lambda x, src, non_blocking=False: jnp.broadcast_to(cast_value(src, x.dtype), x.shape), "x = src"),
    "assign_value": (lambda x, value: jnp.broadcast_to(cast_value(value, x.dtype), x.shape), "x = value"),
    "add_": (_M["add"], "x = x.add(...)"),
    "sub_": (_M["sub"], "x = x.sub(...)"),
    "mul_": (_M["mul"], "x = x.mul(...)"),
    "div_": (_M["div"], "x = x.div(...)"),
    "floor_divide_": (_M["floor_divide"], "x = x.floor_divide(...)"),
    "remainder_": (_M["remainder"], "x = x.remainder(...)"),
    "pow_": (_M["pow"], "x = x.pow(...)"),
    "neg_": (_M["neg"], "x = x.neg()"),
    "abs_": (_M["abs"], "x = x.abs()"),
    "sqrt_": (_M["sqrt"], "x = x.sqrt()"),
    "exp_": (_M["exp"], "x = x.exp()"),
    "log_": (_M["log"], "x = x.log()"),
    "floor_": (_M["floor"], "x = x.floor()"),
    "sign_": (_M["sign"], "x = x.sign()"),
    "sigmoid_": (_M["sigmoid"], "x = x.sigmoid()"),
    "tanh_": (_M["tanh"], "x = x.tanh()"),
    "erfinv_": (_M["erfinv"], "x = x.erfinv()"),
    "clamp_": (_M["clamp"], "x = x.clamp(...)"),
    "clip_": (_M["clamp"], "x = x.clip(...)"),
    "addcmul_": (_M["addcmul"], "x = x.addcmul(...)"),
    "addmm_": (_M["addmm"], "x = x.addmm(...)"),
    "lerp_": (_M["lerp"], "x = x.lerp(...)"),
    "masked_fill_": (_I["masked_fill"], "x = x.masked_fill(...)"),
    "masked_scatter_": (_I["masked_scatter"], "x = x.masked_scatter(...)"),
    "index_add_": (_I["index_add"], "x = x.index_add(...)"),
    "index_fill_": (_I["index_fill"], "x = x.index_fill(...)"),
    "index_copy_": (_index_copy, "x = x.at[(slice(None),) * dim + (index,)].set(tensor)"),
    "index_put_": (_index_put, "x = x.at[indices].set(values)"),
    "put_": (_put, "x = x.reshape(-1).at[index].set(source).reshape(x.shape)"),
    "scatter_": (_I["scatter"], "x = x.scatter(...)"),
    "scatter_add_": (_I["scatter_add"], "x = x.scatter_add(...)"),
    "fill_diagonal_": (_I["fill_diagonal"], "x = x.fill_diagonal(...)"),
    "uniform_": (_random_fn(random_methods.uniform), "x = ops.uniform(...)"),
    "normal_": (_random_fn(random_methods.normal), "x = ops.normal(...)"),
    "random_": (_random, "x = ops.randint(from_, to, x.shape)"),
    "exponential_": (_exponential, "x = ops.exponential(...)"),
    "set_": (_set, "x = source"),
    "bernoulli_": (lambda x, p=0.5, *, generator=None, **kw: random_methods.METHODS["bernoulli"](
        jnp.full_like(x, arr(p), dtype=jnp.float32) if not hasattr(arr(p), "shape") else
        jnp.broadcast_to(arr(p), x.shape).astype(jnp.float32), **kw).astype(x.dtype), "x = x.bernoulli(...)"),
}


# In-place methods that leave the value as it is: plain methods, no rebinding needed (run as they are:
# ``x.to_() is x``).
EAGER_JIT = False
METHODS = {
    "to_": lambda x, device=None, non_blocking=False: x,  # one device per process: nothing moves
    "delete_": _delete,
}
PROPERTIES = {}
ADAPTERS = {}


def apply(x, name, *args, **kwargs):
    """The array ``x`` becomes after ``x.<name>(*args, **kwargs)``: kept in ``x``'s dtype and shape
    (``set_`` alone takes its source's)."""
    new = INPLACE[name][0](x, *args, **kwargs)
    new = jnp.asarray(new)
    if name == "set_":
        return new
    if new.dtype != x.dtype:
        new = jax.lax.convert_element_type(new, x.dtype)
    if new.shape != x.shape:
        try:
            new = jnp.broadcast_to(new, x.shape)
        except ValueError:
            raise ValueError(f"Tensor.{name}(): the result has shape {tuple(new.shape)}, which cannot be "
                             f"written into the tensor's shape {tuple(x.shape)}") from None
    return new


def parameter_method(name, fn):
    """The Parameter method: compute the new value, store it through ``assign_value``, return the Parameter."""
    def method(self, *args, **kwargs):
        new = fn(self.value, *args, **kwargs)
        return self.assign_value(new.astype(self.value.dtype))
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In place: the Parameter's value becomes its ``{name[:-1]}`` (stored with assign_value); returns the Parameter."
    return method


def array_method(name, functional):
    """The jax.Array method, reached only where no rewrite applied: a TypeError saying what to write."""
    def method(self, *args, **kwargs):
        raise assignment_error(f"Tensor.{name}() changes a tensor in place", functional)
    method.__name__ = method.__qualname__ = name
    return method


def array_setitem(self, index, value):
    """``x[index] = value`` on a jax.Array where no rewrite applied: a TypeError saying what to write."""
    raise assignment_error("x[index] = value assigns into a Tensor", "x = x.at[index].set(value)")
