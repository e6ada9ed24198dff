"""Pooling layers, functions and Primitives against loop definitions and MindSpore's outputs."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from cellkit import nn, ops
from cellkit.ops import operations as P
from ms_fixtures import load
from nn_helpers import INT, NP_FLOAT, close, grads_ok, rand

# 5x6 plane with distinct values (no ties), and MindSpore 2.10's outputs on it.
X56 = ((np.arange(30) * 37 % 31) / 10.0).astype(np.float32).reshape(1, 1, 5, 6)
X25 = np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5)


def out_len(size, k, s, lo, hi, d=1, ceil=False):
    span = size + lo + hi - d * (k - 1) - 1
    out = (math.ceil(span / s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= size + lo:
        out -= 1
    return out


def np_max_pool(x, k, s, lo, hi, d=(1, 1), ceil=False):
    """Max over each window's real cells (padding is -inf); also the flat argmax."""
    x = np.asarray(x, np.float64)
    n, c, h, w = x.shape
    oh = out_len(h, k[0], s[0], lo[0], hi[0], d[0], ceil)
    ow = out_len(w, k[1], s[1], lo[1], hi[1], d[1], ceil)
    out = np.full((n, c, oh, ow), -np.inf)
    idx = np.zeros((n, c, oh, ow), np.int64)
    for i in range(oh):
        for j in range(ow):
            for a in range(k[0]):
                for b in range(k[1]):
                    r, q = i * s[0] - lo[0] + a * d[0], j * s[1] - lo[1] + b * d[1]
                    if 0 <= r < h and 0 <= q < w:
                        better = x[:, :, r, q] > out[:, :, i, j]
                        out[:, :, i, j] = np.where(better, x[:, :, r, q], out[:, :, i, j])
                        idx[:, :, i, j] = np.where(better, r * w + q, idx[:, :, i, j])
    return out, idx


def np_avg_pool(x, k, s, lo, hi, ceil=False, include_pad=True, divisor=None):
    """PyTorch's avg_pool2d definition: windows clipped to the padded extent for the divisor."""
    x = np.asarray(x, np.float64)
    n, c, h, w = x.shape
    oh = out_len(h, k[0], s[0], lo[0], hi[0], 1, ceil)
    ow = out_len(w, k[1], s[1], lo[1], hi[1], 1, ceil)
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            r0, q0 = i * s[0] - lo[0], j * s[1] - lo[1]
            r1, q1 = min(r0 + k[0], h + hi[0]), min(q0 + k[1], w + hi[1])
            padded_count = (r1 - r0) * (q1 - q0)
            rr0, qq0, rr1, qq1 = max(r0, 0), max(q0, 0), min(r1, h), min(q1, w)
            total = x[:, :, rr0:rr1, qq0:qq1].sum(axis=(2, 3))
            count = padded_count if include_pad else (rr1 - rr0) * (qq1 - qq0)
            out[:, :, i, j] = total / (divisor or count)
    return out


def same_pad(size, k, s):
    total = max((math.ceil(size / s) - 1) * s + k - size, 0)
    return total // 2, total - total // 2


# ----- reprs and defaults ----------------------------------------------------------------

def test_reprs_and_mindspore_defaults():
    assert repr(nn.MaxPool2d()) == "MaxPool2d(kernel_size=1, stride=1, pad_mode=VALID)"
    assert repr(nn.MaxPool2d(kernel_size=(2, 3), stride=2, pad_mode="same")) == \
        "MaxPool2d(kernel_size=(2, 3), stride=2, pad_mode=SAME)"
    assert repr(nn.AvgPool2d(kernel_size=3, stride=2, pad_mode="pad")) == \
        "AvgPool2d(kernel_size=3, stride=2, pad_mode=PAD)"
    assert repr(nn.AvgPool2d()) == "AvgPool2d(kernel_size=1, stride=1, pad_mode=VALID)"
    assert repr(nn.AdaptiveAvgPool2d((2, 3))) == "AdaptiveAvgPool2d()"
    x = jnp.asarray(X56)
    for layer in (nn.MaxPool2d(), nn.AvgPool2d()):       # kernel 1, stride 1: the identity
        assert list(layer.parameters_and_names()) == []
        np.testing.assert_array_equal(layer(x), x)
    # stride defaults to 1, not to kernel_size
    assert nn.MaxPool2d(2)(x).shape == (1, 1, 4, 5)


