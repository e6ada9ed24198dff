"""``cellkit.nn.dynamic_lr``: learning rates precomputed as lists, one per step (MindSpore's module path).

Each function returns a Python list of ``total_step`` floats, computed as
MindSpore computes it (in Python floats); pass it as an optimizer's
``learning_rate`` and step ``i`` uses entry ``i``. The epoch of step ``i`` is
``floor(i / step_per_epoch)``.

>>> from cellkit import nn
>>> nn.piecewise_constant_lr([2, 5], [0.1, 0.05])
[0.1, 0.1, 0.05, 0.05, 0.05]
>>> [round(x, 4) for x in nn.warmup_lr(0.1, 6, 2, 2)]
[0.0, 0.0, 0.05, 0.05, 0.1, 0.1]
"""

from __future__ import annotations

import math

from . import _lr_checks as check

__all__ = ["piecewise_constant_lr", "exponential_decay_lr", "natural_exp_decay_lr", "inverse_decay_lr",
           "cosine_decay_lr", "polynomial_decay_lr", "warmup_lr"]


def _sequence(value, name):
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"The type of '{name}' should be one of '['tuple', 'list']', but got type "
                        f"'{type(value).__name__}'.")


def piecewise_constant_lr(milestone, learning_rates):
    """``learning_rates[t]`` for the steps in ``[milestone[t-1], milestone[t])``; ``milestone[-1]`` entries.

    >>> from cellkit import nn
    >>> nn.piecewise_constant_lr([1, 3], [0.1, 0.01])
    [0.1, 0.01, 0.01]
    """
    _sequence(milestone, "milestone")
    _sequence(learning_rates, "learning_rates")
    if len(milestone) != len(learning_rates):
        raise ValueError(f"For 'piecewise_constant_lr', the size of 'milestone' must be same with the size of "
                         f"'learning_rates', but got 'milestone' size: {len(milestone)}, 'learning_rates' size: "
                         f"{len(learning_rates)}.")
    lr, last = [], 0
    for i, item in enumerate(milestone):
        check.positive_int(item, f"milestone[{i}]")
        if not isinstance(learning_rates[i], float):
            raise TypeError(f"The type of 'learning_rates[{i}]' must be 'float', but got "
                            f"'{type(learning_rates[i]).__name__}'.")
        if item < last:
            raise ValueError(f"For 'piecewise_constant_lr', the value of milestone[{i}] must be greater than "
                             f"milestone[{i - 1}], but got milestone[{i}]: {milestone[i]}, milestone[{i - 1}]: "
                             f"{milestone[i - 1]}.")
        lr += [learning_rates[i]] * (item - last)
        last = item
    return lr


def _check_decay(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair):
    check.positive_int(total_step, "total_step")
    check.positive_int(step_per_epoch, "step_per_epoch")
    check.positive_int(decay_epoch, "decay_epoch")
    check.positive_float(learning_rate, "learning_rate")
    check.positive_float(decay_rate, "decay_rate")
    check.is_bool(is_stair, "is_stair")


def _epochs(total_step, step_per_epoch):
    return [math.floor(i / step_per_epoch) for i in range(total_step)]


def exponential_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False):
    """``learning_rate * decay_rate ** (epoch / decay_epoch)`` (the exponent floored when ``is_stair``).

    >>> from cellkit import nn
    >>> [round(x, 4) for x in nn.exponential_decay_lr(0.1, 0.9, 4, 1, 2, is_stair=True)]
    [0.1, 0.1, 0.09, 0.09]
    """
    _check_decay(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair)
    if is_stair:
        return [learning_rate * decay_rate ** math.floor(e / decay_epoch) for e in _epochs(total_step, step_per_epoch)]
    return [learning_rate * decay_rate ** (e / decay_epoch) for e in _epochs(total_step, step_per_epoch)]


def natural_exp_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False):
    """``learning_rate * e ** (-decay_rate * epoch)`` (``epoch`` floored to a multiple of ``decay_epoch`` when
    ``is_stair``).

    >>> from cellkit import nn
    >>> [round(x, 4) for x in nn.natural_exp_decay_lr(0.1, 0.5, 3, 1, 1)]
    [0.1, 0.0607, 0.0368]
    """
    _check_decay(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair)
    out = []
    for e in _epochs(total_step, step_per_epoch):
        if is_stair:
            e = math.floor(e / decay_epoch) * decay_epoch
        out.append(learning_rate * math.e ** (-decay_rate * e))
    return out


