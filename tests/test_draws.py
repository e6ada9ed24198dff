"""cellkit.draws: jax.random's standard draws, any size, one executable per distribution."""

import jax
import numpy as np
import pytest

from cellkit import draws

DTYPE = np.dtype(np.float64 if jax.config.jax_enable_x64 else np.float32)
SHAPES = [(), (1,), (3, 5), (0, 4), (draws.CHUNK + 17,), (2, 300, 130)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_the_same_numbers_as_jax_random(shape):
    key = jax.random.key(5)
    np.testing.assert_array_equal(draws.standard("normal", key, shape, DTYPE),
                                  np.asarray(jax.random.normal(key, shape, DTYPE)))
    np.testing.assert_array_equal(draws.standard("uniform", key, shape, DTYPE),
                                  np.asarray(jax.random.uniform(key, shape, DTYPE)))
    np.testing.assert_array_equal(draws.standard("truncated_normal", key, shape, DTYPE, -1.5, 0.5),
                                  np.asarray(jax.random.truncated_normal(key, -1.5, 0.5, shape, DTYPE)))


def test_one_executable_per_distribution():
    from compile_count import compiles
    key = jax.random.key(1)
    draws.standard("normal", key, (4,), DTYPE)
    with compiles() as made:
        for shape in ((7, 3), (11,), (2, 3, 4, 5), (draws.CHUNK * 2 + 1,)):
            draws.standard("normal", key, shape, DTYPE)
    assert made["n"] == 0


def test_unsupported_keys_and_dtypes_say_so():
    assert draws.standard("normal", jax.random.key(0), (3,), np.dtype(np.float16)) is None
    assert draws.standard("normal", jax.random.key(0, impl="rbg"), (3,), DTYPE) is None


def test_a_large_uniform_draw_has_the_same_bits_from_its_executable():
    key = jax.random.key(11)
    shape = (draws.HOST_UNIFORM // 64 + 1, 64)    # (just past the host's size: the executable's chunks)
    np.testing.assert_array_equal(draws.standard("uniform", key, shape, DTYPE),
                                  np.asarray(jax.random.uniform(key, shape, DTYPE)))


def test_small_uniform_draws_compile_nothing():
    from compile_count import compiles
    key = jax.random.key(2)
    with compiles() as made:
        for shape in ((7, 3), (draws.CHUNK + 5,)):
            draws.standard("uniform", key, shape, DTYPE)
    assert made["n"] == 0


@pytest.mark.parametrize("start", [0, 2 ** 32 - 10, 2 ** 33 + 5, 2 ** 40 - 3], ids=hex)
def test_a_chunk_counts_64_bit_indices_as_jax_random_does(start):
    high, low = draws._counters(np.array([start >> 32, start & 0xFFFFFFFF], np.uint32))
    index = np.arange(start, start + draws.CHUNK, dtype=np.uint64)
    np.testing.assert_array_equal(np.asarray(high), (index >> np.uint64(32)).astype(np.uint32))
    np.testing.assert_array_equal(np.asarray(low), index.astype(np.uint32))


def test_a_large_normal_draw_is_made_without_host_hashing(monkeypatch):
    # (the hash runs inside the chunk's executable: NumPy's threefry is never called for normal draws)
    key = jax.random.key(7)
    expected = np.asarray(jax.random.normal(key, (3, draws.CHUNK + 1), DTYPE))
    monkeypatch.setattr(draws, "threefry2x32", None)
    np.testing.assert_array_equal(draws.standard("normal", key, (3, draws.CHUNK + 1), DTYPE), expected)
