"""``Metric``: the base of MindSpore's evaluation metrics, which run on numpy (on the host).

A metric accumulates with ``update(*inputs)`` and reports with ``eval()``;
``clear()`` resets it, and calling it does all three. ``set_indexes`` picks
which of the network's outputs ``update`` receives (``rearrange_inputs``).

>>> import numpy as np
>>> from cellkit import train
>>> class Count(train.Metric):
...     def clear(self): self.n = 0
...     @train.rearrange_inputs
...     def update(self, *inputs): self.n += len(inputs[0])
...     def eval(self): return self.n
>>> m = Count().set_indexes([1])
>>> m.clear(); m.update(np.zeros(2), np.zeros(5)); m.eval()
5
"""

from __future__ import annotations

import functools
from abc import ABCMeta, abstractmethod

import jax
import numpy as np

from ...parameter import Parameter

__all__ = ["Metric", "EvaluationBase", "rearrange_inputs"]

_eval_types = {"classification", "multilabel"}


def rearrange_inputs(func):
    """Decorate ``update`` so it receives the inputs at ``self.indexes`` (all when unset)."""
    @functools.wraps(func)
    def wrapper(self, *inputs):
        indexes = self.indexes
        inputs = inputs if not indexes else [inputs[i] for i in indexes]
        return func(self, *inputs)
    return wrapper


class Metric(metaclass=ABCMeta):
    """Base class of metrics: ``clear``, ``update(*inputs)``, ``eval()``."""

    def __init__(self):
        self._indexes = None

    def _convert_data(self, data):
        if isinstance(data, Parameter):
            data = np.asarray(data.value)
        elif isinstance(data, jax.Array):
            data = np.asarray(data)
        elif isinstance(data, list):
            data = np.array(data)
        elif not isinstance(data, np.ndarray):
            raise TypeError("For 'Metric' and its derived classes, the input data type must be tensor, list or "
                            f"numpy.ndarray, but got {type(data)}.")
        return data

    @property
    def indexes(self):
        """The positions of the outputs ``update`` receives (None: all)."""
        return getattr(self, "_indexes", None)

    def set_indexes(self, indexes):
        """Have ``update`` receive the inputs at ``indexes`` (a list of int), in that order; returns self."""
        if not isinstance(indexes, list) or not all(isinstance(i, int) for i in indexes):
            raise ValueError("For 'set_indexes', the argument 'indexes' must be a list and all its elements must "
                             "be int, please check whether it is correct.")
        self._indexes = indexes
        return self

    def __call__(self, *inputs):
        self.clear()
        self.update(*inputs)
        return self.eval()

    @abstractmethod
    def clear(self):
        """Reset the accumulated state."""

    @abstractmethod
    def eval(self):
        """The metric over everything since the last ``clear``."""

    @abstractmethod
    def update(self, *inputs):
        """Accumulate one batch."""


class EvaluationBase(Metric):
    """A classification metric with ``eval_type`` 'classification' or 'multilabel'."""

    def __init__(self, eval_type):
        super().__init__()
        if eval_type not in _eval_types:
            raise TypeError(f"The argument 'eval_type' must be in {_eval_types}, but got {eval_type}")
        self._type = eval_type

    def _check_shape(self, y_pred, y):
        if self._type == "classification":
            if y_pred.ndim != y.ndim + 1:
                raise ValueError("In classification case, the dimension of y_pred (predicted value) should equal to "
                                 "the dimension of y (true value) add 1, but got y_pred dimension: "
                                 f"{y_pred.ndim} and y dimension: {y.ndim}.")
            if y.shape != (y_pred.shape[0],) + y_pred.shape[2:]:
                raise ValueError("In classification case, y_pred (predicted value) shape and y (true value) shape "
                                 "can not match, y shape should be equal to y_pred shape that the value at index 1 "
                                 f"is deleted. But got y_pred shape {y_pred.shape} and y shape {y.shape}")
        elif y_pred.shape != y.shape:
            raise ValueError(f"In {self._type} case, the shape of y_pred (predicted value) should equal to the shape "
                             f"of y (true value), but got y_pred shape: {y_pred.shape} and y shape: {y.shape}.")

    def _check_value(self, y_pred, y):
        if self._type != "classification" and not (np.equal(y_pred ** 2, y_pred).all()
                                                    and np.equal(y ** 2, y).all()):
            raise ValueError("In multilabel case, all elements in y_pred (predicted value) and y (true value) "
                             "should be 0 or 1.Please check whether your inputs y_pred and y are correct.")

    def clear(self):
        raise NotImplementedError

    def update(self, *inputs):
        raise NotImplementedError

    def eval(self):
        raise NotImplementedError


def check_onehot(data) -> bool:
    """Is ``data`` one-hot along axis 1?"""
    if data.ndim > 1 and np.equal(data ** 2, data).all():
        shp = (data.shape[0],) + data.shape[2:]
        if np.equal(np.ones(shp), data.sum(axis=1)).all():
            return True
    return False


def check_inputs(name, inputs, n, what="predicted value, true value"):
    if len(inputs) != n:
        raise ValueError(f"For '{name}.update', it needs {n} inputs ({what}), but got {len(inputs)}.")


def binary_clf_curve(preds, target, sample_weights=None, pos_label=1):
    """False and true positives at each distinct threshold (descending), and the thresholds."""
    if sample_weights is not None and not isinstance(sample_weights, np.ndarray):
        sample_weights = np.array(sample_weights)
    if preds.ndim > target.ndim:
        preds = preds[:, 0]
    order = np.argsort(-preds)
    preds, target = preds[order], target[order]
    weight = 1.0 if sample_weights is None else sample_weights[order]
    distinct = np.where(preds[1:] - preds[:-1])[0]
    idx = np.pad(distinct, (0, 1), constant_values=target.shape[0] - 1)
    target = np.array(target == pos_label).astype(np.int64)
    tps = np.cumsum(target * weight, axis=0)[idx]
    if sample_weights is not None:
        fps = np.cumsum((1 - target) * weight, axis=0)[idx]
    else:
        fps = 1 + idx - tps
    return fps, tps, preds[idx]


def check_type(name, value, types, owner=None):
    """MindSpore's ``check_value_type``: a TypeError naming the argument (bool is not int)."""
    if isinstance(value, bool) and bool not in types:
        ok = False
    else:
        ok = isinstance(value, tuple(types))
    if not ok:
        where = f"For '{owner}', the" if owner else "The"
        names = ", ".join(t.__name__ for t in types)
        raise TypeError(f"{where} type of '{name}' should be one of [{names}], but got '{value}' with type "
                        f"'{type(value).__name__}'.")
    return value


def check_string(name, value, allowed, owner=None):
    check_type(name, value, [str], owner)
    if value not in allowed:
        raise ValueError(f"For '{owner or name}', the argument '{name}' should be in {allowed}, but got '{value}'.")
    return value
