"""ops.stft against MindSpore's recorded outputs (tests/fixtures/record/record_ops_rest.py)."""

import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from cellkit import ops
from ops_replay import cases, replay

DATA, NAMES = cases("ops_stft")


@pytest.mark.parametrize("name", NAMES)
def test_matches_mindspore(name):
    replay(ops.stft, DATA[name], name, {})


def test_gradient():
    x = jnp.asarray(DATA["stft__plain"]["inputs"][0])
    check_grads(lambda s: jnp.abs(ops.stft(s, 8, return_complex=True)).sum(), (x,), order=1, modes=["rev"],
                atol=2e-2, rtol=2e-2)
