"""``opt_init_args_register``: the decorator MindSpore puts on optimizers' ``__init__``.

It records the constructor's arguments on the optimizer, as MindSpore does:
``init_params`` (``{"params": ...}``), ``init_learning_rate`` (``None`` for a schedule
Cell) and ``init_args`` (the rest), so an optimizer can be rebuilt from them.

>>> from cellkit import nn
>>> class MySGD(nn.SGD):
...     @opt_init_args_register
...     def __init__(self, params, learning_rate=0.1, momentum=0.0):
...         super().__init__(params, learning_rate, momentum)
>>> opt = MySGD(nn.Dense(2, 1).trainable_params(), momentum=0.9)
>>> opt.init_args, opt.init_learning_rate, len(opt.init_params["params"])
({'momentum': 0.9}, 0.1, 2)
"""

import functools
import inspect

from ...cell import Cell

__all__ = ["opt_init_args_register"]


def opt_init_args_register(fn):
    """Decorate an optimizer's ``__init__`` to record its arguments (see the module docstring)."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def deco(self, *args, **kwargs):
        bound = sig.bind(self, *args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        arguments.pop("self")
        if "params" in arguments:
            setattr(self, "init_params", {"params": arguments.pop("params")})
        if "optimizer" in arguments:
            setattr(self, "init_params", {"params": arguments.pop("optimizer").init_params["params"]})
        if "learning_rate" in arguments:
            lr = arguments.pop("learning_rate")
            if hasattr(lr, "shape") and hasattr(lr, "tolist"):
                lr = lr.tolist()
            setattr(self, "init_learning_rate", None if isinstance(lr, Cell) else lr)
        setattr(self, "init_args", arguments)
        fn(self, *args, **kwargs)

    return deco
