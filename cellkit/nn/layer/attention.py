"""``MultiheadAttention`` with MindSpore 2.10's (PyTorch-style) constructor and layout.

>>> import cellkit as ms
>>> from cellkit import nn
>>> mha = nn.MultiheadAttention(8, 2)
>>> q = ms.ops.ones((5, 3, 8))                 # (L, N, E): sequence first by default
>>> out, weights = mha(q, q, q)
>>> out.shape, weights.shape
((5, 3, 8), (3, 5, 5))
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp

from ... import dtype as mstype
from ...cell import Cell
from ...eager_jit import host_first
from ...initializer import HeUniform, Uniform, XavierNormal, XavierUniform
from ...ops.function._utils import _v
from ...random import next_key
from ...tiered_jit import tiered_jit
from .._checks import check_bool, positive_int
from .._init_util import make_param
from .basic import Dense

__all__ = ["MultiheadAttention"]


def _linear(x, w, b):
    y = jnp.matmul(x, jnp.swapaxes(w, -1, -2))
    return y if b is None else y + b


def _mask_dtype_ok(mask) -> bool:
    dtype = jnp.result_type(mask)
    return dtype == jnp.bool_ or jnp.issubdtype(dtype, jnp.floating)


class MultiheadAttention(Cell):
    r"""Multi-head attention ``softmax(Q K^T / sqrt(head_dim) + mask) V`` (MindSpore 2.10).

    Args:
        embed_dim (int): E, the model width; must divide by ``num_heads``.
        num_heads (int): number of heads.
        dropout (float): dropout on the attention weights while training;
            default ``0.0``.
        has_bias (bool): biases on the input and output projections; default ``True``.
        add_bias_kv (bool): append learned ``bias_k``/``bias_v`` rows to the
            keys and values; default ``False``.
        add_zero_attn (bool): append a row of zeros to the keys and values;
            default ``False``.
        kdim, vdim (int or None): key/value widths; default ``None`` (= E).
        batch_first (bool): inputs are (N, L, E) instead of (L, N, E); default ``False``.
        dtype: the Parameters' dtype; default ``float32``.

    Parameters, in creation order: ``in_proj_weight`` (3E, E), rows [q; k; v],
    XavierUniform — or, when ``kdim`` or ``vdim`` differs from E,
    ``q_proj_weight`` (E, E), ``k_proj_weight`` (E, kdim), ``v_proj_weight``
    (E, vdim); ``in_proj_bias`` (3E,) zeros (with ``has_bias``); ``bias_k``,
    ``bias_v`` (1, 1, E) XavierNormal (with ``add_bias_kv``); then the
    ``out_proj`` Dense: ``out_proj.weight`` (E, E) HeUniform(sqrt(5)) and
    ``out_proj.bias`` (E,) U(±1/sqrt(E)).

    Inputs: ``query`` (L, N, E), ``key`` (S, N, kdim), ``value`` (S, N, vdim)
    (or unbatched (L, E), ...); ``key_padding_mask`` (N, S); ``need_weights``
    (default True); ``attn_mask`` (L, S) or (N*num_heads, L, S);
    ``average_attn_weights`` (default True). In a bool mask True means
    "masked" (-inf); a float mask is added to the scores.

    Returns a tuple ``(attn_output, attn_weights)``, the weights (N, L, S)
    averaged over heads or (N, num_heads, L, S); with ``need_weights=False``
    a 1-tuple ``(attn_output,)``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> mha = nn.MultiheadAttention(8, 2, batch_first=True)
    >>> x = ms.ops.ones((3, 5, 8))
    >>> mha(x, x, x, need_weights=False)[0].shape
    (3, 5, 8)
    >>> [name for name, _ in mha.parameters_and_names()]
    ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']
    >>> mha
    MultiheadAttention(
      (out_proj): Dense(input_channels=8, output_channels=8, has_bias=True)
    )
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, has_bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        self.embed_dim = positive_int(embed_dim, "embed_dim", name)
        self.num_heads = positive_int(num_heads, "num_heads", name)
        self.kdim = embed_dim if kdim is None else positive_int(kdim, "kdim", name)
        self.vdim = embed_dim if vdim is None else positive_int(vdim, "vdim", name)
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1:
            raise ValueError(f"For '{name}', 'dropout' must be a float in [0, 1], but got {dropout!r}.")
        self.dropout = dropout
        self.batch_first = check_bool(batch_first, "batch_first", name)
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise ValueError(f"For '{name}', the init argument 'embed_dim' ({embed_dim}) must be divisible "
                             f"by 'num_heads' ({num_heads}).")
        has_bias = check_bool(has_bias, "has_bias", name)
        if dtype is None:
            dtype = mstype.float32
        e = self.embed_dim
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = make_param(XavierUniform(), (e, e), dtype, "q_proj_weight", what=name)
            self.k_proj_weight = make_param(XavierUniform(), (e, self.kdim), dtype, "k_proj_weight", what=name)
            self.v_proj_weight = make_param(XavierUniform(), (e, self.vdim), dtype, "v_proj_weight", what=name)
            self.in_proj_weight = None
        else:
            self.in_proj_weight = make_param(XavierUniform(), (3 * e, e), dtype, "in_proj_weight", what=name)
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        self.in_proj_bias = make_param("zeros", (3 * e,), dtype, "in_proj_bias", what=name) if has_bias else None
        self.out_proj = Dense(e, e, has_bias=has_bias, weight_init=HeUniform(math.sqrt(5)),
                              bias_init=Uniform(1 / math.sqrt(e)), dtype=dtype)
        if add_bias_kv:
            self.bias_k = make_param(XavierNormal(), (1, 1, e), dtype, "bias_k", what=name)
            self.bias_v = make_param(XavierNormal(), (1, 1, e), dtype, "bias_v", what=name)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = check_bool(add_zero_attn, "add_zero_attn", name)
        self.dtype = dtype

    @staticmethod
    def _value(p):
        return None if p is None else p.value

    def _check_inputs(self, query, key, value, key_padding_mask, attn_mask):
        name = self.cls_name
        qn, kn, vn = jnp.ndim(query), jnp.ndim(key), jnp.ndim(value)
        if qn not in (2, 3):
            raise ValueError(f"{name}: the query should be an unbatched 2-D or a batched 3-D tensor, "
                             f"got shape {tuple(jnp.shape(query))}")
        if kn != qn or vn != qn:
            raise ValueError(f"{name}: for a {qn}-D query, key and value must be {qn}-D too, got key shape "
                             f"{tuple(jnp.shape(key))} and value shape {tuple(jnp.shape(value))}")
        for arg, x, width in (("query", query, self.embed_dim), ("key", key, self.kdim),
                              ("value", value, self.vdim)):
            if jnp.shape(x)[-1] != width:
                raise ValueError(f"{name}: expected a {arg} whose last dimension is {width}, "
                                 f"got shape {tuple(jnp.shape(x))}")
        if key_padding_mask is not None:
            if not _mask_dtype_ok(key_padding_mask):
                raise ValueError(f"{name}: only bool and floating types of key_padding_mask are supported, "
                                 f"got {jnp.result_type(key_padding_mask)}")
            if jnp.ndim(key_padding_mask) != qn - 1:
                raise ValueError(f"{name}: for a {qn}-D query the key_padding_mask must be {qn - 1}-D, "
                                 f"got shape {tuple(jnp.shape(key_padding_mask))}")
        if attn_mask is not None:
            dt = jnp.result_type(attn_mask)
            if not (_mask_dtype_ok(attn_mask) or dt == jnp.uint8):
                raise ValueError(f"{name}: attn_mask only supports float, uint8 and bool types, got {dt}")
            if jnp.ndim(attn_mask) not in (2, 3):
                raise ValueError(f"{name}: the attn_mask must be None, 2-D or 3-D, got shape "
                                 f"{tuple(jnp.shape(attn_mask))}")

    def construct(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                  average_attn_weights=True):
        query, key, value = _v(query), _v(key), _v(value)
        # Self-attention (one array for all three): one projection matmul instead of three.
        fused = self._qkv_same_embed_dim and query is key and key is value
        key_padding_mask, attn_mask = _v(key_padding_mask), _v(attn_mask)
        self._check_inputs(query, key, value, key_padding_mask, attn_mask)
        batched = jnp.ndim(query) == 3
        # (N, L, E) inputs stay as they are: the computation takes either layout.
        batch_first = batched and self.batch_first
        if not batched:
            query, key, value = query[:, None], key[:, None], value[:, None]
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask[None]
            if attn_mask is not None and attn_mask.ndim == 3 and attn_mask.shape[0] != self.num_heads:
                raise ValueError(f"{self.cls_name}: the shape of attn_mask must be "
                                 f"{(self.num_heads, query.shape[0], key.shape[0])}, got {attn_mask.shape}")
        out, weights = self._attend(query, key, value, key_padding_mask, attn_mask, average_attn_weights, fused,
                                    batch_first)
        if not batched:
            out = out[:, 0]
            weights = weights[0]
        return (out, weights) if need_weights else (out,)

    def _attend(self, query, key, value, key_padding_mask, attn_mask, average, fused=False, batch_first=False):
        name = self.cls_name
        seq, batch = (1, 0) if batch_first else (0, 1)
        tgt_len, bsz = query.shape[seq], query.shape[batch]
        src_len = key.shape[seq]
        h = self.num_heads
        if key.shape[:2] != value.shape[:2]:
            kv = (key.shape[seq], key.shape[batch]), (value.shape[seq], value.shape[batch])
            raise ValueError(f"{name}: the sequence length and batch dims of key {kv[0]} do not "
                             f"match value {kv[1]}")
        if key.shape[batch] != bsz:
            raise ValueError(f"{name}: query has batch size {bsz} but key has {key.shape[batch]}")
        if attn_mask is not None:
            if attn_mask.ndim == 2 and attn_mask.shape != (tgt_len, src_len):
                raise ValueError(f"{name}: the shape of the 2-D attn_mask should be {(tgt_len, src_len)}, "
                                 f"got {attn_mask.shape}")
            if attn_mask.ndim == 3 and attn_mask.shape != (bsz * h, tgt_len, src_len):
                raise ValueError(f"{name}: the shape of the 3-D attn_mask should be "
                                 f"{(bsz * h, tgt_len, src_len)}, got {attn_mask.shape}")
        if key_padding_mask is not None and key_padding_mask.shape != (bsz, src_len):
            raise ValueError(f"{name}: the shape of key_padding_mask should be {(bsz, src_len)}, "
                             f"got {key_padding_mask.shape}")
        if self._qkv_same_embed_dim:
            proj = self.in_proj_weight.value
        else:
            proj = (self.q_proj_weight.value, self.k_proj_weight.value, self.v_proj_weight.value)
        bias_kv = None if self.bias_k is None else (self.bias_k.value, self.bias_v.value)
        drop = self.dropout if self.training and self.dropout > 0 else 0.0
        rng = next_key() if 0 < drop < 1 else None
        return _attention(query, key, value, proj, self._value(self.in_proj_bias), bias_kv,
                          self.out_proj.weight.value, self._value(self.out_proj.bias), key_padding_mask,
                          attn_mask, rng, num_heads=h, add_zero_attn=self.add_zero_attn, dropout=drop,
                          average=bool(average), fused=bool(fused), batch_first=bool(batch_first))


