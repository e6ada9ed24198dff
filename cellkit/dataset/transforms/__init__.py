"""``cellkit.dataset.transforms``: MindSpore's general data transforms."""

from . import transforms
from .transforms import *  # noqa: F401,F403

__all__ = [*transforms.__all__]
