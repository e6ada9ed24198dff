"""ReshapeAndCache, PagedAttention(Mask) and DynamicRNN (cellkit/ops/operations/inference_ops.py), and the
Ascend-only Primitives that refuse (ascend_ops.py). MindSpore 2.10 runs none of them on CPU (the first three
only in MindSpore Lite on Ascend): they are checked against NumPy written from MindSpore's documentation."""

import numpy as np
import pytest

import cellkit as ms
from cellkit.ops import operations as P

rng = np.random.default_rng(0)


def test_reshape_and_cache_writes_each_token_to_its_slot():
    blocks, block, heads, dim = 3, 4, 2, 5
    key, value = rng.normal(size=(2, 3, heads, dim)).astype(np.float32)
    kc = ms.Parameter(ms.Tensor(np.zeros((blocks, block, heads, dim), np.float32)), name="kc")
    vc = ms.Parameter(ms.Tensor(np.zeros((blocks, block, heads, dim), np.float32)), name="vc")
    slots = np.array([5, 0, 11], np.int32)
    out = ms.jit(lambda k, v, s: P.ReshapeAndCache()(k, v, kc, vc, s))(ms.Tensor(key), ms.Tensor(value),
                                                                       ms.Tensor(slots))
    np.testing.assert_array_equal(out, key)
    want_k, want_v = np.zeros((blocks * block, heads, dim), np.float32), np.zeros((blocks * block, heads, dim), np.float32)
    want_k[slots], want_v[slots] = key, value
    np.testing.assert_array_equal(np.asarray(kc.value).reshape(-1, heads, dim), want_k)
    np.testing.assert_array_equal(np.asarray(vc.value).reshape(-1, heads, dim), want_v)
    with pytest.raises(TypeError, match="Parameter"):
        P.ReshapeAndCache()(ms.Tensor(key), None, ms.Tensor(np.zeros((blocks, block, heads, dim), np.float32)),
                            None, ms.Tensor(slots))


def _attention(q, keys, vals, scale, bias=None):
    s = q @ keys.T * scale
    if bias is not None:
        s = s + bias
    p = np.exp(s - s.max())
    return (p / p.sum()) @ vals


@pytest.mark.parametrize("kv_heads", [4, 2])
def test_paged_attention_is_attention_over_each_tokens_blocks(kv_heads):
    tokens, heads, dim, blocks, block = 3, 4, 8, 6, 4
    q = rng.normal(size=(tokens, heads, dim)).astype(np.float32)
    kc = rng.normal(size=(blocks, block, kv_heads, dim)).astype(np.float32)
    vc = rng.normal(size=(blocks, block, kv_heads, dim)).astype(np.float32)
    tables = np.array([[2, 0], [5, 1], [3, 4]], np.int32)
    lens = np.array([6, 3, 8], np.int32)
    mask = rng.normal(size=(tokens, 8)).astype(np.float32)
    scale = 1 / np.sqrt(dim)
    got = P.PagedAttention(heads, scale, kv_heads)(ms.Tensor(q), ms.Tensor(kc), ms.Tensor(vc), ms.Tensor(tables),
                                                   ms.Tensor(lens), None, None, ms.Tensor(mask))
    for t in range(tokens):
        keys = kc[tables[t]].reshape(-1, kv_heads, dim)[:lens[t]]
        vals = vc[tables[t]].reshape(-1, kv_heads, dim)[:lens[t]]
        for h in range(heads):
            g = h // (heads // kv_heads)
            want = _attention(q[t, h], keys[:, g], vals[:, g], scale, mask[t, :lens[t]])
            np.testing.assert_allclose(got[t, h], want, rtol=1e-5, atol=1e-6)
    alibi = rng.normal(size=(tokens, heads, 1, 8)).astype(np.float32)
    got = P.PagedAttentionMask(heads, scale, kv_heads)(ms.Tensor(q), ms.Tensor(kc), ms.Tensor(vc), ms.Tensor(tables),
                                                       ms.Tensor(lens), None, None, ms.Tensor(alibi))
    keys = kc[tables[0]].reshape(-1, kv_heads, dim)[:lens[0]]
    vals = vc[tables[0]].reshape(-1, kv_heads, dim)[:lens[0]]
    want = _attention(q[0, 1], keys[:, 1 // (heads // kv_heads)], vals[:, 1 // (heads // kv_heads)], scale,
                      alibi[0, 1, 0, :lens[0]])
    np.testing.assert_allclose(got[0, 1], want, rtol=1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError, match="int8"):
        P.PagedAttention(heads, scale, kv_heads)(ms.Tensor(q), ms.Tensor(kc), ms.Tensor(vc), ms.Tensor(tables),
                                                 ms.Tensor(lens), ms.Tensor(np.ones((2, heads * dim), np.float32)))


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def test_dynamic_rnn_is_an_ijfo_lstm():
    steps, batch, inputs, hidden = 4, 2, 3, 5
    x = rng.normal(size=(steps, batch, inputs)).astype(np.float32)
    w = rng.normal(size=(inputs + hidden, 4 * hidden)).astype(np.float32) / 3
    b = rng.normal(size=(4 * hidden,)).astype(np.float32)
    h0, c0 = rng.normal(size=(2, 1, batch, hidden)).astype(np.float32)
    out = P.DynamicRNN(forget_bias=1.0, cell_clip=2.0)(ms.Tensor(x), ms.Tensor(w), ms.Tensor(b), None, ms.Tensor(h0),
                                                       ms.Tensor(c0))
    h, c = h0[0], c0[0]
    for t in range(steps):
        i, j, f, o = np.split(np.concatenate([x[t], h], -1) @ w + b, 4, -1)
        c = np.clip(_sigmoid(f + 1.0) * c + _sigmoid(i) * np.tanh(j), -2, 2)
        h = _sigmoid(o) * np.tanh(c)
        for got, want in zip(out, (h, h, c, _sigmoid(i), np.tanh(j), _sigmoid(f + 1.0), _sigmoid(o), np.tanh(c))):
            np.testing.assert_allclose(got[t], want, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="LSTM"):
        P.DynamicRNN(cell_type="GRU")(ms.Tensor(x), ms.Tensor(w), ms.Tensor(b))


@pytest.mark.parametrize("name", ["ApplyRotaryPosEmb", "MatmulDDS", "DSDMatmul", "FusedAdaFactor"])
def test_ascend_only_primitives_refuse_saying_what_to_use(name):
    with pytest.raises(NotImplementedError, match="use"):
        getattr(P, name)()
