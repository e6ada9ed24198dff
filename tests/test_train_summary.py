"""``train.SummaryRecord`` and the summary ops against MindSpore 2.10 (tests/fixtures/record/record_train_summary.py,
scenario in tests/fixtures/record/summary_cases.py): the event files read back with the right tags, steps and values."""

import builtins
import inspect
import os
import struct
import sys

import numpy as np
import pytest

import cellkit as ms
from cellkit import train
from ms_fixtures import ROOT, load

sys.path.insert(0, str(ROOT.parent / "record"))
from summary_cases import BAD_ARGS, ERRORS, scenario  # noqa: E402

pytest.importorskip("tensorboardX")
from tensorboardX.proto import event_pb2  # noqa: E402

REC = load("train_summary")


def read_events(path):
    """The events of a TensorBoard event file, each record's length and data checked against its CRC."""
    from tensorboardX.crc32c import crc32c

    def masked(data):
        crc = crc32c(data)
        return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF

    data, i, events = open(path, "rb").read(), 0, []
    while i < len(data):
        head = data[i:i + 8]
        (n,) = struct.unpack("<Q", head)
        assert struct.unpack("<I", data[i + 8:i + 12])[0] == masked(head)
        body = data[i + 12:i + 12 + n]
        assert struct.unpack("<I", data[i + 12 + n:i + 16 + n])[0] == masked(body)
        event = event_pb2.Event()
        event.ParseFromString(body)
        events.append(event)
        i += n + 16
    return events


def as_recorded(events):
    """The events in the recording's form: [(step, [(tag, kind, payload)])]."""
    out = []
    for event in events:
        if event.WhichOneof("what") != "summary":
            continue
        values = []
        for v in event.summary.value:
            if v.HasField("histo"):
                h = v.histo
                values.append([v.tag, "histogram", {"count": h.num, "min": h.min, "max": h.max, "sum": h.sum}])
            elif v.HasField("image"):
                values.append([v.tag, "image", {"height": v.image.height, "width": v.image.width}])
            elif v.HasField("tensor"):
                t = v.tensor
                dtype = {1: np.float32, 3: np.int32}[t.dtype]
                values.append([v.tag, "tensor", {"dims": [d.size for d in t.tensor_shape.dim],
                                                  "values": np.frombuffer(t.tensor_content, dtype).astype(float).tolist()}])
            else:
                values.append([v.tag, "scalar", v.simple_value])
        out.append([event.step, values])
    return out


def test_scenario_writes_mindspores_events(tmp_path):
    path = scenario(ms, train.SummaryRecord, str(tmp_path))
    assert os.listdir(tmp_path) == [os.path.basename(path)]
    events = read_events(path)
    assert events[0].file_version == "brain.Event:2"
    got, want = as_recorded(events), REC["scenario/events"]["output"]
    assert [step for step, _ in got] == [step for step, _ in want]
    for (step, values), (_, wvalues) in zip(got, want):
        assert [(t, k) for t, k, _ in values] == [(t, k) for t, k, _ in wvalues], step
        for (tag, kind, payload), (_, _, wpayload) in zip(values, wvalues):
            if kind == "tensor":
                assert payload["dims"] == wpayload["dims"] and payload["values"] == wpayload["values"], (step, tag)
            else:
                assert payload == pytest.approx(wpayload), (step, tag)


def test_file_name_follows_mindspore_with_tfevents(tmp_path):
    want = REC["scenario/file_name"]["output"]
    with train.SummaryRecord(str(tmp_path), file_prefix="run", file_suffix="_x") as record:
        got = os.path.basename(record.log_dir).split(".")
    assert want[:2] + ["tfevents"] + want[3:4] == ["events", "out", "tfevents", "summary"]
    assert got[:4] == ["run", "out", "tfevents", "summary"] and got[-1].endswith("_x") and got[5] == want[5]


def test_tensorboard_reads_the_file(tmp_path):
    event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    scenario(ms, train.SummaryRecord, str(tmp_path))
    acc = event_accumulator.EventAccumulator(str(tmp_path), size_guidance={"tensors": 0, "images": 0})
    acc.Reload()
    tags = acc.Tags()
    assert set(tags["scalars"]) == {"loss", "sum"} and set(tags["histograms"]) == {"hist", "weights"}
    assert set(tags["images"]) == {"img", "picture"} and set(tags["tensors"]) == {"ten", "bias"}
    want = {(step, tag): p for step, values in REC["scenario/events"]["output"] for tag, k, p in values if k == "scalar"}
    got = {(e.step, "sum"): e.value for e in acc.Scalars("sum")}
    assert got == pytest.approx({k: v for k, v in want.items() if k[1] == "sum"})
    assert [e.value for e in acc.Scalars("loss")] == [1.5, 2.5, 3.5]
    assert [e.step for e in acc.Tensors("ten")] == [1, 2, 5]


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_and_results_as_mindspore(name, tmp_path):
    want = REC[f"error/{name}"]
    with train.SummaryRecord(str(tmp_path)) as record:
        if "error" in want:
            with pytest.raises(getattr(builtins, want["error"])):
                ERRORS[name](record, ms)
        else:
            assert ERRORS[name](record, ms) == want["output"]


