"""Large-model inference Primitives of mindformers: ``ReshapeAndCache`` (write keys and values into a
block-wise KV cache), ``PagedAttention``/``PagedAttentionMask`` (attention over it) and ``DynamicRNN``
(an LSTM over time). MindSpore 2.10 runs the first three only in MindSpore Lite on Ascend ("no backend
implementation"); here they are computed from their documented meaning, over dense JAX arrays.

>>> import numpy as np
>>> import cellkit as ms
>>> from cellkit.ops import operations as P
>>> cache = ms.Parameter(ms.ops.zeros((2, 2, 1, 1)), name="key_cache")   # 2 blocks of 2 slots
>>> _ = P.ReshapeAndCache()(ms.Tensor([[[5.]]]), None, cache, None, ms.Tensor([3], ms.int32))
>>> cache.value.reshape(-1)
Array([0., 0., 0., 5.], dtype=float32)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...parameter import Parameter
from ..function._utils import _v
from ..primitive import REQUIRED, install_primitives

__all__ = []
EAGER_LOOPS = ("_dynamic_rnn",)   # (JAX loops from Python: cellkit.tracing)


def _cache_write(cache, rows, slots, what):
    if not isinstance(cache, Parameter):
        raise TypeError(f"For 'ReshapeAndCache', {what} must be a Parameter (it is updated in place), got "
                        f"{type(cache).__name__}")
    c = cache.value
    flat = c.reshape((-1,) + c.shape[2:]).at[slots].set(jnp.asarray(_v(rows), c.dtype), mode="drop")
    cache.assign_value(flat.reshape(c.shape))


def _reshape_and_cache(key, value=None, key_cache=None, value_cache=None, slot_mapping=None):
    """Token ``t``'s key (and value) goes to slot ``slot_mapping[t]`` of the cache, flattened over
    (block, position in block); returns ``key``."""
    slots = jnp.asarray(_v(slot_mapping)).astype(jnp.int32)
    _cache_write(key_cache, key, slots, "key_cache")
    if value is not None:
        _cache_write(value_cache, value, slots, "value_cache")
    return jnp.asarray(_v(key))


def _paged(query, key_cache, value_cache, block_tables, context_lens, bias, *, head_num, scale_value, kv_head_num):
    q = jnp.asarray(_v(query))
    kc, vc = jnp.asarray(_v(key_cache)), jnp.asarray(_v(value_cache))
    tables = jnp.asarray(_v(block_tables)).astype(jnp.int32)
    lens = jnp.asarray(_v(context_lens)).astype(jnp.int32)
    tokens, heads, dim = q.shape
    kv_heads = kv_head_num or heads
    if heads != head_num or heads % kv_heads:
        raise ValueError(f"For 'PagedAttention', query has {heads} heads, head_num is {head_num} and kv_head_num "
                         f"{kv_head_num}: head_num must match and be a multiple of kv_head_num")
    block = kc.shape[1]
    keys = kc[tables].reshape(tokens, -1, kv_heads, kc.shape[-1])  # (tokens, blocks * block, kv heads, dim)
    vals = vc[tables].reshape(tokens, -1, kv_heads, vc.shape[-1])
    group = heads // kv_heads
    keys, vals = jnp.repeat(keys, group, axis=2), jnp.repeat(vals, group, axis=2)
    scores = jnp.einsum("thd,tkhd->thk", q.astype(jnp.float32), keys.astype(jnp.float32)) * scale_value
    if bias is not None:
        scores = scores + bias
    valid = jnp.arange(tables.shape[1] * block)[None, None, :] < lens[:, None, None]
    scores = jnp.where(valid, scores, -jnp.inf)
    out = jnp.einsum("thk,tkhd->thd", jax.nn.softmax(scores, axis=-1), vals.astype(jnp.float32))
    return out.astype(q.dtype)


def _no_quant(antiquant_scale, antiquant_offset, kv_cache_quant_mode):
    if antiquant_scale is not None or antiquant_offset is not None:
        raise NotImplementedError("PagedAttention: int8 KV caches (antiquant_scale/antiquant_offset, "
                                  f"kv_cache_quant_mode={kv_cache_quant_mode!r}) are not supported; keep the "
                                  "caches in a float dtype")


def _paged_attention(query, key_cache, value_cache, block_tables, context_lens, antiquant_scale=None,
                     antiquant_offset=None, attn_mask=None, q_seq_lens=None, alibi_mask=None, *, head_num,
                     scale_value, kv_head_num, kv_cache_quant_mode, mask_mode, mla_v_dim):
    """Each token's query attends to the first ``context_lens[t]`` cached positions of its blocks
    (``block_tables[t]``); ``attn_mask`` and ``alibi_mask`` (tokens, max context) are added to the scores."""
    _no_quant(antiquant_scale, antiquant_offset, kv_cache_quant_mode)
    if q_seq_lens is not None or mask_mode != "MASK_DEFAULT" or mla_v_dim:
        raise NotImplementedError("PagedAttention: q_seq_lens, mask_mode='TRAPEZOIDAL' and mla_v_dim are not "
                                  "supported; one query per sequence (decoding) is")
    bias = None
    for extra in (attn_mask, alibi_mask):
        if extra is not None:
            term = jnp.asarray(_v(extra), jnp.float32)[:, None, :]
            bias = term if bias is None else bias + term
    return _paged(query, key_cache, value_cache, block_tables, context_lens, _pad_bias(bias, key_cache,
                  block_tables), head_num=head_num, scale_value=scale_value, kv_head_num=kv_head_num)


def _pad_bias(bias, key_cache, block_tables):
    """A bias over the longest context, padded to the cache positions the block table spans."""
    if bias is None:
        return None
    span = jnp.asarray(_v(block_tables)).shape[1] * jnp.asarray(_v(key_cache)).shape[1]
    return jnp.pad(bias, ((0, 0),) * (bias.ndim - 1) + ((0, span - bias.shape[-1]),))


def _paged_attention_mask(query, key_cache, value_cache, block_tables, context_lens, antiquant_scale=None,
                          antiquant_offset=None, alibi_mask=None, attn_mask=None, *, head_num, scale_value,
                          kv_head_num, kv_cache_quant_mode):
    """``PagedAttention`` with ``alibi_mask`` (tokens, heads, 1, kv len) and ``attn_mask`` (tokens, 1, kv len)
    added to the scores."""
    _no_quant(antiquant_scale, antiquant_offset, kv_cache_quant_mode)
    bias = None
    if alibi_mask is not None:
        bias = jnp.asarray(_v(alibi_mask), jnp.float32)[:, :, 0, :]
    if attn_mask is not None:
        term = jnp.asarray(_v(attn_mask), jnp.float32)[:, 0, None, :]
        bias = term if bias is None else bias + term
    return _paged(query, key_cache, value_cache, block_tables, context_lens, _pad_bias(bias, key_cache,
                  block_tables), head_num=head_num, scale_value=scale_value, kv_head_num=kv_head_num)


def _dynamic_rnn(x, w, b, seq_length=None, init_h=None, init_c=None, *, cell_type, direction, cell_depth,
                 use_peephole, keep_prob, cell_clip, num_proj, time_major, activation, forget_bias, is_training):
    """An LSTM over ``x`` (time, batch, input): gates ``[x_t, h] @ w + b`` in the order i, j, f, o (``w`` is
    (input + hidden, 4 hidden)), ``forget_bias`` added to f, ``c`` clipped to ``cell_clip`` when positive.
    Returns ``(y, output_h, output_c, i, j, f, o, tanhc)``, each (time, batch, hidden)."""
    unsupported = {"cell_type": (cell_type, "LSTM"), "direction": (direction, "UNIDIRECTIONAL"),
                   "cell_depth": (cell_depth, 1), "use_peephole": (use_peephole, False),
                   "keep_prob": (keep_prob, 1.0), "num_proj": (num_proj, 0), "time_major": (time_major, True),
                   "activation": (activation, "tanh")}
    for name, (got, only) in unsupported.items():
        if got != only:
            raise ValueError(f"For 'DynamicRNN', {name} must be {only!r} (the only value MindSpore supports), "
                             f"got {got!r}")
    if seq_length is not None:
        raise ValueError("For 'DynamicRNN', seq_length must be None (the only value MindSpore supports)")
    xs, wv, bv = (jnp.asarray(_v(a)) for a in (x, w, b))
    steps, batch, _ = xs.shape
    hidden = wv.shape[1] // 4
    h0 = jnp.zeros((batch, hidden), xs.dtype) if init_h is None else jnp.asarray(_v(init_h)).reshape(batch, hidden)
    c0 = jnp.zeros((batch, hidden), xs.dtype) if init_c is None else jnp.asarray(_v(init_c)).reshape(batch, hidden)

    def step(carry, xt):
        h, c = carry
        gates = jnp.concatenate([xt, h], -1) @ wv + bv
        i, j, f, o = jnp.split(gates, 4, axis=-1)
        i, j, f, o = jax.nn.sigmoid(i), jnp.tanh(j), jax.nn.sigmoid(f + forget_bias), jax.nn.sigmoid(o)
        c = f * c + i * j
        if cell_clip > 0:
            c = jnp.clip(c, -cell_clip, cell_clip)
        tc = jnp.tanh(c)
        h = o * tc
        return (h, c), (h, c, i, j, f, o, tc)

    _, (hs, cs, i, j, f, o, tc) = jax.lax.scan(step, (h0, c0), xs)
    return hs, hs, cs, i, j, f, o, tc


_PAGED = {"head_num": REQUIRED, "scale_value": REQUIRED, "kv_head_num": REQUIRED, "kv_cache_quant_mode": "DEFAULT"}

# Name: (op, constructor arguments with MindSpore's defaults[, check])
PRIMITIVES = {
    "ReshapeAndCache": (_reshape_and_cache, {}),
    "PagedAttention": (_paged_attention, {**_PAGED, "mask_mode": "MASK_DEFAULT", "mla_v_dim": 0}),
    "PagedAttentionMask": (_paged_attention_mask, dict(_PAGED)),
    "DynamicRNN": (_dynamic_rnn, {"cell_type": "LSTM", "direction": "UNIDIRECTIONAL", "cell_depth": 1,
                                  "use_peephole": False, "keep_prob": 1.0, "cell_clip": -1.0, "num_proj": 0,
                                  "time_major": True, "activation": "tanh", "forget_bias": 0.0,
                                  "is_training": True}),
}
install_primitives(globals(), __all__, PRIMITIVES)
