"""``cellkit.nn.dynamic_lr``: learning rates precomputed as lists, one per step (MindSpore's module path)."""

__all__ = []
