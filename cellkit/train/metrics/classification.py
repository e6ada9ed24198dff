"""Classification metrics: ``Accuracy``, ``Precision``, ``Recall``, ``Fbeta``/``F1`` and top-k accuracy.

Inputs are scores ``(N, C, ...)`` with labels ``(N, ...)`` (or one-hot labels of
the scores' shape); ``eval_type='multilabel'`` takes 0/1 arrays of equal shape.

>>> import numpy as np
>>> from cellkit import train
>>> m = train.Accuracy()
>>> m.clear(); m.update(np.array([[0.2, 0.8], [0.9, 0.1], [0.3, 0.7]]), np.array([1, 1, 1])); float(m.eval())
0.6666666666666666
>>> train.Precision()(np.array([[0.2, 0.8], [0.9, 0.1]]), np.array([1, 0]))
array([1., 1.])
"""

from __future__ import annotations

import sys

import numpy as np

from .metric import EvaluationBase, Metric, check_inputs, check_onehot, check_type, rearrange_inputs

__all__ = ["Accuracy", "Precision", "Recall", "Fbeta", "F1", "TopKCategoricalAccuracy",
           "Top1CategoricalAccuracy", "Top5CategoricalAccuracy"]


def _empty(name, what="inputs (predicted value, true value)"):
    return RuntimeError(f"The '{name}' can not be calculated, because the number of samples is 0, please check "
                        f"whether your {what} are empty, or has called update method before calling eval method.")


class _Counting(EvaluationBase):
    """Shared ``update`` preamble: convert, one-hot labels to indices, check, fix the class count."""

    def _prepare(self, inputs):
        name = type(self).__name__
        check_inputs(name, inputs, 2)
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if self._type == "classification" and y_pred.ndim == y.ndim and check_onehot(y):
            y = y.argmax(axis=1)
        self._check_shape(y_pred, y)
        self._check_value(y_pred, y)
        if self._class_num == 0:
            self._class_num = y_pred.shape[1]
        elif y_pred.shape[1] != self._class_num:
            raise ValueError(f"For '{name}.update', class number not match, last input predicted data contain "
                             f"{self._class_num} classes, but current predicted data contain {y_pred.shape[1]} "
                             "classes, please check your predicted value(inputs[0]).")
        return y_pred, y


class Accuracy(_Counting):
    """The fraction of samples predicted right (``eval_type`` 'classification' or 'multilabel')."""

    def __init__(self, eval_type="classification"):
        super().__init__(eval_type)
        self.clear()

    def clear(self):
        self._correct_num = 0
        self._total_num = 0
        self._class_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        y_pred, y = self._prepare(inputs)
        if self._type == "classification":
            result = (np.equal(y_pred.argmax(axis=1), y) * 1).reshape(-1)
        else:
            last = y_pred.ndim - 1
            y_pred = y_pred.swapaxes(1, last).reshape(-1, self._class_num)
            y = y.swapaxes(1, last).reshape(-1, self._class_num)
            result = np.equal(y_pred, y).all(axis=1) * 1
        self._correct_num += result.sum()
        self._total_num += result.shape[0]

    def eval(self):
        if self._total_num == 0:
            raise _empty("Accuracy", "inputs(predicted value, true value)")
        return self._correct_num / self._total_num


class _PrecisionRecall(_Counting):
    _denominator = ""  # "positives" (precision) or "actual" (recall)

    def __init__(self, eval_type="classification"):
        super().__init__(eval_type)
        self.eps = sys.float_info.min
        self.clear()

    def clear(self):
        self._class_num = 0
        if self._type == "multilabel":
            self._tp, self._den = np.empty(0), np.empty(0)
            self._tp_average, self._den_average = 0, 0
        else:
            self._tp, self._den = 0, 0

    @rearrange_inputs
    def update(self, *inputs):
        y_pred, y = self._prepare(inputs)
        n = self._class_num
        if self._type == "classification":
            if y.max() + 1 > n:
                raise ValueError(f"For '{type(self).__name__}.update', predicted value (input[0]) should have the "
                                 "same classes number as true value (input[1]), but got predicted value classes "
                                 f"{n}, true value classes {y.max() + 1}.")
            y = np.eye(n)[y.reshape(-1)]
            y_pred = np.eye(n)[y_pred.argmax(axis=1).reshape(-1)]
        else:
            y_pred = y_pred.swapaxes(1, 0).reshape(n, -1)
            y = y.swapaxes(1, 0).reshape(n, -1)
        den = (y_pred if self._denominator == "positives" else y).sum(axis=0)
        tp = (y * y_pred).sum(axis=0)
        if self._type == "multilabel":
            with np.errstate(invalid="ignore", divide="ignore"):  # float32 + eps is 0: NaN as MindSpore
                self._tp_average += np.sum(tp / (den + self.eps))
            self._den_average += len(den)
            self._tp = np.concatenate((self._tp, tp), axis=0)
            self._den = np.concatenate((self._den, den), axis=0)
        else:
            self._tp += tp
            self._den += den

    def eval(self, average=False):
        """Per class (``average=False``) or their mean."""
        if self._class_num == 0:
            raise _empty(type(self).__name__)
        check_type("average", average, [bool], type(self).__name__)
        with np.errstate(invalid="ignore", divide="ignore"):
            result = self._tp / (self._den + self.eps)
        if average:
            if self._type == "multilabel":
                result = self._tp_average / (self._den_average + self.eps)
            return result.mean()
        return result


