"""MindSpore's ``mindspore.common`` namespace: ``initializer`` and ``dtype``."""

from .. import dtype, initializer  # noqa: F401

import sys as _sys

# `from cellkit.common.initializer import ...` needs real entries in sys.modules.
_sys.modules[__name__ + ".initializer"] = initializer
_sys.modules[__name__ + ".dtype"] = dtype
