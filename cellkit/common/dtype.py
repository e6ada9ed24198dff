"""``cellkit.common.dtype``: MindSpore's ``mindspore.common.dtype`` path for ``cellkit.dtype``
(with MindSpore's ``bool``, ``int`` and ``float`` aliases, which ``cellkit.dtype`` leaves to Python)."""

from .. import dtype as _dtype
from ..dtype import *  # noqa: F401,F403

globals().update({"bool": _dtype.bool_, "int": _dtype.int32, "float": _dtype.float32})

__all__ = [*_dtype.__all__, "bool", "int", "float"]
