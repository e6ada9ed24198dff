"""Dense, Flatten, Dropout, ParameterUpdate, Identity; activations."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit import nn, ops
from ms_fixtures import load as _load
from nn_helpers import FLOAT, close, grads_ok, init, params_of, rand


# ----- Dense -----------------------------------------------------------------------------

def test_dense_parameters_and_reprs():
    assert params_of(nn.Dense(3, 4)) == {"weight": ("weight", (4, 3), "Float32", True),
                                         "bias": ("bias", (4,), "Float32", True)}
    assert repr(nn.Dense(3, 4)) == "Dense(input_channels=3, output_channels=4, has_bias=True)"
    assert repr(nn.Dense(3, 4, has_bias=False)) == "Dense(input_channels=3, output_channels=4)"
    assert params_of(nn.Dense(3, 4, has_bias=False)) == {"weight": ("weight", (4, 3), "Float32", True)}
    assert repr(nn.Dense(3, 4, activation="relu")) == (
        "Dense(\n  input_channels=3, output_channels=4, has_bias=True, activation=ReLU()\n  (activation): ReLU()\n)")
    assert repr(nn.Dense(3, 4, has_bias=False, activation=nn.Tanh())).startswith(
        "Dense(\n  input_channels=3, output_channels=4, activation=Tanh()\n")
    with pytest.raises(TypeError, match="'activation' must be str or Cell or Primitive"):
        nn.Dense(3, 4, activation=3)
    with pytest.raises(ValueError, match="in_channels"):
        nn.Dense(0, 4)


def test_dense_default_init_bounds():
    ms.set_seed(2)
    d = nn.Dense(50, 40)
    bound = 1 / math.sqrt(50)
    w, b = np.asarray(d.weight), np.asarray(d.bias)
    assert 0.95 * bound < np.abs(w).max() <= bound and np.abs(b).max() <= bound


def test_dense_formula_any_rank_and_activation():
    w, b = init(4, 3, seed=1), init(4, seed=2)
    d = nn.Dense(3, 4, weight_init=w, bias_init=b, activation="tanh", dtype=FLOAT)
    x = rand(2, 5, 3, seed=3)
    close(d(x), np.tanh(np.asarray(x, np.float64) @ np.asarray(w, np.float64).T + np.asarray(b, np.float64)))
    assert nn.Dense(3, 4, activation=ms.ops.ReLU())(x).min() >= 0      # a Primitive activation
    grads_ok(lambda net, x: net(x), (d, x))


# ----- Flatten, Identity -------------------------------------------------------------------

def test_flatten():
    x = ms.ops.ones((2, 3, 4, 5))
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 1)(x).shape == (6, 4, 5)
    assert nn.Flatten(1, 2)(x).shape == (2, 12, 5)
    assert nn.Flatten(-2)(x).shape == (2, 3, 20)
    assert nn.Flatten(0)(ms.Tensor(3.0)).shape == (1,)      # a scalar counts as 1-D, as in MindSpore
    assert repr(nn.Flatten(0, 2)) == "Flatten()" and list(nn.Flatten().parameters_and_names()) == []
    y = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(nn.Flatten()(ms.Tensor(y)), y.reshape(2, 12))   # C order
    with pytest.raises(ValueError, match="Flatten: 'start_dim'=3 is out of range"):
        nn.Flatten(3)(ms.ops.ones((2, 3)))
    with pytest.raises(ValueError, match="out of range"):
        nn.Flatten()(ms.Tensor(3.0))
    with pytest.raises(ValueError, match="must not come after 'end_dim'"):
        nn.Flatten(2, 1)(x)
    with pytest.raises(TypeError, match="'start_dim' must be an int"):
        nn.Flatten(1.0)
    assert nn.Identity()(x) is x
    grads_ok(lambda x: nn.Flatten(1, 2)(x) ** 2, (rand(2, 3, 2, 2, seed=6),))


# ----- Dropout -----------------------------------------------------------------------------

def test_dropout_arguments_and_reprs():
    assert repr(nn.Dropout()) == "Dropout(keep_prob=0.5)"
    assert repr(nn.Dropout(keep_prob=0.8)) == "Dropout(keep_prob=0.8)"
    assert repr(nn.Dropout(p=0.3)) == "Dropout(p=0.3)"
    assert repr(nn.Dropout(keep_prob=0.9, p=0.3)) == "Dropout(p=0.3)"    # p wins
    with pytest.raises(TypeError, match="'keep_prob' must be a float"):
        nn.Dropout(keep_prob=1)
    with pytest.raises(ValueError, match=r"'keep_prob' must be a number in range \(0, 1\]"):
        nn.Dropout(keep_prob=0.0)
    with pytest.raises(ValueError, match=r"'p' must be a number in range \[0, 1\)"):
        nn.Dropout(p=1)


def test_dropout_follows_set_train_and_scales_kept_values():
    x = ms.ops.ones((200, 50))
    drop = nn.Dropout(p=0.2)
    assert drop(x) is x                               # predict mode (the default): identity
    drop.set_train()
    y = np.asarray(drop(x))
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / 0.8, rtol=1e-6)
    assert abs(kept.mean() - 0.8) < 0.02
    assert not np.array_equal(np.asarray(drop(x)) != 0, kept)    # a fresh mask per call
    assert nn.Dropout(p=0).set_train()(x) is x
    assert nn.Dropout(keep_prob=1.0).set_train()(x) is x
    drop.set_train(False)
    assert drop(x) is x


def test_dropout_gradient_is_the_scaled_mask():
    drop = nn.Dropout(p=0.25).set_train()
    x = rand(6, 5, seed=7)
    ms.set_seed(11)
    kept = np.asarray(drop(x)) != 0
    ms.set_seed(11)
    g = ms.grad(lambda x: drop(x).sum())(x)          # the same draw: d(out)/dx = mask / (1 - p)
    close(g, kept / 0.75)
    assert 0 < kept.sum() < kept.size


def test_dropout_inside_jit_draws_fresh_reproducible_masks():
    drop = nn.Dropout(keep_prob=0.5).set_train()
    step = ms.jit(lambda x: drop(x))
    x = ms.ops.ones((8, 8))
    ms.set_seed(7)
    a, b = np.asarray(step(x)), np.asarray(step(x))
    assert not np.array_equal(a, b) and set(np.unique(a)) <= {0.0, 2.0}
    ms.set_seed(7)
    np.testing.assert_array_equal(step(x), a)


# ----- ParameterUpdate ---------------------------------------------------------------------

def test_parameter_update():
    p = ms.Parameter(ms.Tensor(np.zeros(2), ms.float32), name="p")
    up = nn.ParameterUpdate(p)
    assert repr(up) == "ParameterUpdate()"
    out = up(ms.Tensor([1.0, 2.0]))
    np.testing.assert_array_equal(out, [1.0, 2.0])
    np.testing.assert_array_equal(p.asnumpy(), [1.0, 2.0])
    ms.jit(lambda v: up(v))(ms.Tensor([3.0, 4.0]))
    np.testing.assert_array_equal(p.asnumpy(), [3.0, 4.0])

    class Holder(nn.Cell):
        def __init__(self):
            super().__init__()
            self.up = nn.ParameterUpdate(p)
    # auto_prefix=False concerns the updater's own children; as in MindSpore, a parent still renames
    assert [(n, q.name) for n, q in Holder().parameters_and_names()] == [("up._param", "up._param")]
    with pytest.raises(TypeError, match="must be a Parameter"):
        nn.ParameterUpdate(ms.Tensor([1.0]))


# ----- activations ---------------------------------------------------------------------------

def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


ERF = np.vectorize(math.erf)

ACTIVATIONS = [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.GELU(), gelu_tanh),
    (nn.GELU(approximate=False), lambda x: 0.5 * x * (1 + ERF(x / math.sqrt(2)))),
    (nn.SiLU(), lambda x: x / (1 + np.exp(-x))),
    (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    (nn.Tanh(), np.tanh),
    (nn.Softmax(), lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
    (nn.Softmax(axis=0), lambda x: np.exp(x) / np.exp(x).sum(0, keepdims=True)),
    (nn.LogSoftmax(), lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))),
    (nn.LeakyReLU(), lambda x: np.where(x > 0, x, 0.2 * x)),
]


@pytest.mark.parametrize("layer, ref", ACTIVATIONS, ids=lambda v: repr(v) if isinstance(v, nn.Cell) else "")
def test_activation_formulas_and_reprs(layer, ref):
    x = rand(3, 4, seed=4, scale=2.0)
    close(layer(x), ref(np.asarray(x, np.float64)))
    assert repr(layer) == f"{type(layer).__name__}()"
    assert list(layer.parameters_and_names()) == []


def test_activation_defaults_and_gradients():
    assert nn.GELU().approximate == "tanh" and nn.Softmax().axis == -1 and nn.LogSoftmax().axis == -1
    assert [repr(nn.get_activation(n)) for n in ("relu", "gelu", "silu", "sigmoid", "tanh", "softmax")] == \
        ["ReLU()", "GELU()", "SiLU()", "Sigmoid()", "Tanh()", "Softmax()"]
    x = rand(2, 3, seed=5)

    def f(x):
        return sum(layer(x) for layer, _ in ACTIVATIONS if not isinstance(layer, nn.ReLU))
    grads_ok(f, (x,))
    close(jax.grad(lambda x: nn.ReLU()(x).sum())(jnp.array([-1.0, 2.0])), [0.0, 1.0])
    assert ops.relu(ms.Tensor([-1.0]))[0] == 0


# ----- Unflatten, Dropout1d/2d/3d (MindSpore 2.10 fixtures) -----

_MS = _load("nn_layers_basic")
_BASIC = {
    "unflatten": lambda x: nn.Unflatten(1, (2, 3))(jnp.asarray(x)),
    "unflatten_neg": lambda x: nn.Unflatten(-1, [2, 1])(jnp.asarray(x)),
    "dropout2d_repr": lambda: repr(nn.Dropout2d(0.2)),
    "dropout1d_repr": lambda: repr(nn.Dropout1d(0.2)),
    "err_dropout2d_p_range": lambda: nn.Dropout2d(1.5),
    "err_dropout3d_p_int": lambda: nn.Dropout3d(1),
    "err_unflatten_axis": lambda: nn.Unflatten(1.0, (2, 3)),
    "err_unflatten_size": lambda: nn.Unflatten(1, 6),
}


@pytest.mark.parametrize("name", sorted(_BASIC))
def test_unflatten_and_channel_dropout_match_mindspore(name):
    case = _MS[name]
    if "error" in case:
        with pytest.raises({"ValueError": ValueError, "TypeError": TypeError}[case["error"]]):
            _BASIC[name](*case["inputs"])
        return
    got = _BASIC[name](*case["inputs"])
    if isinstance(case["output"], str):
        assert got == case["output"]
    else:
        np.testing.assert_array_equal(np.asarray(got), case["output"])


@pytest.mark.parametrize("cls, shape", [(nn.Dropout1d, (64, 3)), (nn.Dropout2d, (16, 8, 2, 2)),
                                        (nn.Dropout3d, (8, 8, 2, 2, 2))])
def test_channel_dropout_zeroes_whole_channels(cls, shape):
    drop = cls(0.25)
    x = jnp.ones(shape)
    assert drop(x) is x                                   # predict mode: identity
    drop.set_train()
    y = np.asarray(drop(x))
    lead = y.reshape(y.shape[:2 if len(shape) == cls._ndim else 1] + (-1,))
    assert set(np.unique(y).tolist()) <= {0.0, float(np.asarray(1 / 0.75, y.dtype))}
    assert (lead == lead[..., :1]).all()                  # a channel is kept or dropped whole
    assert 0.1 < (lead[..., 0] == 0).mean() < 0.45
