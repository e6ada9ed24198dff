"""MindSpore's ``mindspore.runtime``: streams, events and device memory, on JAX's runtime.

JAX runs each device's work on one stream that it manages itself: operations are
dispatched asynchronously and an array is ready when its computation is. So
here there is one stream per process, ``current_stream()`` is
``default_stream()``, a ``StreamCtx`` changes nothing, and synchronising means
waiting for every live array. Events record the moment all work dispatched so
far has finished, which is what ``Event.elapsed_time`` needs.

Memory: where the backend reports statistics (GPU, TPU) the figures are the
device allocator's (``bytes_in_use``, ``peak_bytes_in_use``, ``bytes_reserved``
or ``bytes_limit``). The CPU backend has none: there ``memory_allocated`` is the
bytes of the live arrays, and the peak is the largest value seen by these
functions since the last reset.

>>> import cellkit as ms
>>> x = ms.ops.ones((256,), ms.float32)
>>> ms.runtime.synchronize()
>>> ms.runtime.memory_allocated() >= 1024
True
>>> start, end = ms.runtime.Event(enable_timing=True), ms.runtime.Event(enable_timing=True)
>>> start.record(); y = x * 2; end.record(); end.synchronize()
>>> end.elapsed_time(start) <= 0 <= start.elapsed_time(end)
True
"""

from __future__ import annotations

import gc
import time

import jax

__all__ = ["Stream", "StreamCtx", "Event", "current_stream", "default_stream", "communication_stream",
           "set_cur_stream", "synchronize", "empty_cache", "memory_allocated", "max_memory_allocated",
           "memory_reserved", "max_memory_reserved", "memory_stats", "memory_summary",
           "reset_peak_memory_stats", "reset_max_memory_allocated", "reset_max_memory_reserved"]


def synchronize() -> None:
    """Wait until every computation dispatched so far has finished."""
    jax.effects_barrier()
    jax.block_until_ready(jax.live_arrays())


class Stream:
    """The device's stream. JAX keeps one per device and orders work on it itself, so every
    ``Stream`` is that one: ``priority`` is accepted and recorded."""

    def __init__(self, priority=0, **kwargs):
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise TypeError(f"Stream: priority must be an int, got {type(priority).__name__}")
        self.priority = priority

    def synchronize(self) -> None:
        """Wait for all work dispatched so far."""
        synchronize()

    def query(self) -> bool:
        """Whether all work dispatched so far has finished."""
        return all(a.is_ready() for a in jax.live_arrays())

    def wait_event(self, event) -> None:
        """Work after this call runs after ``event``: always true on one stream."""
        _check_event(event, "Stream.wait_event")

    def wait_stream(self, stream) -> None:
        """Work after this call runs after ``stream``'s: always true on one stream."""
        if not isinstance(stream, Stream):
            raise TypeError(f"Stream.wait_stream: stream must be a Stream, got {type(stream).__name__}")

    def record_event(self, event=None):
        """Record ``event`` (a new one if None) on this stream and return it."""
        event = Event() if event is None else _check_event(event, "Stream.record_event")
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream)

    def __hash__(self):
        return hash(Stream)

    def __repr__(self):
        return f"Stream(device={jax.devices()[0].platform}, priority={self.priority})"


_DEFAULT = Stream()


def current_stream() -> Stream:
    """The stream work is dispatched to (the one stream)."""
    return _DEFAULT


def default_stream() -> Stream:
    """The default stream (the one stream)."""
    return _DEFAULT


def communication_stream() -> Stream:
    """The stream collectives run on: JAX orders them on the same one."""
    return _DEFAULT


def set_cur_stream(stream) -> None:
    """Make ``stream`` current: there is one stream, so nothing changes."""
    if not isinstance(stream, Stream):
        raise TypeError(f"set_cur_stream: stream must be a Stream, got {type(stream).__name__}")


