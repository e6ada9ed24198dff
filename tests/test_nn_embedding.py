"""Embedding: table layout and init, lookup, padding_idx semantics, gradients."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit import nn
from nn_helpers import FLOAT, close, grads_ok, params_of

TABLE = np.arange(15, dtype=np.float32).reshape(5, 3) / 10


def test_embedding_parameters_init_and_repr():
    ms.set_seed(3)
    emb = nn.Embedding(200, 50)
    assert params_of(emb) == {"embedding_table": ("embedding_table", (200, 50), "Float32", True)}
    table = np.asarray(emb.embedding_table)
    assert abs(table.std() - 0.01) < 0.0005 and abs(table.mean()) < 0.0005     # Normal(sigma=0.01)
    assert repr(nn.Embedding(5, 3)) == (
        "Embedding(vocab_size=5, embedding_size=3, use_one_hot=False, embedding_table=Parameter "
        "(name=embedding_table, shape=(5, 3), dtype=Float32, requires_grad=True), dtype=Float32, padding_idx=None)")

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(5, 3)

        def construct(self, ids):
            return self.emb(ids)
    assert params_of(Net()) == {"emb.embedding_table": ("emb.embedding_table", (5, 3), "Float32", True)}


@pytest.mark.parametrize("one_hot", [False, True])
def test_embedding_lookup_matches_indexing(one_hot):
    emb = nn.Embedding(5, 3, use_one_hot=one_hot, embedding_table=ms.Tensor(TABLE))
    ids = np.array([[0, 4, 2], [1, 1, 3]], np.int32)
    y = emb(ms.Tensor(ids))
    assert y.shape == (2, 3, 3) and y.dtype == jnp.float32
    close(y, TABLE[ids])
    close(emb(ms.Tensor(3, ms.int32)), TABLE[3])


def test_padding_idx_zeroes_the_row_only_at_init():
    emb = nn.Embedding(5, 3, embedding_table=ms.Tensor(TABLE), padding_idx=2, dtype=FLOAT)
    want = TABLE.copy()
    want[2] = 0
    close(emb.embedding_table, want)
    ids = ms.Tensor([2, 2, 0], ms.int32)
    (g,) = ms.grad(lambda i: emb(i).sum(), None, [emb.embedding_table])(ids)
    close(g, [[1, 1, 1], [0, 0, 0], [2, 2, 2], [0, 0, 0], [0, 0, 0]])    # not masked, unlike PyTorch
    emb.embedding_table.set_data(emb.embedding_table - 0.5 * g)
    close(emb(ms.Tensor([2], ms.int32)), [[-1.0, -1.0, -1.0]])


def test_embedding_checks():
    emb = nn.Embedding(5, 3)
    with pytest.raises(TypeError, match="Embedding: expected integer ids"):
        emb(ms.Tensor([1.0]))
    with pytest.raises(ValueError, match=r"Embedding: ids must be in \[-5, 5\) \(vocab_size 5\), got values "
                                         r"from 0 to 5"):
        emb(ms.Tensor([0, 5], ms.int32))
    with pytest.raises(ValueError, match="got values from -6 to 1"):
        emb(ms.Tensor([-6, 1], ms.int32))
    table = nn.Embedding(5, 3, embedding_table=ms.Tensor(TABLE))
    close(table(ms.Tensor([-1, 1], ms.int32)), TABLE[[4, 1]])       # negative ids count from the end
    y = ms.jit(lambda i: table(i))(ms.Tensor([-1, 5], ms.int32))
    close(y[0], TABLE[4])
    assert np.isnan(np.asarray(y[1])).all()                          # out of range inside jit: NaN
    with pytest.raises(ValueError, match="padding_idx"):
        nn.Embedding(5, 3, padding_idx=5)
    with pytest.raises(TypeError, match="vocab_size"):
        nn.Embedding(5.0, 3)


def test_embedding_gradients_and_jax_transforms():
    emb = nn.Embedding(5, 3, embedding_table=ms.Tensor(TABLE, FLOAT), dtype=FLOAT)
    ids = jnp.array([[0, 3], [3, 4]], jnp.int32)
    grads_ok(lambda net: jnp.sin(net(ids)), (emb,))
    close(jax.jit(lambda n, i: n(i))(emb, ids), TABLE[np.asarray(ids)])
