"""Conv1d, Conv2d, Conv2dTranspose: MindSpore's layouts, defaults, reprs and numerics."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit import nn, ops
from cellkit.ops import operations as _P
from ms_fixtures import load as _load_fixtures
from nn_helpers import FLOAT, NP_FLOAT, close, grads_ok, init, params_of, rand


# ----- independent NumPy references -----------------------------------------------------

def np_conv2d(x, w, stride, pads, dilation=(1, 1), groups=1):
    """Direct cross-correlation, NCHW x OIHW, explicit (lo, hi) pads per spatial axis."""
    x = np.pad(np.asarray(x, np.float64), ((0, 0), (0, 0)) + tuple(pads))
    w = np.asarray(w, np.float64)
    n, _, h, wd = x.shape
    o, ig, kh, kw = w.shape
    (sh, sw), (dh, dw) = stride, dilation
    oh, ow = (h - (kh - 1) * dh - 1) // sh + 1, (wd - (kw - 1) * dw - 1) // sw + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(kh):
            for j in range(kw):
                patch = x[:, g * ig:(g + 1) * ig, i * dh:i * dh + (oh - 1) * sh + 1:sh,
                          j * dw:j * dw + (ow - 1) * sw + 1:sw]
                out[:, oc] += np.einsum("nchw,c->nhw", patch, w[oc, :, i, j])
    return out


def same_pads(size, k, s, d=1):
    """TensorFlow SAME: output ceil(size/s), the odd pixel of padding at the end."""
    k_eff = (k - 1) * d + 1
    total = max((-(-size // s) - 1) * s + k_eff - size, 0)
    return (total // 2, total - total // 2)


def np_conv_transpose(x, w, stride, mode, pads=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    """Scatter definition of MindSpore's Conv2dTranspose, weight (in, out/g, kh, kw)."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    n, cin, h, wd = x.shape
    _, og, kh, kw = w.shape
    (sh, sw), (dh, dw) = stride, dilation
    keh, kew = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    full = np.zeros((n, og * groups, (h - 1) * sh + keh, (wd - 1) * sw + kew))
    ig = cin // groups
    for c in range(cin):
        g = c // ig
        for i in range(kh):
            for j in range(kw):
                contrib = x[:, c][:, :, :, None] * w[c, :, i, j][None, None, None, :]   # n,h,w,og
                full[:, g * og:(g + 1) * og, i * dh:i * dh + (h - 1) * sh + 1:sh,
                     j * dw:j * dw + (wd - 1) * sw + 1:sw] += contrib.transpose(0, 3, 1, 2)
    out = full
    for axis, (size, s, ke, lo, hi) in enumerate(((h, sh, keh, pads[0], pads[1]),
                                                  (wd, sw, kew, pads[2], pads[3]))):
        ax = axis + 2
        if mode == "pad":
            out = np.take(out, range(lo, out.shape[ax] - hi), axis=ax)
            continue
        want = size * s if mode == "same" else size * s + max(ke - s, 0)
        extra = out.shape[ax] - want
        if extra >= 0:
            start = extra // 2 if mode == "same" else 0
            out = np.take(out, range(start, start + want), axis=ax)
        else:
            widths = [(0, 0)] * 4
            widths[ax] = (0, -extra)
            out = np.pad(out, widths)
    return out


# ----- Conv2d ----------------------------------------------------------------------------

def test_conv2d_defaults_parameters_and_repr():
    conv = nn.Conv2d(2, 4, 3)
    assert conv.pad_mode == "same" and conv.has_bias is False and conv.bias is None
    assert params_of(conv) == {"weight": ("weight", (4, 2, 3, 3), "Float32", True)}
    r = repr(conv)
    assert r.startswith("Conv2d(input_channels=2, output_channels=4, kernel_size=(3, 3), stride=(1, 1), "
                        "pad_mode=same, padding=0, dilation=(1, 1), group=1, has_bias=False, weight_init=HeUniform(")
    assert r.endswith(", bias_init=None, format=NCHW)")
    conv = nn.Conv2d(2, 4, (3, 5), stride=2, has_bias=True)
    assert params_of(conv)["bias"] == ("bias", (4,), "Float32", True)
    assert f"bias_init=Uniform(scale={1 / math.sqrt(2 * 3 * 5)})" in repr(conv)
    conv = nn.Conv2d(2, 4, 3, pad_mode="pad", padding=(1, 1, 2, 2), has_bias=True, weight_init="normal",
                     bias_init="zeros")
    assert repr(conv) == ("Conv2d(input_channels=2, output_channels=4, kernel_size=(3, 3), stride=(1, 1), "
                          "pad_mode=pad, padding=(1, 1, 2, 2), dilation=(1, 1), group=1, has_bias=True, "
                          "weight_init=normal, bias_init=zeros, format=NCHW)")


