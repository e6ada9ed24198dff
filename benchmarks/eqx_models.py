"""The benchmarked models in Equinox, built from a cellkit Cell and holding its weights.

Equinox layers work on one example; each model's ``__call__`` takes a batch
and ``jax.vmap``-s its per-example function, as Equinox code usually does.
The computations are those of ``models``. Needs ``equinox`` (the ``bench``
extra).
"""

from __future__ import annotations

import equinox as eqx
import jax

from . import models

__all__ = ["from_cell"]

_KEY = jax.random.key(0)


def _abstract(cls, *args, **kwargs):
    """An Equinox layer with abstract weights: its random initialisation never runs (nor compiles)."""
    return eqx.filter_eval_shape(cls, *args, **kwargs)


def _linear(dense):
    out_f, in_f = dense.weight.shape
    layer = _abstract(eqx.nn.Linear, in_f, out_f, key=_KEY)
    return eqx.tree_at(lambda m: (m.weight, m.bias), layer, (dense.weight.value, dense.bias.value))


def _conv(conv):
    out_c, in_c, kh, kw = conv.weight.shape
    layer = _abstract(eqx.nn.Conv2d, in_c, out_c, (kh, kw), padding="SAME", key=_KEY)
    return eqx.tree_at(lambda m: (m.weight, m.bias), layer,
                       (conv.weight.value, conv.bias.value.reshape(out_c, 1, 1)))


def _layer_norm(norm):
    layer = _abstract(eqx.nn.LayerNorm, norm.gamma.shape[0], eps=models.LN_EPS)
    return eqx.tree_at(lambda m: (m.weight, m.bias), layer, (norm.gamma.value, norm.beta.value))


def _attention(mha):
    d = mha.embed_dim
    layer = _abstract(eqx.nn.MultiheadAttention, mha.num_heads, d, use_query_bias=True, use_key_bias=True,
                      use_value_bias=True, use_output_bias=True, key=_KEY)
    w, b = mha.in_proj_weight.value, mha.in_proj_bias.value
    return eqx.tree_at(
        lambda m: (m.query_proj.weight, m.query_proj.bias, m.key_proj.weight, m.key_proj.bias,
                   m.value_proj.weight, m.value_proj.bias, m.output_proj.weight, m.output_proj.bias),
        layer,
        (w[:d], b[:d], w[d:2 * d], b[d:2 * d], w[2 * d:], b[2 * d:],
         mha.out_proj.weight.value, mha.out_proj.bias.value))


class MLP(eqx.Module):
    """:class:`models.MLP` in Equinox."""

    layers: list

    def __init__(self, cell):
        self.layers = [_linear(d) for d in cell.layers]

    def one(self, x):
        """Logits for one example."""
        for layer in self.layers[:-1]:
            x = jax.nn.relu(layer(x))
        return self.layers[-1](x)

    def __call__(self, x):
        return jax.vmap(self.one)(x)


class LeNet(eqx.Module):
    """The demo's LeNet in Equinox (per example: (C, H, W), the Cell's layout)."""

    conv1: eqx.nn.Conv2d
    conv2: eqx.nn.Conv2d
    pool: eqx.nn.MaxPool2d
    fc1: eqx.nn.Linear
    fc2: eqx.nn.Linear

    def __init__(self, cell):
        self.conv1, self.conv2 = _conv(cell.conv1), _conv(cell.conv2)
        self.pool = eqx.nn.MaxPool2d(2, 2)
        self.fc1, self.fc2 = _linear(cell.fc1), _linear(cell.fc2)

    def one(self, x):
        """Logits for one example."""
        x = self.pool(jax.nn.relu(self.conv1(x)))
        x = self.pool(jax.nn.relu(self.conv2(x)))
        return self.fc2(jax.nn.relu(self.fc1(x.reshape(-1))))

    def __call__(self, x):
        return jax.vmap(self.one)(x)


class EncoderLayer(eqx.Module):
    """:class:`models.EncoderLayer` in Equinox, on one ``(seq, d)`` example."""

    attn: eqx.nn.MultiheadAttention
    norm1: eqx.nn.LayerNorm
    norm2: eqx.nn.LayerNorm
    ff1: eqx.nn.Linear
    ff2: eqx.nn.Linear

    def __init__(self, cell):
        self.attn = _attention(cell.attn)
        self.norm1, self.norm2 = _layer_norm(cell.norm1), _layer_norm(cell.norm2)
        self.ff1, self.ff2 = _linear(cell.ff1), _linear(cell.ff2)

    def __call__(self, x):
        x = jax.vmap(self.norm1)(x + self.attn(x, x, x))
        ff = jax.vmap(self.ff2)(jax.nn.relu(jax.vmap(self.ff1)(x)))
        return jax.vmap(self.norm2)(x + ff)


class Encoder(eqx.Module):
    """:class:`models.Encoder` in Equinox."""

    layers: list
    head: eqx.nn.Linear

    def __init__(self, cell):
        self.layers = [EncoderLayer(c) for c in cell.layers]
        self.head = _linear(cell.head)

    def one(self, x):
        """Logits for one ``(seq, d)`` example."""
        for layer in self.layers:
            x = layer(x)
        return self.head(x.mean(axis=0))

    def __call__(self, x):
        return jax.vmap(self.one)(x)


_BY_CELL = {models.MLP: MLP, models.LeNet: LeNet, models.Encoder: Encoder}


def from_cell(cell) -> eqx.Module:
    """The Equinox version of a cellkit model of ``models``, with the Cell's current weights."""
    return _BY_CELL[type(cell)](cell)
