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

from . import (array_func, grad_func, index_func, linalg_func, math_func, matrix_func, nn_func, other_func,
               parameter_func, random_func, sort_func)
from .array_func import *  # noqa: F401,F403
from .grad_func import *  # noqa: F401,F403
from .index_func import *  # noqa: F401,F403
from .linalg_func import *  # noqa: F401,F403
from .math_func import *  # noqa: F401,F403
from .matrix_func import *  # noqa: F401,F403
from .nn_func import *  # noqa: F401,F403
from .other_func import *  # noqa: F401,F403
from .parameter_func import *  # noqa: F401,F403
from .random_func import *  # noqa: F401,F403
from .sort_func import *  # noqa: F401,F403

FAMILIES = {"math": math_func, "array": array_func, "index": index_func, "matrix": matrix_func, "sort": sort_func,
            "nn": nn_func, "linalg": linalg_func, "random": random_func, "grad": grad_func, "parameter": parameter_func, "other": other_func}

# Every rename of every family: name -> (JAX function, MindSpore signature).
RENAMES = {**math_func.RENAMES, **array_func.RENAMES, **matrix_func.RENAMES, **nn_func.RENAMES}

__all__ = sorted({name for module in FAMILIES.values() for name in module.__all__})
