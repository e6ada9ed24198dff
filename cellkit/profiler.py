"""MindSpore's ``Profiler`` over JAX's profiler: a trace of what ran, for TensorBoard or Perfetto.

``Profiler(output_path="./data")`` starts tracing (unless ``start_profile=False``);
``stop()`` ends it and writes the trace under ``output_path`` (``jax.profiler``'s
``plugins/profile/<run>/*.xplane.pb``, which TensorBoard's profile plugin and
``xprof`` read). ``step()`` marks a training step (``StepTraceAnnotation``),
``analyse()`` stops tracing if it still runs (the trace needs no separate
analysis pass), ``add_metadata`` keeps key/value pairs written beside the trace
as ``profiler_metadata.json``. It is a context manager too.

>>> import tempfile
>>> import cellkit as ms
>>> with ms.Profiler(output_path=tempfile.mkdtemp()) as prof:
...     _ = ms.ops.ones((4,)) * 2
...     prof.step()
"""

from __future__ import annotations

import json
import os

import jax

__all__ = ["Profiler"]

_active = [None]


class Profiler:
    def __init__(self, output_path="./data", start_profile=True, **kwargs):
        if not isinstance(output_path, (str, os.PathLike)):
            raise TypeError(f"Profiler: output_path must be a str or path, got {type(output_path).__name__}")
        self.output_path = os.path.abspath(os.fspath(output_path))
        self.options = kwargs
        self._metadata = {}
        self._step = 0
        self._step_ctx = None
        self._running = False
        if start_profile:
            self.start()

    def start(self) -> None:
        """Start tracing (one Profiler traces at a time)."""
        if self._running:
            return
        if _active[0] is not None:
            raise RuntimeError("Profiler.start: another Profiler is tracing; stop it first")
        os.makedirs(self.output_path, exist_ok=True)
        jax.profiler.start_trace(self.output_path)
        _active[0], self._running = self, True
        self._begin_step()

    def _begin_step(self):
        self._step_ctx = jax.profiler.StepTraceAnnotation("train", step_num=self._step)
        self._step_ctx.__enter__()

    def _end_step(self):
        if self._step_ctx is not None:
            self._step_ctx.__exit__(None, None, None)
            self._step_ctx = None

    def step(self) -> None:
        """Mark the end of one step and the start of the next."""
        if not self._running:
            raise RuntimeError("Profiler.step: the profiler is not tracing; call start() first")
        self._end_step()
        self._step += 1
        self._begin_step()

    def stop(self) -> None:
        """Stop tracing and write the trace under ``output_path``."""
        if not self._running:
            raise RuntimeError("Profiler.stop: the profiler is not tracing")
        self._end_step()
        try:
            jax.profiler.stop_trace()
        finally:
            _active[0], self._running = None, False
        if self._metadata:
            with open(os.path.join(self.output_path, "profiler_metadata.json"), "w") as f:
                json.dump(self._metadata, f, indent=1)

    def analyse(self, **kwargs) -> None:
        """Finish: stop tracing if it still runs (JAX's trace is ready to read as written)."""
        if self._running:
            self.stop()

    def add_metadata(self, key, value) -> None:
        if not isinstance(key, str):
            raise TypeError(f"Profiler.add_metadata: key must be a str, got {type(key).__name__}")
        self._metadata[key] = str(value)

    def add_metadata_json(self, key, value) -> None:
        self.add_metadata(key, json.dumps(value) if not isinstance(value, str) else value)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        if self._running:
            self.stop()
        return False
