"""``cellkit.common.parameter``: MindSpore's ``mindspore.common.parameter`` path for ``cellkit.parameter``."""

from ..parameter import *  # noqa: F401,F403
from ..parameter import __all__  # noqa: F401
