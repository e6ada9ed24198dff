"""The Network, the fixture that reruns every engine test under jax.checking_leaks(), and references."""

import jax
import numpy as np
import pytest

import cellkit as ms
from cellkit import nn, ops


class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor(np.arange(15).reshape(5, 3) / 10, ms.float32), name="w")
        self.b = ms.Parameter(ms.Tensor(np.array([1., 2., 3.]), ms.float32), name="b")

    def construct(self, x):
        return ops.matmul(x, self.w) + self.b




@pytest.fixture(autouse=True, params=["plain", "checking_leaks"])
def leak_check(request):
    """Every engine test runs twice: as it is, and under ``jax.checking_leaks()``, which fails
    if a tracer outlives its trace (a Parameter, frame or cache holding on to one)."""
    if request.param == "plain":
        yield
    else:
        with jax.checking_leaks():
            yield


X = ms.Tensor(np.ones((2, 5)), ms.float32)
net = Network()  # a global, as in the seed


def reference(w, b, x):
    return np.asarray(x) @ np.asarray(w) + np.asarray(b)