def _masked(scores, mask):
    if mask is None:
        return scores
    if mask.dtype == jnp.bool_:
        return jnp.where(mask, -jnp.inf, scores)
    return scores + mask.astype(scores.dtype)


def _pad_last(m):
    return None if m is None else jnp.pad(m, [(0, 0)] * (m.ndim - 1) + [(0, 1)])


@host_first   # (small eager calls without dropout: NumPy, no executable per shape; see cellkit.host_ops)
@functools.partial(tiered_jit, inline=True, static_argnames=("num_heads", "add_zero_attn", "dropout", "average", "fused",
                                             "batch_first"))
def _attention(query, key, value, proj, in_bias, bias_kv, out_w, out_b, key_padding_mask, attn_mask, rng, *,
               num_heads, add_zero_attn, dropout, average, fused=False, batch_first=False):
    """The attention computation on (L, N, E) arrays, compiled once per configuration and shape.

    A jitted function so that eager calls dispatch one computation, not
    dozens of small ones; inside ``cellkit.jit`` or ``jax.jit`` it is inlined.
    ``fused``: ``query``, ``key`` and ``value`` are the same array and ``proj``
    the stacked (3E, E) weight. ``batch_first``: the arrays are (N, L, E).
    """
    seq = 1 if batch_first else 0
    if batch_first:
        bsz, tgt_len, e = query.shape
    else:
        tgt_len, bsz, e = query.shape
    h = num_heads
    hd = e // h
    if fused:   # query, key and value are one array: project once with the stacked weight
        q, k, v = jnp.split(_linear(query, proj, in_bias), 3, axis=-1)
    else:
        wq, wk, wv = proj if isinstance(proj, tuple) else (proj[:e], proj[e:2 * e], proj[2 * e:])
        bq, bk, bv = (None, None, None) if in_bias is None else (in_bias[:e], in_bias[e:2 * e], in_bias[2 * e:])
        q, k, v = _linear(query, wq, bq), _linear(key, wk, bk), _linear(value, wv, bv)
    if attn_mask is not None:
        if attn_mask.dtype == jnp.uint8:
            attn_mask = attn_mask.astype(jnp.bool_)
        if attn_mask.ndim == 2:
            attn_mask = attn_mask[None]
    if bias_kv is not None:
        reps = (bsz, 1, 1) if batch_first else (1, bsz, 1)
        k = jnp.concatenate([k, jnp.tile(bias_kv[0], reps)], axis=seq)
        v = jnp.concatenate([v, jnp.tile(bias_kv[1], reps)], axis=seq)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    # (L, N, E) or (N, L, E) -> (N, H, L, hd)
    if batch_first:
        q, k, v = (t.reshape(bsz, t.shape[1], h, hd).transpose(0, 2, 1, 3) for t in (q, k, v))
    else:
        q, k, v = (t.reshape(t.shape[0], bsz, h, hd).transpose(1, 2, 0, 3) for t in (q, k, v))
    if add_zero_attn:
        k = jnp.concatenate([k, jnp.zeros(k.shape[:2] + (1, hd), k.dtype)], axis=2)
        v = jnp.concatenate([v, jnp.zeros(v.shape[:2] + (1, hd), v.dtype)], axis=2)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    src_len = k.shape[2]
    kpm = None if key_padding_mask is None else key_padding_mask[:, None, None, :]   # (N, 1, 1, S)
    am = None
    if attn_mask is not None:
        am = attn_mask[None] if attn_mask.shape[0] == 1 else attn_mask.reshape(bsz, h, tgt_len, src_len)
    scores = jnp.matmul(q, jnp.swapaxes(k, -1, -2)) / jnp.sqrt(jnp.asarray(hd, q.dtype))
    weights = jax.nn.softmax(_masked(_masked(scores, am), kpm), axis=-1)
    if dropout >= 1:
        weights = jnp.zeros_like(weights)
    elif dropout > 0:
        keep = 1.0 - dropout
        weights = jnp.where(jax.random.bernoulli(rng, keep, weights.shape), weights / keep, 0).astype(weights.dtype)
    out = jnp.matmul(weights, v)                           # (N, H, L, hd)
    if batch_first:
        out = out.transpose(0, 2, 1, 3).reshape(bsz, tgt_len, e)
    else:
        out = out.transpose(2, 0, 1, 3).reshape(tgt_len, bsz, e)
    out = _linear(out, out_w, out_b)
    if average:
        weights = weights.sum(axis=1) / h
    return out, weights
