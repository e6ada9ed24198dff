"""``ConfusionMatrix`` and the metrics computed from one, ``ConfusionMatrixMetric``.

>>> import numpy as np
>>> from cellkit import train
>>> train.ConfusionMatrix(num_classes=2)(np.array([1, 0, 1, 0]), np.array([1, 0, 0, 1]))
array([[1., 1.],
       [1., 1.]])
>>> m = train.ConfusionMatrixMetric(metric_name="tpr")
>>> m(np.array([[[0], [1]], [[1], [0]]]), np.array([[[0], [1]], [[0], [1]]]))
array([0.5])
"""

from __future__ import annotations

import numpy as np

from .metric import Metric, check_inputs, check_string, check_type, rearrange_inputs

__all__ = ["ConfusionMatrix", "ConfusionMatrixMetric"]


class ConfusionMatrix(Metric):
    """Counts ``[true class, predicted class]``; ``normalize`` 'no_norm', 'target', 'prediction' or
    'all'; predictions of the labels' shape are thresholded at ``threshold`` when floating."""

    def __init__(self, num_classes, normalize="no_norm", threshold=0.5):
        super().__init__()
        self.num_classes = check_type("num_classes", num_classes, [int], "ConfusionMatrix")
        if normalize not in ["target", "prediction", "all", "no_norm"]:
            raise ValueError("For 'ConfusionMatrix', the argument 'normalize' must be in ['all', 'prediction', "
                             f"'label', 'no_norm'(None)], but got {normalize}.")
        self.normalize = normalize
        self.threshold = check_type("threshold", threshold, [float], "ConfusionMatrix")
        self.clear()

    def clear(self):
        self.confusion_matrix = np.zeros((self.num_classes, self.num_classes))
        self._is_update = False

    @rearrange_inputs
    def update(self, *inputs):
        check_inputs("ConfusionMatrix", inputs, 2)
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if not (y_pred.ndim == y.ndim or y_pred.ndim == y.ndim + 1):
            raise ValueError("For 'ConfusionMatrix.update', predicted value (input[0]) and true value (input[1]) "
                             "should have same dimensions, or the dimension of predicted value equals the dimension "
                             f"of true value add 1, but got predicted value ndim: {y_pred.ndim}, true value ndim: "
                             f"{y.ndim}.")
        if y_pred.ndim == y.ndim + 1:
            y_pred = np.argmax(y_pred, axis=1)
        if y_pred.ndim == y.ndim and y_pred.dtype in (np.float16, np.float32, np.float64):
            y_pred = (y_pred >= self.threshold).astype(int)
        n = self.num_classes
        trans = (y.reshape(-1) * n + y_pred.reshape(-1)).astype(int)
        self.confusion_matrix += np.bincount(trans, minlength=n ** 2).reshape(n, n)
        self._is_update = True

    def eval(self):
        if not self._is_update:
            raise RuntimeError("Please call the 'update' method before calling 'eval' method.")
        cm = self.confusion_matrix.astype(float)
        if self.normalize == "no_norm":
            return cm
        with np.errstate(invalid="ignore", divide="ignore"):
            matrix = {"target": lambda: cm / cm.sum(axis=1, keepdims=True),
                      "prediction": lambda: cm / cm.sum(axis=0, keepdims=True),
                      "all": lambda: cm / cm.sum()}[self.normalize]()
        matrix[np.isnan(matrix)] = 0
        return matrix


_METRIC_NAMES = {
    "tpr": ("sensitivity", "recall", "hit_rate", "true_positive_rate"),
    "tnr": ("specificity", "selectivity", "true_negative_rate"),
    "ppv": ("precision", "positive_predictive_value"),
    "npv": ("negative_predictive_value",),
    "fnr": ("miss_rate", "false_negative_rate"),
    "fpr": ("fall_out", "false_positive_rate"),
    "fdr": ("false_discovery_rate",),
    "for": ("false_omission_rate",),
    "pt": ("prevalence_threshold",),
    "ts": ("threat_score", "critical_success_index", "csi"),
    "acc": ("accuracy",),
    "ba": ("balanced_accuracy",),
    "f1": ("f1_score",),
    "mcc": ("matthews_correlation_coefficient",),
    "fm": ("fowlkes_mallows_index",),
    "bm": ("informedness", "bookmaker_informedness"),
    "mk": ("markedness", "deltap"),
}
_ALIAS = {alias: key for key, aliases in _METRIC_NAMES.items() for alias in (key, *aliases)}


