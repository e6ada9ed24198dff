"""Neural-network functions (MindSpore's ``ops/function/nn_func.py``): ``dense`` and ``embedding``.

The activations live in ``activation_func.py`` and the losses in ``loss_func.py``.

>>> import cellkit as ms
>>> ms.ops.dense(ms.Tensor([[1., 2.]]), ms.Tensor([[1., 0.], [0., 1.], [1., 1.]]), ms.Tensor([0., 0., 1.]))
Array([[1., 2., 4.]], dtype=float32)
>>> ms.ops.embedding(ms.Tensor([2, 0], ms.int32), ms.Tensor([[0., 0.], [1., 1.], [2., 2.]]))
Array([[2., 2.],
       [0., 0.]], dtype=float32)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...parameter import Parameter
from ._utils import _v, exporter, install_renames

__all__ = []
_public = exporter(__all__)

# name: (JAX function, MindSpore signature) — the op is that function, with Parameters accepted.
RENAMES = {}
install_renames(globals(), __all__, RENAMES)


@_public
def dense(input, weight, bias=None):  # noqa: A002
    """``input @ weight.T + bias``: ``weight`` is (out, in), or (in,) for one output."""
    x, w = jnp.asarray(_v(input)), jnp.asarray(_v(weight))
    if w.ndim not in (1, 2) or x.shape[-1:] != w.shape[-1:]:
        raise ValueError(f"For 'dense', the last dimension of input {tuple(x.shape)} must equal that of weight "
                         f"{tuple(w.shape)} (out_features, in_features)")
    out = x @ (w.T if w.ndim == 2 else w)
    return out if bias is None else out + jnp.asarray(_v(bias))


def _scaled_by_frequency(rows, idx):
    """``rows`` unchanged, with the gradient of each row divided by its index's count in ``idx``."""
    flat = idx.reshape(-1)
    counts = jnp.sum(flat[:, None] == flat[None, :], axis=1).reshape(idx.shape)[..., None].astype(rows.dtype)
    return jax.lax.stop_gradient(rows) + (rows - jax.lax.stop_gradient(rows)) / counts


@_public
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False):  # noqa: A002
    """The rows of ``weight`` at the int indices ``input``.

    ``padding_idx``: that row gets no gradient; ``max_norm``: the rows looked up whose ``norm_type``-norm
    exceeds it are rescaled to it, in ``weight`` itself when it is a Parameter (as MindSpore);
    ``scale_grad_by_freq``: each row's gradient is divided by its index's count in ``input``.
    """
    idx, table = jnp.asarray(_v(input)), jnp.asarray(_v(weight))
    if not jnp.issubdtype(idx.dtype, jnp.integer):
        raise TypeError(f"For 'embedding', input must be an int tensor of indices, got {idx.dtype}")
    if table.ndim != 2:
        raise ValueError(f"For 'embedding', weight must be 2-D (num_embeddings, dim), got {tuple(table.shape)}")
    n = table.shape[0]
    if padding_idx is not None and not -n <= padding_idx < n:
        raise ValueError(f"For 'embedding', padding_idx must be in [{-n}, {n}), got {padding_idx}")
    if max_norm is not None:
        used = jnp.zeros((n,), bool).at[idx.reshape(-1)].set(True)
        norms = jnp.linalg.norm(table, ord=norm_type, axis=1)
        scale = jnp.where(used & (norms > max_norm), max_norm / (norms + 1e-7), 1.0)
        table = jax.lax.stop_gradient(table * scale[:, None] - table) + table
        if isinstance(weight, Parameter):
            weight.assign_value(jax.lax.stop_gradient(table).astype(weight.dtype))
    rows = table[idx]
    if padding_idx is not None:
        rows = jnp.where((idx == padding_idx % n)[..., None], jax.lax.stop_gradient(rows), rows)
    if scale_grad_by_freq:
        rows = _scaled_by_frequency(rows, idx)
    return rows


@_public
def rotary_position_embedding(x, cos, sin, mode=0):
    """Rotary position embedding: ``x * cos + rotate(x) * sin`` with ``cos``/``sin`` broadcast against
    ``x`` (4-D). ``mode=0`` rotates halves (GPT-NeoX: ``rotate(x) = [-x2, x1]`` for the halves of the
    last axis), ``mode=1`` rotates interleaved pairs (GPT-J: ``(a, b) -> (-b, a)``).

    >>> import cellkit as ms
    >>> x = ms.Tensor([[[[1., 2., 3., 4.]]]])
    >>> ms.ops.rotary_position_embedding(x, ms.ops.zeros((1, 1, 1, 4)), ms.ops.ones((1, 1, 1, 4)))
    Array([[[[-3., -4.,  1.,  2.]]]], dtype=float32)
    """
    x, c, s = (jnp.asarray(_v(a)) for a in (x, cos, sin))
    if not isinstance(mode, int) or isinstance(mode, bool):
        raise TypeError(f"For 'rotary_position_embedding', mode must be an int, got {type(mode).__name__}")
    if mode not in (0, 1):
        raise ValueError(f"For 'rotary_position_embedding', mode must be 0 (rotate halves) or 1 (interleaved), got {mode}")
    if x.ndim != 4 or x.shape[-1] % 2:
        raise ValueError(f"For 'rotary_position_embedding', x must be 4-D with an even last dimension, got "
                         f"{tuple(x.shape)}")
    if mode == 0:
        half = x.shape[-1] // 2
        rotated = jnp.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    else:
        pairs = x.reshape(x.shape[:-1] + (-1, 2))
        rotated = jnp.stack([-pairs[..., 1], pairs[..., 0]], axis=-1).reshape(x.shape)
    return (x * c + rotated * s).astype(x.dtype)
