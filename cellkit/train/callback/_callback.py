"""``Callback``, ``RunContext`` and the list of callbacks a training or evaluation loop calls.

A callback overrides ``on_train_begin``/``on_train_epoch_begin``/``on_train_step_begin``/
``on_train_step_end``/``on_train_epoch_end``/``on_train_end`` and the ``on_eval_*``
counterparts, or MindSpore 1.x's ``begin``/``epoch_begin``/``step_begin``/``step_end``/
``epoch_end``/``end``, which the ``on_*`` methods call by default. Each receives a
:class:`RunContext`; ``run_context.original_args()`` is the loop's ``cb_params``.

>>> from cellkit.train import Callback, RunContext
>>> class StopAtTwo(Callback):
...     def on_train_step_end(self, run_context):
...         if run_context.original_args().cur_step_num == 2:
...             run_context.request_stop()
>>> ctx = RunContext(InternalCallbackParam(cur_step_num=2))
>>> StopAtTwo().on_train_step_end(ctx); ctx.get_stop_requested()
True
"""

from __future__ import annotations

from contextlib import ExitStack

import jax
import numpy as np

from ...parameter import Parameter

__all__ = ["Callback", "RunContext", "InternalCallbackParam", "CallbackManager"]


class Callback:
    """Base class of training and evaluation callbacks; every hook does nothing by default."""

    def __enter__(self):
        return self

    def __exit__(self, *err):
        pass

    def begin(self, run_context):
        """Called once before training (and, by default, evaluation)."""

    def epoch_begin(self, run_context):
        """Called before each epoch."""

    def epoch_end(self, run_context):
        """Called after each epoch."""

    def step_begin(self, run_context):
        """Called before each step."""

    def step_end(self, run_context):
        """Called after each step."""

    def end(self, run_context):
        """Called once after training (and, by default, evaluation)."""

    def on_train_begin(self, run_context):
        self.begin(run_context)

    def on_train_epoch_begin(self, run_context):
        self.epoch_begin(run_context)

    def on_train_epoch_end(self, run_context):
        self.epoch_end(run_context)

    def on_train_step_begin(self, run_context):
        self.step_begin(run_context)

    def on_train_step_end(self, run_context):
        self.step_end(run_context)

    def on_train_end(self, run_context):
        self.end(run_context)

    def on_eval_begin(self, run_context):
        self.begin(run_context)

    def on_eval_epoch_begin(self, run_context):
        self.epoch_begin(run_context)

    def on_eval_epoch_end(self, run_context):
        self.epoch_end(run_context)

    def on_eval_step_begin(self, run_context):
        self.step_begin(run_context)

    def on_eval_step_end(self, run_context):
        self.step_end(run_context)

    def on_eval_end(self, run_context):
        self.end(run_context)


_HOOKS = ("begin", "epoch_begin", "epoch_end", "step_begin", "step_end", "end",
          "on_train_begin", "on_train_epoch_begin", "on_train_epoch_end", "on_train_step_begin",
          "on_train_step_end", "on_train_end", "on_eval_begin", "on_eval_epoch_begin", "on_eval_epoch_end",
          "on_eval_step_begin", "on_eval_step_end", "on_eval_end")


class CallbackManager(Callback):
    """Calls each hook on every callback of a list, in order; a context manager entering each."""

    def __init__(self, callbacks):
        self._callbacks, self._stack = [], None
        if isinstance(callbacks, Callback):
            self._callbacks.append(callbacks)
        elif isinstance(callbacks, list):
            for cb in callbacks:
                if not isinstance(cb, Callback):
                    raise TypeError("When the 'callbacks' is a list, the elements in 'callbacks' must be Callback "
                                    f"functions, but got {type(cb).__name__}.")
                self._callbacks.append(cb)
        elif callbacks is not None:
            raise TypeError("The 'callbacks' is not a Callback or a list of Callback.")

    def __enter__(self):
        if self._stack is None:
            callbacks, self._stack = [], ExitStack().__enter__()
            for cb in self._callbacks:
                target = self._stack.enter_context(cb)
                callbacks.append(target if isinstance(target, Callback) else cb)
            self._callbacks = callbacks
        return self

    def __exit__(self, *err):
        return self._stack.__exit__(*err)


def _fan_out(name):
    def hook(self, run_context):
        for cb in self._callbacks:
            getattr(cb, name)(run_context)
    hook.__name__ = name
    return hook


for _name in _HOOKS:
    setattr(CallbackManager, _name, _fan_out(_name))


class InternalCallbackParam(dict):
    """``cb_params``: a dict whose keys are also attributes (``cb_params.cur_step_num``)."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(f"cb_params has no field {key!r}; it has {sorted(self)}") from None

    def __setattr__(self, key, value):
        self[key] = value


class RunContext:
    """What a callback receives: the loop's parameters and a way to stop it.

    Args:
        original_args (dict): the ``cb_params``.
    """

    def __init__(self, original_args):
        if not isinstance(original_args, dict):
            raise TypeError("The argument 'original_args' of RunContext should be dict type, but got "
                            f"{type(original_args)}.")
        self._original_args = original_args
        self._stop_requested = False

    def original_args(self):
        """The ``cb_params`` of the loop."""
        return self._original_args

    def request_stop(self):
        """Stop training after the current step (or epoch, when asked at its end)."""
        self._stop_requested = True

    def get_stop_requested(self):
        """Has a callback asked to stop?"""
        return self._stop_requested


def handle_loss(loss):
    """The loss in ``net_outputs`` as MindSpore's callbacks read it: the first element of a tuple,
    a Tensor as the float of its mean."""
    if isinstance(loss, (tuple, list)) and loss and isinstance(loss[0], (jax.Array, np.ndarray, Parameter)):
        loss = loss[0]
    if isinstance(loss, (jax.Array, np.ndarray, Parameter)):
        loss = float(np.mean(np.asarray(loss)))
    return loss
