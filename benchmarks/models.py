"""The benchmarked models as cellkit Cells, and the same models as raw JAX functions.

cellkit is the source of the weights: every other framework's model is built
from a cellkit Cell and copies its Parameters, so all variants start from the
same weights and compute the same losses (the smoke test checks it).

* :class:`MLP`: Dense layers with ReLU between them (workloads 1, 2, 5, 6).
* the demo's :class:`~cellkit.demo.LeNet` (workload 3).
* :class:`Encoder`: post-norm transformer encoder layers over ``(batch, seq,
  d)`` inputs, mean-pooled into a Dense head (workload 4).

:func:`raw_forward` gives the floor: a plain JAX function of a ``{name:
array}`` dict (cellkit's Parameter names), written with ``jax.numpy`` and
``jax.lax`` only. ``nnx_models`` and ``eqx_models`` hold the Flax NNX and
Equinox versions.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

from cellkit import nn, ops
from cellkit.demo import LeNet

__all__ = ["MLP", "Encoder", "EncoderLayer", "LeNet", "LN_EPS", "cross_entropy", "raw_params",
           "raw_forward", "copy_weights"]

# One epsilon for every framework's LayerNorm (their defaults differ: 1e-7, 1e-6, 1e-5).
LN_EPS = 1e-5


def cross_entropy(logits, labels):
    """Mean softmax cross-entropy with integer labels: the loss of every workload and variant."""
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()


class MLP(nn.Cell):
    """``len(sizes) - 1`` Dense layers, ReLU between them (not after the last)."""

    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.CellList([nn.Dense(a, b) for a, b in zip(sizes[:-1], sizes[1:])])

    def construct(self, x):
        n = len(self.layers)
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < n - 1:
                x = ops.relu(x)
        return x


class EncoderLayer(nn.Cell):
    """Self-attention then a ReLU feed-forward block, each with a residual and a LayerNorm after it."""

    def __init__(self, d, heads, ff):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm1 = nn.LayerNorm((d,), epsilon=LN_EPS)
        self.ff1 = nn.Dense(d, ff)
        self.ff2 = nn.Dense(ff, d)
        self.norm2 = nn.LayerNorm((d,), epsilon=LN_EPS)

    def construct(self, x):
        x = self.norm1(x + self.attn(x, x, x, need_weights=False)[0])
        return self.norm2(x + self.ff2(ops.relu(self.ff1(x))))


class Encoder(nn.Cell):
    """``depth`` encoder layers on ``(batch, seq, d)`` inputs; the mean over ``seq`` goes to a Dense head."""

    def __init__(self, depth, d, heads, ff, classes):
        super().__init__()
        self.heads = heads
        self.layers = nn.CellList([EncoderLayer(d, heads, ff) for _ in range(depth)])
        self.head = nn.Dense(d, classes)

    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x.mean(axis=1))


def copy_weights(src, dst) -> None:
    """Give Cell ``dst`` the weights of ``src`` (same architecture)."""
    for (name, p), (other, q) in zip(src.parameters_and_names(), dst.parameters_and_names()):
        assert name == other, (name, other)
        q.set_data(jnp.copy(p.value))   # its own buffers: a donating variant must not delete another's


def raw_params(cell) -> dict:
    """A Cell's weights as a plain ``{parameter name: array}`` dict."""
    return {name: p.value for name, p in cell.parameters_and_names()}


# ----- raw JAX ---------------------------------------------------------------------------

def _dense(p, name, x):
    return x @ p[f"{name}.weight"].T + p[f"{name}.bias"]


def _mlp(p, x, n_layers):
    for i in range(n_layers):
        x = _dense(p, f"layers.{i}", x)
        if i < n_layers - 1:
            x = jax.nn.relu(x)
    return x


def _conv_same(p, name, x):
    y = jax.lax.conv_general_dilated(x, p[f"{name}.weight"], (1, 1), "SAME",
                                     dimension_numbers=("NCHW", "OIHW", "NCHW"))
    return y + p[f"{name}.bias"][None, :, None, None]


def _max_pool2(x):
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")


def _lenet(p, x):
    x = _max_pool2(jax.nn.relu(_conv_same(p, "conv1", x)))
    x = _max_pool2(jax.nn.relu(_conv_same(p, "conv2", x)))
    x = jax.nn.relu(_dense(p, "fc1", x.reshape(x.shape[0], -1)))
    return _dense(p, "fc2", x)


def _layer_norm(p, name, x):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + LN_EPS) * p[f"{name}.gamma"] + p[f"{name}.beta"]


def _self_attention(p, name, x, heads):
    n, seq, d = x.shape
    hd = d // heads
    qkv = x @ p[f"{name}.in_proj_weight"].T + p[f"{name}.in_proj_bias"]
    q, k, v = (t.reshape(n, seq, heads, hd).transpose(0, 2, 1, 3) for t in jnp.split(qkv, 3, axis=-1))
    weights = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) / jnp.sqrt(jnp.float32(hd)), axis=-1)
    out = (weights @ v).transpose(0, 2, 1, 3).reshape(n, seq, d)
    return _dense(p, f"{name}.out_proj", out)


def _encoder(p, x, depth, heads):
    for i in range(depth):
        name = f"layers.{i}"
        x = _layer_norm(p, f"{name}.norm1", x + _self_attention(p, f"{name}.attn", x, heads))
        ff = _dense(p, f"{name}.ff2", jax.nn.relu(_dense(p, f"{name}.ff1", x)))
        x = _layer_norm(p, f"{name}.norm2", x + ff)
    return _dense(p, "head", x.mean(axis=1))


def raw_forward(cell):
    """``forward(params, x) -> logits`` in plain JAX for a Cell of this module's architectures."""
    if isinstance(cell, MLP):
        n = len(cell.layers)
        return lambda p, x: _mlp(p, x, n)
    if isinstance(cell, LeNet):
        return _lenet
    if isinstance(cell, Encoder):
        depth, heads = len(cell.layers), cell.heads
        return lambda p, x: _encoder(p, x, depth, heads)
    raise TypeError(f"no raw JAX version of {type(cell).__name__}")
