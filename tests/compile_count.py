"""Counting the XLA executables a piece of code obtains (compiled, or read back from the persistent cache:
JAX reports the backend-compile duration for both; cellkit's whole stored executables report their own)."""

import contextlib

from jax import monitoring

from cellkit import host_ops, tiered_jit
from cellkit import random as key_stream
from cellkit.stored_executables import LOAD_DURATION_EVENT

EVENT = "/jax/core/compile/backend_compile_duration"
STORED_EVENT = LOAD_DURATION_EVENT


# The process-wide warm-up counts after which cellkit compiles what it ran on the host (a signature
# moved HOT times, a stream split HOST_SPLITS times) or compiles a hot executable again, optimised.
# Earlier tests in the same worker advance them, so a count of a first run holds them for its block.
WARM_UPS = ((host_ops, "HOT"), (key_stream, "HOST_SPLITS"), (tiered_jit, "HOT"))


@contextlib.contextmanager
def compiles(fresh=True):
    """``with compiles() as made: ...`` then ``made["n"]`` is the number of executables obtained inside.

    ``fresh``: the block is counted as in a new process, its warm-up switches (WARM_UPS) held, whatever
    ran before it; False for a test of those switches themselves."""
    box = {"n": 0}

    def on_duration(event, duration, **_):
        if event in (EVENT, STORED_EVENT):
            box["n"] += 1
    held = [(module, name, getattr(module, name)) for module, name in WARM_UPS] if fresh else []
    for module, name, _ in held:
        setattr(module, name, 1 << 30)
    monitoring.register_event_duration_secs_listener(on_duration)
    try:
        yield box
    finally:
        monitoring.unregister_event_duration_listener(on_duration)
        for module, name, value in held:
            setattr(module, name, value)


@contextlib.contextmanager
def compiled_names():
    """``with compiled_names() as names: ...`` then ``names`` lists the functions JAX compiled (or read
    back) inside, as its compile log names them (``jit(reshape)`` -> ``"reshape"``)."""
    import logging
    import re

    import jax
    names = []

    class Collect(logging.Handler):
        def emit(self, record):
            found = re.match(r"Compiling jit\((.*?)\)", record.getMessage())
            if found:
                names.append(found.group(1))
    logger, handler = logging.getLogger("jax._src.interpreters.pxla"), Collect()
    level, was = logger.level, jax.config.jax_log_compiles
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    jax.config.update("jax_log_compiles", True)
    try:
        yield names
    finally:
        jax.config.update("jax_log_compiles", was)
        logger.removeHandler(handler)
        logger.setLevel(level)
