"""cellkit.runtime (streams, events, memory), cellkit.device_manager and cellkit.Profiler."""

import gc
import json
import os

import jax
import jax.numpy as jnp
import pytest

import cellkit as ms


def test_one_stream_synchronize_and_events():
    assert ms.current_stream() == ms.default_stream() == ms.Stream(priority=1) == ms.communication_stream()
    x = jnp.ones((64, 64))
    start, end = ms.Event(enable_timing=True), ms.Event(enable_timing=True)
    start.record()
    y = x @ x
    end.record(ms.current_stream())
    end.synchronize()
    assert y.is_ready() and end.query() and start.elapsed_time(end) >= 0
    with ms.StreamCtx(ms.Stream()) as s:
        assert isinstance(s, ms.Stream)
    ms.synchronize()
    assert ms.current_stream().query()
    event = ms.current_stream().record_event()
    assert event.query()


def test_stream_and_event_errors_name_the_argument():
    with pytest.raises(TypeError, match="Stream: priority must be an int"):
        ms.Stream(priority="high")
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        ms.Event().elapsed_time(ms.Event())
    with pytest.raises(RuntimeError, match="recorded first"):
        ms.Event(enable_timing=True).elapsed_time(ms.Event(enable_timing=True))
    with pytest.raises(TypeError, match="Stream.wait_event: event must be an Event"):
        ms.current_stream().wait_event(3)
    with pytest.raises(TypeError, match="StreamCtx: ctx_stream"):
        ms.StreamCtx(1)


def test_memory_figures_follow_live_arrays():
    ms.synchronize()
    ms.reset_peak_memory_stats()
    gc.collect()
    gc.disable()  # no other array is freed between the two readings
    try:
        before = ms.memory_allocated()
        big = jnp.zeros((1024, 256), jnp.float32).block_until_ready()
        during = ms.memory_allocated()
    finally:
        gc.enable()
    assert during - before >= big.nbytes or jax.default_backend() != "cpu"
    assert ms.max_memory_allocated() >= during
    del big
    ms.empty_cache()
    assert ms.max_memory_allocated() >= ms.memory_allocated()
    assert ms.memory_reserved() >= 0 and "bytes_in_use" in ms.memory_summary()


def test_set_device_and_errors():
    ms.set_device("CPU", 0)
    try:
        assert ms.get_current_device() == ("CPU", 0)
        assert jnp.ones(2).devices() == {jax.devices("cpu")[0]}
    finally:
        jax.config.update("jax_default_device", None)
    with pytest.raises(ValueError, match="device_target 'Ascend' is not available here"):
        ms.set_device("Ascend")
    with pytest.raises(ValueError, match="device_id 99 is out of range"):
        ms.set_device("CPU", 99)
    with pytest.raises(TypeError, match="device_target must be a str"):
        ms.set_device(0)


def test_set_deterministic_sets_the_xla_flag(monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "--xla_foo=1")
    ms.set_deterministic(True)
    assert "--xla_gpu_deterministic_ops=true" in os.environ["XLA_FLAGS"] and "--xla_foo=1" in os.environ["XLA_FLAGS"]
    assert ms.device_manager.get_deterministic() is True
    ms.set_deterministic(False)
    assert "deterministic" not in os.environ["XLA_FLAGS"]
    with pytest.raises(TypeError):
        ms.set_deterministic(1)


def test_profiler_writes_a_trace_and_metadata(tmp_path):
    prof = ms.Profiler(output_path=str(tmp_path))
    for _ in range(2):
        (jnp.ones(8) * 2).block_until_ready()
        prof.step()
    prof.add_metadata("run", 1)
    prof.analyse()
    traces = [f for _, _, files in os.walk(tmp_path) for f in files if f.endswith(".xplane.pb")]
    assert traces
    assert json.loads((tmp_path / "profiler_metadata.json").read_text()) == {"run": "1"}
    with pytest.raises(RuntimeError, match="not tracing"):
        prof.stop()
    with ms.Profiler(output_path=str(tmp_path / "b")):
        with pytest.raises(RuntimeError, match="another Profiler is tracing"):
            ms.Profiler(output_path=str(tmp_path / "c"))
