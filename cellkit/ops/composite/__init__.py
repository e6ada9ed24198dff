"""``cellkit.ops.composite``: MindSpore's ``C`` namespace (``from mindspore.ops import composite as C``).

>>> import cellkit as ms
>>> from cellkit.ops import composite as C
>>> C.clip_by_value(ms.Tensor([-2., 0.5, 3.]), -1.0, 1.0)
Array([-1. ,  0.5,  1. ], dtype=float32)
"""

from ..function import clip_by_value
from ...engine import GradOperation

__all__ = ["clip_by_value", "GradOperation"]
