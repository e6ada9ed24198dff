"""``LossMonitor``: print the loss every ``per_print_times`` steps, as MindSpore prints it.

>>> import numpy as np
>>> from cellkit.train import LossMonitor, RunContext
>>> from cellkit.train.callback import InternalCallbackParam
>>> ctx = RunContext(InternalCallbackParam(cur_epoch_num=1, cur_step_num=3, batch_num=2,
...                                        net_outputs=np.float32(0.25), dataset_sink_mode=False))
>>> LossMonitor().step_end(ctx)
epoch: 1 step: 1, loss is 0.25
"""

from __future__ import annotations

import numpy as np

from ._callback import Callback, handle_loss

__all__ = ["LossMonitor"]


class LossMonitor(Callback):
    """Print ``epoch: E step: S, loss is L`` every ``per_print_times`` steps (0: never) and the
    metrics at the end of an epoch evaluated by ``Model.fit``; stop on a NaN or infinite loss."""

    def __init__(self, per_print_times=1):
        super().__init__()
        if isinstance(per_print_times, bool) or not isinstance(per_print_times, int) or per_print_times < 0:
            raise ValueError(f"For 'LossMonitor', the argument 'per_print_times' must be a non-negative int, but "
                             f"got {per_print_times!r}.")
        self._per_print_times = per_print_times
        self._last_print_time = 0

    def step_end(self, run_context):
        cb_params = run_context.original_args()
        cur_epoch_num = cb_params.get("cur_epoch_num", 1)
        loss = handle_loss(cb_params.net_outputs)
        cur_step_in_epoch = (cb_params.cur_step_num - 1) % cb_params.batch_num + 1
        if isinstance(loss, float) and (np.isnan(loss) or np.isinf(loss)):
            raise ValueError(f"In epoch: {cur_epoch_num} step: {cur_step_in_epoch}, loss is NAN or INF, training "
                             "process cannot continue, terminating training.")
        if self._per_print_times != 0 and cb_params.cur_step_num <= self._last_print_time:
            while cb_params.cur_step_num <= self._last_print_time:
                self._last_print_time -= max(self._per_print_times,
                                             cb_params.batch_num if cb_params.get("dataset_sink_mode") else 1)
        if self._per_print_times != 0 and cb_params.cur_step_num - self._last_print_time >= self._per_print_times:
            self._last_print_time = cb_params.cur_step_num
            print(f"epoch: {cur_epoch_num} step: {cur_step_in_epoch}, loss is {loss}", flush=True)

    def on_train_epoch_end(self, run_context):
        cb_params = run_context.original_args()
        metrics = cb_params.get("metrics")
        if metrics:
            print("Eval result: epoch %d, metrics: %s" % (cb_params.cur_epoch_num, metrics))
