"""Padding, resizing and pixel rearrangement (ops and layers) against MindSpore 2.10."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads
from ms_fixtures import load

from cellkit import nn, ops
from cellkit.ops import operations as P

CASES = load("nn_layers_sampling")
J = jnp.asarray

FNS = {
    "pad_constant": lambda x: ops.pad(J(x), (1, 2, 0, 1), value=1.5),
    "pad_negative": lambda x: ops.pad(J(x), (1, -1, -1, 2)),
    "pad_reflect": lambda x: ops.pad(J(x), (2, 1, 1, 2), mode="reflect"),
    "pad_replicate": lambda x: ops.pad(J(x), (2, 1, 1, 0), mode="replicate"),
    "pad_circular": lambda x: ops.pad(J(x), (1, 2, 2, 1), mode="circular"),
    "nn_pad_constant": lambda x: nn.Pad(((0, 0), (1, 0), (1, 2), (0, 1)))(J(x)),
    "nn_pad_reflect": lambda x: nn.Pad(((0, 0), (0, 0), (2, 1), (1, 2)), mode="REFLECT")(J(x)),
    "nn_pad_symmetric": lambda x: nn.Pad(((0, 0), (0, 0), (3, 1), (1, 4)), mode="SYMMETRIC")(J(x)),
    "zeropad2d": lambda x: nn.ZeroPad2d((1, 0, 2, 1))(J(x)),
    "constantpad2d_int": lambda x: nn.ConstantPad2d(1, -2.0)(J(x)),
    "constantpad3d": lambda x: nn.ConstantPad3d((1, 0, 0, 1, 1, 1), 0.5)(J(x)),
    "reflectionpad2d": lambda x: nn.ReflectionPad2d((1, 2, 2, 0))(J(x)),
    "reflectionpad3d": lambda x: nn.ReflectionPad3d(1)(J(x)),
    "replicationpad2d": lambda x: nn.ReplicationPad2d((2, 0, 1, 3))(J(x)),
    "replicationpad3d": lambda x: nn.ReplicationPad3d((1, 1, 0, 2, 1, 0))(J(x)),
    "padv3_contiguous": lambda x: P.PadV3()(J(x), J(np.array([1, 2, 0, 1])), 3.0),
    "padv3_reflect": lambda x: P.PadV3(mode="reflect")(J(x), (1, 2, 2, 1)),
    "prim_pad": lambda x: P.Pad(((0, 0), (0, 0), (1, 1), (2, 0)))(J(x)),
    "pixel_shuffle": lambda x: ops.pixel_shuffle(J(x), 2),
    "pixel_unshuffle": lambda x: ops.pixel_unshuffle(J(x), 2),
    "upsample_bilinear": lambda x: nn.Upsample(size=(6, 8), mode="bilinear")(J(x)),
}
for _name, _kw in [("resize_nn_legacy", {}), ("resize_nn_align", {"align_corners": True}),
                   ("resize_nn_half", {"half_pixel_centers": True})]:
    FNS[_name] = lambda x, kw=_kw: P.ResizeNearestNeighbor((5, 7), **kw)(J(x))
    FNS[_name + "_down"] = lambda x, kw=_kw: P.ResizeNearestNeighbor((2, 3), **kw)(J(x))
for _name, _kw in [("resize_bilinear_legacy", {}), ("resize_bilinear_align", {"align_corners": True}),
                   ("resize_bilinear_half", {"half_pixel_centers": True})]:
    FNS[_name] = lambda x, kw=_kw: P.ResizeBilinearV2(**kw)(J(x), (5, 7))

ERRORS = {
    "err_pad_mode": lambda x: ops.pad(J(x), (1, 1), mode="wrap"),
    "err_constantpad1d_len": lambda: nn.ConstantPad1d((1, 1, 1, 1), 0.0),
    "err_constantpad_value": lambda: nn.ConstantPad2d(1, "a"),
    "err_reflectionpad_negative": lambda: nn.ReflectionPad2d((1, -1, 0, 0)),
    "err_nn_pad_mode": lambda: nn.Pad(((1, 1),), mode="EDGE"),
}


def _check(name, got):
    want = CASES[name]["output"]
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(FNS))
def test_matches_mindspore(name):
    _check(name, FNS[name](*CASES[name]["inputs"]))


INTERP = sorted(k for k in CASES if k.startswith(("interp_", "err_interp_")))


@pytest.mark.parametrize("name", INTERP)
def test_interpolate_matches_mindspore(name):
    case = CASES[name]
    if "error" in case:
        with pytest.raises(ValueError):
            ops.interpolate(J(case["inputs"][0]), **case["kwargs"])
    else:
        _check(name, ops.interpolate(J(case["inputs"][0]), **case["kwargs"]))


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_refusals_match_mindspore(name):
    exc = {"ValueError": ValueError, "TypeError": TypeError}[CASES[name]["error"]]
    with pytest.raises(exc):
        ERRORS[name](*CASES[name]["inputs"])


def test_bicubic_is_refused_clearly():
    with pytest.raises(NotImplementedError, match="bicubic"):
        ops.interpolate(jnp.ones((1, 1, 2, 2)), size=(3, 3), mode="bicubic")


def test_gradients_of_resize_and_pad():
    x = jax.random.normal(jax.random.PRNGKey(0), (1, 2, 3, 4))
    check_grads(lambda x: ops.interpolate(x, size=(5, 3), mode="bilinear"), (x,), order=1, modes=("rev",))
    check_grads(lambda x: ops.pad(x, (2, 1, 1, 2), mode="reflect"), (x,), order=1, modes=("rev",))


def test_unfold_patches_against_a_numpy_loop():
    x = np.arange(2 * 4 * 5, dtype=np.float32).reshape(1, 2, 4, 5)
    got = np.asarray(nn.Unfold([1, 2, 3, 1], [1, 1, 2, 1], [1, 2, 1, 1])(J(x)))
    # valid padding, kernel 2x3, stride (1, 2), rate (2, 1): out 2 x 2; channel (row, col, c)
    want = np.zeros((1, 2 * 3 * 2, 2, 2), np.float32)
    for oi in range(2):
        for oj in range(2):
            k = 0
            for i in range(2):
                for j in range(3):
                    for c in range(2):
                        want[0, k, oi, oj] = x[0, c, oi + 2 * i, 2 * oj + j]
                        k += 1
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match=r"\[1, ksize_row, ksize_col, 1\]"):
        nn.Unfold([2, 2], [1, 1, 1, 1], [1, 1, 1, 1])
