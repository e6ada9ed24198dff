"""Loss-scale managers (``mindspore.train.loss_scale_manager``): the scale a training step
multiplies the loss by before differentiating, and how it changes on overflow.

>>> from cellkit.train import DynamicLossScaleManager
>>> m = DynamicLossScaleManager(init_loss_scale=8, scale_factor=2, scale_window=2)
>>> for overflow in (False, True, False, False):
...     m.update_loss_scale(overflow)
>>> m.get_loss_scale()
8.0
"""

from __future__ import annotations

from ..nn.wrap.loss_scale import DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell

__all__ = ["LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager"]


class LossScaleManager:
    """Base class: ``get_loss_scale``, ``update_loss_scale(overflow)``, ``get_update_cell``."""

    def get_loss_scale(self):
        """The current loss scale."""

    def update_loss_scale(self, overflow):
        """Change the scale after a step (``overflow``: the gradients were not finite)."""

    def get_update_cell(self):
        """The Cell that updates the scale inside the training step (None: none)."""


class FixedLossScaleManager(LossScaleManager):
    """A constant scale. With ``drop_overflow_update`` (default) a step whose gradients overflow
    leaves the weights unchanged; without it the scale is the step's ``sens`` and the
    optimizer must be built with ``loss_scale`` equal to it to undo the scaling."""

    def __init__(self, loss_scale=128.0, drop_overflow_update=True):
        if loss_scale < 1:
            raise ValueError(f"The argument 'loss_scale' must be >= 1, but got {loss_scale}")
        self._loss_scale = loss_scale
        self._drop_overflow_update = drop_overflow_update

    def get_loss_scale(self):
        return self._loss_scale

    def get_drop_overflow_update(self):
        """Are steps with overflowing gradients skipped?"""
        return self._drop_overflow_update

    def update_loss_scale(self, overflow):
        pass

    def get_update_cell(self):
        if not self._drop_overflow_update:
            return None
        return FixedLossScaleUpdateCell(self._loss_scale)


class DynamicLossScaleManager(LossScaleManager):
    """Divide the scale by ``scale_factor`` (not below 1) on an overflow; multiply it by
    ``scale_factor`` after ``scale_window`` steps without one."""

    def __init__(self, init_loss_scale=2 ** 24, scale_factor=2, scale_window=2000):
        if init_loss_scale < 1.0:
            raise ValueError(f"The argument 'init_loss_scale' must be > 1, but got {init_loss_scale}")
        if isinstance(scale_window, bool) or not isinstance(scale_window, int) or scale_window <= 0:
            raise ValueError(f"For 'DynamicLossScaleManager', 'scale_window' must be a positive int, but got "
                             f"{scale_window!r}.")
        if scale_factor <= 0:
            raise ValueError(f"The argument 'scale_factor' must be > 0, but got {scale_factor}")
        self.loss_scale = init_loss_scale
        self.scale_window = scale_window
        self.scale_factor = scale_factor
        self.increase_ratio = scale_factor
        self.decrease_ratio = 1 / scale_factor
        self.cur_iter = 1
        self.last_overflow_iter = 0
        self.bad_step_max = 1000
        self.bad_step = 0

    def get_loss_scale(self):
        return self.loss_scale

    def update_loss_scale(self, overflow):
        if overflow:
            self.loss_scale = max(self.loss_scale * self.decrease_ratio, 1)
            self.last_overflow_iter = self.cur_iter
            self.bad_step += 1
        else:
            if (self.cur_iter - self.last_overflow_iter) % self.scale_window == 0:
                self.loss_scale *= self.increase_ratio
            self.bad_step = 0
        if self.bad_step > self.bad_step_max:
            raise RuntimeError(f"Dynamic loss scale Continuous overflow {self.bad_step} times, has exceeded maximum "
                               "threshold.")
        self.cur_iter += 1

    def get_drop_overflow_update(self):
        return True

    def get_update_cell(self):
        return DynamicLossScaleUpdateCell(self.loss_scale, self.scale_factor, self.scale_window)
