"""The benchmarked models in Flax NNX, built from a cellkit Cell and holding its weights.

NNX layers keep their own layouts (``Linear`` kernels are ``(in, out)``,
``Conv`` is NHWC, attention kernels are split per head), so the weights are
transposed and reshaped on the way in; the computations are those of
``models``. Needs ``flax`` (the ``bench`` extra).
"""

from __future__ import annotations

import jax
from flax import nnx

from . import models

__all__ = ["from_cell"]


def _abstract(cls, *args, **kwargs):
    """An NNX layer with abstract weights: its random initialisation never runs (nor compiles)."""
    return nnx.eval_shape(lambda: cls(*args, **kwargs, rngs=nnx.Rngs(0)))


def _linear(dense):
    out_f, in_f = dense.weight.shape
    layer = _abstract(nnx.Linear, in_f, out_f)
    layer.kernel.set_value(dense.weight.value.T)
    layer.bias.set_value(dense.bias.value)
    return layer


def _conv(conv):
    out_c, in_c, kh, kw = conv.weight.shape
    layer = _abstract(nnx.Conv, in_c, out_c, (kh, kw), padding="SAME")
    layer.kernel.set_value(conv.weight.value.transpose(2, 3, 1, 0))   # OIHW -> HWIO
    layer.bias.set_value(conv.bias.value)
    return layer


def _layer_norm(norm):
    layer = _abstract(nnx.LayerNorm, norm.gamma.shape[0], epsilon=models.LN_EPS)
    layer.scale.set_value(norm.gamma.value)
    layer.bias.set_value(norm.beta.value)
    return layer


def _attention(mha):
    d, h = mha.embed_dim, mha.num_heads
    hd = d // h
    layer = _abstract(nnx.MultiHeadAttention, h, d, decode=False)
    w, b = mha.in_proj_weight.value, mha.in_proj_bias.value
    for i, proj in enumerate((layer.query, layer.key, layer.value)):
        proj.kernel.set_value(w[i * d:(i + 1) * d].T.reshape(d, h, hd))
        proj.bias.set_value(b[i * d:(i + 1) * d].reshape(h, hd))
    layer.out.kernel.set_value(mha.out_proj.weight.value.T.reshape(h, hd, d))
    layer.out.bias.set_value(mha.out_proj.bias.value)
    return layer


class MLP(nnx.Module):
    """:class:`models.MLP` in NNX."""

    def __init__(self, cell):
        self.layers = nnx.List([_linear(d) for d in cell.layers])

    def __call__(self, x):
        n = len(self.layers)
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < n - 1:
                x = jax.nn.relu(x)
        return x


class LeNet(nnx.Module):
    """The demo's LeNet in NNX (NCHW inputs, as the Cell takes them)."""

    def __init__(self, cell):
        self.conv1, self.conv2 = _conv(cell.conv1), _conv(cell.conv2)
        self.fc1, self.fc2 = _linear(cell.fc1), _linear(cell.fc2)

    def __call__(self, x):
        x = x.transpose(0, 2, 3, 1)
        x = nnx.max_pool(jax.nn.relu(self.conv1(x)), (2, 2), strides=(2, 2))
        x = nnx.max_pool(jax.nn.relu(self.conv2(x)), (2, 2), strides=(2, 2))
        x = x.transpose(0, 3, 1, 2).reshape(x.shape[0], -1)   # flatten in the Cell's (C, H, W) order
        return self.fc2(jax.nn.relu(self.fc1(x)))


class EncoderLayer(nnx.Module):
    """:class:`models.EncoderLayer` in NNX."""

    def __init__(self, cell):
        self.attn = _attention(cell.attn)
        self.norm1, self.norm2 = _layer_norm(cell.norm1), _layer_norm(cell.norm2)
        self.ff1, self.ff2 = _linear(cell.ff1), _linear(cell.ff2)

    def __call__(self, x):
        x = self.norm1(x + self.attn(x))
        return self.norm2(x + self.ff2(jax.nn.relu(self.ff1(x))))


class Encoder(nnx.Module):
    """:class:`models.Encoder` in NNX."""

    def __init__(self, cell):
        self.layers = nnx.List([EncoderLayer(c) for c in cell.layers])
        self.head = _linear(cell.head)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x.mean(axis=1))


_BY_CELL = {models.MLP: MLP, models.LeNet: LeNet, models.Encoder: Encoder}


def from_cell(cell) -> nnx.Module:
    """The NNX version of a cellkit model of ``models``, with the Cell's current weights."""
    return _BY_CELL[type(cell)](cell)
