"""MultiheadAttention: MindSpore's parameters, layout, masks and return values vs a loop reference."""

import math

import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit import nn
from nn_helpers import FLOAT, close, grads_ok, params_of, rand, replace_params

E, H = 8, 2


def np_softmax(s):
    s = s - s.max(-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(-1, keepdims=True)


def np_mha(mha, q, k, v, key_padding_mask=None, attn_mask=None, average=True):
    """Per batch element and head, written out: (L, N, E) inputs, returns (out, weights)."""
    p = {name: np.asarray(t, np.float64) for name, t in mha.parameters_and_names()}
    q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))
    e, h = mha.embed_dim, mha.num_heads
    hd = e // h
    if "in_proj_weight" in p:
        wq, wk, wv = np.split(p["in_proj_weight"], 3)
    else:
        wq, wk, wv = p["q_proj_weight"], p["k_proj_weight"], p["v_proj_weight"]
    bq, bk, bv = np.split(p["in_proj_bias"], 3) if "in_proj_bias" in p else (0, 0, 0)
    Q, K, V = q @ wq.T + bq, k @ wk.T + bk, v @ wv.T + bv
    L, N, _ = Q.shape
    if "bias_k" in p:
        K = np.concatenate([K, np.repeat(p["bias_k"], N, axis=1)])
        V = np.concatenate([V, np.repeat(p["bias_v"], N, axis=1)])
    if mha.add_zero_attn:
        K = np.concatenate([K, np.zeros((1, N, e))])
        V = np.concatenate([V, np.zeros((1, N, e))])
    S = K.shape[0]
    out = np.zeros((L, N, e))
    weights = np.zeros((N, h, L, S))
    for n in range(N):
        for i in range(h):
            sl = slice(i * hd, (i + 1) * hd)
            scores = Q[:, n, sl] @ K[:, n, sl].T / math.sqrt(hd)
            if attn_mask is not None:
                m = np.asarray(attn_mask)
                m = m if m.ndim == 2 else m[n * h + i]
                m = np.pad(m, ((0, 0), (0, S - m.shape[1])))
                scores = np.where(m, -np.inf, scores) if m.dtype == bool else scores + m
            if key_padding_mask is not None:
                kp = np.pad(np.asarray(key_padding_mask)[n], (0, S - np.shape(key_padding_mask)[1]))
                scores = np.where(kp[None, :], -np.inf, scores)
            w = np_softmax(scores)
            weights[n, i] = w
            out[:, n, sl] = w @ V[:, n, sl]
    out = out @ p["out_proj.weight"].T + p.get("out_proj.bias", 0)
    return out, (weights.mean(1) if average else weights)


def randomise(mha, seed=0):
    rng = np.random.RandomState(seed)
    replace_params(mha, {name: rng.randn(*p.shape) * 0.4 for name, p in mha.parameters_and_names()})
    return mha


def test_parameters_defaults_and_repr():
    mha = nn.MultiheadAttention(E, H)
    assert params_of(mha) == {
        "in_proj_weight": ("in_proj_weight", (24, 8), "Float32", True),
        "in_proj_bias": ("in_proj_bias", (24,), "Float32", True),
        "out_proj.weight": ("out_proj.weight", (8, 8), "Float32", True),
        "out_proj.bias": ("out_proj.bias", (8,), "Float32", True)}
    assert mha.batch_first is False and mha.dropout == 0.0
    np.testing.assert_array_equal(mha.in_proj_bias, np.zeros(24))
    assert np.abs(np.asarray(mha.in_proj_weight)).max() <= math.sqrt(6 / (8 + 24))      # XavierUniform
    assert np.abs(np.asarray(mha.out_proj.bias)).max() <= 1 / math.sqrt(8)
    assert repr(mha) == "MultiheadAttention(\n  (out_proj): Dense(input_channels=8, output_channels=8, has_bias=True)\n)"
    sep = nn.MultiheadAttention(E, H, kdim=3, vdim=5, add_bias_kv=True, has_bias=False)
    assert params_of(sep) == {
        "q_proj_weight": ("q_proj_weight", (8, 8), "Float32", True),
        "k_proj_weight": ("k_proj_weight", (8, 3), "Float32", True),
        "v_proj_weight": ("v_proj_weight", (8, 5), "Float32", True),
        "bias_k": ("bias_k", (1, 1, 8), "Float32", True),
        "bias_v": ("bias_v", (1, 1, 8), "Float32", True),
        "out_proj.weight": ("out_proj.weight", (8, 8), "Float32", True)}
    assert "Dense(input_channels=8, output_channels=8)" in repr(sep)


@pytest.mark.parametrize("kw, call", [
    (dict(), dict()),
    (dict(batch_first=True, kdim=3, vdim=5), dict()),
    (dict(), dict(average_attn_weights=False,
                  key_padding_mask=np.array([[False, False, True, False], [False, True, True, False]]))),
    (dict(), dict(attn_mask=np.triu(np.full((3, 4), -1.5), 1))),
    (dict(), dict(attn_mask=np.random.RandomState(1).rand(2 * H, 3, 4) > 0.7)),
    (dict(add_bias_kv=True, add_zero_attn=True),
     dict(key_padding_mask=np.array([[False, True, False, False], [False, False, False, True]]),
          attn_mask=np.triu(np.ones((3, 4), bool), 2))),
])
def test_matches_the_loop_reference(kw, call):
    mha = randomise(nn.MultiheadAttention(E, H, dtype=FLOAT, **kw))
    L, S, N = 3, 4, 2
    q = rand(L, N, E, seed=1)
    k = rand(S, N, mha.kdim, seed=2)
    v = rand(S, N, mha.vdim, seed=3)
    want_out, want_w = np_mha(mha, q, k, v, call.get("key_padding_mask"), call.get("attn_mask"),
                              call.get("average_attn_weights", True))
    args = {name: (ms.Tensor(m) if m.dtype == bool else ms.Tensor(m, FLOAT)) for name, m in call.items()
            if name != "average_attn_weights"}
    if kw.get("batch_first"):
        out, w = mha(*(jnp.swapaxes(t, 0, 1) for t in (q, k, v)), **args)
        out = jnp.swapaxes(out, 0, 1)
    else:
        out, w = mha(q, k, v, average_attn_weights=call.get("average_attn_weights", True), **args)
    close(out, want_out)
    close(w, want_w)


