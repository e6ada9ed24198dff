"""``cellkit.ops``: MindSpore's functional ops, random ops and a few Primitives.

The full list of op names is ``cellkit.ops.__all__``; ``docs/ops.md`` documents
each with its JAX counterpart. An unknown name suggests the closest ones.

>>> import cellkit as ms
>>> ms.ops.matmul(ms.ops.ones((2, 3)), ms.ops.ones((3,)))
Array([3., 3.], dtype=float32)
>>> ms.ops.matmull
Traceback (most recent call last):
...
AttributeError: cellkit.ops has no op 'matmull'; did you mean 'matmul', 'MatMul', 'mul'?
"""

from . import functional, primitives, random_ops
from .functional import *  # noqa: F401,F403
from .functional import __all__ as _functional_all
from .primitives import *  # noqa: F401,F403
from .primitives import __all__ as _primitives_all
from .random_ops import *  # noqa: F401,F403
from .random_ops import __all__ as _random_all
from ..engine import grad, value_and_grad  # noqa: E402  (MindSpore exposes them as ops too)
from ..suggest import did_you_mean as _did_you_mean

__all__ = sorted(set(_functional_all) | set(_primitives_all) | set(_random_all) | {"grad", "value_and_grad"})


def __getattr__(name):
    hint = _did_you_mean(name, __all__) or "; see docs/ops.md for the list"
    raise AttributeError(f"cellkit.ops has no op '{name}'{hint}")
