"""``cellkit.common.dtype``: MindSpore's ``mindspore.common.dtype`` path for ``cellkit.dtype``."""

from ..dtype import *  # noqa: F401,F403
from ..dtype import __all__  # noqa: F401
