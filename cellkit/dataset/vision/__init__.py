"""``cellkit.dataset.vision``: MindSpore's image transforms."""

from . import transforms
from .transforms import *  # noqa: F401,F403

__all__ = [*transforms.__all__]
