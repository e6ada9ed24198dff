"""Across the layers: MindSpore's LeNetLike fixture, and every layer eagerly, in cellkit.jit and in jax.jit.

The fixture was made by ``make_lenetlike.py`` (MindSpore 2.10); its expected
values are copied below so that the test runs anywhere, and are compared with
the fixture's JSON whenever the shared fixtures are present.
"""

import inspect
import json
import os
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import cellkit as ms
from cellkit import nn
from nn_helpers import close, init, rand, replace_params

# ----- MindSpore fixture: Conv2d('valid', bias) + BatchNorm2d + ReLU + Flatten + Dense --------

OUTPUT_PREDICT_MODE = [
    [-0.15107, -0.14023, -0.02697, -0.01577, 0.02261, 0.11667, 0.19477, -0.15107, -0.14023, -0.02697],
    [-0.18189, -0.11383, -0.07585, 0.01177, 0.05011, 0.08169, 0.22801, -0.18189, -0.11383, -0.07585]]
PARAMS = {  # name: (shape, requires_grad, sum), in MindSpore's parameters_and_names() order
    "conv1.weight": ((4, 1, 3, 3), True, -0.3),
    "conv1.bias": ((4,), True, -0.5454545617103577),
    "bn.moving_mean": ((4,), False, -0.5000000074505806),
    "bn.moving_variance": ((4,), False, 2.4615384340286255),
    "bn.gamma": ((4,), True, 2.4285714626312256),
    "bn.beta": ((4,), True, -0.4000000134110451),
    "fc.weight": ((10, 144), True, -0.3125),
    "fc.bias": ((10,), True, -0.3529411815106869),
}


def _shared_fixture():
    repo = Path(__file__).resolve().parents[1]
    candidates = [os.environ.get("CELLKIT_MINDSPORE_FIXTURES"), repo / "shared" / "fixtures" / "mindspore",
                  repo.parent / "shared" / "fixtures" / "mindspore",
                  repo.parent.parent / "shared" / "fixtures" / "mindspore"]
    for c in candidates:
        if c and (Path(c) / "lenetlike.json").is_file():
            return json.loads((Path(c) / "lenetlike.json").read_text())
    return None


class LeNetLike(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, pad_mode='valid', has_bias=True)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(4 * 6 * 6, 10)

    def construct(self, x):
        return self.fc(self.flatten(self.relu(self.bn(self.conv1(x)))))


def test_lenetlike_matches_mindspore():
    net = LeNetLike()
    for i, (name, p) in enumerate(net.parameters_and_names()):      # exactly as make_lenetlike.py
        n = int(np.prod(p.shape))
        v = (np.arange(n, dtype=np.float32).reshape(p.shape) % 7 - 3) / (10.0 + i)
        if 'variance' in name or 'gamma' in name:
            v = np.abs(v) + 0.5
        p.set_data(ms.Tensor(v, p.dtype))
    net.set_train(False)
    got = {name: (tuple(p.shape), p.requires_grad, float(np.asarray(p, np.float64).sum()))
           for name, p in net.parameters_and_names()}
    assert list(got) == list(PARAMS)
    assert [p.name for p in net.get_parameters()] == list(PARAMS)
    for name, (shape, requires_grad, total) in PARAMS.items():
        assert got[name][:2] == (shape, requires_grad) and abs(got[name][2] - total) < 1e-5, name
        assert str(net.parameters_dict()[name].dtype) == "Float32"
    x = ms.Tensor((np.arange(2 * 1 * 8 * 8, dtype=np.float32).reshape(2, 1, 8, 8) % 5) / 5.0)
    out = np.asarray(net(x))
    np.testing.assert_allclose(out, OUTPUT_PREDICT_MODE, atol=1e-4, rtol=0)
    np.testing.assert_allclose(ms.jit(lambda x: net(x))(x), out, atol=1e-6)
    fixture = _shared_fixture()
    if fixture is not None:      # the copy above is the fixture's
        np.testing.assert_array_equal(np.float32(fixture["output_predict_mode"]), np.float32(OUTPUT_PREDICT_MODE))
        for name, meta in fixture["params"].items():
            assert (tuple(meta["shape"]), meta["requires_grad"]) == PARAMS[name][:2]
            assert meta["dtype"] == "Float32" and abs(meta["sum"] - PARAMS[name][2]) < 1e-6