def test_conv2d_parameter_names_inside_a_parent():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, has_bias=True)

        def construct(self, x):
            return self.conv1(x)
    assert params_of(Net()) == {"conv1.weight": ("conv1.weight", (4, 1, 3, 3), "Float32", True),
                                "conv1.bias": ("conv1.bias", (4,), "Float32", True)}


def test_conv_default_init_bounds_use_mindspore_fans():
    ms.set_seed(1)
    conv = nn.Conv2d(8, 16, 3, has_bias=True)
    bound = 1 / math.sqrt(8 * 9)           # HeUniform(sqrt 5) == U(+-1/sqrt(fan_in)); bias the same
    w = np.asarray(conv.weight)
    assert 0.95 * bound < np.abs(w).max() <= bound
    assert conv.bias_init.scale == bound
    tconv = nn.Conv2dTranspose(8, 6, 3, group=2, has_bias=True)
    bound = 1 / math.sqrt(3 * 9)           # transposed layout (in, out/g, kh, kw): fan_in = (out/g)*kh*kw
    w = np.asarray(tconv.weight)
    assert w.shape == (8, 3, 3, 3) and 0.9 * bound < np.abs(w).max() <= bound
    assert tconv.bias_init.scale == bound


CASES_2D = [
    dict(pad_mode="valid"),
    dict(pad_mode="same", stride=2),
    dict(pad_mode="same", stride=(2, 3), dilation=2),
    dict(pad_mode="pad", padding=(2, 0, 1, 3), stride=2),
    dict(pad_mode="valid", group=2, dilation=(1, 2)),
    dict(pad_mode="same", group=4, stride=(1, 2)),
]