@pytest.mark.parametrize("name", sorted(BAD_ARGS) + ["log_dir_int"])
def test_constructor_refuses_as_mindspore(name, tmp_path):
    with pytest.raises(getattr(builtins, REC[f"args/{name}"]["error"])):
        if name == "log_dir_int":
            train.SummaryRecord(3)
        else:
            train.SummaryRecord(str(tmp_path), **BAD_ARGS[name])


def test_names_and_signature_are_mindspores():
    assert list(inspect.signature(train.SummaryRecord.__init__).parameters)[1:] == REC["signature"]["output"]
    assert all(hasattr(train.SummaryRecord, n) for n in REC["members"]["output"])
    assert all(hasattr(ms.ops, n) for n in REC["ops"]["output"])
    assert all(hasattr(train, n) for n in REC["train_names"]["output"] if n != "summary_pb2")
    assert ms.SummaryRecord is train.SummaryRecord
    from cellkit.train import SummaryRecord  # noqa: F401 - mindcv's package import


def test_summary_ops_inside_jit_and_grad(tmp_path):
    @ms.jit
    def step(x):
        ms.ops.ScalarSummary()("total", x.sum())
        return x * 2

    grad = ms.grad(lambda x: (ms.ops.HistogramSummary()("x", x), (x ** 2).sum())[1])
    with train.SummaryRecord(str(tmp_path)) as record:
        step(ms.Tensor([1.0, 2.0]))
        record.record(1)
        step(ms.Tensor([3.0, 2.0]))
        np.testing.assert_allclose(grad(ms.Tensor([1.0, 3.0])), [2.0, 6.0])
        record.record(2)
        path = record.log_dir
    got = as_recorded(read_events(path))
    assert got == [[1, [["total", "scalar", 3.0]]],
                   [2, [["total", "scalar", 5.0], ["x", "histogram", {"count": 2, "min": 1.0, "max": 3.0, "sum": 4.0}]]]]


def test_mindinsight_plugins_export_options_and_file_size(tmp_path):
    with train.SummaryRecord(str(tmp_path / "a")) as record:
        with pytest.raises(NotImplementedError, match="MindInsight"):
            record.add_value("graph", "g", ms.Tensor(1.0))
    with pytest.raises(NotImplementedError, match="export_options"):
        train.SummaryRecord(str(tmp_path / "b"), export_options={"tensor_format": "npy"})
    with train.SummaryRecord(str(tmp_path / "c"), max_file_size=1) as record:
        record.add_value("scalar", "loss", ms.Tensor(1.0))
        with pytest.warns(UserWarning, match="max_file_size"):
            record.record(1)
    with train.SummaryRecord(str(tmp_path / "d"), max_file_size=1, raise_exception=True) as record:
        record.add_value("scalar", "loss", ms.Tensor(1.0))
        with pytest.raises(RuntimeError, match="max_file_size"):
            record.record(1)


def test_missing_tensorboardx_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    with pytest.raises(ImportError, match="pip install tensorboardX"):
        train.SummaryRecord(str(tmp_path))


@pytest.mark.parametrize("name", ["default", "bias_every_3"])
def test_summary_collector_records_mindspores_steps_and_values(name, tmp_path):
    from summary_cases import collector_scenario
    import cellkit.dataset as ds
    collector_scenario(ms, ds, str(tmp_path), name)
    (path,) = [str(tmp_path / f) for f in os.listdir(tmp_path)]
    got, want = as_recorded(read_events(path)), REC[f"collector/{name}"]["output"]
    assert [s for s, _ in got] == [s for s, _ in want]
    for (step, values), (_, wvalues) in zip(got, want):
        assert [(t, k) for t, k, _ in values] == [(t, k) for t, k, _ in wvalues], step
        for (tag, _, payload), (_, _, wpayload) in zip(values, wvalues):
            assert payload == pytest.approx(wpayload, rel=1e-5, abs=1e-6), (step, tag)


def test_summary_collector_arguments():
    assert list(inspect.signature(train.SummaryCollector.__init__).parameters)[1:] == \
        REC["collector_signature"]["output"]
    with pytest.raises(ValueError, match="collect_freq"):
        train.SummaryCollector("x", collect_freq=0)
    with pytest.raises(ValueError, match="unknown keys"):
        train.SummaryCollector("x", collect_specified_data={"collect_everything": True})
    with pytest.raises(NotImplementedError, match="landscape"):
        train.SummaryCollector("x", collect_specified_data={"collect_landscape": {"landscape_size": 4}})


def test_summary_collector_records_input_images(tmp_path):
    import cellkit.dataset as ds
    net = ms.nn.SequentialCell([ms.nn.Flatten(), ms.nn.Dense(12, 2)])
    images = np.linspace(0, 1, 4 * 3 * 2 * 2, dtype=np.float32).reshape(4, 3, 2, 2)
    data = ds.NumpySlicesDataset((images, np.array([0, 1, 0, 1], np.int32)), ["x", "y"], shuffle=False).batch(2)
    model = train.Model(net, ms.nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                        ms.nn.SGD(net.trainable_params(), 0.1))
    model.train(1, data, callbacks=[train.SummaryCollector(str(tmp_path), collect_freq=1)])
    (path,) = [str(tmp_path / f) for f in os.listdir(tmp_path)]
    got = as_recorded(read_events(path))
    assert [s for s, _ in got] == [1, 2, 2]
    assert ["input_data/auto", "image", {"height": 2, "width": 2}] in got[0][1]
