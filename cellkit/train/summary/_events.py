"""TensorBoard event files through ``tensorboardX``: one ``Summary`` proto per recorded step.

``tensorboardX`` (``pip install tensorboardX``) is imported when the first file is opened.
"""

from __future__ import annotations

import time

import numpy as np


def tensorboardx():
    try:
        import tensorboardX
        from tensorboardX import summary
        from tensorboardX.proto import event_pb2
        from tensorboardX.record_writer import RecordWriter
    except ImportError as e:
        raise ImportError("cellkit.train.SummaryRecord writes TensorBoard event files with the tensorboardX "
                          "package: pip install tensorboardX") from e
    return tensorboardX, summary, event_pb2, RecordWriter


def _tensor_value(summary, tag, value):
    from tensorboardX.proto.tensor_pb2 import TensorProto
    from tensorboardX.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboardX.proto.types_pb2 import DataType
    value = np.asarray(value)
    if value.dtype == np.bool_:
        value = value.astype(np.int32)
    kinds = {np.dtype(np.float16): DataType.DT_HALF, np.dtype(np.float32): DataType.DT_FLOAT,
             np.dtype(np.float64): DataType.DT_DOUBLE, np.dtype(np.int32): DataType.DT_INT32,
             np.dtype(np.int64): DataType.DT_INT64, np.dtype(np.uint8): DataType.DT_UINT8,
             np.dtype(np.int8): DataType.DT_INT8, np.dtype(np.int16): DataType.DT_INT16}
    if value.dtype not in kinds:
        value = value.astype(np.float32)
    proto = TensorProto(dtype=kinds[value.dtype], tensor_content=np.ascontiguousarray(value).tobytes(),
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=n) for n in value.shape]))
    meta = summary.SummaryMetadata(plugin_data=summary.SummaryMetadata.PluginData(plugin_name="tensors"))
    return summary.Summary.Value(tag=tag, tensor=proto, metadata=meta)


def summary_values(plugin: str, tag: str, value: np.ndarray) -> list:
    """The ``Summary.Value`` protos of one recorded value."""
    _, summary, _, _ = tensorboardx()
    value = np.asarray(value)
    if plugin == "scalar":
        return list(summary.scalar(tag, float(value.reshape(-1)[0])).value)
    if plugin == "histogram":
        return list(summary.histogram(tag, value.astype(np.float64).reshape(-1), bins="auto").value)
    if plugin == "image":
        return list(summary.image(tag, value, dataformats="NCHW").value)
    return [_tensor_value(summary, tag, value)]


class EventFile:
    """An event file: ``write(step, values)`` appends one event; ``size`` is the bytes written."""

    def __init__(self, path: str):
        _, self._summary, event_pb2, RecordWriter = tensorboardx()
        self._event_pb2 = event_pb2
        self._writer = RecordWriter(path)
        self.size = 0
        self._write(event_pb2.Event(wall_time=time.time(), file_version="brain.Event:2"))

    def _write(self, event):
        data = event.SerializeToString()
        self._writer.write(data)
        self.size += len(data) + 16  # TFRecord framing: length, its CRC, the data's CRC

    def write(self, step: int, values: list):
        summary_pb = self._summary.Summary(value=values)
        self._write(self._event_pb2.Event(wall_time=time.time(), step=step, summary=summary_pb))

    def flush(self):
        self._writer.flush()

    def close(self):
        self._writer.close()
