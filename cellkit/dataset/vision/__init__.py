"""``cellkit.dataset.vision``: MindSpore's image transforms."""

from . import transforms, transforms_random
from .transforms import *  # noqa: F401,F403
from .transforms_random import *  # noqa: F401,F403

__all__ = [*transforms.__all__, *transforms_random.__all__]
