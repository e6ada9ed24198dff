"""``cellkit.train``: MindSpore's training API (``mindspore.train``)."""

from . import serialization
from .serialization import load_checkpoint, load_param_into_net, save_checkpoint

__all__ = ["serialization", "save_checkpoint", "load_checkpoint", "load_param_into_net"]