# ----- MaxPool2d ---------------------------------------------------------------------------

def test_max_pool_matches_mindspore_outputs_and_indices():
    x = jnp.asarray(X56)
    y, idx = nn.MaxPool2d(3, 2, pad_mode="pad", padding=1, return_indices=True)(x)
    close(y[0, 0], [[1.1, 2.3, 3.0], [2.1, 2.8, 2.9], [2.6, 2.7, 1.9]])
    assert idx.dtype == INT and idx[0, 0].tolist() == [[7, 9, 5], [19, 15, 10], [25, 20, 29]]
    y, idx = nn.MaxPool2d(2, 2, pad_mode="pad", ceil_mode=True, return_indices=True)(x)
    close(y[0, 0], [[1.1, 2.3, 3.0], [2.1, 2.8, 1.4], [2.6, 0.7, 1.9]])
    assert idx[0, 0].tolist() == [[7, 9, 5], [19, 15, 23], [25, 27, 29]]
    y, idx = nn.MaxPool2d(2, 1, pad_mode="pad", padding=(1, 0), dilation=2, return_indices=True)(x)
    assert idx[0, 0].tolist() == [[8, 9, 10, 9], [14, 15, 4, 5], [20, 9, 10, 9], [14, 15, 14, 15],
                                  [20, 19, 20, 23]]
    close(y[0, 0, 1], [2.2, 2.8, 2.4, 3.0])
    y = nn.MaxPool2d(3, 2, pad_mode="same")(x)
    close(y[0, 0], [[1.7, 2.9, 3.0], [2.7, 2.9, 2.9], [2.7, 2.7, 1.9]])


@pytest.mark.parametrize("kw, lo_hi", [
    (dict(kernel_size=3, stride=2), "valid"),
    (dict(kernel_size=(2, 3), stride=(1, 2), pad_mode="same"), "same"),
    (dict(kernel_size=3, stride=2, pad_mode="pad", padding=(1, 0), dilation=(1, 2), ceil_mode=True,
          return_indices=True), "pad"),
])
def test_max_pool_matches_the_loop_definition(kw, lo_hi):
    x = rand(2, 3, 7, 8, seed=11)
    pool = nn.MaxPool2d(**kw)
    k = (kw["kernel_size"],) * 2 if isinstance(kw["kernel_size"], int) else kw["kernel_size"]
    s = (kw["stride"],) * 2 if isinstance(kw["stride"], int) else kw["stride"]
    if lo_hi == "valid":
        lo = hi = (0, 0)
    elif lo_hi == "same":
        (a, b), (c, d) = same_pad(7, k[0], s[0]), same_pad(8, k[1], s[1])
        lo, hi = (a, c), (b, d)
    else:
        lo = hi = kw["padding"]
    want, want_idx = np_max_pool(x, k, s, lo, hi, kw.get("dilation", (1, 1)), kw.get("ceil_mode", False))
    got = pool(x)
    if kw.get("return_indices"):
        got, idx = got
        np.testing.assert_array_equal(idx, want_idx)
    close(got, want)


def test_max_pool_accepts_chw_and_checks_arguments():
    x = rand(3, 6, 6, seed=12)
    assert nn.MaxPool2d(2, 2)(x).shape == (3, 3, 3)
    with pytest.raises(ValueError, match="can not be set to non-default value when pad_mode is not 'pad'"):
        nn.MaxPool2d(2, 2, padding=1)
    with pytest.raises(ValueError, match="less equal to the half of ksize"):
        nn.MaxPool2d(3, 1, pad_mode="pad", padding=2)
    with pytest.raises(ValueError, match="pad_mode"):
        nn.MaxPool2d(2, pad_mode="full")
    with pytest.raises(ValueError, match="'kernel_size' must be an positive int"):
        nn.MaxPool2d(0)
    with pytest.raises(ValueError, match=r"MaxPool2d: expected an input of shape \(N, C, H, W\) or \(C, H, W\), "
                                         r"got \(6, 6\)"):
        nn.MaxPool2d(2)(x[0])


def test_max_pool_gradients():
    x = rand(1, 2, 5, 5, seed=13)
    grads_ok(lambda x: nn.MaxPool2d(3, 2, pad_mode="pad", padding=1)(x), (x,))
    grads_ok(lambda x: nn.MaxPool2d(2, 2, pad_mode="same")(x), (x,))


