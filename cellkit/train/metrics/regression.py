"""Metrics over values: ``MAE``, ``MSE``, ``Loss``, ``Perplexity``, ``Dice``, ``CosineSimilarity``.

>>> import numpy as np
>>> from cellkit import train
>>> round(float(train.MAE()(np.array([0.1, 0.2, 0.6, 0.9]), np.array([0.1, 0.25, 0.7, 0.9]))), 6)
0.0375
>>> m = train.Loss()
>>> m.clear(); m.update(np.array(0.5)); m.update(np.array([1.0, 2.0])); float(m.eval())
1.0
"""

from __future__ import annotations

import math

import numpy as np

from .metric import Metric, check_inputs, check_string, check_type, rearrange_inputs

__all__ = ["MAE", "MSE", "Loss", "Perplexity", "Dice", "CosineSimilarity"]


def _empty(name, what="inputs(predicted value, true value)"):
    return RuntimeError(f"The '{name}' can not be calculated, because the number of samples is 0, please check "
                        f"whether your {what} are empty, or has called update method before calling eval method.")


class _Error(Metric):
    _power = 1

    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self):
        self._error_sum = 0
        self._samples_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        check_inputs(type(self).__name__, inputs, 2)
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        diff = y.reshape(y_pred.shape) - y_pred
        err = np.abs(diff) if self._power == 1 else np.power(diff, 2)
        self._error_sum += err.sum()
        self._samples_num += y.shape[0]

    def eval(self):
        if self._samples_num == 0:
            raise _empty(type(self).__name__)
        return self._error_sum / self._samples_num


class MAE(_Error):
    """Mean absolute error: the summed absolute error over the number of samples (axis 0)."""


class MSE(_Error):
    """Mean squared error: the summed squared error over the number of samples (axis 0)."""

    _power = 2


class Loss(Metric):
    """The average of the losses given to ``update`` (each a scalar or a 1-D array, averaged first)."""

    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self):
        self._sum_loss = 0
        self._total_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        if len(inputs) != 1:
            raise ValueError(f"For 'Loss.update', it needs 1 input (loss), but got {len(inputs)}")
        loss = self._convert_data(inputs[0])
        if loss.ndim == 0:
            loss = loss.reshape(1)
        if loss.ndim != 1:
            raise ValueError(f"For 'Loss.update', the dimension of your input (loss) must be 1, but got {loss.ndim}.")
        self._sum_loss += loss.mean(-1)
        self._total_num += 1

    def eval(self):
        if self._total_num == 0:
            raise RuntimeError("The 'Loss' can not be calculated, because the number of samples is 0, please check "
                               "whether has called update method before calling eval method.")
        return self._sum_loss / self._total_num


class Perplexity(Metric):
    """``exp`` of the mean negative log-probability of the labels (probabilities ``(..., C)``).

    >>> import numpy as np
    >>> from cellkit import train
    >>> round(train.Perplexity()(np.array([[0.2, 0.5], [0.3, 0.1]]), np.array([1, 0])), 4)
    2.582
    """

    def __init__(self, ignore_label=None):
        super().__init__()
        self.ignore_label = None if ignore_label is None else check_type("ignore_label", ignore_label, [int])
        self.clear()

    def clear(self):
        self._sum_metric = 0.0
        self._num_inst = 0

    @rearrange_inputs
    def update(self, *inputs):
        check_inputs("Perplexity", inputs, 2, "predicted value, label")
        pred = self._convert_data(inputs[0])
        label = self._convert_data(inputs[1])
        if label.size != pred.size / pred.shape[-1]:
            raise RuntimeError("For 'Perplexity.update', predicted value (input[0]) and label (input[1]) should "
                               f"have the same shape, but got predicted value shape {pred.shape}, label shape "
                               f"{label.shape}.")
        label = label.reshape((label.size,))
        first = np.arange(label.shape[0])[:, None]
        pred = np.squeeze(pred[first, np.expand_dims(label.astype(int), axis=1)])
        num = 0
        if self.ignore_label is not None:
            ignore = (label == self.ignore_label).astype(pred.dtype)
            num -= np.sum(ignore)
            pred = pred * (1 - ignore) + ignore
        self._sum_metric -= np.sum(np.log(np.maximum(1e-10, pred)))
        self._num_inst += num + pred.size

    def eval(self):
        if self._num_inst == 0:
            raise RuntimeError("The 'Perplexity' can not be calculated, because the number of samples is 0, please "
                               "check whether the update method has been called before calling eval method.")
        return math.exp(self._sum_metric / self._num_inst)


