"""Integer inputs under differentiation: MindSpore's rule on JAX.

JAX gives an integer input a ``float0`` placeholder as its gradient. MindSpore
differentiates through an integer Tensor as if it held real numbers (its
implicit casts have gradients) and casts the gradient back to the input's
dtype: ``grad(lambda x, n: (x * n).sum(), 1)(ones, n_int32)`` is ``[1, 1, 1]``.

cellkit does the same: each integer (or bool) array at a differentiated
position is handed to the function as a weakly typed float copy (so ``x * n``
keeps ``x``'s dtype, as MindSpore's promotion does), and its gradient is cast
back with MindSpore's C cast (truncation toward zero; NaN or out of range gives
the most negative integer; narrower integers wrap; bool is ``!= 0``). A
function that cannot take floats there (indexing, bitwise ops, ``one_hot``)
is run again with the integers as they are; their gradients are then zeros,
which is what MindSpore gives through those ops. No ``float0`` reaches the
user.

>>> import jax.numpy as jnp
>>> import cellkit as ms
>>> ms.grad(lambda x, n: (x * n).sum(), grad_position=1)(ms.Tensor([0.5, 1.7, -2.2]),
...                                                     ms.Tensor([1, 2, 3], ms.int32))
Array([ 0,  1, -2], dtype=int32)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["is_int", "is_scalar", "to_float", "weak", "cast_back", "zeros_of", "no_float0",
           "out_dtypes", "cast_like"]

try:  # a weakly typed cast: ``x * n_float`` keeps the dtype of ``x``, as ``x * n_int`` does
    from jax._src.lax.lax import _convert_element_type as _convert
except ImportError:  # pragma: no cover - JAX moved it; a strong cast is the fallback
    _convert = None


def is_scalar(a) -> bool:
    """A Python number (not a Tensor): MindSpore gives it no gradient."""
    return isinstance(a, (bool, int, float, complex)) and not isinstance(a, np.generic)


def _dtype(a):
    return getattr(a, "dtype", None)


def is_int(a) -> bool:
    """An integer or bool array (or NumPy scalar)."""
    dt = _dtype(a)
    return dt is not None and not is_scalar(a) and (jnp.issubdtype(dt, jnp.integer) or dt == jnp.bool_)


def _float_dtype():
    return jnp.dtype(jnp.float64 if jax.config.jax_enable_x64 else jnp.float32)


def to_float(x):
    """The float copy differentiated in place of the integer ``x``."""
    return jnp.asarray(x).astype(_float_dtype())


def weak(x):
    """``x`` (a float copy of an integer input) as a weakly typed float, inside the trace."""
    if _convert is None:
        return x
    return _convert(x, _float_dtype(), weak_type=True)


def cast_back(g, dtype):
    """The gradient ``g`` of an integer input cast to its ``dtype`` as MindSpore's C cast does."""
    dtype = jnp.dtype(dtype)
    g = jnp.asarray(g)
    if dtype == jnp.bool_:
        return g != 0
    wide = jnp.int64 if jax.config.jax_enable_x64 and dtype.itemsize >= 4 and dtype != jnp.int32 else jnp.int32
    info = jnp.iinfo(wide)
    bad = ~jnp.isfinite(g) | (g >= -float(info.min)) | (g < float(info.min))
    t = jnp.where(bad, info.min, jnp.trunc(jnp.where(bad, 0, g)).astype(wide))
    return t.astype(dtype)


def zeros_of(x):
    """Zeros shaped and typed as the input ``x`` (an integer input's gradient where none flows)."""
    return jnp.zeros(jnp.shape(x), _dtype(x) or jnp.result_type(x))


def no_float0(tree, like):
    """Replace every ``float0`` leaf of ``tree`` by zeros typed as the matching leaf of ``like``."""
    def fix(g, x):
        if getattr(g, "dtype", None) == jax.dtypes.float0:
            return zeros_of(x)
        return g
    return jax.tree_util.tree_map(fix, tree, like)


def out_dtypes(fn, *args):
    """The dtypes of ``fn(*args)``'s outputs (one abstract trace)."""
    return jax.tree_util.tree_map(lambda s: s.dtype, jax.eval_shape(fn, *args))


def cast_like(tree, dtypes):
    """Cast each leaf of ``tree`` to the matching dtype (integer targets with :func:`cast_back`)."""
    def cast(v, dt):
        if v is None or getattr(v, "dtype", None) == dt:
            return v
        if jnp.issubdtype(dt, jnp.integer) or dt == jnp.bool_:
            return cast_back(v, dt)
        return jnp.asarray(v).astype(dt)
    return jax.tree_util.tree_map(cast, tree, dtypes)