class StreamCtx:
    """``with StreamCtx(stream):`` runs its block on ``stream`` (the one stream)."""

    def __init__(self, ctx_stream):
        if ctx_stream is not None and not isinstance(ctx_stream, Stream):
            raise TypeError(f"StreamCtx: ctx_stream must be a Stream or None, got {type(ctx_stream).__name__}")
        self.stream = ctx_stream

    def __enter__(self):
        return self.stream

    def __exit__(self, *exc):
        return False


def _check_event(event, where):
    if not isinstance(event, Event):
        raise TypeError(f"{where}: event must be an Event, got {type(event).__name__}")
    return event


class Event:
    """A point in the stream: ``record()`` marks it once all work dispatched so far is done.

    ``elapsed_time(end)`` is the milliseconds from this event to ``end`` (both recorded, made
    with ``enable_timing=True``).
    """

    def __init__(self, enable_timing=False, blocking=False):
        self.enable_timing = bool(enable_timing)
        self.blocking = bool(blocking)
        self._time = None

    def record(self, stream=None) -> None:
        if stream is not None and not isinstance(stream, Stream):
            raise TypeError(f"Event.record: stream must be a Stream or None, got {type(stream).__name__}")
        synchronize()
        self._time = time.perf_counter()

    def synchronize(self) -> None:
        """Wait for the work before the recorded point (already done when ``record`` returned)."""

    def query(self) -> bool:
        return self._time is not None

    def wait(self, stream=None) -> None:
        """Make ``stream``'s later work wait for this event: always true on one stream."""

    def elapsed_time(self, end_event) -> float:
        _check_event(end_event, "Event.elapsed_time")
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Event.elapsed_time: both events must be made with enable_timing=True")
        if self._time is None or end_event._time is None:
            raise RuntimeError("Event.elapsed_time: both events must be recorded first (Event.record())")
        return (end_event._time - self._time) * 1e3


# ----- memory ------------------------------------------------------------------------------

_peak = {"allocated": 0, "reserved": 0}


def _stats():
    try:
        return jax.devices()[0].memory_stats() or None
    except Exception:  # noqa: BLE001 (a backend without statistics)
        return None


def memory_stats() -> dict:
    """The device allocator's statistics, or (CPU) the live arrays' bytes and the peak seen."""
    stats = _stats()
    if stats is not None:
        return dict(stats)
    used = sum(a.nbytes for a in jax.live_arrays())
    _peak["allocated"] = max(_peak["allocated"], used)
    _peak["reserved"] = max(_peak["reserved"], used)
    return {"bytes_in_use": used, "peak_bytes_in_use": _peak["allocated"], "bytes_reserved": used,
            "peak_bytes_reserved": _peak["reserved"]}


def memory_allocated() -> int:
    """Bytes held by arrays on the device now."""
    return int(memory_stats().get("bytes_in_use", 0))


def max_memory_allocated() -> int:
    """The most bytes held by arrays since the start or the last reset."""
    stats = memory_stats()
    return int(stats.get("peak_bytes_in_use", stats.get("bytes_in_use", 0)))


def memory_reserved() -> int:
    """Bytes the allocator holds (in use or cached)."""
    stats = memory_stats()
    return int(stats.get("bytes_reserved", stats.get("pool_bytes", stats.get("bytes_in_use", 0))))


def max_memory_reserved() -> int:
    """The most bytes the allocator held since the start or the last reset."""
    stats = memory_stats()
    return int(stats.get("peak_bytes_reserved", stats.get("peak_pool_bytes", memory_reserved())))


def reset_peak_memory_stats() -> None:
    """Start the peaks again from now (the CPU figures; a device allocator keeps its own)."""
    _peak["allocated"] = _peak["reserved"] = 0


reset_max_memory_allocated = reset_peak_memory_stats
reset_max_memory_reserved = reset_peak_memory_stats


def memory_summary() -> str:
    """The statistics as text, one per line."""
    return "\n".join(f"{k}: {v}" for k, v in sorted(memory_stats().items()))


def empty_cache() -> None:
    """Free what nothing refers to any more. XLA's allocator gives cached blocks back on its own;
    this collects dead Python references so their buffers are released now."""
    gc.collect()