class Dice(Metric):
    """The Dice coefficient ``2 |A.B| / (|A|^2 + |B|^2 + smooth)``, averaged over samples.

    >>> import numpy as np
    >>> from cellkit import train
    >>> round(train.Dice()(np.array([[0.2, 0.5], [0.3, 0.1]]), np.array([[0, 1], [1, 0]])), 4)
    0.3347
    """

    def __init__(self, smooth=1e-5):
        super().__init__()
        check_type("smooth", smooth, [float], "Dice")
        if smooth <= 0:
            raise ValueError(f"For 'Dice', the argument 'smooth' must be positive, but got {smooth}.")
        self.smooth = smooth
        self.clear()

    def clear(self):
        self._dice_coeff_sum = 0
        self._samples_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        check_inputs("Dice", inputs, 2)
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        self._samples_num += y.shape[0]
        if y_pred.shape != y.shape:
            raise ValueError("For 'Dice.update', predicted value (input[0]) and true value (input[1]) should have "
                             f"same shape, but got predicted value shape: {y_pred.shape}, true value shape: "
                             f"{y.shape}.")
        p, t = y_pred.flatten(), y.flatten()
        self._dice_coeff_sum += 2 * float(np.dot(p, t)) / float(np.dot(p, p) + np.dot(t, t) + self.smooth)

    def eval(self):
        if self._samples_num == 0:
            raise _empty("Dice coefficient")
        return self._dice_coeff_sum / float(self._samples_num)


class CosineSimilarity(Metric):
    """The pairwise similarity matrix of the rows of one input (``'cosine'`` or ``'dot'``).

    >>> import numpy as np
    >>> from cellkit import train
    >>> m = train.CosineSimilarity()
    >>> m.clear(); m.update(np.array([[1., 0.], [1., 1.]])); m.eval().round(4)
    array([[0.    , 0.7071],
           [0.7071, 0.    ]])
    """

    def __init__(self, similarity="cosine", reduction="none", zero_diagonal=True):
        super().__init__()
        self.similarity = check_string("similarity", similarity, ["dot", "cosine"], "CosineSimilarity")
        self.reduction = check_string("reduction", reduction, ["none", "sum", "mean"], "CosineSimilarity")
        self.zero_diagonal = check_type("zero_diagonal", zero_diagonal, [bool], "CosineSimilarity")
        self.clear()

    def clear(self):
        self.sqr_mtx_res = 0
        self._is_update = False

    @rearrange_inputs
    def update(self, inputs):
        data = self._convert_data(inputs)
        if self.similarity == "cosine":
            data = data / np.expand_dims(np.linalg.norm(data, ord=2, axis=1), 1)
        self.sqr_mtx_res = np.dot(data, data.transpose(1, 0))
        self._is_update = True

    def eval(self):
        if not self._is_update:
            raise RuntimeError("Please call the 'update' method before calling 'eval' method.")
        if self.zero_diagonal:
            np.fill_diagonal(self.sqr_mtx_res, 0)
        if self.reduction == "mean":
            self.sqr_mtx_res = np.mean(self.sqr_mtx_res, axis=-1)
        if self.reduction == "sum":
            self.sqr_mtx_res = np.sum(self.sqr_mtx_res, axis=-1)
        return self.sqr_mtx_res
