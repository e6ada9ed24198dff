"""``cellkit.train``: MindSpore's training API (``mindspore.train``)."""

from . import metrics, serialization
from .metrics import *  # noqa: F401,F403
from .serialization import load_checkpoint, load_param_into_net, save_checkpoint

__all__ = ["serialization", "metrics", "save_checkpoint", "load_checkpoint", "load_param_into_net",
           *metrics.__all__]
