"""``SummaryRecord``: MindSpore's summary writer, writing TensorBoard event files.

Values come from ``add_value`` and from the summary Primitives (``ops.ScalarSummary``,
``ImageSummary``, ``TensorSummary``, ``HistogramSummary``) called since the last ``record``;
``record(step)`` writes them as one event of that step. The file is a TensorBoard event file
(``tensorboard --logdir DIR`` shows it), written with the ``tensorboardX`` package.

>>> import tempfile
>>> import cellkit as ms
>>> from cellkit.train import SummaryRecord
>>> with SummaryRecord(tempfile.mkdtemp()) as summary:
...     summary.add_value("scalar", "loss", ms.Tensor(0.5))
...     summary.record(1)
True
"""

from __future__ import annotations

import os
import socket
import time
import warnings

import jax
import numpy as np

from ...ops.operations.debug_ops import take_summaries
from ...parameter import Parameter
from ._events import EventFile, summary_values, tensorboardx

__all__ = ["SummaryRecord"]

_PLUGINS = ("tensor", "scalar", "image", "histogram", "train_lineage", "eval_lineage", "dataset_graph",
            "custom_lineage_data", "graph", "landscape")
_ORDER = ("scalar", "histogram", "tensor", "image")
_MINDINSIGHT_ONLY = ("train_lineage", "eval_lineage", "dataset_graph", "custom_lineage_data", "graph", "landscape")


def _check_value(plugin, value):
    if isinstance(value, Parameter):
        value = value.value
    if not isinstance(value, jax.Array):
        raise TypeError(f'For "SummaryRecord", the parameter "value" expect to be Tensor, but got '
                        f"{type(value).__name__}")
    value = np.asarray(value)
    if plugin == "scalar" and value.size != 1:
        raise ValueError(f'For "SummaryRecord", a scalar value must hold one element, got shape {value.shape}')
    if plugin == "image" and value.ndim != 4:
        raise ValueError(f'For "SummaryRecord", the tensor seems not to hold a valid image: an image value is '
                         f"a batch of shape (N, C, H, W), got shape {value.shape}")
    return value


class SummaryRecord:
    """Write summary values to a TensorBoard event file in ``log_dir``.

    The file is ``<file_prefix>.out.tfevents.summary.<time>.0.<host><file_suffix>`` (MindSpore writes
    ``...out.events.summary...`` in MindInsight's format; TensorBoard reads files named
    ``*tfevents*``). ``network`` is accepted; the network's graph is not written. ``max_file_size``
    (bytes) stops the writing, with a warning, once the file is that large. ``export_options`` is not
    supported.
    """

    def __init__(self, log_dir, file_prefix="events", file_suffix="_MS", num_process=32, network=None,
                 max_file_size=None, raise_exception=False, export_options=None):
        if not isinstance(log_dir, str) or not log_dir:
            raise TypeError(f"SummaryRecord: the log_dir is invalid, the type should be a non-empty string, got "
                            f"{log_dir!r}")
        if not isinstance(file_prefix, str) or not isinstance(file_suffix, str):
            raise TypeError(f"For 'SummaryRecord', `file_prefix` and `file_suffix` should be str, but got types "
                            f"{type(file_prefix).__name__} and {type(file_suffix).__name__}")
        if max_file_size is not None and (isinstance(max_file_size, bool) or not isinstance(max_file_size, int)):
            raise TypeError(f"SummaryRecord: max_file_size must be an int (bytes) or None, got {max_file_size!r}")
        if not isinstance(raise_exception, bool):
            raise TypeError(f"SummaryRecord: raise_exception must be a bool, got {raise_exception!r}")
        if export_options is not None:
            raise NotImplementedError("SummaryRecord: export_options is not supported by cellkit; save the values "
                                      "you want as files yourself (e.g. numpy.save in a callback)")
        tensorboardx()  # a clear ImportError now rather than at the first record
        os.makedirs(log_dir, exist_ok=True)
        name = f"{file_prefix}.out.tfevents.summary.{int(time.time())}.0.{socket.gethostname()}{file_suffix}"
        self._path = os.path.realpath(os.path.join(log_dir, name))
        self._file = EventFile(self._path)
        self._max_file_size = max_file_size
        self._raise_exception = raise_exception
        self._pending = []
        self._mode = "train"
        self._closed = False
        self.network = network
        take_summaries()  # what the summary ops kept before this record was opened is not its data

    @property
    def log_dir(self) -> str:
        """The path of the event file (as MindSpore's ``log_dir`` gives it)."""
        return self._path

    @property
    def count(self) -> int:
        """The number of event files written."""
        return 1

    def set_mode(self, mode):
        """``'train'`` or ``'eval'``: the phase the values belong to."""
        if mode not in ("train", "eval"):
            raise ValueError(f'For "SummaryRecord.set_mode", {mode!r} is not a recognized mode, expect the '
                             'parameter "mode" is "train" or "eval"')
        self._mode = mode

    def add_value(self, plugin, name, value):
        """Keep ``value`` (a Tensor) under the tag ``name`` for the next ``record``. ``plugin`` is
        ``'scalar'`` (one element), ``'image'`` (a batch, NCHW), ``'histogram'`` or ``'tensor'``."""
        if plugin not in _PLUGINS:
            raise ValueError(f'For "SummaryRecord.add_value", no such "plugin" of {plugin!r}, expect value is one '
                             f"of {list(_PLUGINS)}")
        if plugin in _MINDINSIGHT_ONLY:
            raise NotImplementedError(f"SummaryRecord.add_value: the {plugin!r} plugin is MindInsight's (graphs, "
                                      "lineage, landscapes) and has no TensorBoard form; record scalars, images, "
                                      "histograms or tensors")
        if not isinstance(name, str) or not name:
            raise ValueError(f'For "SummaryRecord", the parameter "name" should be a non-empty str, got {name!r}')
        self._pending.append((plugin, name, _check_value(plugin, value)))

    def record(self, step, train_network=None, plugin_filter=None):
        """Write the values added and summarized since the last record as the event of ``step``;
        ``plugin_filter(plugin)`` chooses which kinds to write. Returns True."""
        if isinstance(step, bool) or not isinstance(step, int):
            raise TypeError(f"The type of 'step' should be 'int', but got type '{type(step).__name__}'.")
        if self._closed:
            raise RuntimeError("SummaryRecord.record: the SummaryRecord is closed")
        items = self._pending + [(p, tag, v) for tag, (p, v) in take_summaries().items()]
        self._pending = []
        if plugin_filter is not None:
            items = [it for it in items if plugin_filter(it[0])]
        items.sort(key=lambda it: _ORDER.index(it[0]))  # MindSpore's order: scalars, histograms, tensors, images
        values = []
        for plugin, tag, value in items:
            if plugin == "scalar" and np.asarray(value).size != 1:
                warnings.warn(f"SummaryRecord: the scalar {tag!r} holds {np.asarray(value).size} elements; "
                              "it is not written", stacklevel=2)
                continue
            values += summary_values(plugin, tag, value)
        if values:
            if self._max_file_size is not None and self._file.size >= self._max_file_size:
                message = (f"SummaryRecord: {self._path} has reached max_file_size ({self._max_file_size} "
                           "bytes); step {step} is not written")
                if self._raise_exception:
                    raise RuntimeError(message)
                warnings.warn(message, stacklevel=2)
            else:
                self._file.write(step, values)
        return True

    def flush(self):
        """Write what is buffered to disk."""
        if not self._closed:
            self._file.flush()

    def close(self):
        """Flush and close the file (again: nothing)."""
        if not self._closed:
            self._file.flush()
            self._file.close()
            self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
