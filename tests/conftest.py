import jax
import pytest

import cellkit as ms

# The scripts that made the MindSpore fixtures import mindspore; they are not tests.
collect_ignore_glob = ["fixtures/*/*.py"]


def x64() -> bool:
    return bool(jax.config.jax_enable_x64)


@pytest.fixture(autouse=True)
def _fresh_state():
    """Each test starts in PyNative mode with a fixed seed."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)
