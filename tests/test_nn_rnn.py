"""RNN, LSTM, GRU and their cells against MindSpore 2.10 (fixtures from record_nn_layers.py)."""

import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads
from ms_fixtures import ROOT, load

import cellkit as ms
from cellkit import nn

CASES = load("nn_layers_rnn")
CLASSES = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU, "rnncell": nn.RNNCell, "lstmcell": nn.LSTMCell,
           "grucell": nn.GRUCell}


def _cls(case_name):
    return CLASSES[case_name.split("_")[0]]


def _build(cls, ctor, weights):
    net = cls(**ctor)
    assert sorted(n for n, _ in net.parameters_and_names()) == sorted(weights)
    not_loaded, unused = ms.load_param_into_net(net, {k: ms.Parameter(v, name=k) for k, v in weights.items()})
    assert not_loaded == [] and unused == []
    return net


def _arr(x):
    if x is None:
        return None
    if isinstance(x, (tuple, list)):
        return tuple(_arr(v) for v in x)
    return jnp.asarray(x)


def _close(got, want, tol=2e-5):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, tol)
        return
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


FORWARD = sorted(k for k, v in CASES.items() if "output" in v and k.split("_")[0] in CLASSES)


@pytest.mark.parametrize("name", FORWARD)
def test_forward_matches_mindspore(name):
    case = CASES[name]
    ctor, weights, *inputs = case["inputs"]
    net = _build(_cls(name), ctor, weights)
    _close(net(*_arr(inputs)), case["output"])


@pytest.mark.parametrize("name", ["lstm_bi_seq_length", "gru_2layer"])
def test_forward_under_jit(name):
    case = CASES[name]
    ctor, weights, *inputs = case["inputs"]
    net = _build(_cls(name), ctor, weights)
    _close(ms.jit(lambda *a: net(*a))(*_arr(inputs)), case["output"])


