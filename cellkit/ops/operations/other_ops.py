"""Other Primitives (MindSpore's ``ops/operations/other_ops.py``): state updates on Parameters."""

from __future__ import annotations

from .. import function as F
from ..primitive import install_primitives

__all__ = []

# Name: (op, constructor arguments with MindSpore's defaults[, check])
PRIMITIVES = {
    "Assign": (F.assign, {}),
}
install_primitives(globals(), __all__, PRIMITIVES)
