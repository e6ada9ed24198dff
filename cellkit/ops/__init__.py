"""``cellkit.ops``: MindSpore's functional ops, Primitives and composites.

The layout follows MindSpore's: functional ops by family in ``ops.function``
(``math_func``, ``array_func``, ``nn_func``, ``linalg_func``, ``random_func``,
``grad_func``, ``parameter_func``), Primitives in ``ops.operations`` (``P``),
``ops.functional`` (``F``) and ``ops.composite`` (``C``). The full list of names
is ``cellkit.ops.__all__``; ``docs/ops.md`` documents each. An unknown name
suggests the closest ones.

>>> import cellkit as ms
>>> ms.ops.matmul(ms.ops.ones((2, 3)), ms.ops.ones((3,)))
Array([3., 3.], dtype=float32)
>>> ms.ops.matmull
Traceback (most recent call last):
...
AttributeError: cellkit.ops has no op 'matmull'; did you mean 'matmul', ...?
"""

from . import function, primitive
from .function import *  # noqa: F401,F403
from .primitive import Primitive, PrimitiveWithCheck, PrimitiveWithInfer, constexpr, prim_attr_register
from . import operations, functional, composite
from .operations import *  # noqa: F401,F403
from ..suggest import did_you_mean as _did_you_mean

from .composite import HyperMap, Map, MultitypeFuncGraph, add_flags, partial  # noqa: F401,E402

__all__ = sorted(set(function.__all__) | set(operations.__all__)
                 | {"constexpr", "HyperMap", "Map", "MultitypeFuncGraph", "add_flags", "partial"})


def __getattr__(name):
    hint = _did_you_mean(name, __all__) or "; see docs/ops.md for the list"
    raise AttributeError(f"cellkit.ops has no op '{name}'{hint}")
