"""``LearningRateScheduler``: change the optimizer's learning rate after each step."""

from __future__ import annotations

import math

import numpy as np

from ...ops.function.parameter_func import assign
from ._callback import Callback

__all__ = ["LearningRateScheduler"]


class LearningRateScheduler(Callback):
    """After each step, set the learning rate to ``learning_rate_function(lr, cur_step_num)``.

    >>> import cellkit as ms
    >>> from cellkit import nn, train
    >>> opt = nn.SGD(nn.Dense(2, 1).trainable_params(), learning_rate=0.1)
    >>> cb = train.LearningRateScheduler(lambda lr, step: lr * 0.5 if step % 2 == 0 else lr)
    >>> cb.step_end(train.RunContext(train.callback.InternalCallbackParam(optimizer=opt, cur_step_num=2)))
    >>> round(float(opt.learning_rate.asnumpy()), 6)
    0.05
    """

    def __init__(self, learning_rate_function):
        super().__init__()
        if not callable(learning_rate_function):
            raise TypeError("For 'LearningRateScheduler', 'learning_rate_function' must be callable, but got "
                            f"{type(learning_rate_function).__name__}.")
        self.learning_rate_function = learning_rate_function

    def step_end(self, run_context):
        cb_params = run_context.original_args()
        param = cb_params.optimizer.learning_rate
        lr = float(np.asarray(param.asnumpy()).reshape(-1)[0])
        new_lr = self.learning_rate_function(lr, cb_params.cur_step_num)
        if not math.isclose(lr, new_lr, rel_tol=1e-10):
            assign(param, np.asarray(new_lr, dtype=np.asarray(param.asnumpy()).dtype))
