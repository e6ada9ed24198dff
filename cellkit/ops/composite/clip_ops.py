"""Clipping composites (MindSpore's ``ops/composite/clip_ops.py``): the functional clip ops."""

from ..function.clip_func import clip_by_global_norm, clip_by_norm, clip_by_value

__all__ = ["clip_by_value", "clip_by_norm", "clip_by_global_norm"]
