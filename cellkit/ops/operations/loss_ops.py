"""Loss Primitives (MindSpore's ``ops.BCEWithLogitsLoss``, ``ops.NLLLoss``, ...): one table line each.

Each calls a functional op of ``ops.function.loss_func`` with its constructor
arguments; the few whose outputs differ from the functional op's (``NLLLoss``
also returns the total weight, ``SoftmaxCrossEntropyWithLogits`` the gradient)
have a small adapter here.

>>> import cellkit as ms
>>> from cellkit.ops import operations as P
>>> P.L2Loss()(ms.Tensor([1.0, 2.0]))
Array(2.5, dtype=float32)
>>> loss, total = P.NLLLoss()(ms.Tensor([[-0.5, -1.0]]), ms.Tensor([1], ms.int32), ms.Tensor([1.0, 2.0]))
>>> loss, total
(Array(1., dtype=float32), Array(2., dtype=float32))
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ..function import loss_func as L
from ..function.activation_func import float_arg, tensor_arg
from ..primitive import install_primitives

__all__ = []
EAGER_LOOPS = ("_ctc_v2",)   # (JAX loops from Python: cellkit.tracing)


def _softmax_ce(logits, labels):
    """Per-sample ``-sum(labels * log_softmax(logits), -1)`` and its gradient ``softmax(logits) - labels``."""
    x, y = float_arg("SoftmaxCrossEntropyWithLogits", logits, "logits"), float_arg(
        "SoftmaxCrossEntropyWithLogits", labels, "labels")
    return -jnp.sum(y * jax.nn.log_softmax(x, -1), -1), jax.nn.softmax(x, -1) - y


def _sparse_softmax_ce(logits, labels, *, is_grad):
    """The mean cross entropy over the batch, or with ``is_grad`` its gradient with respect to ``logits``."""
    x = float_arg("SparseSoftmaxCrossEntropyWithLogits", logits, "logits")
    onehot = jax.nn.one_hot(tensor_arg("SparseSoftmaxCrossEntropyWithLogits", labels, "labels"), x.shape[-1],
                            dtype=x.dtype)
    if is_grad:
        return (jax.nn.softmax(x, -1) - onehot) / x.shape[0]
    return jnp.mean(-jnp.sum(onehot * jax.nn.log_softmax(x, -1), -1))


def _nll(logits, labels, weight, *, reduction, ignore_index):
    """``(loss, total_weight)``: the loss and the summed weights of the targets not ignored."""
    w = tensor_arg("NLLLoss", weight, "weight")
    t = tensor_arg("NLLLoss", labels, "labels")
    loss = L.nll_loss(logits, t, w, ignore_index, reduction)
    total = jnp.sum(jnp.where(t != ignore_index, w[jnp.where(t != ignore_index, t, 0)], 0.0))
    return loss, total.astype(loss.dtype)


def _bce_logits(input, target, weight=None, posWeight=None, *, reduction):  # noqa: A002,N803
    return L.binary_cross_entropy_with_logits(input, target, weight, posWeight, reduction)


def _bce(input, target, weight=None, *, reduction):  # noqa: A002
    return L.binary_cross_entropy(input, target, weight, reduction)


def _kl(logits, labels, *, reduction):
    return L.kl_div(logits, labels, reduction)


def _multi_margin(x, target, weight=None, *, p, margin, reduction):
    return L.multi_margin("MultiMarginLoss", x, target, p, margin, weight, reduction)


def _multilabel_margin(x, target, *, reduction):
    """``(loss, is_target)``: ``is_target`` marks each row's target classes."""
    t = tensor_arg("MultilabelMarginLoss", target, "target")
    valid = jnp.cumprod(t >= 0, axis=-1).astype(bool)
    is_target = jnp.zeros(t.shape, bool)
    t2, v2 = (t[None], valid[None]) if t.ndim == 1 else (t, valid)
    is_target = is_target.reshape(t2.shape).at[jnp.arange(t2.shape[0])[:, None], jnp.where(v2, t2, 0)].max(v2)
    return L.multilabel_margin_loss(x, t, reduction), is_target.reshape(t.shape).astype(t.dtype)


def _sigmoid_ce(logits, label):
    x, y = float_arg("SigmoidCrossEntropyWithLogits", logits, "logits"), float_arg(
        "SigmoidCrossEntropyWithLogits", label, "label")
    return -(y * jax.nn.log_sigmoid(x) + (1 - y) * jax.nn.log_sigmoid(-x))


def _l2(x):
    x = float_arg("L2Loss", x)
    return jnp.sum(jnp.square(x)) / 2


# Name: (op, constructor arguments with MindSpore's defaults[, check])
def _ctc_v2(log_probs, targets, input_lengths, target_lengths, *, blank, reduction, zero_infinity):
    if reduction != "none":
        raise ValueError(f"For 'CTCLossV2', the 'reduction' must be str and must be in '['none']', but got "
                         f"{reduction!r}; reduce the losses afterwards, or use ops.ctc_loss")
    return L.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity)


PRIMITIVES = {
    "CTCLossV2": (_ctc_v2, {"blank": 0, "reduction": "none", "zero_infinity": False}),
    "SoftmaxCrossEntropyWithLogits": (_softmax_ce, {}),
    "SparseSoftmaxCrossEntropyWithLogits": (_sparse_softmax_ce, {"is_grad": False}),
    "BCEWithLogitsLoss": (_bce_logits, {"reduction": "mean"}),
    "BinaryCrossEntropy": (_bce, {"reduction": "mean"}),
    "SmoothL1Loss": (L.smooth_l1_loss, {"beta": 1.0, "reduction": "none"}),
    "KLDivLoss": (_kl, {"reduction": "mean"}),
    "NLLLoss": (_nll, {"reduction": "mean", "ignore_index": -100}),
    "SoftMarginLoss": (L.soft_margin_loss, {"reduction": "mean"}),
    "MultiMarginLoss": (_multi_margin, {"p": 1, "margin": 1.0, "reduction": "mean"}),
    "MultilabelMarginLoss": (_multilabel_margin, {"reduction": "mean"}),
    "SigmoidCrossEntropyWithLogits": (_sigmoid_ce, {}),
    "L2Loss": (_l2, {}),
}
install_primitives(globals(), __all__, PRIMITIVES)
