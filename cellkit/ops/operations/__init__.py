"""``cellkit.ops.operations``: MindSpore's Primitives (``from mindspore.ops import operations as P``).

Every Primitive here is generated from one line of its family's ``PRIMITIVES``
table (see ``cellkit.ops.primitive``).

>>> import cellkit as ms
>>> from cellkit.ops import operations as P
>>> P.ReduceMean(keep_dims=True)(ms.ops.ones((2, 3)), 1).shape
(2, 1)
"""

from ..primitive import Primitive, PrimitiveWithCheck, PrimitiveWithInfer, prim_attr_register
import importlib as _importlib
import pkgutil as _pkgutil

# Every ``*_ops`` module of this package is a family of Primitives: its ``__all__`` is exported here.
FAMILIES = {}
for _info in sorted(_pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.name.endswith("_ops"):
        _module = _importlib.import_module(f"{__name__}.{_info.name}")
        FAMILIES[_info.name[:-len("_ops")]] = _module
        globals().update({_name: getattr(_module, _name) for _name in _module.__all__})

__all__ = sorted({name for module in FAMILIES.values() for name in module.__all__}
                 | {"Primitive", "PrimitiveWithInfer", "PrimitiveWithCheck", "prim_attr_register"})
