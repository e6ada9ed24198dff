"""``TimeMonitor``: print each epoch's time and the time per step."""

from __future__ import annotations

import time

from ._callback import Callback

__all__ = ["TimeMonitor"]


class TimeMonitor(Callback):
    """Print ``Train epoch time: T ms, per step time: t ms`` after each epoch (``data_time``: also
    the time spent waiting for data).

    >>> from cellkit.train import TimeMonitor, RunContext
    >>> from cellkit.train.callback import InternalCallbackParam
    >>> ctx = RunContext(InternalCallbackParam(batch_num=4, mode="train", dataset_sink_mode=False))
    >>> tm = TimeMonitor(); tm.epoch_begin(ctx); tm.epoch_end(ctx)  # doctest: +ELLIPSIS
    Train epoch time: ... ms, per step time: ... ms
    """

    def __init__(self, data_size=None, data_time=False):
        super().__init__()
        if not isinstance(data_time, bool):
            raise TypeError(f"For 'TimeMonitor', the argument 'data_time' must be bool, but got "
                            f"{type(data_time).__name__}.")
        self.data_size = data_size
        self.epoch_time = time.time()
        self.data_time = data_time
        self.data_time_sum = 0.0
        self.data_time_start = 0.0

    def on_train_step_begin(self, run_context):
        if self.data_time:
            self.data_time_sum += time.time() - self.data_time_start

    def on_train_step_end(self, run_context):
        if self.data_time:
            self.data_time_start = time.time()

    def epoch_begin(self, run_context):
        self.epoch_time = time.time()
        if self.data_time:
            self.data_time_sum = 0.0
            self.data_time_start = time.time()

    def epoch_end(self, run_context):
        epoch_ms = (time.time() - self.epoch_time) * 1000
        cb_params = run_context.original_args()
        step_size = self.data_size
        batch_num = cb_params.get("batch_num")
        if isinstance(batch_num, int) and batch_num > 0:
            step_size = batch_num
        if not isinstance(step_size, int) or step_size <= 0:
            raise ValueError(f"For 'TimeMonitor', the number of steps must be a positive int, but got {step_size}.")
        log = "{} epoch time: {:5.3f} ms, per step time: {:5.3f} ms".format(
            cb_params.get("mode", "").title(), epoch_ms, epoch_ms / step_size)
        if self.data_time:
            log += " (data time: {:5.3f} ms)".format(self.data_time_sum * 1000 / step_size)
        print(log, flush=True)
