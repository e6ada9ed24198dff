"""``cellkit.ops.operations``: MindSpore's Primitives (``from mindspore.ops import operations as P``).

Every Primitive here is generated from one line of its family's ``PRIMITIVES``
table (see ``cellkit.ops.primitive``).

>>> import cellkit as ms
>>> from cellkit.ops import operations as P
>>> P.ReduceMean(keep_dims=True)(ms.ops.ones((2, 3)), 1).shape
(2, 1)
"""

from ..primitive import Primitive, PrimitiveWithCheck, PrimitiveWithInfer, prim_attr_register
from . import array_ops, math_ops, nn_ops, other_ops, random_ops
from .array_ops import *  # noqa: F401,F403
from .math_ops import *  # noqa: F401,F403
from .nn_ops import *  # noqa: F401,F403
from .other_ops import *  # noqa: F401,F403
from .random_ops import *  # noqa: F401,F403

FAMILIES = {"math": math_ops, "array": array_ops, "nn": nn_ops, "other": other_ops, "random": random_ops}

__all__ = sorted({name for module in FAMILIES.values() for name in module.__all__}
                 | {"Primitive", "PrimitiveWithInfer", "PrimitiveWithCheck", "prim_attr_register"})
