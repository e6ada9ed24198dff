"""Transformer layers against MindSpore 2.10 (fixtures from record_nn_layers.py)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads
from ms_fixtures import load

import cellkit as ms
from cellkit import nn, ops

CASES = load("nn_layers_transformer")
BASE = dict(d_model=8, nhead=2, dim_feedforward=16)


def _load(net, weights):
    assert sorted(n for n, _ in net.parameters_and_names()) == sorted(weights)
    assert ms.load_param_into_net(net, {k: ms.Parameter(v, name=k) for k, v in weights.items()}) == ([], [])
    return net


def _arr(x):
    return None if x is None else jnp.asarray(x)


def _close(got, want, tol=3e-5):
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


LAYERS = {"enc": nn.TransformerEncoderLayer, "dec": nn.TransformerDecoderLayer}


@pytest.mark.parametrize("name", sorted(k for k in CASES if k.split("_")[0] in LAYERS))
def test_layer_matches_mindspore(name):
    case = CASES[name]
    ctor, weights, *inputs = case["inputs"]
    net = _load(LAYERS[name.split("_")[0]](**ctor), weights)
    kwargs = {k: _arr(v) for k, v in case["kwargs"].items()}
    _close(net(*map(_arr, inputs), **kwargs), case["output"])


STACKS = {
    "encoder_2_norm": lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(**BASE), 2,
                                                    nn.LayerNorm((8,), epsilon=1e-5)),
    "decoder_2": lambda: nn.TransformerDecoder(nn.TransformerDecoderLayer(**BASE), 2, nn.LayerNorm((8,), epsilon=1e-5)),
    "transformer_1_1": lambda: nn.Transformer(**BASE, num_encoder_layers=1, num_decoder_layers=1),
    "transformer_batch_first_pre_norm": lambda: nn.Transformer(**BASE, num_encoder_layers=2, num_decoder_layers=1,
                                                               batch_first=True, norm_first=True),
}


@pytest.mark.parametrize("name", sorted(STACKS))
def test_stack_matches_mindspore(name):
    case = CASES[name]
    weights, *inputs = case["inputs"]
    net = _load(STACKS[name](), weights)
    kwargs = {k: _arr(v) for k, v in case["kwargs"].items()}
    _close(net(*map(_arr, inputs), **kwargs), case["output"])


def test_stack_under_jit_matches_mindspore():
    case = CASES["transformer_1_1"]
    weights, src, tgt = case["inputs"]
    net = _load(STACKS["transformer_1_1"](), weights)
    kw = {k: _arr(v) for k, v in case["kwargs"].items()}
    _close(ms.jit(lambda s, t: net(s, t, **kw))(_arr(src), _arr(tgt)), case["output"])


ERRORS = {
    "err_activation_name": lambda: nn.TransformerEncoderLayer(8, 2, activation="tanh"),
    "err_activation_cell": lambda: nn.TransformerEncoderLayer(8, 2, activation=nn.Tanh()),
    "err_activation_callable": lambda: nn.TransformerEncoderLayer(8, 2, activation=ops.tanh),
    "err_kpm_int": lambda: nn.TransformerEncoderLayer(8, 2, 16)(jnp.ones((5, 2, 8)),
                                                                src_key_padding_mask=jnp.zeros((2, 5), jnp.int32)),
    "err_d_model_mismatch": lambda: nn.Transformer(8, 2, 1, 1, 16)(jnp.ones((5, 2, 8)), jnp.ones((4, 2, 6))),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_refusals_match_mindspore(name):
    exc = {"ValueError": ValueError, "TypeError": TypeError, "AssertionError": AssertionError}[CASES[name]["error"]]
    with pytest.raises(exc):
        ERRORS[name]()


@pytest.mark.parametrize("name", ["grad_enc_layer", "grad_dec_layer"])
def test_gradients_match_mindspore(name):
    rec = CASES[name]["output"]
    cls = LAYERS[name.split("_")[1]]
    net = _load(cls(**rec["ctor"]), rec["weights"])
    inputs = [jnp.asarray(v) for v in rec["inputs"]]
    cot = jnp.asarray(rec["cotangent"])
    value, (gx, gw) = ms.value_and_grad(lambda x: jnp.sum(net(x, *inputs[1:]) * cot), 0,
                                        net.trainable_params())(inputs[0])
    np.testing.assert_allclose(float(value), float(rec["loss"]), rtol=1e-5, atol=1e-5)
    _close(gx, rec["grad_input"], 1e-4)
    for p, g in zip(net.trainable_params(), gw):
        np.testing.assert_allclose(np.asarray(g), rec["grad_weights"][p.name], rtol=1e-4, atol=1e-4)


def test_check_grads_through_an_encoder_layer():
    net = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, norm_first=True)
    x = jax.random.normal(jax.random.PRNGKey(0), (3, 2, 4))
    check_grads(jax.jit(lambda x: net(x)), (x,), order=1, modes=("rev",), atol=2e-2, rtol=2e-2)


def test_encoder_copies_start_equal_and_train_apart():
    layer = nn.TransformerEncoderLayer(8, 2, 16)
    enc = nn.TransformerEncoder(layer, 2)
    a, b = enc.layers[0], enc.layers[1]
    np.testing.assert_array_equal(np.asarray(a.dense1.weight.value), np.asarray(b.dense1.weight.value))
    a.dense1.weight.set_data(jnp.zeros((16, 8)))
    assert float(jnp.abs(b.dense1.weight.value).sum()) > 0
    names = [n for n, _ in enc.parameters_and_names()]
    assert len(names) == len(set(names)) and "layers.1.norm2.beta" in names


def test_dropout_only_in_training():
    net = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5)
    x = jnp.ones((5, 2, 8)) + jnp.arange(8.0)
    np.testing.assert_array_equal(np.asarray(net(x)), np.asarray(net(x)))
    net.set_train()
    step = ms.jit(lambda x: net(x))
    assert not np.allclose(np.asarray(step(x)), np.asarray(step(x)))


def test_transformer_reinitialises_matrices_xavier_uniform():
    net = nn.Transformer(8, 2, 1, 1, 16)
    w = net.encoder.layers[0].dense1.weight.value          # (16, 8): bound sqrt(6 / 24) = 0.5
    assert float(jnp.abs(w).max()) <= 0.5 and float(jnp.abs(w).max()) > 0.3
