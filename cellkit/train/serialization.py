"""``cellkit.train.serialization``: MindSpore's path for checkpoint saving and loading."""

from ..checkpoint import load_checkpoint, load_param_into_net, save_checkpoint

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net"]
