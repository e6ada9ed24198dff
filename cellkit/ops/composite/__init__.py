"""``cellkit.ops.composite``: MindSpore's ``C`` namespace (``from mindspore.ops import composite as C``).

``MultitypeFuncGraph``, ``HyperMap`` and ``Map`` (:mod:`.base`), the clip ops (:mod:`.clip_ops`),
the graph compiler's operators and sequence helpers (:mod:`.graph_ops`), and the functional ops that MindSpore's ``C`` also exports.

>>> import cellkit as ms
>>> from cellkit.ops import composite as C
>>> C.clip_by_value(ms.Tensor([-2., 0.5, 3.]), -1.0, 1.0)
Array([-1. ,  0.5,  1. ], dtype=float32)
"""

from .. import function as _function
from .base import *  # noqa: F401,F403
from .base import __all__ as _base_all
from .clip_ops import *  # noqa: F401,F403
from .clip_ops import __all__ as _clip_all
from .graph_ops import *  # noqa: F401,F403
from .graph_ops import __all__ as _graph_all
from ...engine import GradOperation  # MindSpore's C.GradOperation (cellkit.engine.transforms)

# Functional ops that MindSpore's C exports too, where cellkit.ops.function has them.
FUNCTIONAL = ["mm", "matmul", "dot", "vecdot", "tensor_dot", "count_nonzero", "cummin", "repeat_elements",
              "repeat_interleave", "sequence_mask", "ones_like", "zeros_like", "uniform", "normal", "gamma",
              "laplace", "multinomial", "poisson", "batch_dot"]
_present = [n for n in FUNCTIONAL if hasattr(_function, n)]
globals().update({n: getattr(_function, n) for n in _present})

__all__ = sorted({*_base_all, *_clip_all, *_graph_all, *_present, "GradOperation"})
