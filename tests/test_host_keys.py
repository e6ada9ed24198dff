"""cellkit.host_keys: jax.random's threefry keys made and split with NumPy are jax.random's, bit for bit."""

import jax
import numpy as np
import pytest
from compile_count import compiles

import cellkit as ms
from cellkit import host_keys
from cellkit import random as ckrandom


@pytest.mark.parametrize("seed", [0, 1, 42, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1])
def test_seed_key_is_jax_random_key(seed):
    np.testing.assert_array_equal(jax.random.key_data(host_keys.seed_key(seed)),
                                  jax.random.key_data(jax.random.key(seed)))


def test_seeds_the_host_cannot_make_are_left_to_jax():
    assert host_keys.seed_key(2 ** 32) is None
    assert host_keys.seed_key(-1) is None


@pytest.mark.parametrize("num", [1, 2, 3, 7, 300])
def test_split_data_is_jax_random_split(num):
    for seed in (0, 5, 2 ** 31 + 3):
        key = jax.random.key(seed)
        np.testing.assert_array_equal(host_keys.split_data(key, num),
                                      jax.random.key_data(jax.random.split(key, num)))


def test_threefry2x32_is_jaxs_hash():
    rng = np.random.default_rng(0)
    k1, k2 = rng.integers(0, 2 ** 32, 2, dtype=np.uint32)
    x1, x2 = rng.integers(0, 2 ** 32, (2, 64), dtype=np.uint32)
    want = jax.random.key_data(jax.random.wrap_key_data(np.array([k1, k2], np.uint32)))   # the key round-trips
    np.testing.assert_array_equal(want, [k1, k2])
    got = host_keys.threefry2x32(k1, k2, x1, x2)
    from jax.extend.random import threefry_2x32
    ref = threefry_2x32(np.array([k1, k2], np.uint32), np.concatenate([x1, x2]))
    np.testing.assert_array_equal(np.concatenate(got), ref)


def test_no_host_key_under_a_trace_or_without_partitionable_threefry():
    key = jax.random.key(0)
    seen = []
    jax.jit(lambda k: seen.append(host_keys.split_data(k, 2)) or k)(key)
    assert seen == [None]
    with jax.threefry_partitionable(False):
        assert host_keys.split_data(key, 2) is None and host_keys.seed_key(0) is None


def test_the_stream_gives_the_same_keys_made_on_the_host_and_compiled():
    """Past HOST_SPLITS the stream splits by a compiled executable: the keys go on as jax.random's."""
    ms.set_seed(11)
    got = [np.asarray(jax.random.key_data(ms.random.next_key())) for _ in range(ckrandom.HOST_SPLITS + 40)]
    key, want = jax.random.key(11), []
    for _ in range(len(got)):
        key, sub = jax.random.split(key)
        want.append(np.asarray(jax.random.key_data(sub)))
    np.testing.assert_array_equal(np.stack(got), np.stack(want))


def test_seeding_compiles_nothing():
    ms.set_seed(123)
    with compiles() as made:
        ms.set_seed(4567)
        ms.random.next_key(3)
    assert made["n"] == 0


def test_the_host_makes_values_outside_every_trace_and_under_an_eager_differentiation_only():
    seen = []

    def probe(x):
        seen.append(host_keys.concrete_context())
        return x * 2.0

    probe(1.0)
    jax.grad(probe)(1.0)
    jax.jvp(probe, (1.0,), (1.0,))
    jax.grad(lambda x: jax.grad(probe)(x))(1.0)   # (second order, still eager)
    assert seen == [True, True, True, True]
    seen.clear()
    jax.jit(probe)(1.0)
    jax.vmap(probe)(np.ones(2))
    jax.jit(jax.grad(probe))(1.0)   # (a grad inside jit is staged: not the host's)
    jax.grad(lambda x: jax.vmap(probe)(x).sum())(np.ones(2))
    assert seen == [False, False, False, False]


def test_under_an_eager_grad_the_stream_splits_on_the_host_with_the_same_keys():
    ms.set_seed(21)
    outside = np.asarray(jax.random.key_data(ms.random.next_key()))
    ms.set_seed(21)
    keys = []

    def loss(x):
        keys.append(np.asarray(jax.random.key_data(ms.random.next_key())))
        return (x * 3.0).sum()

    with compiles() as made:
        ms.grad(loss)(ms.Tensor(np.ones(3, np.float32)))
    assert made["n"] == 0
    np.testing.assert_array_equal(keys[0], outside)
