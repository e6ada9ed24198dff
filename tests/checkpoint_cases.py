"""Nets, references and helpers shared by the checkpoint tests."""

import os
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit import nn
from cellkit.common.initializer import initializer
from conftest import x64

REPO_FIXTURES = Path(__file__).parent / "fixtures" / "mindspore"
SHARED_FIXTURES = Path(os.environ.get(
    "CELLKIT_MINDSPORE_FIXTURES", Path(__file__).resolve().parents[1] / ".." / "shared" / "fixtures" / "mindspore"))
LENET_DIRS = [
    pytest.param(REPO_FIXTURES, id="repo-copy"),
    pytest.param(SHARED_FIXTURES, id="shared", marks=pytest.mark.skipif(
        not (SHARED_FIXTURES / "lenetlike.ckpt").is_file(),
        reason=f"the shared MindSpore fixtures are not at {SHARED_FIXTURES} "
               "(set CELLKIT_MINDSPORE_FIXTURES to their folder)")),
]
FORMATS = ["safetensors", "ckpt"]
NARROW = {np.dtype(np.int64): np.int32, np.dtype(np.uint64): np.uint32,
          np.dtype(np.float64): np.float32, np.dtype(np.complex128): np.complex64}


def loaded_dtype(dtype):
    """The dtype a stored dtype comes back as (64-bit types narrow while x64 is off)."""
    dtype = np.dtype(dtype)
    return dtype if x64() else np.dtype(NARROW.get(dtype, dtype))


class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, pad_mode="valid", has_bias=True)
        self.scale = ms.Parameter(initializer("normal", (2,), ms.bfloat16), name="scale")
        self.steps = ms.Parameter(ms.Tensor(np.array(7, np.int32)), name="steps", requires_grad=False)

    def construct(self, x):
        return self.conv(x) * self.scale.value.astype(jnp.float32).reshape(1, 2, 1, 1)


class Net(nn.Cell):
    def __init__(self, out=3):
        super().__init__()
        self.block = Block()
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(2 * 2 * 2, out)

    def construct(self, x):
        return self.fc(self.flatten(self.block(x)))


# A Cell's own Parameters come before its sub-Cells' (as in MindSpore).
NET_NAMES = ["block.scale", "block.steps", "block.conv.weight", "block.conv.bias", "fc.weight", "fc.bias"]


def snapshot(net):
    return {name: (p.asnumpy().copy(), p.dtype, p.requires_grad) for name, p in net.parameters_dict().items()}


def assert_same(a, b):
    assert list(a) == list(b)
    for k in a:
        np.testing.assert_array_equal(np.asarray(a[k][0]), np.asarray(b[k][0]), err_msg=k)
        assert a[k][1:] == b[k][1:], k


def save_reference(tmp_path, fmt="safetensors", name=None):
    ms.set_seed(1)
    net = Net()
    path = tmp_path / (name or f"ref.{fmt}")
    ms.save_checkpoint(net, str(path), format=fmt)
    return net, path
