"""Elementwise math, comparison, logical, bitwise, reduction, cumulative and clip ops against
MindSpore's recorded outputs (tests/fixtures/record/record_ops_math.py), and their gradients."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import cellkit as ms
from cellkit import ops
from ops_replay import cases, replay

DATA, NAMES = cases("ops_math")

# Cases where cellkit's exception type, or its acceptance, deliberately differs from MindSpore's
# (docs/differences.md): None means cellkit computes what MindSpore's CPU build refuses.
DIFFERENT_ERRORS = {
    "exp2__bad": "TypeError",  # MindSpore: AttributeError ('str' object has no attribute 'dtype')
    "approximate_equal__bad": "ValueError",  # MindSpore: RuntimeError for unequal shapes
    "approximate_equal__bcast": None,  # cellkit broadcasts
    "diff__n": None,  # MindSpore supports only n=1
    "round__decimals": None,  # MindSpore's CPU kernel supports only decimals=0
}

# Cases where MindSpore 2.10's CPU output is wrong: checked against NumPy instead.
MINDSPORE_BUGS = {
    "nextafter__bcast": np.nextafter,  # the kernel does not broadcast a (2, 1) input against a (3,) one
}


@pytest.mark.parametrize("name", NAMES)
def test_matches_mindspore(name):
    fn = getattr(ops, name.split("__")[0])
    if name in MINDSPORE_BUGS:
        inputs = DATA[name]["inputs"]
        np.testing.assert_allclose(fn(*[ms.Tensor(x) for x in inputs]), MINDSPORE_BUGS[name](*inputs), rtol=1e-6)
        return
    replay(fn, DATA[name], name, DIFFERENT_ERRORS)


PRIM_DATA, PRIM_NAMES = cases("ops_math_prim")
PRIM_DIFFERENT_ERRORS = {
    "CountNonZero__f32": None,  # MindSpore 2.10's CPU Primitive refuses one input
    "CountNonZero__dims": None,
}


@pytest.mark.parametrize("name", PRIM_NAMES)
def test_primitive_matches_mindspore(name):
    case = PRIM_DATA[name]
    prim = getattr(ops, name.split("__")[0])(*case["ctor"])
    replay(prim, case, name, PRIM_DIFFERENT_ERRORS)
