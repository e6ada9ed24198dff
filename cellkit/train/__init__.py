"""``cellkit.train``: MindSpore's training API (``mindspore.train``): ``Model``, callbacks, metrics,
loss-scale managers and checkpoints."""

from . import callback, loss_scale_manager, metrics, serialization, summary
from .callback import *  # noqa: F401,F403
from .loss_scale_manager import DynamicLossScaleManager, FixedLossScaleManager, LossScaleManager
from .metrics import *  # noqa: F401,F403
from .model import Model
from .summary import SummaryRecord
from .serialization import (async_ckpt_thread_status, ckpt_to_safetensors, load_checkpoint, load_checkpoint_async, load_param_into_net,
                            safetensors_to_ckpt, save_checkpoint)


def build_train_network(*args, **kwargs):
    """:func:`cellkit.amp.build_train_network` (MindSpore exports it here too)."""
    from ..amp import build_train_network as build
    return build(*args, **kwargs)


__all__ = ["Model", "callback", "metrics", "serialization", "loss_scale_manager", "summary", "SummaryRecord", "save_checkpoint",
           "load_checkpoint", "load_param_into_net", "ckpt_to_safetensors", "safetensors_to_ckpt",
           "load_checkpoint_async", "async_ckpt_thread_status", "build_train_network", "LossScaleManager",
           "FixedLossScaleManager", "DynamicLossScaleManager", *callback.__all__, *metrics.__all__]
