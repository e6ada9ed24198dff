"""Run the whole suite, doctests included, with 8 simulated CPU devices.

XLA reads the flag when JAX starts its CPU backend, so it is set here, before
any test or doctest touches a device. A flag given from outside is kept.
"""

import os

_FLAG = "--xla_force_host_platform_device_count"
if _FLAG not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_FLAG}=8".strip()


def pytest_collection_modifyitems(config, items):
    """The examples in cellkit/parallel.py show 8-device layouts: skip them with fewer devices."""
    import jax
    import pytest

    if jax.device_count() >= 8:
        return
    skip = pytest.mark.skip(reason=f"shows an 8-device layout; JAX has {jax.device_count()} devices")
    for item in items:
        if item.name.startswith("cellkit.parallel"):
            item.add_marker(skip)
