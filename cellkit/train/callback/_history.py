"""``History``: the training loss and evaluation metrics per epoch, and their plots.

>>> from cellkit.train import History, RunContext
>>> h = History(); ctx = RunContext({"cur_epoch_num": 1, "net_outputs": 0.5, "metrics": {"acc": 0.75}})
>>> h.begin(ctx); h.epoch_end(ctx); h.history, h.epoch
({'net_output': [0.5], 'acc': [0.75]}, {'epoch': [1]})
"""

from __future__ import annotations

import jax
import numpy as np

from ...parameter import Parameter
from ._callback import Callback

__all__ = ["History"]


class History(Callback):
    """Record ``net_output`` (the last step's loss, the mean of a Tensor) and the metrics of each
    epoch (those ``Model.fit`` evaluated) in ``history``, the epoch numbers in ``epoch``."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = None

    def begin(self, run_context):
        self.epoch = {"epoch": []}

    def epoch_end(self, run_context):
        cb_params = run_context.original_args()
        self.epoch.get("epoch").append(cb_params.get("cur_epoch_num", 1))
        out = cb_params.get("net_outputs")
        if isinstance(out, (tuple, list)) and out and isinstance(out[0], (jax.Array, np.ndarray, Parameter)):
            out = out[0]
        if isinstance(out, (jax.Array, Parameter)) or (isinstance(out, np.ndarray) and out.ndim):
            out = np.mean(np.asarray(out))
        current = {"net_output": out}
        metrics = cb_params.get("metrics")
        if metrics:
            current.update(metrics)
        for k, v in current.items():
            self.history.setdefault(k, []).append(v)

    def plot(self, keys=None, figsize=None):
        """One matplotlib axis per recorded quantity (``keys``: which; default all) against the
        epoch; returns the Figure.

        >>> import matplotlib; matplotlib.use("Agg")
        >>> from cellkit.train import History
        >>> h = History(); h.epoch = {"epoch": [1, 2]}; h.history = {"net_output": [0.9, 0.4], "acc": [0.5, 0.8]}
        >>> [ax.get_title() for ax in h.plot().axes]
        ['loss', 'acc']
        """
        import matplotlib.pyplot as plt
        if not self.history:
            raise RuntimeError("History.plot: nothing recorded yet; pass the History to Model.train or Model.fit "
                               "first")
        keys = list(self.history) if keys is None else list(keys)
        missing = [k for k in keys if k not in self.history]
        if missing:
            raise KeyError(f"History.plot: no record of {missing}; recorded: {list(self.history)}")
        epochs = (self.epoch or {}).get("epoch") or list(range(1, len(self.history[keys[0]]) + 1))
        fig, axes = plt.subplots(1, len(keys), figsize=figsize or (4 * len(keys), 3), squeeze=False)
        for ax, key in zip(axes[0], keys):
            values = [float(np.asarray(v)) for v in self.history[key]]
            ax.plot(epochs[-len(values):], values, marker="o")
            ax.set_title("loss" if key == "net_output" else key)
            ax.set_xlabel("epoch")
            ax.grid(True, alpha=0.3)
        fig.tight_layout()
        plt.close(fig)
        return fig
