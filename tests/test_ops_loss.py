"""Loss functions against MindSpore 2.10 (fixture ``loss_func``), and the ones MindSpore has no CPU kernel
for against NumPy references of their documented formulas."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import cellkit as ms
from cellkit import ops

from ms_fixtures import load

FUNC = load("loss_func")
SKIP = {
    "smooth_l1_loss|5": "beta=0 has no CPU kernel in MindSpore (L1LossExt); cellkit gives the L1 loss",
    "nll_loss|7": "MindSpore 2.10 fails on its own broadcast for ignore_index in range with reduction='none'",
    "binary_cross_entropy|3": "MindSpore's CPU kernel reads a broadcast weight as if it had the input's shape",
    "binary_cross_entropy|4": "MindSpore's CPU kernel reads a broadcast weight as if it had the input's shape",
}


def _arg(a):
    return ms.Tensor(a) if isinstance(a, np.ndarray) else a


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.skip(reason=SKIP[n])) if n in SKIP else n
                                  for n in FUNC])
def test_loss_function_matches_mindspore(name):
    case = FUNC[name]
    op = getattr(ops, name.split("|")[0])
    kwargs = {k: _arg(v) for k, v in case["kwargs"].items()}
    call = lambda: np.asarray(op(*[_arg(a) for a in case["inputs"]], **kwargs))  # noqa: E731
    if "error" in case:
        with pytest.raises(Exception) as info:
            call()
        assert type(info.value).__name__ == case["error"], info.value
        return
    want = case["output"]
    if name.startswith("ctc_loss|"):
        want = want[0]  # MindSpore also returns log_alpha; cellkit returns the loss (docs/differences.md)
    out, want = call(), np.asarray(want)
    assert out.shape == want.shape, (out.shape, want.shape)
    assert out.dtype == want.dtype or (want.dtype == np.int64 and not jax.config.jax_enable_x64)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


PRIM = load("loss_prim")


PRIM_SKIP = {
    **{f"BinaryCrossEntropy|{i}": "MindSpore's CPU kernel reads a broadcast weight as if it had the input's shape"
       for i in range(3)},
    "NLLLoss|2": "MindSpore's CPU kernel gives w[0] * -logit for an ignored target with reduction='none'",
}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.skip(reason=PRIM_SKIP[n])) if n in PRIM_SKIP
                                  else n for n in PRIM])
def test_loss_primitive_matches_mindspore(name):
    case = PRIM[name]
    cls = getattr(ops, name.split("|")[0])
    out = cls(**case["kwargs"])(*[_arg(a) for a in case["inputs"]])
    want = case["output"]
    for o, w in zip(out, want) if isinstance(want, tuple) else ((out, want),):
        np.testing.assert_allclose(np.asarray(o), np.asarray(w), rtol=1e-5, atol=1e-5)
        assert np.shape(o) == np.shape(w)


P1 = np.array([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]], np.float32)
P2 = np.array([[1.0, -2.0, 0.5], [0.0, 0.3, -0.5]], np.float32)
P3 = np.array([[0.2, 0.7, 0.9], [0.5, 0.1, 0.6]], np.float32)
SIGN6 = np.array([[1.0, -1.0, 1.0], [-1.0, 1.0, -1.0]], np.float32)


def _dist(a, b, p, eps=1e-6):
    return (np.abs(a - b + eps) ** p).sum(-1) ** (1 / p)


def test_losses_without_a_mindspore_cpu_kernel_match_their_formulas():
    """soft_margin_loss, multilabel_margin_loss and triplet_margin_loss have no CPU kernel in MindSpore 2.10."""
    np.testing.assert_allclose(ops.soft_margin_loss(P1, SIGN6, reduction="none"), np.log1p(np.exp(-SIGN6 * P1)),
                               rtol=1e-6)
    target = np.array([[2, 0, -1], [1, -1, 0]], np.int32)
    want = []
    for x, t in zip(P1, target):
        ts = list(t[:list(t).index(-1)]) if -1 in t else list(t)
        want.append(sum(max(0, 1 - (x[j] - x[i])) for j in ts for i in range(3) if i not in ts) / 3)
    np.testing.assert_allclose(ops.multilabel_margin_loss(P1, target, reduction="none"), want, rtol=1e-6)
    for p, swap in ((2, False), (1, True)):
        d_neg = _dist(P1, P3, p)
        if swap:
            d_neg = np.minimum(d_neg, _dist(P2, P3, p))
        want = np.maximum(_dist(P1, P2, p) - d_neg + 0.5, 0).mean()
        np.testing.assert_allclose(ops.triplet_margin_loss(P1, P2, P3, margin=0.5, p=p, swap=swap), want, rtol=1e-5)


def test_ctc_loss_is_infinite_when_the_target_cannot_fit_and_zero_infinity_zeroes_it():
    lp = jnp.log(jnp.full((1, 1, 3), 1 / 3, jnp.float32))
    args = (lp, jnp.array([[1, 2]]), jnp.array([1]), jnp.array([2]))
    assert np.isinf(ops.ctc_loss(*args, reduction="none")[0])
    assert float(ops.ctc_loss(*args, reduction="none", zero_infinity=True)[0]) == 0.0


LOGITS = np.array([[2.0, 1.0, 0.1], [0.5, 2.5, -1.0], [0.0, 0.0, 3.0]])
LAB = jnp.array([0, 1, 2])
GRADS = {
    "l1_loss": lambda x: ops.l1_loss(x, jnp.zeros_like(x) + 0.05),
    "mse_loss": lambda x: ops.mse_loss(x, jnp.ones_like(x)),
    "smooth_l1_loss": lambda x: ops.smooth_l1_loss(x, jnp.zeros_like(x) + 0.05, reduction="sum"),
    "huber_loss": lambda x: ops.huber_loss(x, jnp.zeros_like(x) + 0.05, delta=0.7),
    "soft_margin_loss": lambda x: ops.soft_margin_loss(x, jnp.sign(x - 0.3)),
    "binary_cross_entropy": lambda x: ops.binary_cross_entropy(jax.nn.sigmoid(x), jnp.full_like(x, 0.3)),
    "bce_with_logits": lambda x: ops.binary_cross_entropy_with_logits(x, jnp.full_like(x, 0.3),
                                                                      pos_weight=jnp.ones(3, x.dtype) * 2),
    "kl_div": lambda x: ops.kl_div(x, jnp.full_like(x, 0.2), "batchmean"),
    "cross_entropy": lambda x: ops.cross_entropy(x, LAB, label_smoothing=0.1),
    "cross_entropy(probs)": lambda x: ops.cross_entropy(x, jax.nn.softmax(jnp.ones_like(x))),
    "nll_loss": lambda x: ops.nll_loss(jax.nn.log_softmax(x), LAB, weight=jnp.array([1.0, 2.0, 0.5], x.dtype)),
    "margin_ranking_loss": lambda x: ops.margin_ranking_loss(x[0], x[1], jnp.array([1.0, -1.0, 1.0], x.dtype), 0.1),
    "cosine_embedding_loss": lambda x: ops.cosine_embedding_loss(x[:2], x[1:], jnp.array([1, -1])),
    "hinge_embedding_loss": lambda x: ops.hinge_embedding_loss(x, jnp.sign(x - 0.3), margin=3.0),
    "multi_margin_loss": lambda x: ops.multi_margin_loss(x, LAB, p=2, margin=2),
    "multilabel_margin_loss": lambda x: ops.multilabel_margin_loss(x, jnp.array([[0, -1, 0], [1, 2, -1], [2, -1, 0]])),
    "multilabel_soft_margin_loss": lambda x: ops.multilabel_soft_margin_loss(x, jnp.eye(3, dtype=x.dtype)),
    "triplet_margin_loss": lambda x: ops.triplet_margin_loss(x, x[::-1] * 0.5, x * 2.0, margin=3.0),
    "gaussian_nll_loss": lambda x: ops.gaussian_nll_loss(x, jnp.zeros_like(x), x * x + 0.5),
    "ctc_loss": lambda x: ops.ctc_loss(jax.nn.log_softmax(jnp.stack([x, x[::-1]], 1), -1),
                                       jnp.array([[1, 2], [2, 0]]), jnp.array([3, 3]), jnp.array([2, 1])),
}


@pytest.mark.parametrize("name", GRADS)
def test_loss_gradients(name):
    dtype = jnp.float64 if jax.config.jax_enable_x64 else jnp.float32
    tol = 1e-5 if dtype == jnp.float64 else 3e-2
    check_grads(GRADS[name], (jnp.asarray(LOGITS, dtype),), order=1, modes=["rev"], eps=1e-3, atol=tol, rtol=tol)
