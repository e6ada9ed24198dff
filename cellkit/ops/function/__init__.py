"""``cellkit.ops.function``: MindSpore's functional ops over ``jax.numpy`` and ``jax.lax``, by family.

Where an op is a rename of a JAX function with the same argument order, it is
one line of its family's ``RENAMES`` table; ops whose arguments differ (MindSpore's
``keep_dims`` / ``keepdim`` spellings, dtype-first ``fill``) are small
functions below. Every op accepts Parameters wherever it accepts Tensors and
returns ``jax.Array``\\ s, so all of them work eagerly, under ``cellkit.jit``
and under plain ``jax.jit``/``jax.grad``.

>>> import cellkit as ms
>>> from cellkit import ops
>>> x = ms.Tensor([[1., -2.], [3., 4.]])
>>> ops.relu(x)
Array([[1., 0.],
       [3., 4.]], dtype=float32)
>>> ops.sum(x, dim=1, keepdim=True).shape
(2, 1)
>>> values, indices = ops.max(x, axis=0)
>>> values, indices.tolist()
(Array([3., 4.], dtype=float32), [1, 1])
"""

import importlib as _importlib
import pkgutil as _pkgutil

from ...eager_jit import install as _install_eager_jit

# Every ``*_func`` module of this package is a family: its ``__all__`` is exported here. Each op of
# a family runs an eager call as one compiled executable (``cellkit.eager_jit``) unless the family
# sets ``EAGER_JIT = False`` or the op is marked ``op_by_op``.
FAMILIES = {}
for _info in sorted(_pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.name.endswith("_func"):
        _module = _importlib.import_module(f"{__name__}.{_info.name}")
        FAMILIES[_info.name[:-len("_func")]] = _module
        _install_eager_jit(_module, _module.__all__)
        globals().update({_name: getattr(_module, _name) for _name in _module.__all__})

# Every rename of every family: name -> (JAX function, MindSpore signature).
RENAMES = {name: line for module in FAMILIES.values() for name, line in getattr(module, "RENAMES", {}).items()}

__all__ = sorted({name for module in FAMILIES.values() for name in module.__all__})