def test_need_weights_false_and_unbatched_inputs():
    mha = randomise(nn.MultiheadAttention(E, H, dtype=FLOAT))
    q = rand(3, 1, E, seed=4)
    res = mha(q, q, q, need_weights=False)
    assert isinstance(res, tuple) and len(res) == 1
    out, w = mha(q[:, 0], q[:, 0], q[:, 0])
    assert out.shape == (3, E) and w.shape == (3, 3)
    close(out, res[0][:, 0])


def test_dropout_on_the_attention_weights_follows_set_train():
    mha = randomise(nn.MultiheadAttention(E, H, dropout=0.5, dtype=FLOAT))
    q = rand(5, 2, E, seed=5)
    _, ref = mha(q, q, q, average_attn_weights=False)
    _, again = mha(q, q, q, average_attn_weights=False)
    close(again, ref)                                    # predict mode: no dropout
    mha.set_train()
    _, w = mha(q, q, q, average_attn_weights=False)
    w, ref = np.asarray(w), np.asarray(ref)
    dropped = w == 0
    assert dropped.any() and (~dropped).any()
    close(w[~dropped], 2 * ref[~dropped])               # inverted dropout: kept weights scaled by 1/(1-p)


def test_checks():
    with pytest.raises(ValueError, match="'embed_dim' \\(8\\) must be divisible by 'num_heads' \\(3\\)"):
        nn.MultiheadAttention(8, 3)
    mha = nn.MultiheadAttention(E, H)
    q = ms.ops.ones((3, 2, E))
    with pytest.raises(ValueError, match="MultiheadAttention: expected a key whose last dimension is 8"):
        mha(q, ms.ops.ones((3, 2, 4)), q)
    with pytest.raises(ValueError, match=r"2-D attn_mask should be \(3, 3\)"):
        mha(q, q, q, attn_mask=ms.ops.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"key_padding_mask should be \(2, 3\)"):
        mha(q, q, q, key_padding_mask=ms.Tensor(np.zeros((2, 4), bool)))
    with pytest.raises(ValueError, match="only bool and floating types of key_padding_mask"):
        mha(q, q, q, key_padding_mask=ms.Tensor(np.zeros((2, 3), np.int32)))


def test_gradients_through_inputs_and_parameters():
    mha = randomise(nn.MultiheadAttention(E, H, add_bias_kv=True, dtype=FLOAT))
    q, kv = rand(2, 2, E, seed=6), rand(3, 2, E, seed=7)
    mask = ms.Tensor(np.array([[False, False, True], [False, False, False]]))
    grads_ok(lambda net, q, kv: net(q, kv, kv, key_padding_mask=mask)[0], (mha, q, kv))


def test_batch_first_and_self_attention_paths_match_the_general_one():
    # (N, L, E) inputs are computed in place and one array for query/key/value is projected
    # once; both must give what the (L, N, E) path gives with three separate arrays.
    ms.set_seed(3)
    first = nn.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True, batch_first=True)
    seq = nn.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True)
    for (_, p), (_, q) in zip(first.parameters_and_names(), seq.parameters_and_names()):
        q.set_data(p.value)
    x = ms.Tensor(np.random.default_rng(0).normal(size=(3, 5, 8)), ms.float32)   # (N, L, E)
    pad = ms.Tensor(np.arange(5)[None, :] >= np.array([[5], [3], [4]]))           # (N, S)
    mask = ms.Tensor(np.triu(np.ones((5, 5), bool), 1))                         # (L, S)
    out, w = first(x, x, x, key_padding_mask=pad, attn_mask=mask)
    xs = jnp.swapaxes(x, 0, 1)
    ref, ref_w = seq(xs, xs + 0, xs * 1, key_padding_mask=pad, attn_mask=mask)
    np.testing.assert_allclose(np.asarray(out), np.asarray(jnp.swapaxes(ref, 0, 1)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(w), np.asarray(ref_w), rtol=1e-5, atol=1e-6)


def test_a_small_eager_attention_without_dropout_compiles_nothing():
    from compile_count import compiles
    mha = nn.MultiheadAttention(16, 4, batch_first=True)
    x = ms.Tensor(np.random.default_rng(2).normal(size=(2, 5, 16)).astype(np.float32))
    mask = ms.Tensor(np.array([[False] * 5, [False] * 3 + [True] * 2]))
    with compiles() as made:
        out, weights = mha(x, x, x, key_padding_mask=mask)
    assert made["n"] == 0
    staged_out, staged_weights = ms.jit(lambda a, m: mha(a, a, a, key_padding_mask=m))(x, mask)
    np.testing.assert_allclose(out, staged_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(weights, staged_weights, rtol=1e-5, atol=1e-6)
    assert float(np.abs(np.asarray(weights)[1, :, 3:]).max()) == 0.0   # (padded keys get no weight)