# ----- AvgPool2d ---------------------------------------------------------------------------

def test_avg_pool_matches_mindspore_outputs():
    x = jnp.asarray(X25)
    # default options: 'same' divides by the real cells only
    close(nn.AvgPool2d(3, 1, "same")(x)[0, 0, 0, 0], 3.0)
    # MindSpore 2.10's outputs, options that switch it to its 3-D kernel
    close(nn.AvgPool2d(2, 2, divisor_override=3)(x)[0, 0], [[4.0, 20 / 3], [52 / 3, 20.0]])
    close(nn.AvgPool2d(2, 2, ceil_mode=True)(x)[0, 0], [[3, 5, 6.5], [13, 15, 16.5], [20.5, 22.5, 24]])
    close(nn.AvgPool2d(3, 2, "same", count_include_pad=False)(x)[0, 0],
          [[3, 4.5, 6], [10.5, 12, 13.5], [18, 19.5, 21]])
    same_ceil = [[12 / 9, 3.0, 24 / 9], [7, 12, 9], [8, 13, 84 / 9]]      # padding counted here
    close(nn.AvgPool2d(3, 2, "same", ceil_mode=True)(x)[0, 0], same_ceil)
    close(nn.AvgPool2d(3, 2, "pad", padding=1, ceil_mode=True)(x)[0, 0], same_ceil)
    close(nn.AvgPool2d(3, 2, "same", divisor_override=2)(x)[0, 0],
          [[6, 13.5, 12], [31.5, 54, 40.5], [36, 58.5, 42]])
    y = nn.AvgPool2d(3, 1, "pad", padding=(1, 0), divisor_override=2)(x)[0, 0]
    assert y.shape == (5, 3)
    close(y[:, 0], [10.5, 27, 49.5, 72, 55.5])


@pytest.mark.parametrize("kw", [
    dict(kernel_size=3, stride=2),
    dict(kernel_size=(3, 2), stride=(2, 1), pad_mode="same"),
    dict(kernel_size=3, stride=2, pad_mode="pad", padding=1),
    dict(kernel_size=3, stride=2, pad_mode="pad", padding=(1, 0), ceil_mode=True, count_include_pad=False),
    dict(kernel_size=2, stride=3, pad_mode="pad", padding=1, ceil_mode=True),
])
def test_avg_pool_matches_the_loop_definition(kw):
    x = rand(2, 2, 7, 8, seed=14)
    k = (kw["kernel_size"],) * 2 if isinstance(kw["kernel_size"], int) else kw["kernel_size"]
    s = (kw["stride"],) * 2 if isinstance(kw["stride"], int) else kw["stride"]
    mode = kw.get("pad_mode", "valid")
    include = kw.get("count_include_pad", True)
    if mode == "valid":
        lo = hi = (0, 0)
    elif mode == "same":
        (a, b), (c, d) = same_pad(7, k[0], s[0]), same_pad(8, k[1], s[1])
        lo, hi = (a, c), (b, d)
        include = False                     # default-option 'same': TensorFlow-style divisor
    else:
        p = kw["padding"]
        lo = hi = (p, p) if isinstance(p, int) else p
    want = np_avg_pool(x, k, s, lo, hi, kw.get("ceil_mode", False), include)
    close(nn.AvgPool2d(**kw)(x), want)


def test_avg_pool_checks_arguments():
    with pytest.raises(ValueError, match="'padding' must be 0 when 'pad_mode' is not 'pad'"):
        nn.AvgPool2d(3, 1, "valid", padding=1)
    with pytest.raises(ValueError, match="contains 1 or 2 int"):
        nn.AvgPool2d(3, 2, "pad", padding=(1, 1, 0, 0))
    with pytest.raises(ValueError, match="'divisor_override' must be > 0"):
        nn.AvgPool2d(2, divisor_override=0)
    assert nn.AvgPool2d(2, 2)(rand(3, 4, 4)).shape == (3, 2, 2)


def test_avg_pool_gradients():
    x = rand(1, 2, 5, 5, seed=15)
    grads_ok(lambda x: nn.AvgPool2d(3, 2, "pad", padding=1, count_include_pad=False, ceil_mode=True)(x), (x,))


