"""``cellkit.nn.loss``: MindSpore's loss Cells (as ``mindspore.nn.loss``)."""

from . import composite, loss, wrapped
from .loss import *  # noqa: F401,F403
from .wrapped import *  # noqa: F401,F403
from .composite import *  # noqa: F401,F403

__all__ = [*loss.__all__, *wrapped.__all__, *composite.__all__]
