"""``SummaryCollector``: record the loss, weight histograms, the first input image and the network's
summary ops during ``Model.train``, in a TensorBoard event file (``train.SummaryRecord``).

As in MindSpore, it records at the first step and every ``collect_freq`` steps (a second time at the
end of an epoch that ends on such a step): ``loss/auto`` (a scalar), ``<parameter>/auto`` histograms of the first five trainable
Parameters (or of those ``histogram_regular`` matches), ``input_data/auto`` (the first image of a
4-D input batch) and whatever the network's summary ops produced.
"""

from __future__ import annotations

import re

import numpy as np

from ...tensor import Tensor
from ..summary import SummaryRecord
from ._callback import Callback, handle_loss

__all__ = ["SummaryCollector"]

_DEFAULTS = {"collect_metric": True, "collect_graph": True, "collect_train_lineage": True,
             "collect_eval_lineage": True, "collect_input_data": True, "collect_dataset_graph": True,
             "histogram_regular": None, "collect_landscape": None}


class SummaryCollector(Callback):
    """Collect training summaries into ``summary_dir`` (see the module's description). The
    MindInsight-only collections (graphs, lineage, dataset graphs) are accepted and not written;
    ``collect_landscape`` and ``export_options`` are refused."""

    def __init__(self, summary_dir, collect_freq=10, num_process=32, collect_specified_data=None,
                 keep_default_action=True, custom_lineage_data=None, collect_tensor_freq=None,
                 max_file_size=None, export_options=None):
        super().__init__()
        if not isinstance(summary_dir, str) or not summary_dir:
            raise TypeError(f"SummaryCollector: summary_dir must be a non-empty str, got {summary_dir!r}")
        if isinstance(collect_freq, bool) or not isinstance(collect_freq, int) or collect_freq <= 0:
            raise ValueError(f"SummaryCollector: collect_freq must be a positive int, got {collect_freq!r}")
        if collect_specified_data is not None and not isinstance(collect_specified_data, dict):
            raise TypeError(f"SummaryCollector: collect_specified_data must be a dict, got "
                            f"{type(collect_specified_data).__name__}")
        unknown = set(collect_specified_data or {}) - set(_DEFAULTS)
        if unknown:
            raise ValueError(f"SummaryCollector: unknown keys in collect_specified_data: {sorted(unknown)}; "
                             f"expected some of {sorted(_DEFAULTS)}")
        base = dict(_DEFAULTS) if keep_default_action else {k: (None if k in ("histogram_regular",
                                                                             "collect_landscape") else False)
                                                             for k in _DEFAULTS}
        if not keep_default_action and collect_specified_data and "histogram_regular" not in collect_specified_data:
            base["histogram_regular"] = False
        self._collect = {**base, **(collect_specified_data or {})}
        if self._collect["collect_landscape"]:
            raise NotImplementedError("SummaryCollector: collect_landscape (MindInsight's loss landscape) is not "
                                      "supported by cellkit")
        if export_options is not None:
            raise NotImplementedError("SummaryCollector: export_options is not supported by cellkit")
        self.summary_dir, self.collect_freq = summary_dir, collect_freq
        self._max_file_size, self._record, self._last_step = max_file_size, None, None
        self.custom_lineage_data, self.collect_tensor_freq = custom_lineage_data, collect_tensor_freq

    def _parameters(self, cb_params):
        regular = self._collect["histogram_regular"]
        if regular is False:
            return []
        network = cb_params.get("train_network") or cb_params.get("network")
        params = list(network.trainable_params()) if network is not None else []
        if regular is None:
            return params[:5]
        return [p for p in params if re.match(regular, p.name)]

    def _collect_step(self, cb_params):
        if self._record is None:
            self._record = SummaryRecord(self.summary_dir, max_file_size=self._max_file_size)
        step = cb_params.cur_step_num
        if self._collect["collect_metric"]:
            loss = handle_loss(cb_params.get("net_outputs"))
            if isinstance(loss, float):
                self._record.add_value("scalar", "loss/auto", Tensor(np.float32(loss)))
        for p in self._parameters(cb_params):
            self._record.add_value("histogram", f"{p.name}/auto", p.value)
        element = cb_params.get("train_dataset_element")
        if self._collect["collect_input_data"] and element:
            first = np.asarray(element[0] if isinstance(element, (list, tuple)) else element)
            if first.ndim == 4:
                self._record.add_value("image", "input_data/auto", Tensor(first[:1]))
        self._record.record(step, train_network=cb_params.get("train_network"))
        self._last_step = step

    def on_train_step_end(self, run_context):
        cb_params = run_context.original_args()
        step = cb_params.cur_step_num
        if step == 1 or step % self.collect_freq == 0:
            self._collect_step(cb_params)

    def on_train_epoch_end(self, run_context):
        cb_params = run_context.original_args()
        if cb_params.cur_step_num % self.collect_freq == 0:  # MindSpore records such a step a second time
            self._collect_step(cb_params)

    def on_train_end(self, run_context):
        if self._record is not None:
            self._record.close()
            self._record = None
