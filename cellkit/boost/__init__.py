"""``mindspore.boost``: of MindSpore's training accelerations, gradient accumulation
(:class:`GradientAccumulation`); the others tune Ascend graph compilation and have no
meaning on XLA."""

from . import grad_accumulation
from .grad_accumulation import GradientAccumulation

__all__ = ["GradientAccumulation", "grad_accumulation"]
