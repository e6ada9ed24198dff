"""``cellkit.ops.functional``: MindSpore's ``F`` namespace (``from mindspore.ops import functional as F``).

Every functional op of ``cellkit.ops.function``, plus the names MindSpore's
``F`` adds for its Primitives (``F.tensor_add`` and the like), each one line of
:data:`ALIASES`.

>>> import cellkit as ms
>>> from cellkit.ops import functional as F
>>> F.tensor_add(ms.Tensor([1., 2.]), ms.Tensor([3., 4.]))
Array([4., 6.], dtype=float32)
"""

from . import function as _function
from .function import *  # noqa: F401,F403

# F's own name: the functional op it is.
ALIASES = {
    "tensor_add": "add",
    "tensor_sub": "sub",
    "tensor_mul": "mul",
    "tensor_div": "div",
    "tensor_pow": "pow",
    "tensor_gt": "gt",
    "tensor_ge": "ge",
    "tensor_lt": "lt",
    "tensor_le": "le",
}
for _alias, _op in ALIASES.items():
    globals()[_alias] = getattr(_function, _op)

__all__ = sorted({*_function.__all__, *ALIASES})
