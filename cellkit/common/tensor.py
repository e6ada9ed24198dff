"""``cellkit.common.tensor``: MindSpore's ``mindspore.common.tensor`` path for ``cellkit.tensor``."""

from ..tensor import *  # noqa: F401,F403
from ..tensor import __all__  # noqa: F401