ERRORS = {
    "err_nonlinearity": lambda: nn.RNN(3, 4, nonlinearity="sigmoid"),
    "err_dropout_range": lambda: nn.LSTM(3, 4, dropout=1.0),
    "err_dropout_type": lambda: nn.GRU(3, 4, dropout=1),
    "err_hidden_size": lambda: nn.LSTM(3, 0),
    "err_has_bias_type": lambda: nn.GRU(3, 4, has_bias=1),
    "err_seq_length_size": lambda: nn.GRU(3, 4)(jnp.ones((5, 2, 3)), seq_length=jnp.array([1, 2, 3], jnp.int32)),
    "err_lstm_hx_not_tuple": lambda: nn.LSTM(3, 4)(jnp.ones((5, 2, 3)), jnp.zeros((1, 2, 4))),
    "err_cell_nonlinearity": lambda: nn.RNNCell(3, 4, nonlinearity="gelu"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_refusals_match_mindspore(name):
    with pytest.raises({"ValueError": ValueError, "TypeError": TypeError}[CASES[name]["error"]]):
        ERRORS[name]()


def test_shape_and_dtype_refusals_name_the_argument():
    lstm = nn.LSTM(3, 4)
    with pytest.raises(ValueError, match="'x' must have shape"):
        lstm(jnp.ones((5, 3)))
    with pytest.raises(ValueError, match=r"'hx\[0\]' must have shape"):
        lstm(jnp.ones((5, 2, 3)), (jnp.zeros((2, 2, 4)), jnp.zeros((2, 2, 4))))
    with pytest.raises(TypeError, match="'hx' must have the dtype"):
        nn.GRU(3, 4)(jnp.ones((5, 2, 3)), jnp.zeros((1, 2, 4), jnp.float16))
    with pytest.raises(TypeError, match="'seq_length' must be an int32"):
        nn.GRU(3, 4)(jnp.ones((5, 2, 3)), seq_length=jnp.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="'x' must be a float"):
        nn.GRUCell(3, 4)(jnp.ones((2, 3), jnp.int32), jnp.zeros((2, 4)))


def test_parameter_names_shapes_and_init():
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True, has_bias=False)
    names = [n for n, _ in lstm.parameters_and_names()]
    assert names == ["weight_ih_l0", "weight_ih_l0_reverse", "weight_ih_l1", "weight_ih_l1_reverse",
                     "weight_hh_l0", "weight_hh_l0_reverse", "weight_hh_l1", "weight_hh_l1_reverse"]
    assert lstm.weight_ih_l1.shape == (16, 8)
    bound = 1 / np.sqrt(4)
    assert all(float(jnp.abs(p.value).max()) <= bound for p in lstm.get_parameters())
    assert nn.GRU(3, 4).bias_hh_l0.shape == (12,)


@pytest.mark.parametrize("name", ["grad_lstm_bi", "grad_gru_2layer_seq_length", "grad_rnn_relu"])
def test_gradients_match_mindspore(name):
    rec = CASES[name]["output"]
    cls = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}[name.split("_")[1]]
    net = _build(cls, rec["ctor"], rec["weights"])
    inputs = _arr(rec["inputs"])
    cot = jnp.asarray(rec["cotangent"])

    def loss(x):
        return jnp.sum(net(x, *inputs[1:])[0] * cot)

    value, (gx, gw) = ms.value_and_grad(loss, grad_position=0, weights=net.trainable_params())(inputs[0])
    np.testing.assert_allclose(float(value), float(rec["loss"]), rtol=1e-5, atol=1e-5)
    _close(gx, rec["grad_input"], 1e-4)
    for p, g in zip(net.trainable_params(), gw):
        np.testing.assert_allclose(np.asarray(g), rec["grad_weights"][p.name], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("cls, ctor", [(nn.LSTM, dict(bidirectional=True)), (nn.GRU, dict(num_layers=2))])
def test_check_grads_through_the_scan(cls, ctor):
    net = cls(2, 3, **ctor)
    weights = net._weights()
    x = jax.random.normal(jax.random.PRNGKey(0), (4, 2, 2))
    lengths = jnp.array([4, 2], jnp.int32)
    from cellkit.nn.layer.rnns import _stacked_rnn
    dirs = 2 if net.bidirectional else 1
    h = jnp.zeros((net.num_layers * dirs, 2, 3))
    hx = (h, h) if cls is nn.LSTM else h

    @jax.jit
    def f(x, weights):
        out, _ = _stacked_rnn(x, hx, lengths, weights, None, mode=net._mode, dropout=0.0, batch_first=False)
        return out

    check_grads(f, (x, weights), order=1, modes=("rev",), atol=2e-2, rtol=2e-2)


def test_dropout_between_layers_only_while_training():
    net = nn.LSTM(2, 3, num_layers=2, dropout=0.5)
    x = jnp.ones((4, 2, 2))
    a, b = net(x)[0], net(x)[0]
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    net.set_train()
    outs = {tuple(np.asarray(net(x)[0]).ravel().round(6)) for _ in range(3)}
    assert len(outs) > 1
    with pytest.warns(UserWarning, match="num_layers > 1"):
        nn.GRU(2, 3, dropout=0.5)


def test_mindspore_checkpoint_loads():
    """A classifier (bidirectional LSTM + Dense) saved by MindSpore loads under its Parameter names."""

    class Classifier(nn.Cell):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(3, 4, batch_first=True, bidirectional=True)
            self.fc = nn.Dense(8, 2)

        def construct(self, inp):
            out, _ = self.rnn(inp)
            return self.fc(out[:, -1])

    net = Classifier()
    params = ms.load_checkpoint(str(pathlib.Path(ROOT) / "nn_layers_rnn_classifier.ckpt"))
    assert ms.load_param_into_net(net, params) == ([], [])
    case = CASES["classifier_ckpt"]
    _close(net(jnp.asarray(case["inputs"][0])), case["output"])


def test_cellkit_checkpoint_round_trip(tmp_path):
    net = nn.GRU(3, 4, bidirectional=True)
    ms.save_checkpoint(net, str(tmp_path / "gru.ckpt"), format="ckpt")
    other = nn.GRU(3, 4, bidirectional=True)
    ms.load_param_into_net(other, ms.load_checkpoint(str(tmp_path / "gru.ckpt")))
    x = jnp.ones((2, 1, 3))
    np.testing.assert_array_equal(np.asarray(net(x)[0]), np.asarray(other(x)[0]))


def test_an_eager_rnns_zero_initial_state_is_made_without_a_compilation():
    from compile_count import compiled_names
    rnn = nn.GRU(5, 7, num_layers=2, batch_first=True)
    x = ms.Tensor(np.random.default_rng(0).normal(size=(3, 4, 5)).astype(np.float32))
    with compiled_names() as made:
        out, h = rnn(x)
    assert not {"broadcast_in_dim", "convert_element_type", "full"} & set(made)
    _, h_given = rnn(x, ms.ops.zeros((2, 3, 7), ms.float32))
    np.testing.assert_array_equal(h, h_given)