# ----- every layer three ways: eagerly, inside cellkit.jit, as a pytree argument to jax.jit --------

class Block(nn.Cell):
    """A small net mixing containers and layers."""

    def __init__(self):
        super().__init__()
        self.body = nn.SequentialCell([nn.Conv2d(2, 3, 3, weight_init=init(3, 2, 3, 3, seed=1)),
                                       nn.BatchNorm2d(3), nn.GELU(), nn.MaxPool2d(2, 2)])
        self.heads = nn.CellList([nn.Dense(27, 2, weight_init=init(2, 27, seed=2), bias_init=init(2, seed=3)),
                                  nn.Dense(27, 2, weight_init=init(2, 27, seed=4), bias_init="zeros")])
        self.flatten = nn.Flatten()

    def construct(self, x):
        h = self.flatten(self.body(x))
        return self.heads[0](h) * self.heads[1](h)


def _mha():
    mha = nn.MultiheadAttention(4, 2)
    rng = np.random.RandomState(0)
    replace_params(mha, {name: rng.randn(*p.shape) * 0.5 for name, p in mha.parameters_and_names()})
    return mha


LAYERS = [   # attribute name, layer, input shape (an int dtype for Embedding)
    ("dense", lambda: nn.Dense(3, 2, weight_init=init(2, 3), bias_init=init(2), activation="relu"), (4, 3)),
    ("conv1d", lambda: nn.Conv1d(2, 3, 3, stride=2, has_bias=True, weight_init=init(3, 2, 3),
                                 bias_init=init(3)), (2, 2, 7)),
    ("conv2d", lambda: nn.Conv2d(2, 4, 3, pad_mode="pad", padding=1, group=2, weight_init=init(4, 1, 3, 3)),
     (2, 2, 5, 5)),
    ("tconv", lambda: nn.Conv2dTranspose(2, 3, 3, stride=2, weight_init=init(2, 3, 3, 3)), (1, 2, 3, 3)),
    ("maxpool", lambda: nn.MaxPool2d(3, 2, pad_mode="pad", padding=1), (1, 2, 5, 5)),
    ("avgpool", lambda: nn.AvgPool2d(2, 1, pad_mode="same"), (1, 2, 5, 5)),
    ("adaptive", lambda: nn.AdaptiveAvgPool2d((2, 3)), (1, 2, 5, 5)),
    ("bn_train", lambda: nn.BatchNorm1d(3, gamma_init=init(3), beta_init=init(3, seed=1)).set_train(), (5, 3)),
    ("bn_predict", lambda: nn.BatchNorm2d(2, moving_mean_init=init(2), moving_var_init=2.0), (2, 2, 3, 3)),
    ("layernorm", lambda: nn.LayerNorm((3, 4), -2, -2, gamma_init=init(3, 4)), (2, 3, 4)),
    ("groupnorm", lambda: nn.GroupNorm(2, 4, beta_init=init(4)), (2, 4, 3)),
    ("dropout", lambda: nn.Dropout(p=0.5), (3, 4)),
    ("softmax", lambda: nn.Softmax(), (3, 4)),
    ("mha", _mha, (3, 2, 4)),
    ("embedding", lambda: nn.Embedding(6, 3, embedding_table=init(6, 3)), (2, 2)),
    ("block", Block, (2, 2, 6, 6)),
]


class Zoo(nn.Cell):
    """Every layer above as a sub-Cell, each applied to its own input."""

    def __init__(self):
        super().__init__()
        for name, make, _ in LAYERS:
            setattr(self, name, make())

    def construct(self, xs):
        return {name: self.call(name, xs[name]) for name, _, _ in LAYERS}

    def call(self, name, x):
        layer = getattr(self, name)
        return layer(x, x, x)[0] if name == "mha" else layer(x)


