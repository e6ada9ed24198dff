"""``ProgressBar``: a tqdm bar per epoch (``tqdm.auto``: a widget in Jupyter, text in a terminal).

``Model.train``/``Model.fit`` add one by default when the output is interactive:
stdout is a terminal, or the code runs in a Jupyter kernel. Under pytest, CI or
a redirect (stdout not a TTY) there is none. ``CELLKIT_PROGRESS_BAR=0`` or ``1``
in the environment forces the choice; passing a ``ProgressBar`` in ``callbacks``
replaces the default one. The bar shows the loss every ``refresh_steps`` steps
(reading the loss waits for the step, so not every step).
"""

from __future__ import annotations

import os
import sys

from ._callback import Callback, handle_loss

__all__ = ["ProgressBar"]


def interactive() -> bool:
    """Is a default progress bar wanted here? (environment override, a TTY, or a Jupyter kernel)"""
    forced = os.environ.get("CELLKIT_PROGRESS_BAR")
    if forced is not None:
        return forced.strip().lower() not in ("0", "false", "no", "off", "")
    if "ipykernel" in sys.modules:
        try:
            from IPython import get_ipython
            shell = get_ipython()
            if shell is not None and "IPKernelApp" in shell.config:
                return True
        except ImportError:
            pass
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


class ProgressBar(Callback):
    """A progress bar per training epoch with the loss, and the metrics of ``fit``'s evaluation.

    Args:
        refresh_steps (int): show the loss every this many steps (default 10).
        leave (bool): keep each epoch's finished bar (default True).
    """

    def __init__(self, refresh_steps=10, leave=True):
        super().__init__()
        if isinstance(refresh_steps, bool) or not isinstance(refresh_steps, int) or refresh_steps < 1:
            raise ValueError(f"For 'ProgressBar', 'refresh_steps' must be a positive int, but got {refresh_steps!r}.")
        self.refresh_steps = refresh_steps
        self.leave = leave
        self._bar = None
        self._last_epoch = None

    def on_train_begin(self, run_context):
        self._last_epoch = None

    def on_train_epoch_begin(self, run_context):
        from tqdm.auto import tqdm
        cb = run_context.original_args()
        total = cb.get("batch_num")
        cur, epochs = cb.get("cur_epoch_num"), cb.get("epoch_num")
        if self._last_epoch is None and isinstance(cur, int) and isinstance(epochs, int):
            # epoch_num counts the epochs of this call (after initial_epoch); show the last epoch's number.
            self._last_epoch = cur - 1 + epochs
        self._bar = tqdm(total=total if isinstance(total, int) and total < sys.maxsize else None,
                         desc=f"epoch {cur}/{self._last_epoch or '?'}", leave=self.leave, unit="step")
        self._steps = 0

    def on_train_step_end(self, run_context):
        if self._bar is None:
            return
        self._steps += 1
        if self._steps % self.refresh_steps == 0:
            self._bar.set_postfix(loss=f"{handle_loss(run_context.original_args().get('net_outputs')):.4g}",
                                  refresh=False)
        self._bar.update(1)

    def on_train_epoch_end(self, run_context):
        if self._bar is None:
            return
        cb = run_context.original_args()
        post = {"loss": f"{handle_loss(cb.get('net_outputs')):.4g}"}
        for k, v in (cb.get("metrics") or {}).items():
            try:
                post[k] = f"{float(v):.4g}"
            except (TypeError, ValueError):
                pass
        self._bar.set_postfix(post)
        self._bar.close()
        self._bar = None

    def on_train_end(self, run_context):
        if self._bar is not None:
            self._bar.close()
            self._bar = None
