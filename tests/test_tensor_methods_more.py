"""The Tensor methods of ``tensor_cases_more.py`` against values recorded under MindSpore 2.10.

Where MindSpore 2.10's CPU build cannot run a method (no kernel, or a defect: ``eigvals``,
``triangular_solve``, ``kthvalue``, ``quantile``, ``nanquantile``, ``fills``; the recorded
error is checked), the result is checked against NumPy instead.
"""

import jax
import numpy as np
import pytest
from jax.test_util import check_grads

import cellkit as ms
from ms_fixtures import load
from test_tensor_methods import assert_same, to_cellkit

FAMILIES = ["tensor_linalg", "tensor_more", "tensor_keywords"]
PROPERTIES = {"mH"}
FIXTURES = {family: load(family) for family in FAMILIES}
CASES = [(family, name) for family in FAMILIES for name in FIXTURES[family]]


def _tri(b, A, upper=True, transpose=False, unitriangular=False):
    T = np.triu(A) if upper else np.tril(A)
    if unitriangular:
        np.fill_diagonal(T, 1.0)
    return np.linalg.solve(T.T if transpose else T, b), A


def _kth(x, k, dim=-1, keepdim=False):
    idx = np.take(np.argsort(x, axis=dim, kind="stable"), k - 1, axis=dim)
    val = np.take_along_axis(x, np.expand_dims(idx, dim), dim)
    return (val, np.expand_dims(idx, dim)) if keepdim else (val.squeeze(dim), idx)


# NumPy references for the cases MindSpore's CPU build refuses.
NUMPY = {
    "eigvals:0": lambda x: np.sort_complex(np.linalg.eigvals(x).astype(np.complex64)),
    "triangular_solve:0": _tri,
    "triangular_solve:1": _tri,
    "kthvalue:0": _kth,
    "kthvalue:1": _kth,
    "quantile:0": lambda x, q: np.quantile(x, q).astype(np.float32),
    "quantile:1": lambda x, q, axis, keepdims: np.quantile(x, q, axis=axis, keepdims=keepdims).astype(np.float32),
    "nanquantile:0": lambda x, q, axis: np.nanquantile(x, q, axis=axis).astype(np.float32),
    "fills:0": lambda x, v: np.full_like(x, v),
}


def _call(method, x, args, kwargs):
    if method in PROPERTIES:
        return getattr(x, method)
    if method == "from_numpy":
        return x.from_numpy(np.asarray(args[0]))
    return getattr(x, method)(*args, **kwargs)


@pytest.mark.parametrize("family, name", CASES, ids=[n for _, n in CASES])
def test_tensor_method_matches_mindspore(family, name):
    case = FIXTURES[family][name]
    x, *args = [to_cellkit(v) for v in case["inputs"]]
    kwargs = {k: to_cellkit(v) for k, v in case["kwargs"].items()}
    method = name.split(":")[0]
    got = _call(method, x, args, kwargs)
    if "error" in case:
        assert name in NUMPY, f"{name}: MindSpore raised {case['error']} ({case['message']})"
        want = NUMPY[name](*case["inputs"], **case["kwargs"])
        if name.startswith("eigvals"):
            got = np.sort_complex(np.asarray(got))
        assert_same(got, want, name)
        return
    if method == "svd" and not kwargs:  # singular vectors are defined up to sign: compare s and U S V^T
        s, u, v = (np.asarray(a) for a in got)
        assert_same(got[0], case["output"][0], name)
        np.testing.assert_allclose(u @ np.diag(s) @ v.T, case["inputs"][0], atol=1e-5)
        return
    assert_same(got, case["output"], name)


def test_methods_work_under_jit_and_grad():
    x = ms.Tensor([[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 1.5]])
    f = ms.jit(lambda t: (t.det(), t.inverse().sum(), t.logaddexp(t).sum(), t.kthvalue(2)[0].sum(),
                          t.renorm(2, 0, 1.0).sum(), t.rot90(1, (0, 1))[0, 0]))
    eager = (x.det(), x.inverse().sum(), x.logaddexp(x).sum(), x.kthvalue(2)[0].sum(), x.renorm(2, 0, 1.0).sum(),
             x.rot90(1, (0, 1))[0, 0])
    for a, b in zip(f(x), eager):
        np.testing.assert_allclose(a, b, rtol=1e-5)
    def f(t):
        t = jax.numpy.asarray(t)
        return t.det() + t.logdet() + t.renorm(2, 0, 1.0).sum() + t.diff().sum()
    check_grads(f, (x,), order=1, modes=["rev"], atol=1e-2, rtol=1e-2)


def test_from_numpy_and_index_put():
    a = np.arange(4, dtype=np.float32)
    t = ms.Tensor.from_numpy(a) if hasattr(ms.Tensor, "from_numpy") else ms.Tensor([0.0]).from_numpy(a)
    a[0] = 9.0  # a copy: the Tensor does not change
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    y = ms.Tensor([[1.0, 2.0], [3.0, 4.0]]).index_put((ms.Tensor([0, 1]), ms.Tensor([1, 1])), ms.Tensor([5.0, 6.0]))
    assert y.tolist() == [[1.0, 5.0], [3.0, 6.0]]


def test_random_methods_draw_from_the_key_stream():
    x = ms.ops.zeros((1000,), ms.float32)
    ms.set_seed(3)
    u = x.uniform(2.0, 3.0)
    c = x.cauchy(1.0, 0.5)
    ln = x.log_normal(0.0, 0.25)
    assert u.shape == c.shape == ln.shape == (1000,) and u.dtype == ms.float32
    assert 2.0 <= float(u.min()) and float(u.max()) < 3.0
    assert abs(float(np.median(np.asarray(c))) - 1.0) < 0.1
    assert float(ln.min()) > 0 and abs(float(np.median(np.log(np.asarray(ln))))) < 0.05
    ms.set_seed(3)
    assert np.array_equal(np.asarray(x.uniform(2.0, 3.0)), np.asarray(u))


def test_qr_householder_methods():
    a = ms.Tensor(np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32))
    h, tau = a.geqrf()
    q = h.orgqr(tau)
    r = np.triu(np.asarray(h))[:3]
    np.testing.assert_allclose(np.asarray(q) @ r, np.asarray(a), atol=1e-5)
    other = np.random.default_rng(1).normal(size=(4, 2)).astype(np.float32)
    q_full = np.asarray(h.ormqr(tau, np.eye(4, dtype=np.float32)))
    np.testing.assert_allclose(q_full[:, :3], np.asarray(q), atol=1e-5)
    np.testing.assert_allclose(h.ormqr(tau, other), q_full @ other, atol=1e-5)
    np.testing.assert_allclose(h.ormqr(tau, other, transpose=True), q_full.T @ other, atol=1e-5)
