"""Products, norms and linear algebra against MindSpore's recorded outputs
(tests/fixtures/record/record_ops_math.py, family ops_math_linalg)."""

import numpy as np
import pytest

import cellkit as ms
from cellkit import ops
from ops_replay import cases, replay

DATA, NAMES = cases("ops_math_linalg")
# Values recorded by the script itself (decompositions compared through what is unique about them).
VALUES = {n for n in NAMES if "output" in DATA[n] and "inputs" not in DATA[n]}

DIFFERENT_ERRORS = {
    "matmul__bad": "ValueError",  # MindSpore: RuntimeError from its kernel for mismatched shapes
}


@pytest.mark.parametrize("name", sorted(set(NAMES) - VALUES))
def test_matches_mindspore(name):
    replay(getattr(ops, name.split("__")[0]), DATA[name], name, DIFFERENT_ERRORS)


def test_svd_and_qr_match_mindspore_up_to_signs():
    x = DATA["svd__f32/input"]["output"]
    s, u, v = DATA["svd__f32/output"]["output"]
    s2, u2, v2 = ops.svd(ms.Tensor(x))
    np.testing.assert_allclose(s2, s, rtol=1e-5)
    # singular vectors are unique up to sign: compare |u|, |v| and the reconstruction
    np.testing.assert_allclose(np.abs(u2), np.abs(u), atol=1e-5)
    np.testing.assert_allclose(np.abs(v2), np.abs(v), atol=1e-5)
    np.testing.assert_allclose(np.asarray(u2) * np.asarray(s2) @ np.asarray(v2).T, x, atol=1e-5)
    q, r = ops.qr(ms.Tensor(x))
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), DATA["qr__f32/product"]["output"], atol=1e-5)


def test_matmul_refusal_names_the_shapes():
    with pytest.raises(ValueError, match=r"ops.matmul: the inputs' shapes \(2, 3\) and \(2, 3\)"):
        ops.matmul(ops.ones((2, 3)), ops.ones((2, 3)))
