"""``cellkit.nn.learning_rate_schedule``: learning-rate schedules as Cells (MindSpore's module path).

A schedule is a Cell called with the optimizer's ``global_step`` (an integer
Tensor, 0 at the first step) that returns the learning rate of that step as a
float32 Tensor. Pass one as an optimizer's ``learning_rate`` and the optimizer
calls it on every step, eagerly and inside ``jit``. Where MindSpore's formula
is an optax schedule's, the Cell evaluates that optax schedule (its
``schedule`` attribute, a plain function of the step for use with optax).

>>> import cellkit as ms
>>> from cellkit import nn
>>> lr = nn.ExponentialDecayLR(0.1, 0.9, 4)
>>> round(float(lr(ms.Tensor(4, ms.int32))), 6)
0.09
>>> w = ms.Parameter(ms.Tensor([1.0]), name="w")
>>> opt = nn.SGD([w], learning_rate=nn.WarmUpLR(0.1, 2))
>>> for _ in range(3):                      # learning rates 0.0, 0.05, 0.1
...     _ = opt((ms.Tensor([1.0]),))
>>> w.asnumpy().round(4)
array([0.85], dtype=float32)
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from ..cell import Cell
from ..parameter import Parameter
from ..startup import lazy_module
from . import _lr_checks as check

optax = lazy_module("optax")

__all__ = ["LearningRateSchedule", "ExponentialDecayLR", "NaturalExpDecayLR", "InverseDecayLR", "CosineDecayLR",
           "PolynomialDecayLR", "WarmUpLR"]


def _step(global_step):
    """The step as a float32 array (MindSpore casts ``global_step`` to float32 first)."""
    if isinstance(global_step, Parameter):
        global_step = global_step.value
    return jnp.asarray(global_step).astype(jnp.float32)


class LearningRateSchedule(Cell):
    """Base class of the schedules: ``construct(global_step)`` returns the learning rate of that step.

    A subclass defines ``construct`` (or sets ``self.schedule``, a function of
    the float32 step, and keeps the inherited one):

    >>> import cellkit as ms
    >>> from cellkit import nn, ops
    >>> class Halving(nn.LearningRateSchedule):
    ...     def construct(self, global_step):
    ...         return 0.1 * ops.pow(0.5, ops.cast(global_step, ms.float32))
    >>> round(float(Halving()(ms.Tensor(2, ms.int32))), 6)
    0.025
    """

    schedule = None

    def __init__(self):
        super().__init__()

    def construct(self, global_step):
        if self.schedule is None:
            raise NotImplementedError(f"{self.cls_name} must define construct(global_step)")
        return self.schedule(_step(global_step)).astype(jnp.float32)


def _decay_args(owner, learning_rate, decay_rate, decay_steps, is_stair):
    check.positive_int(decay_steps, "decay_steps", owner)
    check.positive_float(learning_rate, "learning_rate", owner)
    check.positive_float(decay_rate, "decay_rate", owner)
    check.is_bool(is_stair, "is_stair", owner)


class ExponentialDecayLR(LearningRateSchedule):
    """``learning_rate * decay_rate ** p``, ``p = step / decay_steps`` (floored when ``is_stair``).

    = ``optax.exponential_decay(learning_rate, decay_steps, decay_rate, staircase=is_stair)``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> lr = nn.ExponentialDecayLR(0.1, 0.9, 4, is_stair=True)
    >>> [round(float(lr(ms.Tensor(s, ms.int32))), 4) for s in (0, 3, 4)]
    [0.1, 0.1, 0.09]
    """

    def __init__(self, learning_rate, decay_rate, decay_steps, is_stair=False):
        super().__init__()
        _decay_args(self.cls_name, learning_rate, decay_rate, decay_steps, is_stair)
        self.learning_rate = learning_rate
        self.decay_rate = decay_rate
        self.decay_steps = decay_steps
        self.is_stair = is_stair
        self.schedule = optax.exponential_decay(learning_rate, decay_steps, decay_rate, staircase=is_stair)


class NaturalExpDecayLR(LearningRateSchedule):
    """``learning_rate * exp(-decay_rate * p)``, ``p = step`` (``floor(step / decay_steps) * decay_steps`` when
    ``is_stair``; without it ``decay_steps`` has no effect, as in MindSpore).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> lr = nn.NaturalExpDecayLR(0.1, 0.9, 4, is_stair=True)
    >>> [round(float(lr(ms.Tensor(s, ms.int32))), 5) for s in (0, 3, 4)]
    [0.1, 0.1, 0.00273]
    """

    def __init__(self, learning_rate, decay_rate, decay_steps, is_stair=False):
        super().__init__()
        _decay_args(self.cls_name, learning_rate, decay_rate, decay_steps, is_stair)
        self.learning_rate = learning_rate
        self.decay_rate = decay_rate
        self.decay_steps = decay_steps
        self.is_stair = is_stair
        self.math_e = math.e

    def construct(self, global_step):
        p = _step(global_step)
        if self.is_stair:
            p = jnp.floor(p / self.decay_steps) * self.decay_steps
        return (self.learning_rate * jnp.power(jnp.float32(math.e), -self.decay_rate * p)).astype(jnp.float32)


class InverseDecayLR(LearningRateSchedule):
    """``learning_rate / (1 + decay_rate * p)``, ``p = step / decay_steps`` (floored when ``is_stair``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> lr = nn.InverseDecayLR(0.1, 0.5, 2)
    >>> round(float(lr(ms.Tensor(4, ms.int32))), 6)
    0.05
    """

    def __init__(self, learning_rate, decay_rate, decay_steps, is_stair=False):
        super().__init__()
        _decay_args(self.cls_name, learning_rate, decay_rate, decay_steps, is_stair)
        self.learning_rate = learning_rate
        self.decay_rate = decay_rate
        self.decay_steps = decay_steps
        self.is_stair = is_stair

    def construct(self, global_step):
        p = _step(global_step) / self.decay_steps
        if self.is_stair:
            p = jnp.floor(p)
        return (self.learning_rate / (1 + self.decay_rate * p)).astype(jnp.float32)


class CosineDecayLR(LearningRateSchedule):
    """``min_lr + 0.5 * (max_lr - min_lr) * (1 + cos(pi * min(step, decay_steps) / decay_steps))``.

    = ``optax.cosine_decay_schedule(max_lr, decay_steps, alpha=min_lr / max_lr)``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> lr = nn.CosineDecayLR(0.01, 0.1, 4)
    >>> [round(float(lr(ms.Tensor(s, ms.int32))), 4) for s in (0, 2, 4, 9)]
    [0.1, 0.055, 0.01, 0.01]
    """

    def __init__(self, min_lr, max_lr, decay_steps):
        super().__init__()
        owner = self.cls_name
        check.float_type(min_lr, "min_lr", owner)
        check.non_negative_float(min_lr, "min_lr", owner)
        check.positive_float(max_lr, "max_lr", owner)
        check.positive_int(decay_steps, "decay_steps", owner)
        if min_lr >= max_lr:
            raise ValueError(f"For 'CosineDecayLR', the 'max_lr' must be greater than the 'min_lr', but got "
                             f"'max_lr' value: {max_lr}, 'min_lr' value: {min_lr}.")
        self.min_lr = min_lr
        self.max_lr = max_lr
        self.decay_steps = decay_steps
        self.delta = 0.5 * (max_lr - min_lr)
        self.schedule = optax.cosine_decay_schedule(max_lr, decay_steps, alpha=min_lr / max_lr)


class PolynomialDecayLR(LearningRateSchedule):
    """``(learning_rate - end_learning_rate) * (1 - t / T) ** power + end_learning_rate``.

    Without ``update_decay_steps``: ``t = min(step, decay_steps)``, ``T =
    decay_steps`` (``optax.polynomial_schedule``'s formula); with it: ``t =
    step``, ``T = decay_steps * max(ceil(step / decay_steps), 1)`` (the decay
    restarts over a longer span each time it runs out). ``0 ** power`` is 0
    (XLA's CPU ``pow(0, 0.5)`` inside ``jax.jit`` is NaN, and so is
    ``optax.polynomial_schedule``'s end value there).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> lr = nn.PolynomialDecayLR(0.1, 0.01, 4, 1.0)
    >>> [round(float(lr(ms.Tensor(s, ms.int32))), 4) for s in (0, 2, 4, 8)]
    [0.1, 0.055, 0.01, 0.01]
    """

    def __init__(self, learning_rate, end_learning_rate, decay_steps, power, update_decay_steps=False):
        super().__init__()
        owner = self.cls_name
        check.positive_float(learning_rate, "learning_rate")
        check.float_type(end_learning_rate, "end_learning_rate", owner)
        check.non_negative_float(end_learning_rate, "end_learning_rate", owner)
        check.positive_int(decay_steps, "decay_steps", owner)
        check.is_bool(update_decay_steps, "update_decay_steps", owner)
        check.positive_float(power, "power", owner)
        self.decay_steps = decay_steps
        self.start_learning_rate = learning_rate
        self.end_learning_rate = end_learning_rate
        self.diff_learning_rate = learning_rate - end_learning_rate
        self.power = power
        self.update_decay_steps = update_decay_steps

    def schedule(self, t):
        """The learning rate at float step ``t``."""
        if self.update_decay_steps:
            span = self.decay_steps * jnp.maximum(jnp.ceil(t / self.decay_steps), 1.0)
        else:
            t, span = jnp.minimum(t, self.decay_steps), self.decay_steps
        frac = 1.0 - t / span
        decay = jnp.where(frac > 0, jnp.power(jnp.where(frac > 0, frac, 1.0), self.power), 0.0)
        return self.diff_learning_rate * decay + self.end_learning_rate


class WarmUpLR(LearningRateSchedule):
    """``learning_rate * min(step, warmup_steps) / warmup_steps`` (= ``optax.linear_schedule(0, lr, warmup_steps)``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> lr = nn.WarmUpLR(0.1, 4)
    >>> [round(float(lr(ms.Tensor(s, ms.int32))), 4) for s in (0, 2, 6)]
    [0.0, 0.05, 0.1]
    """

    def __init__(self, learning_rate, warmup_steps):
        super().__init__()
        owner = self.cls_name
        check.float_type(learning_rate, "learning_rate", owner)
        check.non_negative_float(learning_rate, "learning_rate", owner)
        check.positive_int(warmup_steps, "warmup_steps", owner)
        self.warmup_steps = warmup_steps
        self.learning_rate = learning_rate
        self.schedule = optax.linear_schedule(0.0, learning_rate, warmup_steps)