def _safe_div(a, b):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1), np.nan)


def _ratio(metric, tp, fp, tn, fn):
    """(numerator, denominator) of a confusion-matrix metric."""
    p, n = tp + fn, fp + tn
    if metric in ("pt", "ba", "bm"):
        tpr, tnr = _safe_div(tp, p), _safe_div(tn, n)
        if metric == "pt":
            return np.sqrt(tpr * (1.0 - tnr)) + tnr - 1.0, tpr + tnr - 1.0
        return (tpr + tnr, 2.0) if metric == "ba" else (tpr + tnr - 1.0, 1.0)
    if metric == "fm":
        return np.sqrt(_safe_div(tp, tp + fp) * _safe_div(tp, p)), 1.0
    if metric == "mk":
        with np.errstate(invalid="ignore", divide="ignore"):
            return _safe_div(tp, tp + fp) + tn / (tn + fn) - 1.0, 1.0
    if metric == "mcc":
        return tp * tn - fp * fn, np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return {"tpr": (tp, p), "tnr": (tn, n), "ppv": (tp, tp + fp), "npv": (tn, tn + fn), "fnr": (fn, p),
            "fpr": (fp, n), "fdr": (fp, fp + tp), "for": (fn, fn + tn), "ts": (tp, tp + fn + fp),
            "acc": (tp + tn, p + n), "f1": (tp * 2.0, tp * 2.0 + fn + fp)}[metric]


def _compute_metric(metric_name, cm):
    metric = _ALIAS.get(metric_name.replace(" ", "_").lower())
    if metric is None:
        raise NotImplementedError("The metric is not implemented.")
    if cm.ndim == 1:
        cm = np.expand_dims(cm, 0)
    if cm.shape[-1] != 4:
        raise ValueError(f"For 'ConfusionMatrix', the size of the last dimension of confusion_matrix must be 4, but "
                         f"got {cm.shape[-1]}.")
    num, den = _ratio(metric, cm[..., 0], cm[..., 1], cm[..., 2], cm[..., 3])
    if isinstance(den, np.ndarray):
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den != 0, num / den, np.array(float("nan")))
    return num / den


def _get_confusion_matrix(y_pred, y, skip_channel=True):
    if not skip_channel:
        y = y[:, 1:] if y.shape[1] > 1 else y
        y_pred = y_pred[:, 1:] if y_pred.shape[1] > 1 else y_pred
    y, y_pred = y.astype(float), y_pred.astype(float)
    if y.shape != y_pred.shape:
        raise ValueError(f"For 'ConfusionMatrixMetric.update', the true value shape {y.shape} must equal the "
                         f"predicted value shape {y_pred.shape}.")
    b, c = y_pred.shape[:2]
    y_pred, y = y_pred.reshape(b, c, -1), y.reshape(b, c, -1)
    tp = (y_pred + y == 2).astype(float).sum(axis=2)
    tn = (y_pred + y == 0).astype(float).sum(axis=2)
    p = y.sum(axis=2)
    n = y.shape[-1] - p
    return np.stack([tp, n - tn, tn, p - tp], axis=-1)


