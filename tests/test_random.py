import random

import numpy as np
import pytest

import cellkit as ms
from cellkit import ops


def test_set_seed_validates_and_seeds_numpy_and_python():
    with pytest.raises(ValueError, match="non-negative int"):
        ms.set_seed(-1)
    with pytest.raises(TypeError, match="seed must be an int, got float 1.5"):
        ms.set_seed(1.5)
    ms.set_seed(7)
    a = (np.random.rand(), random.random())
    ms.set_seed(7)
    assert (np.random.rand(), random.random()) == a
    assert ms.get_seed() == 7


def test_key_stream_advances():
    ms.set_seed(0)
    k1 = ms.random.next_key()
    k2 = ms.random.next_key()
    assert not np.array_equal(np.asarray(ms.ops.rand(2)), np.asarray(ms.ops.rand(2)))
    import jax
    assert not np.array_equal(jax.random.key_data(k1), jax.random.key_data(k2))


def test_random_op_shapes_and_ranges():
    assert ops.rand(2, 3).shape == (2, 3) and ops.rand((4,)).shape == (4,)
    assert ops.randn(5).shape == (5,)
    u = ops.uniform((1000,), 2.0, 3.0)
    assert 2.0 <= float(u.min()) and float(u.max()) < 3.0
    r = ops.randint(0, 5, (100,))
    assert set(np.asarray(r).tolist()) <= set(range(5))
    assert sorted(np.asarray(ops.randperm(6)).tolist()) == list(range(6))
    s = ops.shuffle(ms.Tensor(np.arange(10)))
    assert sorted(np.asarray(s).tolist()) == list(range(10))
    m = ops.multinomial(ms.Tensor([0.0, 1.0, 0.0]), 4)
    assert np.asarray(m).tolist() == [1, 1, 1, 1]
    n = ops.normal((2000,), 3.0, 0.5)
    assert abs(float(n.mean()) - 3.0) < 0.05


def test_dropout_functional_scales_and_respects_training():
    x = ops.ones((10000,))
    y = ops.dropout(x, p=0.25)
    vals = set(np.unique(np.asarray(y)).tolist())
    assert vals == {0.0, 1 / 0.75} or vals == {0.0, np.float32(1 / 0.75)}
    assert abs(float((y == 0).mean()) - 0.25) < 0.02
    assert ops.dropout(x, p=0.5, training=False) is x
    with pytest.raises(ValueError, match="p must be a float in \\[0, 1\\]"):
        ops.dropout(x, p=1.5)


def test_dropout_primitives_return_output_and_mask():
    x = ops.ones((2, 3, 4, 4))
    out, mask = ops.Dropout2D(keep_prob=0.8)(x)
    assert mask.dtype == np.bool_ and mask.shape == x.shape
    m = np.asarray(mask)
    assert (m == m[:, :, :1, :1]).all()  # whole channels
    np.testing.assert_allclose(np.asarray(out), m * 1.25)
    out1, mask1 = ops.Dropout(keep_prob=0.5)(ops.ones((100,)))
    assert mask1.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out1), np.asarray(mask1) * 2)
    with pytest.raises(ValueError, match="4-D"):
        ops.Dropout2D(0.5)(ops.ones((2, 3, 4)))
    with pytest.raises(ValueError, match="keep_prob"):
        ops.Dropout2D(1.5)
    i_out, _ = ops.Dropout2D(0.5)(ms.Tensor(np.ones((1, 8, 2, 2)), ms.int32))
    assert i_out.dtype == np.int32 and set(np.unique(np.asarray(i_out)).tolist()) <= {0, 2}
