"""Assignment into Tensors: a source rewrite that rebinds the assigned name.

A cellkit Tensor is an immutable ``jax.Array``. MindSpore's ``x[i] = v``,
``x[i] += v``, ``self.buf[:, 0] = 1`` and in-place methods (``x.add_(y)``,
``t.zero_()``, ...) are rewritten, as MindSpore's graph compiler does, into
``x = <new value>`` (:mod:`.transform`), computed by the helpers of
:mod:`.runtime`. Parameters keep their in-place path.

The rewrite applies to the methods of Cell subclasses, to functions given to
``cellkit.jit``, ``grad``, ``value_and_grad``, ``vmap`` and the other
transforms, and to whole modules through :func:`rewrite_tree` and
:func:`compile_source` (``python -m cellkit run``).

>>> import cellkit as ms
>>> @rewrite_function
... def top(x, mask):
...     x[mask] = 0.
...     x[..., -1:] += 10.
...     return x
>>> top(ms.Tensor([[1., 2.], [3., 4.]]), ms.Tensor([[True, False], [False, True]])).tolist()
[[0.0, 12.0], [3.0, 10.0]]
"""

from __future__ import annotations

from .functions import compile_source, needs_rewrite, rewrite_function, rewrite_tree, source_needs_rewrite
from .transform import HELPER, INPLACE_NAMES

__all__ = ["rewrite_tree", "compile_source", "rewrite_function", "needs_rewrite", "source_needs_rewrite",
           "HELPER", "INPLACE_NAMES"]