# ----- AdaptiveAvgPool2d -------------------------------------------------------------------

def np_adaptive(x, oh, ow):
    x = np.asarray(x, np.float64)
    h, w = x.shape[-2:]
    out = np.zeros(x.shape[:-2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            r0, r1 = (i * h) // oh, math.ceil((i + 1) * h / oh)
            q0, q1 = (j * w) // ow, math.ceil((j + 1) * w / ow)
            out[..., i, j] = x[..., r0:r1, q0:q1].mean(axis=(-2, -1))
    return out


def test_adaptive_avg_pool_matches_mindspore_and_the_bins():
    x = jnp.asarray(X56)
    close(nn.AdaptiveAvgPool2d((2, 4))(x)[0, 0], [[0.8, 1.4, 2.08333, 1.65], [1.8, 1.88333, 1.01667, 1.1]], 1e-4)
    y = nn.AdaptiveAvgPool2d((3, None))(x)
    assert y.shape == (1, 1, 3, 6)
    close(y[0, 0, 1], [1.0, 1.6, 2.2, 1.76667, 1.33333, 0.9], 1e-4)
    z = rand(2, 3, 7, 9, seed=16)
    for size in (1, 3, (4, 5), (7, 2)):
        oh, ow = (size, size) if isinstance(size, int) else size
        close(nn.AdaptiveAvgPool2d(size)(z), np_adaptive(z, oh, ow))
    assert nn.AdaptiveAvgPool2d(2)(z[0]).shape == (3, 2, 2)
    with pytest.raises(ValueError, match="AdaptiveAvgPool2d: expected an input of shape"):
        nn.AdaptiveAvgPool2d(2)(z[0, 0])
    with pytest.raises(ValueError, match="output_size"):
        nn.AdaptiveAvgPool2d((2, 0))


def test_adaptive_avg_pool_gradients():
    grads_ok(lambda x: nn.AdaptiveAvgPool2d((2, 3))(x), (rand(1, 2, 5, 7, seed=17),))


def test_pooling_float_dtype_is_kept():
    x = jnp.asarray(X56).astype(NP_FLOAT)
    for layer in (nn.MaxPool2d(2), nn.AvgPool2d(2, 1, "pad", padding=1), nn.AdaptiveAvgPool2d(2)):
        assert layer(x).dtype == x.dtype


# ----- 1-D/3-D and adaptive pooling, functional pooling and Primitives (MindSpore 2.10 fixtures) -----

MS = load("nn_layers_pooling")
J = jnp.asarray
POOLS = {
    "maxpool1d_valid": lambda x: nn.MaxPool1d(3, 2)(J(x)),
    "maxpool1d_same": lambda x: nn.MaxPool1d(3, 2, "same")(J(x)),
    "maxpool1d_pad_indices_ceil": lambda x: nn.MaxPool1d(3, 2, "pad", 1, return_indices=True, ceil_mode=True)(J(x)),
    "maxpool1d_unbatched": lambda x: nn.MaxPool1d(2, 1)(J(x)),
    "maxpool3d_valid": lambda x: nn.MaxPool3d((2, 2, 3), (1, 2, 2))(J(x)),
    "maxpool3d_same": lambda x: nn.MaxPool3d(3, 2, "same")(J(x)),
    "maxpool3d_pad_ceil": lambda x: nn.MaxPool3d(3, 2, "pad", 1, ceil_mode=True)(J(x)),
    "maxpool3d_pad_indices_dilation": lambda x: nn.MaxPool3d(2, 1, "pad", (1, 0, 1), dilation=(1, 2, 1),
                                                             return_indices=True)(J(x)),
    "avgpool1d_valid": lambda x: nn.AvgPool1d(3, 2)(J(x)),
    "avgpool1d_same": lambda x: nn.AvgPool1d(3, 2, "same")(J(x)),
    "avgpool1d_pad_ceil": lambda x: nn.AvgPool1d(3, 2, "pad", 1, ceil_mode=True)(J(x)),
    "avgpool1d_pad_exclude": lambda x: nn.AvgPool1d(3, 2, "pad", 1, count_include_pad=False)(J(x)),
    "avgpool3d_valid": lambda x: nn.AvgPool3d(2, 2)(J(x)),
    "avgpool3d_same": lambda x: nn.AvgPool3d(3, 2, "same")(J(x)),
    "avgpool3d_pad_ceil_exclude": lambda x: nn.AvgPool3d(3, 2, "pad", 1, True, False)(J(x)),
    "avgpool3d_divisor": lambda x: nn.AvgPool3d(2, 1, "pad", (1, 0, 1), divisor_override=3)(J(x)),
    "adaptiveavgpool1d": lambda x: nn.AdaptiveAvgPool1d(2)(J(x)),
    "adaptivemaxpool1d": lambda x: nn.AdaptiveMaxPool1d(3)(J(x)),
    "adaptiveavgpool3d": lambda x: nn.AdaptiveAvgPool3d((2, 3, 4))(J(x)),
    "adaptiveavgpool3d_none": lambda x: nn.AdaptiveAvgPool3d((None, 3, 1))(J(x)),
    "adaptivemaxpool2d": lambda x: nn.AdaptiveMaxPool2d((2, 3))(J(x)),
    "adaptivemaxpool2d_indices": lambda x: nn.AdaptiveMaxPool2d((3, 4), return_indices=True)(J(x)),
    "f_max_pool2d": lambda x: ops.max_pool2d(J(x), 3, 2, 1, return_indices=True, ceil_mode=True),
    "f_max_pool3d": lambda x: ops.max_pool3d(J(x), 2, None, 1),
    "f_avg_pool1d": lambda x: ops.avg_pool1d(J(x), 3, 2, 1, True, False),
    "f_avg_pool2d": lambda x: ops.avg_pool2d(J(x), 3, 2, 1, True, True, 0),
    "f_avg_pool2d_divisor": lambda x: ops.avg_pool2d(J(x), 2, 1, 0, False, True, 5),
    "f_avg_pool3d": lambda x: ops.avg_pool3d(J(x), 2, 2, 1, False, False),
    "f_adaptive_avg_pool1d": lambda x: ops.adaptive_avg_pool1d(J(x), 3),
    "f_adaptive_avg_pool2d": lambda x: ops.adaptive_avg_pool2d(J(x), (2, 3)),
    "f_adaptive_avg_pool3d": lambda x: ops.adaptive_avg_pool3d(J(x), (3, 2, 4)),
    "f_adaptive_max_pool1d": lambda x: ops.adaptive_max_pool1d(J(x), 3),
    "f_adaptive_max_pool2d": lambda x: ops.adaptive_max_pool2d(J(x), (3, 4), True),
    "p_maxpool_same": lambda x: P.MaxPool(3, 2, "SAME")(J(x)),
    "p_avgpool_same": lambda x: P.AvgPool(3, 2, "SAME")(J(x)),
    "p_avgpool_valid": lambda x: P.AvgPool((2, 3), (1, 2), "VALID")(J(x)),
    "err_maxpool1d_indices_valid": lambda: nn.MaxPool1d(2, return_indices=True),
    "err_adaptive1d_divisible": lambda x: nn.AdaptiveAvgPool1d(2)(J(x)),
    "err_avgpool3d_divisor": lambda: nn.AvgPool3d(2, divisor_override=-1),
}


@pytest.mark.parametrize("name", sorted(POOLS))
def test_pooling_matches_mindspore(name):
    case = MS[name]
    if "error" in case:
        with pytest.raises({"ValueError": ValueError, "TypeError": TypeError}[case["error"]]):
            POOLS[name](*case["inputs"])
        return
    got, want = POOLS[name](*case["inputs"]), case["output"]
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert g.shape == w.shape, (g.shape, w.shape)
        if w.dtype.kind == "i":          # indices: Int64 in MindSpore, Int32 here without jax_enable_x64
            np.testing.assert_array_equal(np.asarray(g), w)
        else:
            assert g.dtype == w.dtype
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-5)


def test_nd_pooling_gradients():
    from jax.test_util import check_grads
    x = jax.random.normal(jax.random.PRNGKey(0), (1, 2, 4, 3, 5))
    check_grads(lambda x: ops.avg_pool3d(x, 2, 1, 1, True, False), (x,), order=1, modes=("rev",))
    check_grads(lambda x: ops.adaptive_avg_pool3d(x, (2, 2, 3)), (x,), order=1, modes=("rev",))
    check_grads(lambda x: nn.MaxPool3d(2, 2)(x), (x,), order=1, modes=("rev",))
