"""Fourier transforms (ops.fft ... ops.rfftfreq, P.FFTWithSize) against MindSpore's recorded outputs
(tests/fixtures/record/record_ops_rest.py), and their gradients."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import cellkit as ms
from cellkit import ops
from cellkit.ops import operations as P
from ops_replay import cases, replay, to_cellkit

DATA, NAMES = cases("ops_fft")
FUNCS = [n for n in NAMES if n[0].islower()]
PRIMS = [n for n in NAMES if n[0].isupper()]


# MindSpore 2.10's CPU rfft of a complex input fills the output with the first elements of the
# flattened full transform (rows run into each other): checked against NumPy instead.
MINDSPORE_BUGS = {"rfft__complex": lambda x: np.fft.fft(x)[..., :x.shape[-1] // 2 + 1]}


@pytest.mark.parametrize("name", FUNCS)
def test_matches_mindspore(name):
    if name in MINDSPORE_BUGS:
        x = DATA[name]["inputs"][0]
        np.testing.assert_allclose(ops.rfft(ms.Tensor(x)), MINDSPORE_BUGS[name](x), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.asarray(ops.rfft(ms.Tensor(x)))[0], DATA[name]["output"][0], rtol=1e-5)
        return
    replay(getattr(ops, name.split("__")[0]), DATA[name], name, {})


@pytest.mark.parametrize("name", PRIMS)
def test_primitive_matches_mindspore(name):
    case = DATA[name]
    ctor = to_cellkit(case["ctor"])
    if "error" in case:
        with pytest.raises(Exception) as info:
            getattr(P, name.split("__")[0])(*ctor)(*to_cellkit(case["inputs"]))
        assert type(info.value).__name__ == case["error"], info.value
        return
    replay(getattr(P, name.split("__")[0])(*ctor), case, name, {})


def test_dtypes_follow_mindspore_and_x64():
    assert ops.fft(ms.Tensor([1, 2, 3], ms.int32)).dtype == jnp.complex64
    assert ops.irfft(ops.rfft(ms.Tensor([1., 2., 3., 4.]))).dtype == jnp.float32
    if jax.config.jax_enable_x64:
        assert ops.fft(ms.Tensor(np.arange(4.0))).dtype == jnp.complex128


def test_transforms_invert_each_other():
    x = jnp.asarray(np.random.default_rng(0).normal(size=(3, 8)), jnp.float32)
    for fwd, inv, kw in [(ops.fft2, ops.ifft2, {}), (ops.rfftn, ops.irfftn, {"s": (3, 8)}),
                         (ops.ihfft, ops.hfft, {"n": 8}), (ops.rfft2, ops.irfft2, {"s": (3, 8)})]:
        np.testing.assert_allclose(np.real(inv(fwd(x), **kw)), x, atol=1e-5)
    np.testing.assert_array_equal(ops.ifftshift(ops.fftshift(x)), x)


GRADS = {
    "rfft": lambda x: jnp.abs(ops.rfft(x)).sum(),
    "fft2": lambda x: jnp.real(ops.fft2(x * (1 + 0.5j)) * jnp.arange(8)).sum(),
    "irfftn": lambda x: (ops.irfftn(x.astype(jnp.complex64), s=(2, 8)) ** 2).sum(),
    "hfft": lambda x: ops.hfft(x, n=6).sum(),
}


@pytest.mark.parametrize("name", GRADS)
def test_gradients(name):
    x = jnp.asarray(np.random.default_rng(1).uniform(-1, 1, (2, 8)), jnp.float32)
    check_grads(GRADS[name], (x,), order=1, modes=["rev"], atol=2e-2, rtol=2e-2)
