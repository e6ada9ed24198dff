"""Counting the XLA executables a piece of code obtains (compiled, or read back from the persistent cache:
JAX reports the backend-compile duration for both)."""

import contextlib

from jax import monitoring

EVENT = "/jax/core/compile/backend_compile_duration"


@contextlib.contextmanager
def compiles():
    """``with compiles() as made: ...`` then ``made["n"]`` is the number of executables obtained inside."""
    box = {"n": 0}

    def on_duration(event, duration, **_):
        if event == EVENT:
            box["n"] += 1
    monitoring.register_event_duration_secs_listener(on_duration)
    try:
        yield box
    finally:
        monitoring.unregister_event_duration_listener(on_duration)
