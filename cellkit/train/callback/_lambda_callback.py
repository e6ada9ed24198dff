"""``LambdaCallback``: a callback made of functions, one per hook.

>>> from cellkit.train import LambdaCallback, RunContext
>>> cb = LambdaCallback(on_train_step_end=lambda ctx: print("step", ctx.original_args()["cur_step_num"]))
>>> cb.on_train_step_end(RunContext({"cur_step_num": 3}))
step 3
"""

from __future__ import annotations

from ._callback import Callback

__all__ = ["LambdaCallback"]

_NAMES = ("on_train_epoch_begin", "on_train_epoch_end", "on_train_step_begin", "on_train_step_end",
          "on_train_begin", "on_train_end", "on_eval_epoch_begin", "on_eval_epoch_end", "on_eval_step_begin",
          "on_eval_step_end", "on_eval_begin", "on_eval_end")


class LambdaCallback(Callback):
    """Each argument (a function of ``run_context``, or None for nothing) becomes that hook."""

    def __init__(self, on_train_epoch_begin=None, on_train_epoch_end=None, on_train_step_begin=None,
                 on_train_step_end=None, on_train_begin=None, on_train_end=None, on_eval_epoch_begin=None,
                 on_eval_epoch_end=None, on_eval_step_begin=None, on_eval_step_end=None, on_eval_begin=None,
                 on_eval_end=None):
        super().__init__()
        given = locals()
        for name in _NAMES:
            fn = given[name]
            if fn is not None and not callable(fn):
                raise TypeError(f"For 'LambdaCallback', '{name}' must be callable or None, but got "
                                f"{type(fn).__name__}.")
            setattr(self, name, fn if fn else (lambda run_context: None))
