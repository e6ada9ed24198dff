"""``cellkit.common.initializer``: MindSpore's ``mindspore.common.initializer`` path for ``cellkit.initializer``."""

from ..initializer import *  # noqa: F401,F403
from ..initializer import __all__  # noqa: F401
