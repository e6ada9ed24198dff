"""Learning rates of an ``Optimizer``: fixed, one per step (a list), or a schedule of ``global_step``.

A float or 0-d Tensor is stored in a Parameter; a list, tuple or 1-D Tensor
too (step ``t`` uses ``lr[t]``); a Cell (a ``LearningRateSchedule``) is called
with ``global_step``; any other callable of the step (an optax schedule) is
wrapped in a Cell.

>>> import cellkit as ms
>>> from cellkit import nn
>>> import optax
>>> w = ms.Parameter(ms.Tensor([1.0]), name="w")
>>> opt = nn.SGD([w], learning_rate=optax.linear_schedule(1.0, 0.0, 4))
>>> _ = opt((ms.Tensor([1.0]),))
>>> float(opt.get_lr())
0.75
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...cell import Cell
from ...parameter import Parameter
from ...tensor import host_to_device
from ._checks import is_number, value_of

__all__ = ["LearningRates"]


class _Schedule(Cell):
    """A callable of the step (an optax schedule, say) as a learning-rate Cell."""

    def __init__(self, fn):
        super().__init__(auto_prefix=False)
        self.fn = fn

    def construct(self, global_step):
        return self.fn(jnp.reshape(global_step, ()))

    def extend_repr(self):
        return getattr(self.fn, "__name__", type(self.fn).__name__)


def _lr_at(values, step, owner):
    """``values[step]`` for a list learning rate; past the end: an error eagerly, the last entry when traced."""
    n = values.shape[0]
    if not isinstance(step, jax.core.Tracer):
        s = int(step)
        if s >= n:
            raise IndexError(f"For '{owner}', the learning-rate list has {n} entries but the optimizer is at "
                             f"step {s} (global_step); give one rate per step")
    return jnp.take(values, step, mode="clip")


class _IteratorLearningRate(Cell):
    """A list learning rate as MindSpore keeps it: a Cell whose Parameter ``learning_rate`` holds the
    rates; called with the step it gives ``lr[step]``."""

    def __init__(self, values, name, owner):
        super().__init__(auto_prefix=False)
        self.learning_rate = Parameter(values, name=name, requires_grad=False)
        self.owner = owner

    def construct(self, global_step):
        return _lr_at(self.learning_rate.value, jnp.reshape(global_step, ()), self.owner)



class LearningRates:
    """The ``Optimizer`` methods that build and read learning rates (a base class of ``Optimizer``)."""

    def _build_lr(self, lr, name):
        """A Parameter (fixed or list learning rate) or a Cell (schedule)."""
        owner = self.cls_name
        if isinstance(lr, Parameter):
            lr = lr.value
        if isinstance(lr, bool):
            raise TypeError(f"For '{owner}', the learning rate must be a float, Tensor, list or schedule, "
                            "not a bool.")
        if is_number(lr):
            if lr < 0:
                raise ValueError(f"For '{owner}', the 'learning rate' must be float and must >= 0, but got "
                                 f"'{lr}'.")
            return Parameter(host_to_device(np.array(float(lr), np.float32)), name=name, requires_grad=False)
        if isinstance(lr, Cell):
            return lr
        if isinstance(lr, (jax.Array, np.ndarray, list, tuple)):
            arr = np.asarray(lr, np.float32)
            if arr.ndim > 1:
                raise ValueError(f"For '{owner}', a Tensor learning rate must have 0 or 1 dimensions, but got "
                                 f"{arr.ndim}.")
            if arr.size == 0:
                raise ValueError(f"For '{owner}', the learning-rate list must not be empty.")
            if (arr < 0).any():
                raise ValueError(f"For '{owner}', learning rates must be >= 0, but got {arr.tolist()}.")
            if arr.ndim == 0:
                return Parameter(jnp.asarray(arr), name=name, requires_grad=False)
            return _IteratorLearningRate(jnp.asarray(arr), name, owner)
        if callable(lr):
            return _Schedule(lr)
        raise TypeError(f"For '{owner}', the argument 'learning_rate' must be int, float, Tensor, Iterable, "
                        f"a LearningRateSchedule Cell or a callable of the step, but got {type(lr).__name__}.")

    @staticmethod
    def _lr_kind(source) -> str:
        if isinstance(source, Parameter):
            return "fixed"
        return "list" if isinstance(source, _IteratorLearningRate) else "cell"

    def _lr_source(self, group):
        if not self.is_group_lr:
            return self.learning_rate
        return self.learning_rate[self._groups[group][2]]

    def _group_lr(self, group, step):
        """The learning rate of ``group`` at ``step`` (an int32 scalar), as a float32 scalar."""
        kind = self._groups[group][1]
        source = self._lr_source(group)
        if kind == "fixed":
            lr = source.value
        elif kind == "list":
            lr = _lr_at(source.learning_rate.value, step, self.cls_name)
        else:
            lr = value_of(source(jnp.reshape(step, (1,))))
        return jnp.reshape(jnp.asarray(lr, jnp.float32), ())

    def get_lr(self):
        """The learning rate of the current step (the ``learning_rate`` Parameter when it is fixed).

        With group learning rates, a tuple with one entry per Parameter.
        Reading it does not advance ``global_step``.

        >>> import cellkit as ms
        >>> from cellkit import nn
        >>> w = ms.Parameter(ms.Tensor([1.0]), name="w")
        >>> nn.SGD([w], learning_rate=[0.1, 0.01]).get_lr()
        Array(0.1, dtype=float32)
        """
        step = jnp.reshape(self.global_step.value, ())
        if not self.is_group_lr:
            if self._groups[0][1] == "fixed":
                return self.learning_rate
            return self._group_lr(0, step)
        lrs = [self._lr_source(g) if self._groups[g][1] == "fixed" else self._group_lr(g, step)
               for g in range(len(self._groups))]
        return tuple(lrs[g] for g in self._group_of)

    def get_lr_parameter(self, param):
        """The learning-rate Parameter (or schedule) used for ``param`` (a Parameter or a list of them).

        >>> import cellkit as ms
        >>> from cellkit import nn
        >>> a = ms.Parameter(ms.Tensor([1.0]), name="a")
        >>> b = ms.Parameter(ms.Tensor([1.0]), name="b")
        >>> opt = nn.SGD([{'params': [a], 'lr': 0.05}, {'params': [b]}], learning_rate=0.1)
        >>> [p.name for p in opt.get_lr_parameter([a, b])]
        ['learning_rate_group_0', 'learning_rate']
        """
        items = [param] if isinstance(param, Parameter) else param
        if not isinstance(items, (list, tuple)):
            raise TypeError(f"For 'get_lr_parameter', the 'param' must be 'Parameter' or 'list' type, but got "
                            f"{type(param).__name__}.")
        ids = [id(p) for p in self.parameters]
        out = []
        for p in items:
            if id(p) not in ids:
                raise ValueError(f"For 'get_lr_parameter', the parameter {getattr(p, 'name', p)} is not in "
                                 "the optimizer.")
            source = self._lr_source(self._group_of[ids.index(id(p))])
            out.append(source.fn if isinstance(source, _Schedule) else
                       source.learning_rate if isinstance(source, _IteratorLearningRate) else source)
        return out[0] if isinstance(param, Parameter) else out