@pytest.mark.parametrize("kw", CASES_2D)
def test_conv2d_matches_direct_convolution(kw):
    x = rand(2, 4, 9, 8, seed=1)
    g = kw.get("group", 1)
    conv = nn.Conv2d(4, 8, (3, 2), has_bias=True, weight_init=init(8, 4 // g, 3, 2), bias_init=init(8, seed=1),
                     dtype=FLOAT, **kw)
    w, b = np.asarray(conv.weight), np.asarray(conv.bias)
    s = conv.stride
    d = conv.dilation
    if kw["pad_mode"] == "same":
        pads = [same_pads(9, 3, s[0], d[0]), same_pads(8, 2, s[1], d[1])]
    elif kw["pad_mode"] == "valid":
        pads = [(0, 0), (0, 0)]
    else:
        p = kw["padding"]
        p = (p,) * 4 if isinstance(p, int) else p
        pads = [(p[0], p[1]), (p[2], p[3])]
    want = np_conv2d(x, w, s, pads, d, kw.get("group", 1)) + b.reshape(1, -1, 1, 1)
    got = conv(x)
    close(got, want)
    lax_pad = {"same": "SAME", "valid": "VALID"}.get(kw["pad_mode"], pads)
    ref = jax.lax.conv_general_dilated(x, conv.weight.value, s, lax_pad, rhs_dilation=d,
                                       feature_group_count=kw.get("group", 1),
                                       dimension_numbers=("NCHW", "OIHW", "NCHW"))
    close(got, ref + b.reshape(1, -1, 1, 1))
    if kw["pad_mode"] == "same":
        assert got.shape[2:] == (math.ceil(9 / s[0]), math.ceil(8 / s[1]))


def test_conv2d_same_puts_the_odd_padding_at_the_bottom_right():
    x = jnp.arange(16.0, dtype=NP_FLOAT).reshape(1, 1, 4, 4)
    conv = nn.Conv2d(1, 1, 2, weight_init="ones", dtype=FLOAT)   # one row/column of padding, at the end
    y = np.asarray(conv(x))[0, 0]
    assert y.shape == (4, 4)
    assert y[0, 0] == 0 + 1 + 4 + 5
    assert y[3, 3] == 15                  # only the real corner pixel
    assert y[3, 0] == 12 + 13             # last row: padded below


def test_conv2d_nhwc_matches_nchw():
    x = rand(2, 3, 6, 5, seed=2)
    a = nn.Conv2d(3, 4, 3, stride=2, has_bias=True, weight_init=init(4, 3, 3, 3), bias_init=init(4), dtype=FLOAT)
    b = nn.Conv2d(3, 4, 3, stride=2, has_bias=True, data_format="NHWC", weight_init="zeros", bias_init="zeros",
                  dtype=FLOAT)
    assert b.weight.shape == (4, 3, 3, 3)
    b.weight.set_data(jnp.transpose(a.weight.value, (0, 2, 3, 1)))
    b.bias.set_data(a.bias.value)
    close(jnp.transpose(b(jnp.transpose(x, (0, 2, 3, 1))), (0, 3, 1, 2)), a(x))


def test_conv2d_errors_name_the_layer():
    conv = nn.Conv2d(3, 4, 3, weight_init="zeros")
    with pytest.raises(ValueError, match=r"Conv2d: expected an input of shape \(N, 3, \*, \*\) \(NCHW\), "
                                         r"got \(1, 2, 5, 5\)"):
        conv(ms.ops.ones((1, 2, 5, 5)))
    with pytest.raises(ValueError, match="Conv2d: expected an input of shape"):
        conv(ms.ops.ones((3, 5, 5)))
    with pytest.raises(ValueError, match="'padding' must be 0.*pad_mode"):
        nn.Conv2d(3, 4, 3, padding=1)
    with pytest.raises(ValueError, match="divisible by 'group'"):
        nn.Conv2d(3, 4, 3, group=2)
    with pytest.raises(ValueError, match="pad_mode"):
        nn.Conv2d(3, 4, 3, pad_mode="full")
    with pytest.raises(ValueError, match="tuple of 4 ints"):
        nn.Conv2d(3, 4, 3, pad_mode="pad", padding=(1, 1))
    with pytest.raises(ValueError, match="weight init has shape"):
        nn.Conv2d(3, 4, 3, weight_init=ms.ops.ones((4, 3, 2, 2)))


def test_conv2d_gradients_through_input_and_parameters():
    conv = nn.Conv2d(4, 4, 3, stride=2, pad_mode="pad", padding=(1, 0, 0, 1), group=2, has_bias=True,
                     weight_init=init(4, 2, 3, 3), bias_init=init(4), dtype=FLOAT)
    x = rand(1, 4, 5, 5, seed=3)
    grads_ok(lambda net, x: net(x), (conv, x))


# ----- Conv1d ------------------------------------------------------------------------------

def test_conv1d_weight_is_4d_like_mindspore():
    conv = nn.Conv1d(2, 4, 3, pad_mode="pad", padding=1)
    assert params_of(conv) == {"weight": ("weight", (4, 2, 1, 3), "Float32", True)}
    r = repr(conv)
    assert r.startswith("Conv1d(input_channels=2, output_channels=4, kernel_size=(1, 3), stride=(1, 1), "
                        "pad_mode=pad, padding=(0, 0, 1, 1), dilation=(1, 1), group=1, has_bias=False, "
                        "weight_init=HeUniform(")
    assert r.endswith("bias_init=None, format=NCHW)")
    assert "padding=(0, 0, 0, 0)" in repr(nn.Conv1d(2, 4, 3))
    assert nn.Conv1d(2, 4, 3).pad_mode == "same"


@pytest.mark.parametrize("kw", [dict(pad_mode="valid"), dict(pad_mode="same", stride=2),
                                dict(pad_mode="pad", padding=2, dilation=2, group=2)])
def test_conv1d_matches_direct_convolution(kw):
    x = rand(3, 4, 11, seed=4)
    g = kw.get("group", 1)
    conv = nn.Conv1d(4, 6, 3, has_bias=True, weight_init=init(6, 4 // g, 3), bias_init=init(6), dtype=FLOAT, **kw)
    w = np.asarray(conv.weight)
    s, d = conv.stride[1], conv.dilation[1]
    if kw["pad_mode"] == "same":
        pads = same_pads(11, 3, s, d)
    elif kw["pad_mode"] == "valid":
        pads = (0, 0)
    else:
        pads = (kw["padding"],) * 2
    want = np_conv2d(np.asarray(x)[:, :, None], w, (1, s), [(0, 0), pads], (1, d), kw.get("group", 1))[:, :, 0]
    y = conv(x)
    assert y.ndim == 3
    close(y, want + np.asarray(conv.bias)[None, :, None])


def test_conv1d_accepts_a_3d_weight_tensor_and_checks_ints():
    w = np.arange(24, dtype=np.float32).reshape(4, 2, 3) / 10
    conv = nn.Conv1d(2, 4, 3, weight_init=ms.Tensor(w), pad_mode="valid")
    np.testing.assert_array_equal(np.asarray(conv.weight)[:, :, 0, :], w)
    x = np.random.RandomState(5).randn(1, 2, 6).astype(np.float32)
    want = np.stack([np.einsum("ck,ck->", x[0, :, t:t + 3], w[o]) for o in range(4) for t in range(4)])
    close(conv(ms.Tensor(x))[0].reshape(-1), want, 1e-5)
    with pytest.raises(TypeError, match="'kernel_size' must be an int"):
        nn.Conv1d(2, 4, (3,))
    with pytest.raises(TypeError, match="'padding' must be an int"):
        nn.Conv1d(2, 4, 3, pad_mode="pad", padding=(1, 1))
    with pytest.raises(ValueError, match=r"Conv1d: expected an input of shape \(N, 2, \*\) \(NCW\)"):
        conv(ms.ops.ones((1, 2, 6, 1)))


def test_conv1d_gradients():
    conv = nn.Conv1d(2, 3, 3, stride=2, pad_mode="pad", padding=1, has_bias=True, weight_init=init(3, 2, 3),
                     bias_init=init(3), dtype=FLOAT)
    grads_ok(lambda net, x: net(x), (conv, rand(2, 2, 7, seed=6)))


# ----- Conv2dTranspose -------------------------------------------------------------------

def test_conv2d_transpose_parameters_and_repr():
    t = nn.Conv2dTranspose(2, 4, 3, stride=2, pad_mode="pad", padding=(1, 1, 2, 2))
    assert params_of(t) == {"weight": ("weight", (2, 4, 3, 3), "Float32", True)}
    r = repr(t)
    assert r.startswith("Conv2dTranspose(input_channels=2, output_channels=4, kernel_size=(3, 3), "
                        "stride=(2, 2), pad_mode=pad, padding=(1, 1, 2, 2), dilation=(1, 1), group=1, "
                        "has_bias=False, weight_init=HeUniform(")
    assert r.endswith("bias_init=None, format=NCHW)")
    assert nn.Conv2dTranspose(4, 6, 3, group=2).weight.shape == (4, 3, 3, 3)


TRANSPOSE_CASES = [
    dict(kernel_size=3, stride=2, pad_mode="same"),
    dict(kernel_size=2, stride=3, pad_mode="same"),           # k < s: zeros appended
    dict(kernel_size=2, stride=3, pad_mode="valid"),
    dict(kernel_size=(3, 2), stride=(2, 1), pad_mode="same", dilation=2),
    dict(kernel_size=3, stride=2, pad_mode="pad", padding=(1, 0, 2, 1)),
    dict(kernel_size=3, stride=2, pad_mode="pad", padding=1, group=2),
    dict(kernel_size=3, stride=(1, 2), pad_mode="valid", group=2, dilation=(2, 1)),
]


@pytest.mark.parametrize("kw", TRANSPOSE_CASES)
def test_conv2d_transpose_matches_the_scatter_definition_and_lax(kw):
    x = rand(2, 4, 5, 4, seed=7)
    ks = kw["kernel_size"] if isinstance(kw["kernel_size"], tuple) else (kw["kernel_size"],) * 2
    t = nn.Conv2dTranspose(4, 6, has_bias=True, weight_init=init(4, 6 // kw.get("group", 1), *ks),
                           bias_init=init(6), dtype=FLOAT, **kw)
    w, b = np.asarray(t.weight), np.asarray(t.bias)
    p = kw.get("padding", 0)
    pads = (p,) * 4 if isinstance(p, int) else p
    want = np_conv_transpose(x, w, t.stride, kw["pad_mode"], pads, t.dilation, kw.get("group", 1))
    got = t(x)
    ke = [(k - 1) * d + 1 for k, d in zip(t.kernel_size, t.dilation)]
    for i, size in enumerate((5, 4)):
        s = t.stride[i]
        expect = {"same": size * s, "valid": size * s + max(ke[i] - s, 0),
                  "pad": size * s - pads[2 * i] - pads[2 * i + 1] + ke[i] - s}[kw["pad_mode"]]
        assert got.shape[2 + i] == expect
    close(got, want + b.reshape(1, -1, 1, 1))
    if kw.get("group", 1) == 1:     # the notes' equivalence with lax.conv_transpose(transpose_kernel=True)
        if kw["pad_mode"] == "pad":
            pad = [(ke[0] - 1 - pads[0], ke[0] - 1 - pads[1]), (ke[1] - 1 - pads[2], ke[1] - 1 - pads[3])]
        else:
            pad = kw["pad_mode"].upper()
        ref = jax.lax.conv_transpose(x, t.weight.value, t.stride, pad, rhs_dilation=t.dilation,
                                     dimension_numbers=("NCHW", "OIHW", "NCHW"), transpose_kernel=True)
        close(got, ref + b.reshape(1, -1, 1, 1))


def test_conv2d_transpose_output_padding_appends_zeros_after_the_bias():
    x = rand(1, 2, 3, 3, seed=9)
    base = nn.Conv2dTranspose(2, 2, 3, stride=2, pad_mode="pad", padding=1, has_bias=True,
                              weight_init=init(2, 2, 3, 3), bias_init="ones", dtype=FLOAT)
    padded = nn.Conv2dTranspose(2, 2, 3, stride=2, pad_mode="pad", padding=1, output_padding=(1, 0),
                                has_bias=True, weight_init="zeros", bias_init="ones", dtype=FLOAT)
    padded.weight.set_data(base.weight.value)
    y0, y1 = np.asarray(base(x)), np.asarray(padded(x))
    assert y0.shape == (1, 2, 5, 5) and y1.shape == (1, 2, 6, 5)
    close(y1[:, :, :5], y0)
    assert (y1[:, :, 5] == 0).all()        # not the bias
    with pytest.raises(ValueError, match="pad_mode must be 'pad'"):
        nn.Conv2dTranspose(2, 2, 3, stride=2, output_padding=1)
    with pytest.raises(ValueError, match=r"output_padding\[0\] must be in range"):
        nn.Conv2dTranspose(2, 2, 3, stride=2, pad_mode="pad", output_padding=2)


def test_conv2d_transpose_gradients():
    t = nn.Conv2dTranspose(4, 2, 3, stride=2, pad_mode="pad", padding=(1, 0, 0, 1), group=2, has_bias=True,
                           weight_init=init(4, 1, 3, 3), bias_init=init(2), dtype=FLOAT)
    grads_ok(lambda net, x: net(x), (t, rand(1, 4, 3, 3, seed=10)))


# --- Conv3d, Conv3dTranspose, Conv1dTranspose and the functional convolutions against MindSpore 2.10 ---

_MS = _load_fixtures("nn_layers_conv")
_ND_LAYERS = {"conv3d": nn.Conv3d, "conv3dt": nn.Conv3dTranspose, "conv1dt": nn.Conv1dTranspose}


def _ms_net(cls, ctor, weights):
    net = cls(**ctor)
    assert sorted(n for n, _ in net.parameters_and_names()) == sorted(weights)
    assert ms.load_param_into_net(net, {k: ms.Parameter(v, name=k) for k, v in weights.items()}) == ([], [])
    return net


def _ms_close(got, want, tol=1e-5):
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(k for k in _MS if k.split("_")[0] in _ND_LAYERS))
def test_nd_conv_layers_match_mindspore(name):
    ctor, weights, x = _MS[name]["inputs"]
    net = _ms_net(_ND_LAYERS[name.split("_")[0]], ctor, weights)
    _ms_close(net(jnp.asarray(x)), _MS[name]["output"])


_FUNCS = {
    "f_conv1d_pad_groups": lambda x, w: ops.conv1d(x, w, None, 2, "pad", 1, 1, 2),
    "f_conv1d_same": lambda x, w: ops.conv1d(x, w, pad_mode="same", groups=2),
    "f_conv2d_bias_stride": lambda x, w, b: ops.conv2d(x, w, b, stride=(2, 1), groups=2),
    "f_conv2d_pad_dilation": lambda x, w: ops.conv2d(x, w, None, 1, "pad", (1, 2), (2, 1), 2),
    "f_conv3d_same": lambda x, w: ops.conv3d(x, w, pad_mode="same"),
    "f_conv3d_pad_stride": lambda x, w: ops.conv3d(x, w, None, 2, "pad", (1, 0, 1)),
    "p_conv2d_pad4": lambda x, w: _P.Conv2D(6, (3, 2), pad_mode="pad", pad=(1, 0, 2, 1), group=2)(x, w),
    "p_conv2d_transpose": lambda d, w: _P.Conv2DTranspose(6, (3, 2), pad_mode="same", stride=2, group=2)(
        d, w, (2, 4, 5, 6)),
    "f_unfold": lambda x: ops.unfold(x, (2, 3), 1, 1, (2, 1)),
    "f_unfold_dilation": lambda x: ops.unfold(x, 2, 2, 0, 1),
    "f_fold": lambda c: ops.fold(c, jnp.array([4, 5], jnp.int32), (2, 3), 1, 1, (2, 1)),
}


@pytest.mark.parametrize("name", sorted(_FUNCS))
def test_functional_convolutions_match_mindspore(name):
    _ms_close(_FUNCS[name](*map(jnp.asarray, _MS[name]["inputs"])), _MS[name]["output"], 2e-5)


_ND_ERRORS = {
    "err_conv3d_format": lambda: nn.Conv3d(2, 2, 3, data_format="NDHWC"),
    "err_conv1dt_kernel_tuple": lambda: nn.Conv1dTranspose(2, 2, (3,)),
    "err_conv3d_padding_valid": lambda: nn.Conv3d(2, 2, 3, padding=1),
}


@pytest.mark.parametrize("name", sorted(_ND_ERRORS))
def test_nd_conv_refusals_match_mindspore(name):
    with pytest.raises({"ValueError": ValueError, "TypeError": TypeError}[_MS[name]["error"]]):
        _ND_ERRORS[name]()


@pytest.mark.parametrize("name", ["grad_conv3d", "grad_conv1dt"])
def test_nd_conv_gradients_match_mindspore(name):
    rec = _MS[name]["output"]
    net = _ms_net(_ND_LAYERS[name.split("_")[1]], rec["ctor"], rec["weights"])
    x, cot = jnp.asarray(rec["inputs"][0]), jnp.asarray(rec["cotangent"])
    value, (gx, gw) = ms.value_and_grad(lambda x: jnp.sum(net(x) * cot), 0, net.trainable_params())(x)
    np.testing.assert_allclose(float(value), float(rec["loss"]), rtol=1e-5, atol=1e-5)
    _ms_close(gx, rec["grad_input"], 1e-4)
    for p, g in zip(net.trainable_params(), gw):
        np.testing.assert_allclose(np.asarray(g), rec["grad_weights"][p.name], rtol=1e-4, atol=1e-4)


def test_functional_conv_refuses_mismatched_groups():
    with pytest.raises(ValueError, match="groups"):
        ops.conv2d(jnp.ones((1, 4, 3, 3)), jnp.ones((2, 4, 1, 1)), groups=2)
    with pytest.raises(ValueError, match="'padding' must be 0"):
        ops.conv2d(jnp.ones((1, 1, 3, 3)), jnp.ones((1, 1, 1, 1)), padding=1)
