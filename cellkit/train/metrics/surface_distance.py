"""Segmentation distances: ``HausdorffDistance``, ``MeanSurfaceDistance``, ``RootMeanSquareDistance``.

Edges are the mask minus its binary erosion; distances are distance transforms
from ``scipy.ndimage`` (installed with JAX), imported when first used.

>>> import numpy as np
>>> from cellkit import train
>>> x = np.array([[3, 0, 1], [1, 3, 0], [1, 0, 2]])
>>> y = np.array([[0, 2, 1], [1, 2, 1], [0, 0, 1]])
>>> float(train.HausdorffDistance()(x, y, 0))
1.4142135623730951
>>> float(train.MeanSurfaceDistance(symmetric=False)(x, y, 0))
0.8047378541243649
"""

from __future__ import annotations


import numpy as np

from .metric import Metric, check_string, check_type, rearrange_inputs

__all__ = ["HausdorffDistance", "MeanSurfaceDistance", "RootMeanSquareDistance"]

_DISTANCES = ["euclidean", "chessboard", "taxicab"]


def _ndimage():
    from scipy import ndimage
    return ndimage


def _surface_distance(pred_edges, edges, metric):
    if not np.any(pred_edges):
        return np.array([])
    if not np.any(edges):
        dis = np.full(edges.shape, np.inf)
    elif metric == "euclidean":
        dis = _ndimage().distance_transform_edt(~edges)
    else:
        dis = _ndimage().distance_transform_cdt(~edges, metric=metric)
    return dis[pred_edges]


def _masks(name, inputs):
    if len(inputs) != 3:
        raise ValueError(f"For '{name}.update', it needs 3 inputs (predicted value, true value, label index), but "
                         f"got {len(inputs)}.")
    y_pred, y, label_idx = inputs
    if not isinstance(label_idx, (int, float)):
        raise (TypeError if name == "RootMeanSquareDistance" else ValueError)(
            f"For '{name}.update', the label index (input[2]) must be int or float, but got {type(label_idx)}.")
    if label_idx not in y_pred and label_idx not in y:
        raise ValueError(f"For '{name}.update', the label index (input[2]) must be in predicted value (input[0]) or "
                         f"true value (input[1]), but {label_idx} is not.")
    if y_pred.size == 0 or y_pred.shape != y.shape:
        raise ValueError(f"For '{name}.update', the size of predicted value (input[0]) and true value (input[1]) must "
                         "be greater than 0, in addition to that, predicted value and true value must have the same "
                         f"shape, but got predicted value size: {y_pred.size}, shape: {y_pred.shape}, true value "
                         f"size: {y.size}, shape: {y.shape}.")
    if y_pred.dtype != bool:
        y_pred = y_pred == label_idx
    if y.dtype != bool:
        y = y == label_idx
    return y_pred, y


def _edges(mask):
    return _ndimage().binary_erosion(mask) ^ mask


class HausdorffDistance(Metric):
    """The (``percentile``-th, ``directed`` or symmetric) Hausdorff distance between the edges of
    the two masks ``== label index``; ``crop`` first cuts both to the bounding box of their union."""

    def __init__(self, distance_metric="euclidean", percentile=None, directed=False, crop=True):
        super().__init__()
        self.distance_metric = check_string("distance_metric", distance_metric, _DISTANCES, "HausdorffDistance")
        self.percentile = percentile if percentile is None else check_type("percentile", percentile, [float],
                                                                            "HausdorffDistance")
        self.directed = directed if directed is None else check_type("directed", directed, [bool],
                                                                      "HausdorffDistance")
        self.crop = crop if crop is None else check_type("crop", crop, [bool], "HausdorffDistance")
        self.clear()

    def clear(self):
        self.y_pred_edges = 0
        self.y_edges = 0
        self._is_update = False

    def _percent_distance(self, pred_edges, edges):
        dist = _surface_distance(pred_edges, edges, self.distance_metric)
        if dist.shape == (0,):
            return np.inf
        if not self.percentile:
            return dist.max()
        if 0 <= self.percentile <= 100:
            return np.percentile(dist, self.percentile)
        raise ValueError("For 'HausdorffDistance', the value of the argument 'percentile' must be [0, 100], but "
                         f"got {self.percentile}.")

    def _crop(self, y_pred, y):
        union = y_pred | y
        nonzero = np.nonzero(union)
        box = tuple(slice(max(0, int(np.min(i))), min(union.shape[d], int(np.max(i)) + 1))
                    for d, i in enumerate(nonzero))
        return np.squeeze(y_pred[box]), np.squeeze(y[box])

    @rearrange_inputs
    def update(self, *inputs):
        self._is_update = True
        inputs = (self._convert_data(inputs[0]), self._convert_data(inputs[1]), *inputs[2:]) \
            if len(inputs) == 3 else inputs
        y_pred, y = _masks("HausdorffDistance", inputs)
        if self.crop:
            if not np.any(y_pred | y):
                self.y_pred_edges, self.y_edges = np.zeros_like(y_pred), np.zeros_like(y)
                return
            y_pred, y = self._crop(y_pred, y)
        self.y_pred_edges, self.y_edges = _edges(y_pred), _edges(y)

    def eval(self):
        if self._is_update is False:
            raise RuntimeError("Please call the 'update' method before calling 'eval' method.")
        hd = self._percent_distance(self.y_pred_edges, self.y_edges)
        if self.directed:
            return hd
        return max(hd, self._percent_distance(self.y_edges, self.y_pred_edges))


class _SurfaceMetric(Metric):
    def __init__(self, symmetric=False, distance_metric="euclidean"):
        super().__init__()
        name = type(self).__name__
        self.distance_metric_list = list(_DISTANCES)
        self.distance_metric = check_string("distance_metric", distance_metric, _DISTANCES, name)
        self.symmetric = check_type("symmetric", symmetric, [bool], name)
        self.clear()

    def clear(self):
        self._y_pred_edges = 0
        self._y_edges = 0
        self._is_update = False

    @rearrange_inputs
    def update(self, *inputs):
        inputs = (self._convert_data(inputs[0]), self._convert_data(inputs[1]), *inputs[2:]) \
            if len(inputs) == 3 else inputs
        y_pred, y = _masks(type(self).__name__, inputs)
        self._y_pred_edges, self._y_edges = _edges(y_pred), _edges(y)
        self._is_update = True

    def eval(self):
        if self._is_update is False:
            raise RuntimeError("Please call the 'update' method before calling 'eval' method.")
        d = _surface_distance(self._y_pred_edges, self._y_edges, self.distance_metric)
        if d.shape == (0,):
            return np.inf
        one = self._reduce(d)
        if not self.symmetric:
            return one
        d2 = _surface_distance(self._y_edges, self._y_pred_edges, self.distance_metric)
        if d2.shape == (0,):
            return np.inf
        return self._combine(one, self._reduce(d2))


class MeanSurfaceDistance(_SurfaceMetric):
    """The mean distance from the predicted edge to the true edge (averaged both ways if ``symmetric``)."""

    @staticmethod
    def _reduce(d):
        return d.mean()

    @staticmethod
    def _combine(a, b):
        return np.mean((a, b))


class RootMeanSquareDistance(_SurfaceMetric):
    """The mean squared edge distance (the root of both ways' mean if ``symmetric``, as MindSpore)."""

    @staticmethod
    def _reduce(d):
        return (d ** 2).mean()

    @staticmethod
    def _combine(a, b):
        return np.sqrt(np.mean((a, b)))