class Precision(_PrecisionRecall):
    """True positives over predicted positives, per class; ``eval(average=True)`` averages."""

    _denominator = "positives"


class Recall(_PrecisionRecall):
    """True positives over actual positives, per class; ``eval(average=True)`` averages."""

    _denominator = "actual"


class Fbeta(Metric):
    """The F-beta score per class: ``(1 + b^2) tp / (b^2 (tp + fn) + tp + fp)``.

    >>> import numpy as np
    >>> from cellkit import train
    >>> train.F1()(np.array([[0.2, 0.8], [0.9, 0.1], [0.6, 0.4]]), np.array([1, 0, 1]))
    array([0.66666667, 0.66666667])
    """

    def __init__(self, beta):
        super().__init__()
        self.eps = sys.float_info.min
        if not beta > 0:
            raise ValueError(f"For 'Fbeta', the argument 'beta' must be greater than 0, but got {beta}.")
        self.beta = beta
        self.clear()

    def clear(self):
        self._true_positives = 0
        self._actual_positives = 0
        self._positives = 0
        self._class_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        check_inputs("Fbeta", inputs, 2)
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if y_pred.ndim == y.ndim and check_onehot(y):
            y = y.argmax(axis=1)
        if self._class_num == 0:
            self._class_num = y_pred.shape[1]
        elif y_pred.shape[1] != self._class_num:
            raise ValueError(f"For 'Fbeta.update', class number not match, last input predicted data contain "
                             f"{self._class_num} classes, but current predicted data contain {y_pred.shape[1]} "
                             "classes, please check your predicted value(inputs[0]).")
        n = self._class_num
        if y.max() + 1 > n:
            raise ValueError("For 'Fbeta.update', predicted value(inputs[0]) and true value(inputs[1]) should "
                             f"contain same classes, but got predicted value contains {n} classes and true value "
                             f"contains {y.max() + 1} classes.")
        y = np.eye(n)[y.reshape(-1)]
        y_pred = np.eye(n)[y_pred.argmax(axis=1).reshape(-1)]
        self._true_positives += (y * y_pred).sum(axis=0)
        self._positives += y_pred.sum(axis=0)
        self._actual_positives += y.sum(axis=0)

    def eval(self, average=False):
        """Per class (``average=False``) or their mean."""
        check_type("average", average, [bool], type(self).__name__)
        if self._class_num == 0:
            raise _empty("Fbeta", "inputs(predicted value, true value)")
        b2 = self.beta ** 2
        fbeta = (1.0 + b2) * self._true_positives / (b2 * self._actual_positives + self._positives + self.eps)
        return fbeta.mean() if average else fbeta


class F1(Fbeta):
    """``Fbeta(1.0)``."""

    def __init__(self):
        super().__init__(1.0)


class TopKCategoricalAccuracy(Metric):
    """The fraction of samples whose label is among the ``k`` highest scores.

    >>> import numpy as np
    >>> from cellkit import train
    >>> float(train.TopKCategoricalAccuracy(2)(np.array([[0.1, 0.5, 0.4], [0.6, 0.3, 0.1]]), np.array([2, 2])))
    0.5
    """

    def __init__(self, k):
        super().__init__()
        if not isinstance(k, int) or isinstance(k, bool):
            raise TypeError("For 'TopKCategoricalAccuracy', the type of the argument 'k' should be int, but got "
                            f"'k' type: {type(k)}.")
        if k < 1:
            raise ValueError(f"For 'TopKCategoricalAccuracy', the argument 'k' must be at least 1, but got 'k' "
                             f"value: {k}.")
        self.k = k
        self.clear()

    def clear(self):
        self._correct_num = 0
        self._samples_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        check_inputs("TopKCategoricalAccuracy", inputs, 2)
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if y_pred.ndim == y.ndim and check_onehot(y):
            y = y.argmax(axis=1)
        indices = np.argsort(-y_pred, axis=1)[:, :self.k]
        repeated = y.reshape(-1, 1).repeat(self.k, axis=1)
        self._correct_num += np.equal(indices, repeated).sum(axis=1).sum()
        self._samples_num += repeated.shape[0]

    def eval(self):
        if self._samples_num == 0:
            raise _empty("TopKCategoricalAccuracy", "inputs (predicted value, true value)")
        return self._correct_num / self._samples_num


class Top1CategoricalAccuracy(TopKCategoricalAccuracy):
    """``TopKCategoricalAccuracy(1)``."""

    def __init__(self):
        super().__init__(1)


class Top5CategoricalAccuracy(TopKCategoricalAccuracy):
    """``TopKCategoricalAccuracy(5)``."""

    def __init__(self):
        super().__init__(5)
