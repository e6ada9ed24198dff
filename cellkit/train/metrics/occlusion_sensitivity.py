"""``OcclusionSensitivity``: how a model's score for the label drops when patches of the input are masked.

>>> import numpy as np
>>> import cellkit as ms
>>> from cellkit import nn, train
>>> net = nn.Dense(4, 2, weight_init="ones", bias_init="zeros")
>>> x = np.array([[1., 2., 3., 4.]], np.float32)
>>> train.OcclusionSensitivity(margin=1)(net, x, np.array([1])).round(2)
array([1., 3., 5., 7.], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from ...cell import Cell
from .metric import Metric, check_type, rearrange_inputs

__all__ = ["OcclusionSensitivity"]


def _bounding_box(b_box, im_shape):
    if b_box is None:
        return None, None
    if len(b_box) != 2 * len(im_shape):
        raise ValueError("For 'OcclusionSensitivity', the bounding box must contain upper and lower for all "
                         "dimensions (except batch number), and the length of 'b_box' must be twice as long as "
                         f"predicted value's (except batch number), but got 'b_box' length {len(b_box)}, "
                         f"predicted value length (except batch number) {len(im_shape)}.")
    lo, hi = np.array(b_box[::2]), np.array(b_box[1::2])
    lo[lo < 0] = 0
    hi[hi < 0] = im_shape[hi < 0] - 1
    if np.any(hi >= im_shape):
        raise ValueError("For 'OcclusionSensitivity', maximum bounding box must be smaller than image size for all "
                         "values.")
    if np.any(lo > hi):
        raise ValueError("For 'OcclusionSensitivity', minimum bounding box must be smaller than maximum bounding box "
                         "for all values.")
    return lo, hi


class OcclusionSensitivity(Metric):
    """``update(model, x, label)`` with one sample ``x``: for every position, the baseline score of
    ``label`` minus the score with a ``margin``-wide patch around it set to ``pad_val``; the
    occluded copies go through ``model`` ``n_batch`` at a time."""

    def __init__(self, pad_val=0.0, margin=2, n_batch=128, b_box=None):
        super().__init__()
        self.pad_val = check_type("pad_val", pad_val, [float], "OcclusionSensitivity")
        self.margin = check_type("margin", margin, [int, list], "OcclusionSensitivity")
        self.n_batch = check_type("n_batch", n_batch, [int], "OcclusionSensitivity")
        self.b_box = b_box if b_box is None else check_type("b_box", b_box, [list], "OcclusionSensitivity")
        self.clear()

    def clear(self):
        self._baseline = 0
        self._sensitivity_im = 0
        self._is_update = False

    @rearrange_inputs
    def update(self, *inputs):
        if len(inputs) != 3:
            raise ValueError("For 'OcclusionSensitivity.update', it needs 3 inputs (classification model, predicted "
                             f"value, label), but got {len(inputs)}.")
        model = inputs[0]
        if not isinstance(model, Cell):
            raise TypeError(f"For 'OcclusionSensitivity.update', the model (input[0]) must be a Cell, but got "
                            f"{type(model).__name__}.")
        y_pred = self._convert_data(inputs[1])
        label = inputs[2] if isinstance(inputs[2], int) else self._convert_data(inputs[2])
        if y_pred.shape[0] > 1:
            raise RuntimeError("For 'OcclusionSensitivity.update', the shape at index 0 of the predicted value "
                               f"(input[1]) must be 1, but got {y_pred.shape[0]}.")
        if isinstance(label, int):
            label = np.array([[label]], dtype=int)
        elif np.prod(label.shape) != y_pred.shape[0]:
            raise RuntimeError("For 'OcclusionSensitivity.update', the number of the label (input[2]) must be same "
                               f"as the batches, but got the label number {np.prod(label.shape)}, and batches "
                               f"{y_pred.shape[0]}.")
        label = int(np.asarray(label).reshape(-1)[0])
        shape = np.array(y_pred.shape[1:])
        lo, hi = _bounding_box(self.b_box, shape)
        self._baseline = np.asarray(model(y_pred))[0, label].item()
        out_shape = shape if self.b_box is None else hi - lo + 1
        total = int(np.prod(out_shape))
        images, scores = [], []
        for i in range(total):
            idx = np.unravel_index(i, out_shape)
            if lo is not None:
                idx += lo
            low = [max(0, k - self.margin) for k in idx]
            high = [min(j, k + self.margin) for k, j in zip(idx, shape)]
            occluded = y_pred.copy()
            occluded[(...,) + tuple(slice(a, b) for a, b in zip(low, high))] = self.pad_val
            images.append(occluded)
            if len(images) == self.n_batch or i == total - 1:
                out = np.asarray(model(np.vstack(images)))
                scores.append(out[:, label:label + 1])
                images = []
        self._sensitivity_im = np.vstack(scores).reshape(out_shape)
        self._is_update = True

    def eval(self):
        if not self._is_update:
            raise RuntimeError("Please call the 'update' method before calling 'eval' method.")
        return self._baseline - np.squeeze(self._sensitivity_im)