def _inputs():
    xs = {}
    for i, (name, _, shape) in enumerate(LAYERS):
        if name == "embedding":
            xs[name] = jnp.asarray(np.arange(np.prod(shape)).reshape(shape) % 6, jnp.int32)
        else:
            xs[name] = rand(*shape, seed=i).astype(jnp.float32)
    return xs


def test_every_layer_agrees_eagerly_in_cellkit_jit_and_in_jax_jit():
    zoo = Zoo()
    xs = _inputs()
    eager = {name: zoo.call(name, xs[name]) for name, _, _ in LAYERS}     # each layer on its own
    staged = ms.jit(lambda xs: zoo(xs))(xs)
    plain = jax.jit(lambda z, xs: z(xs))(zoo, xs)
    for name, _, _ in LAYERS:
        close(staged[name], eager[name])
        close(plain[name], eager[name])

    def loss(z, xs):
        return sum(jnp.sum(jnp.sin(y)) for y in z(xs).values())
    # jax.grad with the Cell tree as an argument == cellkit.grad over its trainable Parameters
    g_tree = jax.jit(jax.grad(loss))(zoo, xs)
    assert type(g_tree) is Zoo and type(g_tree.block.heads) is nn.CellList
    params = zoo.trainable_params()
    g_ck = ms.jit(ms.grad(lambda xs: loss(zoo, xs), None, params))(xs)
    tree = dict(zip([p.name for p in zoo.get_parameters()], g_tree.get_parameters()))
    assert [p.name for p in params] == [
        "dense.weight", "dense.bias", "conv1d.weight", "conv1d.bias", "conv2d.weight", "tconv.weight",
        "bn_train.gamma", "bn_train.beta", "bn_predict.gamma", "bn_predict.beta", "layernorm.gamma",
        "layernorm.beta", "groupnorm.gamma", "groupnorm.beta", "mha.in_proj_weight", "mha.in_proj_bias",
        "mha.out_proj.weight", "mha.out_proj.bias", "embedding.embedding_table", "block.body.0.weight",
        "block.body.1.gamma", "block.body.1.beta", "block.heads.0.weight", "block.heads.0.bias",
        "block.heads.1.weight", "block.heads.1.bias"]
    assert [p.name for p in zoo.untrainable_params()] == [
        "bn_train.moving_mean", "bn_train.moving_variance", "bn_predict.moving_mean",
        "bn_predict.moving_variance", "block.body.1.moving_mean", "block.body.1.moving_variance"]
    for p, g in zip(params, g_ck):
        close(tree[p.name].value, g)
    assert np.abs(np.asarray(g_ck[0])).sum() > 0


def test_set_train_reaches_every_layer_in_a_tree():
    net = Block()
    assert not any(c.training for _, c in net.cells_and_names())
    net.set_train()
    assert all(c.training for _, c in net.cells_and_names())
    x = rand(4, 2, 6, 6, seed=10).astype(jnp.float32)
    before = np.asarray(net.body[1].moving_mean)
    ms.jit(lambda x: net(x))(x)
    assert not np.allclose(np.asarray(net.body[1].moving_mean), before)    # train mode: statistics move
    net.set_train(False)
    after = np.asarray(net.body[1].moving_mean)
    net(x)
    np.testing.assert_array_equal(net.body[1].moving_mean, after)
    assert [p.name for p in net.untrainable_params()] == ["body.1.moving_mean", "body.1.moving_variance"]


def test_every_public_layer_documents_its_defaults_with_an_example():
    layers = [obj for _, obj in inspect.getmembers(nn, inspect.isclass)
              if issubclass(obj, nn.Cell) and obj is not nn.Cell]
    assert len(layers) >= 30
    for cls in layers:
        doc = cls.__doc__ or ""
        assert ">>>" in doc, f"{cls.__name__} has no doctest example"
        if cls.__init__ is nn.Cell.__init__:
            continue
        for p in inspect.signature(cls.__init__).parameters.values():
            if p.default is not inspect.Parameter.empty:
                assert p.name in doc, f"{cls.__name__}: the default of '{p.name}' is not documented"