def inverse_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False):
    """``learning_rate / (1 + decay_rate * epoch / decay_epoch)`` (the ratio floored when ``is_stair``).

    >>> from cellkit import nn
    >>> nn.inverse_decay_lr(0.1, 1.0, 3, 1, 1)
    [0.1, 0.05, 0.03333333333333333]
    """
    _check_decay(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair)
    if is_stair:
        return [learning_rate / (1 + decay_rate * math.floor(e / decay_epoch))
                for e in _epochs(total_step, step_per_epoch)]
    return [learning_rate / (1 + decay_rate * e / decay_epoch) for e in _epochs(total_step, step_per_epoch)]


def cosine_decay_lr(min_lr, max_lr, total_step, step_per_epoch, decay_epoch):
    """``min_lr + 0.5 * (max_lr - min_lr) * (1 + cos(pi * min(epoch, decay_epoch) / decay_epoch))``.

    >>> from cellkit import nn
    >>> [round(x, 4) for x in nn.cosine_decay_lr(0.01, 0.1, 4, 1, 2)]
    [0.1, 0.055, 0.01, 0.01]
    """
    check.float_type(min_lr, "min_lr", "cosine_decay_lr")
    check.non_negative_float(min_lr, "min_lr")
    check.positive_float(max_lr, "max_lr")
    check.positive_int(total_step, "total_step")
    check.positive_int(step_per_epoch, "step_per_epoch")
    check.positive_int(decay_epoch, "decay_epoch")
    if min_lr >= max_lr:
        raise ValueError(f"For 'cosine_decay_lr', the 'max_lr' must be greater than the 'min_lr', but got "
                         f"'max_lr' value: {max_lr}, 'min_lr' value: {min_lr}.")
    delta = 0.5 * (max_lr - min_lr)
    return [min_lr + delta * (1 + math.cos(math.pi * min(e, decay_epoch) / decay_epoch))
            for e in _epochs(total_step, step_per_epoch)]


def polynomial_decay_lr(learning_rate, end_learning_rate, total_step, step_per_epoch, decay_epoch, power,
                        update_decay_epoch=False):
    """``(learning_rate - end_learning_rate) * (1 - t / T) ** power + end_learning_rate``.

    ``t = min(epoch, decay_epoch)``, ``T = decay_epoch``; with
    ``update_decay_epoch``: ``t = epoch``, ``T = decay_epoch * max(ceil(epoch /
    decay_epoch), 1)``.

    >>> from cellkit import nn
    >>> [round(x, 4) for x in nn.polynomial_decay_lr(0.1, 0.01, 4, 1, 2, 1.0)]
    [0.1, 0.055, 0.01, 0.01]
    """
    check.positive_float(learning_rate, "learning_rate")
    check.float_type(end_learning_rate, "end_learning_rate", "polynomial_decay_lr")
    check.non_negative_float(end_learning_rate, "end_learning_rate")
    check.positive_float(power, "power")
    check.positive_int(total_step, "total_step")
    check.positive_int(step_per_epoch, "step_per_epoch")
    check.positive_int(decay_epoch, "decay_epoch")
    check.is_bool(update_decay_epoch, "update_decay_epoch")
    delta = learning_rate - end_learning_rate
    out = []
    for e in _epochs(total_step, step_per_epoch):
        if update_decay_epoch:
            span, t = decay_epoch * max(math.ceil(e / decay_epoch), 1), e
        else:
            span, t = decay_epoch, min(e, decay_epoch)
        out.append(delta * (1 - t / span) ** power + end_learning_rate)
    return out


def warmup_lr(learning_rate, total_step, step_per_epoch, warmup_epoch):
    """``learning_rate * min(epoch, warmup_epoch) / warmup_epoch``.

    >>> from cellkit import nn
    >>> nn.warmup_lr(0.1, 3, 1, 2)
    [0.0, 0.05, 0.1]
    """
    check.float_type(learning_rate, "learning_rate", "warmup_lr")
    check.non_negative_float(learning_rate, "learning_rate")
    check.positive_int(warmup_epoch, "warmup_epoch")
    check.positive_int(total_step, "total_step")
    check.positive_int(step_per_epoch, "step_per_epoch")
    return [learning_rate * min(e, warmup_epoch) / warmup_epoch for e in _epochs(total_step, step_per_epoch)]
