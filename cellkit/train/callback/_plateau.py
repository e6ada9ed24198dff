"""Callbacks watching a monitored value: ``EarlyStopping`` and ``ReduceLROnPlateau``.

The value is the training loss (``monitor='loss'``) or one of the evaluation
results that ``Model.fit`` puts in ``cb_params.eval_results`` (the metrics and
``'eval_loss'``), read at the end of each epoch.
"""

from __future__ import annotations

import copy
import warnings

import numpy as np

from ...checkpoint import load_param_into_net
from ...ops.function.parameter_func import assign
from ...parameter import Parameter
from ._callback import Callback, handle_loss

__all__ = ["EarlyStopping", "ReduceLROnPlateau"]

_smaller_better_metrics = ["hausdorff_distance", "mae", "mse", "loss", "perplexity", "mean_surface_distance",
                           "root_mean_square_distance", "eval_loss"]


class _Monitoring(Callback):
    _what = ""

    def _setup(self, monitor, min_delta, mode):
        if not isinstance(monitor, str):
            raise TypeError(f"For '{type(self).__name__}', 'monitor' must be str, but got {type(monitor).__name__}.")
        if isinstance(min_delta, bool) or not isinstance(min_delta, (int, float)):
            raise TypeError(f"For '{type(self).__name__}', 'min_delta' must be float or int, but got "
                            f"{type(min_delta).__name__}.")
        if mode not in ("auto", "min", "max"):
            raise ValueError("mode should be 'auto', 'min' or 'max', but got %s." % mode)
        self.monitor, self.min_delta, self.mode = monitor, abs(min_delta), mode
        self._reset_best()

    def _smaller_better(self):
        return self.mode == "min" or (self.mode == "auto" and self.monitor in _smaller_better_metrics)

    def _reset_best(self):
        self.best = np.inf if self._smaller_better() else -np.inf

    def is_improvement(self, a, b):
        if self._smaller_better():
            return np.less(a, b - self.min_delta)
        return np.greater(a, b + self.min_delta)

    def _get_monitor_value(self, cb_params):
        candidates = {}
        if self.monitor == "loss":
            value = handle_loss(cb_params.get("net_outputs"))
        else:
            candidates = cb_params.get("eval_results", {})
            value = candidates.get(self.monitor)
        if value is None:
            warnings.warn(f"{self._what} is conditioned on {self.monitor}, which is not available. Available "
                          f"choices are: {set(['loss'] + list(candidates))}", stacklevel=3)
        if isinstance(value, np.ndarray) and value.shape != ():
            raise ValueError(f"{type(self).__name__} only supports scalar monitor now.")
        return np.array(value) if value else None


def _non_negative_int(owner, name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"For '{owner}', '{name}' must be a non-negative int, but got {value!r}.")
    return value


class EarlyStopping(_Monitoring):
    """Stop training when ``monitor`` has not improved by ``min_delta`` for ``patience`` epochs
    (``restore_best_weights``: load the best epoch's weights back on stopping)."""

    _what = "Early stopping"

    def __init__(self, monitor="eval_loss", min_delta=0, patience=0, verbose=False, mode="auto", baseline=None,
                 restore_best_weights=False):
        super().__init__()
        self.patience = _non_negative_int("EarlyStopping", "patience", patience)
        self.verbose = bool(verbose)
        self.baseline = baseline if baseline else None
        self.restore_best_weights = bool(restore_best_weights)
        self.wait = 0
        self.stopped_epoch = 0
        self.best_weights_param_dict = None
        self._setup(monitor, min_delta, mode)

    def on_train_begin(self, run_context):
        self.wait = 0
        self.stopped_epoch = 0
        self._reset_best()
        self.best_weights_param_dict = None

    def _snapshot(self, net):
        return {name: Parameter(np.array(p.asnumpy()), name=name) for name, p in net.parameters_dict().items()}

    def on_train_epoch_end(self, run_context):
        cb_params = run_context.original_args()
        current = self._get_monitor_value(cb_params)
        if current is None:
            return
        if self.restore_best_weights and self.best_weights_param_dict is None:
            self.best_weights_param_dict = self._snapshot(cb_params.train_network)
        self.wait += 1
        if self.is_improvement(current, self.best):
            self.best = current
            if self.restore_best_weights:
                self.best_weights_param_dict = self._snapshot(cb_params.train_network)
            if self.baseline is None or self.is_improvement(current, self.baseline):
                self.wait = 0
        if self.wait >= self.patience:
            self.stopped_epoch = cb_params.get("cur_epoch_num")
            run_context.request_stop()
            if self.restore_best_weights and self.best_weights_param_dict is not None:
                if self.verbose:
                    print("Restoring model weights from the end of the best epoch.")
                load_param_into_net(cb_params.train_network, copy.copy(self.best_weights_param_dict))

    def on_train_end(self, run_context):
        if self.stopped_epoch > 0 and self.verbose:
            print("Epoch %05d: early stopping" % self.stopped_epoch)


class ReduceLROnPlateau(_Monitoring):
    """Multiply the learning rate by ``factor`` (not below ``min_lr``) when ``monitor`` has not
    improved for ``patience`` epochs, then wait ``cooldown`` epochs. The optimizer's learning rate
    must be one fixed value (a Parameter)."""

    _what = "Learning rate reduction"

    def __init__(self, monitor="eval_loss", factor=0.1, patience=10, verbose=False, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0):
        super().__init__()
        if isinstance(factor, bool) or not isinstance(factor, float) or not 0.0 < factor < 1.0:
            raise ValueError(f"For 'ReduceLROnPlateau', 'factor' must be a float in (0.0, 1.0), but got {factor!r}.")
        self.factor = factor
        self.patience = _non_negative_int("ReduceLROnPlateau", "patience", patience)
        self.verbose = bool(verbose)
        self.cooldown = _non_negative_int("ReduceLROnPlateau", "cooldown", cooldown)
        if isinstance(min_lr, bool) or not isinstance(min_lr, (int, float)):
            raise TypeError(f"For 'ReduceLROnPlateau', 'min_lr' must be float or int, but got {type(min_lr).__name__}.")
        self.min_lr = min_lr
        self.cooldown_counter = 0
        self.wait = 0
        self._setup(monitor, min_delta, mode)

    def on_train_begin(self, run_context):
        self.cooldown_counter = 0
        self.wait = 0
        self._reset_best()

    def on_train_epoch_end(self, run_context):
        cb_params = run_context.original_args()
        cur_lr = cb_params.optimizer.learning_rate
        if not isinstance(cur_lr, Parameter) or cur_lr.ndim != 0:
            raise ValueError("ReduceLROnPlateau does not support dynamic learning rate and group learning rate now.")
        current = self._get_monitor_value(cb_params)
        if current is None:
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self.is_improvement(current, self.best):
            self.best = current
            self.wait = 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                lr = float(cur_lr.asnumpy())
                if lr > self.min_lr:
                    new_lr = max(lr * self.factor, self.min_lr)
                    assign(cur_lr, np.asarray(new_lr, dtype=cur_lr.asnumpy().dtype))
                    if self.verbose:
                        print("Epoch %05d: ReduceLROnPlateau reducing learning rate to %s."
                              % (cb_params.cur_epoch_num, new_lr))
                self.cooldown_counter = self.cooldown
                self.wait = 0
