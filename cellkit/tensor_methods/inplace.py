"""In-place methods (``zero_``, ``fill_``, ``copy_``, ``add_``, ``uniform_``, ...).

On a Parameter each one computes the new value and stores it with
``Parameter.assign_value`` (the path ``ops.assign`` takes), so under
``cellkit.jit`` the write is carried out of the compiled function like any other
Parameter update. A plain Tensor is an immutable ``jax.Array``: the method raises
TypeError naming the functional form to use instead.

>>> import cellkit as ms
>>> p = ms.Parameter(ms.Tensor([1., 2.]), name="p")
>>> p.add_(1).mul_(2).asnumpy()
array([4., 6.], dtype=float32)
>>> ms.Tensor([1., 2.]).add_(1)
Traceback (most recent call last):
...
TypeError: Tensor.add_() changes a tensor in place, but a Tensor is an immutable jax.Array; use x = x.add(...) instead, or hold the value in a Parameter
"""

from __future__ import annotations

import jax.numpy as jnp

from . import indexing, math as math_methods, random as random_methods
from ._common import arr

__all__ = ["INPLACE", "array_method", "parameter_method"]

# name: (function computing the new value from the current one, functional form to name in errors)
INPLACE = {
    "zero_": (lambda x: jnp.zeros_like(x), "ops.zeros_like(x)"),
    "fill_": (lambda x, value: jnp.full_like(x, arr(value)), "x.fill(value)"),
    "copy_": (lambda x, src, non_blocking=False: jnp.broadcast_to(arr(src), x.shape), "src"),
    "assign_value": (lambda x, value: jnp.broadcast_to(arr(value), x.shape), "value"),
    "add_": (math_methods.METHODS["add"], "x.add(...)"),
    "sub_": (math_methods.METHODS["sub"], "x.sub(...)"),
    "mul_": (math_methods.METHODS["mul"], "x.mul(...)"),
    "div_": (math_methods.METHODS["div"], "x.div(...)"),
    "pow_": (math_methods.METHODS["pow"], "x.pow(...)"),
    "neg_": (math_methods.METHODS["neg"], "x.neg()"),
    "abs_": (math_methods.METHODS["abs"], "x.abs()"),
    "sqrt_": (math_methods.METHODS["sqrt"], "x.sqrt()"),
    "exp_": (math_methods.METHODS["exp"], "x.exp()"),
    "clamp_": (math_methods.METHODS["clamp"], "x.clamp(...)"),
    "clip_": (math_methods.METHODS["clamp"], "x.clip(...)"),
    "addcmul_": (math_methods.METHODS["addcmul"], "x.addcmul(...)"),
    "lerp_": (math_methods.METHODS["lerp"], "x.lerp(...)"),
    "masked_fill_": (indexing.METHODS["masked_fill"], "x.masked_fill(...)"),
    "index_add_": (indexing.METHODS["index_add"], "x.index_add(...)"),
    "index_fill_": (indexing.METHODS["index_fill"], "x.index_fill(...)"),
    "scatter_": (indexing.METHODS["scatter"], "x.scatter(...)"),
    "scatter_add_": (indexing.METHODS["scatter_add"], "x.scatter_add(...)"),
    "fill_diagonal_": (indexing.METHODS["fill_diagonal"], "x.fill_diagonal(...)"),
    "uniform_": (random_methods.uniform, "ops.uniform(...)"),
    "normal_": (random_methods.normal, "ops.normal(...)"),
    "bernoulli_": (lambda x, p=0.5, **kw: random_methods.METHODS["bernoulli"](jnp.full_like(x, p), **kw),
                   "x.bernoulli(...)"),
}


def parameter_method(name, fn):
    """The Parameter method: compute the new value, store it through ``assign_value``, return the Parameter."""
    def method(self, *args, **kwargs):
        new = fn(self.value, *args, **kwargs)
        return self.assign_value(new.astype(self.value.dtype))
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In place: the Parameter's value becomes its ``{name[:-1]}`` (stored with assign_value); returns the Parameter."
    return method


def array_method(name, functional):
    """The jax.Array method: a clear TypeError (JAX arrays are immutable)."""
    def method(self, *args, **kwargs):
        raise TypeError(f"Tensor.{name}() changes a tensor in place, but a Tensor is an immutable "
                        f"jax.Array; use x = {functional} instead, or hold the value in a Parameter")
    method.__name__ = method.__qualname__ = name
    return method
