import jax
import jax.numpy as jnp
import pytest

import cellkit as ms
from cellkit import nn


def test_modes_and_settings():
    assert ms.get_context("mode") == ms.PYNATIVE_MODE
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
    assert ms.get_context("mode") == ms.GRAPH_MODE and ms.get_context("device_target") == "CPU"
    ms.set_context(mode=ms.PYNATIVE_MODE)
    with pytest.raises(ValueError, match="GRAPH_MODE .* or PYNATIVE_MODE"):
        ms.set_context(mode=5)
    with pytest.raises(ValueError, match="unknown key 'nope'"):
        ms.get_context("nope")


def test_graph_mode_cell_calls_compile_once_and_see_new_values():
    d = nn.Dense(2, 2, weight_init="ones", bias_init="zeros")
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        assert d(jnp.ones((1, 2))).tolist() == [[2.0, 2.0]]
        d.weight.set_data(ms.ops.zeros((2, 2)))
        assert d(jnp.ones((1, 2))).tolist() == [[0.0, 0.0]]
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_debug_nans_raises_inside_jit():
    p = ms.Parameter(ms.Tensor(-1.0), name="p")
    f = ms.jit(lambda: jnp.log(p.value))
    assert bool(jnp.isnan(f()))
    ms.set_context(debug_nans=True)
    try:
        with pytest.raises(FloatingPointError):
            ms.jit(lambda: jnp.log(p.value))()
    finally:
        ms.set_context(debug_nans=False)
    assert not jax.config.jax_debug_nans
