"""``mindspore.train.serialization``: the checkpoint functions (see :mod:`cellkit.checkpoint`)."""

from ..checkpoint import (async_ckpt_thread_status, ckpt_to_safetensors, load_checkpoint, load_checkpoint_async, load_param_into_net,
                          safetensors_to_ckpt, save_checkpoint)

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net", "ckpt_to_safetensors",
           "safetensors_to_ckpt", "load_checkpoint_async", "async_ckpt_thread_status"]