def _reduce(chart, decrease="mean"):
    """(reduced chart, count of non-NaN entries) as MindSpore's ``decrease`` modes."""
    nans = np.isnan(chart)
    not_nans = (~nans).astype(float)
    chart = np.where(nans, 0, chart)

    def mean(axis):
        cnt = not_nans.sum(axis=axis)
        with np.errstate(invalid="ignore", divide="ignore"):
            return cnt, np.where(cnt > 0, chart.sum(axis=axis) / cnt, np.zeros(1, dtype=float))

    if decrease == "mean":
        cnt = not_nans.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            red = np.where(cnt > 0, chart.sum(axis=1) / cnt, np.zeros(1, dtype=float))
            cnt = (cnt > 0).astype(float).sum(axis=0)
            red = np.where(cnt > 0, red.sum(axis=0) / cnt, np.zeros(1, dtype=float))
        return red, cnt
    if decrease == "sum":
        return np.sum(chart, axis=(0, 1)), not_nans.sum(axis=(0, 1))
    if decrease in ("mean_batch", "mean_channel"):
        cnt, red = mean(0 if decrease == "mean_batch" else 1)
        return red, cnt
    if decrease in ("sum_batch", "sum_channel"):
        axis = 0 if decrease == "sum_batch" else 1
        return chart.sum(axis=axis), not_nans.sum(axis=axis)
    return chart, not_nans


class ConfusionMatrixMetric(Metric):
    """A metric (``metric_name``: 'sensitivity', 'precision', 'f1 score', ... 17 families with their
    aliases) from the per-class confusion matrix of binarised ``(N, C, ...)`` predictions; with
    ``calculation_method=True`` it is computed per sample and reduced by ``decrease``."""

    def __init__(self, skip_channel=True, metric_name="sensitivity", calculation_method=False, decrease="mean"):
        super().__init__()
        self.skip_channel = check_type("skip_channel", skip_channel, [bool], "ConfusionMatrixMetric")
        self.calculation_method = check_type("calculation_method", calculation_method, [bool],
                                             "ConfusionMatrixMetric")
        self.metric_name = check_type("metric_name", metric_name, [str], "ConfusionMatrixMetric")
        self.decrease = check_string("decrease", decrease, ["none", "mean", "sum", "mean_batch", "sum_batch",
                                                             "mean_channel", "sum_channel"], "ConfusionMatrixMetric")
        self.clear()

    def clear(self):
        self._total_num = 0
        self._class_num = 0
        self._total_tp = 0.0
        self._total_fp = 0.0
        self._total_tn = 0.0
        self._total_fn = 0.0

    @rearrange_inputs
    def update(self, *inputs):
        check_inputs("ConfusionMatrixMetric", inputs, 2)
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if not np.all(y.astype(np.uint8) == y):
            raise ValueError("For 'ConfusionMatrix.update', the true value (input[1]) must be a binarized ndarray.")
        if y_pred.ndim < 2:
            raise ValueError("For 'ConfusionMatrix.update', the predicted value (input[0]) must have at least 2 "
                             f"dimensions, but got {y_pred.ndim}.")
        per_sample = self.calculation_method and not (y_pred.ndim == 2 or (y_pred.ndim == 3 and y_pred.shape[-1] == 1))
        cm = _get_confusion_matrix(y_pred, y, self.skip_channel)
        if per_sample:
            score, not_nans = _reduce(_compute_metric(self.metric_name, cm), self.decrease)
            not_nans = int(not_nans.item())
            self._total_num += score.item() * not_nans
            self._class_num += not_nans
        else:
            cm, _ = _reduce(cm, "sum")
            self._total_tp += cm[0].item()
            self._total_fp += cm[1].item()
            self._total_tn += cm[2].item()
            self._total_fn += cm[3].item()

    def eval(self):
        if self.calculation_method and self._class_num:
            return self._total_num / self._class_num
        if self.calculation_method and not (self._total_tp + self._total_fp + self._total_tn + self._total_fn):
            raise RuntimeError("The 'ConfusionMatrixMetric' can not be calculated, because the number of samples "
                               "is 0, please check whether your inputs(predicted value, true value) are empty, or "
                               "has called update method before calling eval method.")
        cm = np.array([self._total_tp, self._total_fp, self._total_tn, self._total_fn])
        return _compute_metric(self.metric_name, cm)
