"""Counting the XLA executables a piece of code obtains (compiled, or read back from the persistent cache:
JAX reports the backend-compile duration for both; cellkit's whole stored executables report their own)."""

import contextlib

from jax import monitoring

from cellkit.stored_executables import LOAD_DURATION_EVENT

EVENT = "/jax/core/compile/backend_compile_duration"
STORED_EVENT = LOAD_DURATION_EVENT


@contextlib.contextmanager
def compiles():
    """``with compiles() as made: ...`` then ``made["n"]`` is the number of executables obtained inside."""
    box = {"n": 0}

    def on_duration(event, duration, **_):
        if event in (EVENT, STORED_EVENT):
            box["n"] += 1
    monitoring.register_event_duration_secs_listener(on_duration)
    try:
        yield box
    finally:
        monitoring.unregister_event_duration_listener(on_duration)


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
