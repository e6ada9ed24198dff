"""``ROC`` curves and the area under a curve, ``auc``.

>>> import numpy as np
>>> from cellkit import train
>>> fpr, tpr, thr = train.ROC(pos_label=2)(np.array([1, 2, 3, 4]), np.array([1, 2, 2, 1]))
>>> fpr, tpr
(array([0. , 0.5, 0.5, 0.5, 1. ]), array([0. , 0. , 0.5, 1. , 1. ]))
>>> float(train.auc(fpr, tpr))
0.5
"""

from __future__ import annotations

import numpy as np

from .metric import Metric, binary_clf_curve, check_inputs, check_type, rearrange_inputs

__all__ = ["ROC", "auc"]


def _curve_update(y_pred, y, class_num, pos_label):
    if not (y_pred.ndim == y.ndim or y_pred.ndim == y.ndim + 1):
        raise ValueError("For 'ROC', predicted value (input[0]) and true value (input[1]) must have same "
                         "dimensions, or the dimension of predicted value equal the dimension of true value add 1, "
                         f"but got predicted value ndim: {y_pred.ndim}, true value ndim: {y.ndim}.")
    if y_pred.ndim == y.ndim:
        if class_num is not None and class_num != 1:
            raise ValueError("For 'ROC', when predicted value (input[0]) and true value (input[1]) have the same "
                             f"shape, the 'class_num' must be 1, but got {class_num}.")
        return y_pred.flatten(), y.flatten(), 1, 1 if pos_label is None else pos_label
    if pos_label is not None:
        raise ValueError("For 'ROC', when the dimension of predicted value (input[0]) equals the dimension of true "
                         f"value (input[1]) add 1, the 'pos_label' must be None, but got {pos_label}.")
    if class_num != y_pred.shape[1]:
        raise ValueError("For 'ROC', the 'class_num' must equal the number of classes from predicted value "
                         f"(input[0]), but got 'class_num' {class_num}, the number of classes from predicted value "
                         f"{y_pred.shape[1]}.")
    y_pred = y_pred.transpose(0, 1).reshape(class_num, -1).transpose(0, 1)
    return y_pred, y.flatten(), class_num, pos_label


class ROC(Metric):
    """Receiver operating characteristic: ``(fpr, tpr, thresholds)``, one curve per class when the
    predictions have a class axis (then ``class_num`` is required, ``pos_label`` None)."""

    def __init__(self, class_num=None, pos_label=None):
        super().__init__()
        self.class_num = class_num if class_num is None else check_type("class_num", class_num, [int], "ROC")
        self.pos_label = pos_label if pos_label is None else check_type("pos_label", pos_label, [int], "ROC")
        self.clear()

    def clear(self):
        self.y_pred = 0
        self.y = 0
        self.sample_weights = None
        self._is_update = False

    @rearrange_inputs
    def update(self, *inputs):
        check_inputs("ROC", inputs, 2)
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        self.y_pred, self.y, self.class_num, self.pos_label = _curve_update(y_pred, y, self.class_num,
                                                                            self.pos_label)
        self._is_update = True

    def _roc_eval(self, y_pred, y, class_num, pos_label, sample_weights=None):
        if class_num == 1:
            fps, tps, thresholds = binary_clf_curve(y_pred, y, sample_weights=sample_weights, pos_label=pos_label)
            tps = np.squeeze(np.hstack([np.zeros(1, dtype=tps.dtype), tps]))
            fps = np.squeeze(np.hstack([np.zeros(1, dtype=fps.dtype), fps]))
            thresholds = np.hstack([thresholds[0][None] + 1, thresholds])
            if fps[-1] <= 0:
                raise ValueError("For 'ROC.eval', there is no negative samples in true value, false positive value "
                                 "is meaningless.")
            if tps[-1] <= 0:
                raise ValueError("For 'ROC.eval', there is no positive samples in true value, true positive value "
                                 "is meaningless.")
            return fps / fps[-1], tps / tps[-1], thresholds
        fpr, tpr, thresholds = [], [], []
        for c in range(class_num):
            p, t, _, lab = _curve_update(y_pred[:, c], y, 1, c)
            res = self._roc_eval(p, t, 1, lab, sample_weights)
            fpr.append(res[0])
            tpr.append(res[1])
            thresholds.append(res[2])
        return fpr, tpr, thresholds

    def eval(self):
        if self._is_update is False:
            raise RuntimeError("Please call the 'update' method before calling 'eval' method.")
        return self._roc_eval(np.squeeze(self.y_pred), np.squeeze(self.y), self.class_num, self.pos_label)


def _column_or_1d(y):
    shape = np.shape(y)
    if len(shape) == 1 or (len(shape) == 2 and shape[1] == 1):
        return np.ravel(y)
    raise ValueError("For 'auc', the input must be a 1-dimensional array, or a 2-dimensional array with the second "
                     f"dimension of 1, but got shape {shape}.")


def auc(x, y, reorder=False):
    """The area under the curve through the points ``(x, y)`` by the trapezoidal rule; ``x`` must be
    monotonic unless ``reorder``."""
    if not isinstance(x, np.ndarray) or not isinstance(y, np.ndarray):
        raise TypeError(f"For 'auc', the argument 'x' and 'y' must all be np.ndarray, but got {type(x)}, {type(y)}")
    for a in (x, y):
        if a.ndim == 0:
            raise TypeError(f"Singleton array {a} cannot be considered as a valid collection.")
    if x.shape[0] != y.shape[0]:
        raise ValueError("Found input variables with inconsistent numbers of samples: "
                         f"{[int(x.shape[0]), int(y.shape[0])]}.")
    x, y = _column_or_1d(x), _column_or_1d(y)
    if x.shape[0] < 2:
        raise ValueError(f"For 'auc', the shape of the argument 'x' in axis 0 must be greater than 2, but got "
                         f"{x.shape[0]}.")
    direction = 1
    if reorder:
        order = np.lexsort((y, x))
        x, y = x[order], y[order]
    else:
        dx = np.diff(x)
        if np.any(dx < 0):
            if np.all(dx <= 0):
                direction = -1
            else:
                raise ValueError("For 'auc', if the argument is False, the argument 'x' array must be increasing "
                                 f"or decreasing, but got 'x': {x}")
    trapezoid = getattr(np, "trapezoid", None) or np.trapz
    return direction * trapezoid(y, x)
