"""``cellkit.ops.functional``: MindSpore's ``F`` namespace (``from mindspore.ops import functional as F``).

Every functional op of ``cellkit.ops.function``, ``partial`` and the clip composites, plus
the names MindSpore's ``F`` adds for its Primitives (``F.scalar_to_tensor`` and the like),
each one line of :data:`ALIASES`.

>>> import cellkit as ms
>>> from cellkit.ops import functional as F
>>> F.tensor_add(ms.Tensor([1., 2.]), ms.Tensor([3., 4.]))
Array([4., 6.], dtype=float32)
>>> F.partial(F.mul, 2.0)(ms.Tensor([1., 2.]))
Array([2., 4.], dtype=float32)
"""

import jax.numpy as _jnp
import numpy as _np

from . import function as _function
from .function._utils import _v
from .primitive import Primitive  # noqa: F401
from .composite import clip_ops as _clip_ops
from .function import *  # noqa: F401,F403
from .composite.base import partial  # noqa: F401
from .composite.clip_ops import clip_by_global_norm, clip_by_norm, clip_by_value  # noqa: F401

# F's own name: the functional op it is (where cellkit.ops.function has that op).
ALIASES = {
    "scalar_add": "add",
    "scalar_sub": "sub",
    "scalar_mul": "mul",
    "scalar_div": "div",
    "scalar_floordiv": "floor_divide",
    "scalar_mod": "remainder",
    "scalar_pow": "pow",
    "scalar_eq": "equal",
    "scalar_lt": "less",
    "scalar_gt": "greater",
    "scalar_le": "less_equal",
    "scalar_ge": "greater_equal",
    "scalar_log": "log",
    "tensor_range": "range",
    "tensor_slice": "slice",
    "scalar_to_array": "scalar_to_tensor",
}
_aliased = {alias: op for alias, op in ALIASES.items() if hasattr(_function, op)}
for _alias, _op in _aliased.items():
    globals()[_alias] = getattr(_function, _op)



def mixed_precision_cast(dst_type, input):  # noqa: A002
    """Cast the floating-point tensors of ``input`` (a tensor, or a nested tuple, list or dict of them)
    to ``dst_type``; everything else is returned unchanged.

    >>> import cellkit as ms
    >>> from cellkit.ops import functional as F
    >>> [t.dtype for t in F.mixed_precision_cast(ms.float16, (ms.Tensor([1.]), ms.Tensor([1])))]
    [dtype('float16'), dtype('int32')]
    """
    dtype = _np.dtype(dst_type)

    def cast(x):
        if isinstance(x, (tuple, list)):
            return type(x)(cast(e) for e in x)
        if isinstance(x, dict):
            return {k: cast(v) for k, v in x.items()}
        x = _v(x)
        if hasattr(x, "dtype") and _jnp.issubdtype(x.dtype, _jnp.floating):
            return x.astype(dtype)
        return x
    return cast(input)


__all__ = sorted({*_function.__all__, *_aliased, "partial", "Primitive", "mixed_precision_cast",
                  *_clip_ops.__all__})
