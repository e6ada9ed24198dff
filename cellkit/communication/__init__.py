"""``cellkit.communication``: MindSpore's ``mindspore.communication`` (ranks, groups, ``init``)."""

from . import management
from .management import *  # noqa: F401,F403

__all__ = [*management.__all__]
