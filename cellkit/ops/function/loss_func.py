"""Loss functions with MindSpore 2.10's signatures, defaults, reductions and exceptions.

``reduction`` is ``'mean'``, ``'sum'`` or ``'none'`` (``kl_div`` also takes
``'batchmean'``); anything else is a ``ValueError``. Float16/bfloat16 inputs are
computed in float32 and cast back; float64 stays float64.

>>> import cellkit as ms
>>> from cellkit import ops
>>> x, y = ms.Tensor([0.5, -1.0]), ms.Tensor([1.0, 0.0])
>>> round(float(ops.binary_cross_entropy_with_logits(x, y)), 4)
0.3937
>>> ops.l1_loss(x, y, reduction='none')
Array([0.5, 1. ], dtype=float32)
>>> round(float(ops.cross_entropy(ms.Tensor([[2.0, 1.0, 0.1]]), ms.Tensor([0], ms.int32))), 4)
0.417
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from .activation_func import float_arg, number_arg, tensor_arg
from ...eager_jit import eager_jit, needs_values
from ._utils import exporter

__all__ = []
EAGER_LOOPS = ("ctc_forward", "ctc_loss")   # (JAX loops from Python: cellkit.tracing)
_public = exporter(__all__)

_REDUCTIONS = ("mean", "sum", "none")


def check_reduction(op, reduction, allowed=_REDUCTIONS):
    if not isinstance(reduction, str) or reduction not in allowed:
        raise ValueError(f"For '{op}', the 'reduction' must be in {list(allowed)}, but got {reduction}.")
    return reduction


def reduce_loss(loss, reduction):
    if reduction == "mean":
        return jnp.mean(loss)
    if reduction == "sum":
        return jnp.sum(loss)
    return loss


def compute_dtype(*arrays):
    """float64 if any input is float64, else float32 (half precision is upcast)."""
    return jnp.float64 if any(a.dtype == jnp.float64 for a in arrays) else jnp.float32


def _real(op, x, what):
    x = tensor_arg(op, x, what)
    if not (jnp.issubdtype(x.dtype, jnp.floating) or jnp.issubdtype(x.dtype, jnp.integer)):
        raise TypeError(f"For '{op}', '{what}' must be a real-valued Tensor, but got {x.dtype}.")
    return x


def _broadcast(op, a, b, names):
    try:
        return jnp.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"For '{op}', the shapes of '{names[0]}' {tuple(a.shape)} and '{names[1]}' "
                         f"{tuple(b.shape)} do not broadcast.") from None


def _same_shape(op, a, b, names):
    if a.shape != b.shape:
        raise ValueError(f"For '{op}', '{names[0]}' and '{names[1]}' must have the same shape, but got "
                         f"{tuple(a.shape)} and {tuple(b.shape)}.")


def _elementwise(op, input, target, reduction, fn, same_shape=False, names=("input", "target")):  # noqa: A002
    """``fn(x, y)`` on float-computed inputs, reduced, in the input's float dtype."""
    check_reduction(op, reduction)
    x, y = _real(op, input, names[0]), _real(op, target, names[1])
    (_same_shape if same_shape else _broadcast)(op, x, y, names)
    out_dtype = x.dtype if jnp.issubdtype(x.dtype, jnp.floating) else jnp.float32
    dtype = compute_dtype(x, y)
    return reduce_loss(fn(x.astype(dtype), y.astype(dtype)), reduction).astype(out_dtype)


@_public
def l1_loss(input, target, reduction="mean"):  # noqa: A002
    """``|input - target|`` (broadcasting), reduced."""
    return _elementwise("l1_loss", input, target, reduction, lambda x, y: jnp.abs(x - y))


@_public
def mse_loss(input, target, reduction="mean"):  # noqa: A002
    """``(input - target)**2`` (broadcasting), reduced."""
    return _elementwise("mse_loss", input, target, reduction, lambda x, y: jnp.square(x - y))


@_public
def smooth_l1_loss(input, target, beta=1.0, reduction="none"):  # noqa: A002
    """``0.5 d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (same shapes; default ``'none'``).

    ``beta == 0`` is the L1 loss; a negative ``beta`` is MindSpore's ``RuntimeError``.
    """
    number_arg("smooth_l1_loss", beta, "beta")
    if beta < 0:
        raise RuntimeError(f"For 'SmoothL1Loss', the values for beta not support negative values, but got {beta}.")

    def fn(x, y):
        d = jnp.abs(x - y)
        if beta == 0:
            return d
        return jnp.where(d < beta, 0.5 * jnp.square(d) / beta, d - 0.5 * beta)
    return _elementwise("smooth_l1_loss", input, target, reduction, fn, same_shape=True)


@_public
def huber_loss(input, target, reduction="mean", delta=1.0):  # noqa: A002
    """``0.5 d**2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)`` (broadcasting); ``delta > 0``."""
    number_arg("huber_loss", delta, "delta")
    if delta <= 0:
        raise ValueError(f"For 'huber_loss', the argument 'delta' must > 0.0, but got {delta}.")

    def fn(x, y):
        d = jnp.abs(x - y)
        return jnp.where(d < delta, 0.5 * jnp.square(d), delta * (d - 0.5 * delta))
    return _elementwise("huber_loss", input, target, reduction, fn)


@_public
def soft_margin_loss(input, target, reduction="mean"):  # noqa: A002
    """``log(1 + exp(-target * input))`` (same shapes), reduced."""
    return _elementwise("soft_margin_loss", input, target, reduction, lambda x, y: jax.nn.softplus(-y * x),
                        same_shape=True)


def _weight(op, weight, what="weight"):
    if weight is None:
        return None
    if isinstance(weight, (list, tuple, int, float)):
        raise TypeError(f"For '{op}', '{what}' must be a Tensor or None, but got {type(weight).__name__}.")
    return tensor_arg(op, weight, what)


@_public
def binary_cross_entropy(logits, labels, weight=None, reduction="mean"):
    """``-weight * (labels log(logits) + (1 - labels) log(1 - logits))`` on probabilities ``logits``."""
    op = "binary_cross_entropy"
    w = _weight(op, weight)

    def fn(p, y):
        loss = -(y * jnp.maximum(jnp.log(p), -100.0) + (1.0 - y) * jnp.maximum(jnp.log1p(-p), -100.0))
        return loss if w is None else w.astype(loss.dtype) * loss
    return _elementwise(op, logits, labels, reduction, fn, same_shape=True, names=("logits", "labels"))


@_public
def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction="mean"):  # noqa: A002
    """BCE on logits, computed stably:
    ``-weight * (pos_weight * target * log(sigmoid(x)) + (1 - target) * log(1 - sigmoid(x)))``."""
    op = "binary_cross_entropy_with_logits"
    w, pw = _weight(op, weight), _weight(op, pos_weight, "pos_weight")

    def fn(x, y):
        positive = y * jax.nn.log_sigmoid(x)
        if pw is not None:
            positive = pw.astype(x.dtype) * positive
        loss = -(positive + (1.0 - y) * jax.nn.log_sigmoid(-x))
        if w is not None:
            loss = w.astype(x.dtype) * loss
        if loss.shape != x.shape:
            raise ValueError(f"For '{op}', 'weight' and 'pos_weight' must broadcast to the shape of 'input' "
                             f"{tuple(x.shape)}, but the loss has shape {tuple(loss.shape)}.")
        return loss
    return _elementwise(op, input, target, reduction, fn, same_shape=True)


@_public
def kl_div(logits, labels, reduction="mean"):
    """``labels * (log(labels) - logits)`` (0 where ``labels == 0``); ``'batchmean'`` divides the sum by the
    batch size, ``'mean'`` by the number of elements."""
    op = "kl_div"
    check_reduction(op, reduction, ("none", "mean", "batchmean", "sum"))
    x, y = float_arg(op, logits, "logits"), float_arg(op, labels, "labels")
    _broadcast(op, x, y, ("logits", "labels"))
    dtype = compute_dtype(x, y)
    xc, yc = x.astype(dtype), y.astype(dtype)
    loss = jnp.where(yc > 0, yc * (jnp.log(jnp.where(yc > 0, yc, 1.0)) - xc), -yc * xc * 0)
    if reduction == "batchmean":
        out = jnp.sum(loss) / x.shape[0]
    else:
        out = reduce_loss(loss, reduction)
    return out.astype(x.dtype)


def _class_axis(x) -> int:
    return 0 if x.ndim == 1 else 1


def _labels_in_range(op, labels, n_classes, ignore_index=None) -> None:
    """Eagerly (concrete labels only), refuse class indices outside ``[0, n_classes)``."""
    if isinstance(labels, jax.core.Tracer):
        needs_values()   # an eager call compiled whole must check its labels: run it op by op
        return
    values = np.asarray(labels)
    if ignore_index is not None:
        values = values[values != ignore_index]
    if values.size and (values.min() < 0 or values.max() >= n_classes):
        bad = values[(values < 0) | (values >= n_classes)][0]
        raise ValueError(f"For '{op}', the class indices in 'labels' must be in [0, {n_classes})"
                         + (f" or equal ignore_index={ignore_index}" if ignore_index is not None else "")
                         + f", but got {int(bad)}.")


def nll(op, logp, labels, weight, ignore_index, reduction, label_smoothing):
    """Negative log-likelihood of log-probabilities ``logp`` ((C,), (N, C) or (N, C, d...)) at class
    indices ``labels``, with label smoothing; ``'mean'`` divides by the summed weights of the kept targets."""
    axis = _class_axis(logp)
    n_classes = logp.shape[axis]
    expected = logp.shape[:axis] + logp.shape[axis + 1:]
    if tuple(labels.shape) != tuple(expected):
        raise ValueError(f"For '{op}', the shape of 'logits' should be (N, C, d_0, d_1, ...) and the shape "
                         f"of 'labels' (N, d_0, d_1, ...), but got 'logits' shape {tuple(logp.shape)} and "
                         f"'labels' shape {tuple(labels.shape)}.")
    if weight is not None and weight.shape[0] != n_classes:
        raise ValueError(f"For '{op}', 'weight' must have one entry per class ({n_classes}), but got "
                         f"shape {tuple(weight.shape)}.")
    _labels_in_range(op, labels, n_classes, ignore_index)
    return _nll_core(logp, labels, weight, ignore_index, reduction, label_smoothing)


@eager_jit
def _nll_core(logp, labels, weight, ignore_index, reduction, label_smoothing):
    """:func:`nll` once its arguments are checked (one executable eagerly)."""
    axis = _class_axis(logp)
    n_classes = logp.shape[axis]
    keep = labels != ignore_index
    safe = jnp.where(keep, labels, 0)
    picked = jnp.squeeze(jnp.take_along_axis(logp, jnp.expand_dims(safe, axis), axis=axis), axis)
    w_c = jnp.ones((n_classes,), logp.dtype) if weight is None else weight.astype(logp.dtype)
    w_y = jnp.where(keep, w_c[safe], 0.0)
    loss = -w_y * picked
    smooth = None
    if label_smoothing > 0.0:
        shape = [1] * logp.ndim
        shape[axis] = n_classes
        smooth = jnp.where(keep, -jnp.sum(logp * w_c.reshape(shape), axis=axis), 0.0)
    if reduction == "mean":
        total = jnp.sum(w_y)
        loss = jnp.sum(loss) / total
        smooth = None if smooth is None else jnp.sum(smooth) / total
    elif reduction == "sum":
        loss = jnp.sum(loss)
        smooth = None if smooth is None else jnp.sum(smooth)
    if smooth is None:
        return loss
    return (1.0 - label_smoothing) * loss + (label_smoothing / n_classes) * smooth


def class_weight(op, weight):
    """A (C,) float weight Tensor (or None), checked."""
    if weight is None:
        return None
    weight = _weight(op, weight)
    if weight.ndim != 1 or not jnp.issubdtype(weight.dtype, jnp.floating):
        raise TypeError(f"For '{op}', 'weight' must be a 1-D float Tensor of shape (C,), but got shape "
                        f"{tuple(weight.shape)} and dtype {weight.dtype}.")
    return weight


def check_ignore_index(op, ignore_index) -> int:
    if isinstance(ignore_index, bool) or not isinstance(ignore_index, (int, np.integer)):
        raise TypeError(f"For '{op}', 'ignore_index' must be an int, but got {type(ignore_index).__name__}.")
    return int(ignore_index)


def check_label_smoothing(op, label_smoothing) -> float:
    number_arg(op, label_smoothing, "label_smoothing")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"For '{op}', the 'label_smoothing' must be in range of [0.0, 1.0], but got "
                         f"{label_smoothing}.")
    return float(label_smoothing)


def _probabilities(logp, target, weight, reduction, eps, op):
    axis = _class_axis(logp)
    n_classes = logp.shape[axis]
    if eps > 0.0:
        target = target * (1.0 - eps) + eps / n_classes
    loss = logp * target
    if weight is not None:
        if weight.shape[0] != n_classes:
            raise ValueError(f"For '{op}', 'weight' must have one entry per class ({n_classes}), but got "
                             f"shape {tuple(weight.shape)}.")
        shape = [1] * logp.ndim
        shape[axis] = n_classes
        loss = loss * weight.astype(logp.dtype).reshape(shape)
    if reduction == "mean":
        return -jnp.sum(loss) / (logp.size / n_classes)
    if reduction == "sum":
        return -jnp.sum(loss)
    return -jnp.sum(loss, axis=axis)


@_public
def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):  # noqa: A002
    """Cross entropy of logits ``input`` ((C,), (N, C) or (N, C, d...)) with class indices (an integer
    ``target`` without the class axis) or class probabilities (a float ``target`` of ``input``'s shape).

    Class indices equal to ``ignore_index`` count zero and leave the ``'mean'``
    denominator (the summed weights of the kept targets).
    """
    op = "cross_entropy"
    check_reduction(op, reduction)
    ignore_index = check_ignore_index(op, ignore_index)
    eps = check_label_smoothing(op, label_smoothing)
    x, t = float_arg(op, input), tensor_arg(op, target, "target")
    if x.ndim < 1:
        raise ValueError(f"For '{op}', 'input' must have at least one dimension (the classes).")
    w = class_weight(op, weight)
    dtype = compute_dtype(x)
    logp = jax.nn.log_softmax(x.astype(dtype), axis=_class_axis(x))
    if t.ndim == x.ndim and jnp.issubdtype(t.dtype, jnp.floating):
        _same_shape(op, x, t, ("input", "target"))
        out = _probabilities(logp, t.astype(dtype), w, reduction, eps, op)
    elif t.ndim == x.ndim - 1 and jnp.issubdtype(t.dtype, jnp.integer):
        out = nll(op, logp, t, w, ignore_index, reduction, eps)
    else:
        raise ValueError(f"For '{op}', 'target' must be class indices (integers, one dimension fewer than "
                         f"'input') or probabilities (floats of the shape of 'input'), but got shape "
                         f"{tuple(t.shape)} and dtype {t.dtype} for 'input' of shape {tuple(x.shape)}.")
    return out.astype(x.dtype)


@_public
def nll_loss(inputs, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """Negative log-likelihood of log-probabilities ``inputs`` at class indices ``target``."""
    op = "nll_loss"
    check_reduction(op, reduction)
    ignore_index = check_ignore_index(op, ignore_index)
    eps = check_label_smoothing(op, label_smoothing)
    x, t = float_arg(op, inputs, "inputs"), tensor_arg(op, target, "target")
    if not jnp.issubdtype(t.dtype, jnp.integer):
        raise TypeError(f"For '{op}', 'target' must be class indices of an integer dtype, but got {t.dtype}.")
    if x.ndim < 1:
        raise ValueError(f"For '{op}', 'inputs' must have at least one dimension (the classes).")
    out = nll(op, x.astype(compute_dtype(x)), t, class_weight(op, weight), ignore_index, reduction, eps)
    return out.astype(x.dtype)


@_public
def margin_ranking_loss(input1, input2, target, margin=0.0, reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)``; ``margin`` must be a float."""
    op = "margin_ranking_loss"
    number_arg(op, margin, "margin", (float,))
    check_reduction(op, reduction)
    a, b, y = (float_arg(op, v, n) for v, n in ((input1, "input1"), (input2, "input2"), (target, "target")))
    return reduce_loss(jnp.maximum(0.0, -y * (a - b) + margin), reduction).astype(a.dtype)


@_public
def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction="mean"):
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where ``target == -1``
    (cosine over axis 1); ``margin`` in [-1, 1]."""
    op = "ops.cosine_embedding_loss"
    a, b, y = (_real(op, v, n) for v, n in ((input1, "input1"), (input2, "input2"), (target, "target")))
    number_arg(op, margin, "margin")
    if not -1.0 <= margin <= 1.0:
        raise ValueError(f"For {op}, the value of 'margin' should be in [-1, 1], but got {margin}.")
    check_reduction(op, reduction)
    reduced = a.shape[:1] + a.shape[2:]
    if tuple(y.shape) != tuple(reduced):
        raise ValueError(f"For '{op}', the shape of parameter 'input1' reduce on 'axis': (1,) must be equal to "
                         f"the shape of 'target' {tuple(y.shape)}, but got {tuple(reduced)}.")
    dtype = compute_dtype(a, b)
    a, b = a.astype(dtype), b.astype(dtype)
    cos = jnp.sum(a * b, 1) / (jnp.sqrt(jnp.sum(a * a, 1)) * jnp.sqrt(jnp.sum(b * b, 1)))
    loss = jnp.where(y == 1, 1.0 - cos, 0.0) + jnp.where(y == -1, jnp.maximum(cos - margin, 0.0), 0.0)
    return reduce_loss(loss, reduction).astype(dtype)


@_public
def hinge_embedding_loss(inputs, targets, margin=1.0, reduction="mean"):
    """``inputs`` where ``targets > 0``, ``max(0, margin - inputs)`` where ``targets < 0``."""
    op = "hinge_embedding_loss"
    number_arg(op, margin, "margin")
    check_reduction(op, reduction)
    x, y = float_arg(op, inputs, "inputs"), _real(op, targets, "targets")
    _broadcast(op, x, y, ("inputs", "targets"))
    loss = jnp.where(y > 0, x, 0.0) + jnp.where(y < 0, jnp.maximum(margin - x, 0.0), 0.0)
    return reduce_loss(loss, reduction).astype(x.dtype)


def multi_margin(op, input, target, p, margin, weight, reduction):  # noqa: A002
    if isinstance(p, bool) or p not in (1, 2):
        raise ValueError(f"For 'MultiMarginLoss', the 'p' must be int and must in {{1, 2}}, but got '{p}'.")
    check_reduction(op, reduction)
    x, t = float_arg(op, input), tensor_arg(op, target, "target")
    if not jnp.issubdtype(t.dtype, jnp.integer):
        raise TypeError(f"For '{op}', 'target' must be class indices of an integer dtype, but got {t.dtype}.")
    if x.ndim != 2 or t.shape != x.shape[:1]:
        raise ValueError(f"For '{op}', 'input' must be (N, C) and 'target' (N,), but got {tuple(x.shape)} and "
                         f"{tuple(t.shape)}.")
    _labels_in_range(op, t, x.shape[1])
    xy = jnp.take_along_axis(x, t[:, None], axis=1)
    term = jnp.maximum(0.0, margin - xy + x) ** p
    w = class_weight(op, weight)
    if w is not None:
        term = term * w.astype(x.dtype)[t][:, None]
    term = jnp.where(jnp.arange(x.shape[1])[None, :] == t[:, None], 0.0, term)
    return reduce_loss(jnp.sum(term, axis=1) / x.shape[1], reduction).astype(x.dtype)


@_public
def multi_margin_loss(input, target, p=1, margin=1, weight=None, reduction="mean"):  # noqa: A002
    """``sum_{j != y} w[y] max(0, margin - x[y] + x[j])**p / C`` per sample; ``p`` is 1 or 2, ``margin`` an int."""
    number_arg("multi_margin_loss", margin, "margin", (int,))
    return multi_margin("multi_margin_loss", input, target, p, margin, weight, reduction)


@_public
def multilabel_margin_loss(input, target, reduction="mean"):  # noqa: A002
    """``sum_{j in targets} sum_{i not in targets} max(0, 1 - (x[j] - x[i])) / C``; each row of ``target``
    lists class indices and ends at the first -1."""
    op = "multilabel_margin_loss"
    check_reduction(op, reduction)
    x, t = float_arg(op, input), tensor_arg(op, target, "target")
    _same_shape(op, x, t, ("input", "target"))
    squeeze = x.ndim == 1
    x2, t2 = (x[None], t[None]) if squeeze else (x, t)
    n_classes = x2.shape[-1]
    valid = jnp.cumprod(t2 >= 0, axis=-1).astype(bool)
    is_target = jnp.zeros(x2.shape, bool)
    rows = jnp.arange(x2.shape[0])[:, None]
    is_target = is_target.at[rows, jnp.where(valid, t2, 0)].max(valid)
    xj = jnp.take_along_axis(x2, jnp.where(valid, t2, 0), axis=-1)
    hinge = jnp.maximum(0.0, 1.0 - (xj[:, :, None] - x2[:, None, :]))
    hinge = hinge * valid[:, :, None] * (~is_target)[:, None, :]
    loss = jnp.sum(hinge, axis=(1, 2)) / n_classes
    loss = loss[0] if squeeze else loss
    return reduce_loss(loss, reduction).astype(x.dtype)


@_public
def multilabel_soft_margin_loss(input, target, weight=None, reduction="mean"):  # noqa: A002
    """``-mean_c w_c (y log sigmoid(x) + (1 - y) log sigmoid(-x))`` per sample (classes on the last axis)."""
    op = "multilabel_soft_margin_loss"
    check_reduction(op, reduction)
    x, y = float_arg(op, input), _real(op, target, "target")
    w = _weight(op, weight)
    loss = -(y * jax.nn.log_sigmoid(x) + (1 - y) * jax.nn.log_sigmoid(-x))
    if w is not None:
        loss = loss * w.astype(loss.dtype)
    return reduce_loss(jnp.sum(loss, axis=-1) / x.shape[-1], reduction).astype(x.dtype)


def pairwise_distance(a, b, p, eps):
    return jnp.sum(jnp.abs(a - b + eps) ** p, axis=-1) ** (1.0 / p)


@_public
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False, reduction="mean"):
    """``max(d(a, pos) - d(a, neg) + margin, 0)`` with ``d`` the ``p``-norm of ``x - y + eps`` over the last
    axis; ``swap`` uses ``min(d(a, neg), d(pos, neg))``."""
    op = "triplet_margin_loss"
    check_reduction(op, reduction)
    a, pos, neg = (float_arg(op, v, n) for v, n in ((anchor, "anchor"), (positive, "positive"),
                                                     (negative, "negative")))
    if a.ndim <= 1 and pos.ndim <= 1 and neg.ndim <= 1:
        raise ValueError(f"For TripletMarginLoss, dimensions of input x, positive and negative cannot be less than "
                         f"1 at the same time, x_dim: {a.ndim}, positive_dim: {pos.ndim}, negative_dim: {neg.ndim}.")
    d_pos, d_neg = pairwise_distance(a, pos, p, eps), pairwise_distance(a, neg, p, eps)
    if swap:
        d_neg = jnp.minimum(d_neg, pairwise_distance(pos, neg, p, eps))
    return reduce_loss(jnp.maximum(d_pos - d_neg + margin, 0.0), reduction).astype(a.dtype)


@_public
def gaussian_nll_loss(x, target, var, full=False, eps=1e-6, reduction="mean"):
    """``0.5 (log(max(var, eps)) + (x - target)**2 / max(var, eps))`` (+ ``0.5 log(2 pi)`` when ``full``);
    ``var`` may lack ``x``'s last axis."""
    op = "gaussian_nll_loss"
    x, t, v = (tensor_arg(op, a, n) for a, n in ((x, "x"), (target, "target"), (var, "var")))
    if not isinstance(full, bool):
        raise TypeError(f"For '{op}', 'full' must be a bool, but got {type(full).__name__}.")
    if not isinstance(eps, float) or eps <= 0:
        raise ValueError(f"For '{op}', 'eps' must be a positive float, but got {eps}.")
    check_reduction(op, reduction)
    if x.shape != v.shape and x.shape[:-1] == v.shape:
        v = v[..., None]
    maxima = jnp.maximum(v, eps)
    loss = 0.5 * (jnp.log(maxima) + jnp.square(x - t) / maxima) + (0.5 * math.log(2 * math.pi) if full else 0.0)
    return reduce_loss(loss, reduction)


_NEG = -1e30  # a finite stand-in for log(0), so that gradients through logaddexp stay finite


def ctc_forward(log_probs, targets, input_lengths, target_lengths, blank):
    """The CTC forward variables: ``(negative log-likelihood (N,), log_alpha (N, T, 2S+1))``, with
    ``-inf`` where a state is unreachable or past the sample's lengths (MindSpore's ``log_alpha``)."""
    lp = jnp.asarray(log_probs)
    n_steps, batch = lp.shape[0], lp.shape[1]
    tg, il, tl = (jnp.asarray(a).astype(jnp.int32) for a in (targets, input_lengths, target_lengths))
    tg = tg.reshape(batch, -1)
    il, tl = il.reshape(batch), tl.reshape(batch)
    n_states = 2 * tg.shape[1] + 1
    ext = jnp.full((batch, n_states), blank, jnp.int32).at[:, 1::2].set(tg)
    s = jnp.arange(n_states)[None, :]
    valid = s < (2 * tl[:, None] + 1)
    prev2 = jnp.concatenate([jnp.full((batch, 2), -1, jnp.int32), ext[:, :-2]], axis=1)
    skip = (s % 2 == 1) & (s >= 2) & (ext != prev2)
    emit = jnp.take_along_axis(lp, jnp.broadcast_to(ext[None], (n_steps, batch, n_states)), axis=2)
    neg = jnp.asarray(_NEG, lp.dtype)
    first = jnp.where(valid & (s < 2) & (il[:, None] > 0), emit[0], neg)

    def step(alpha, inputs):
        e, t = inputs
        pad1 = jnp.full((batch, 1), neg)
        a1 = jnp.concatenate([pad1, alpha[:, :-1]], axis=1)
        a2 = jnp.concatenate([pad1, pad1, alpha[:, :-2]], axis=1)
        new = jnp.logaddexp(alpha, a1)
        new = jnp.where(skip, jnp.logaddexp(new, a2), new) + e
        new = jnp.where(valid & (t < il[:, None]), jnp.maximum(new, neg), neg)
        return new, new

    _, rest = jax.lax.scan(step, first, (emit[1:], jnp.arange(1, n_steps)))
    alpha = jnp.concatenate([first[None], rest], axis=0)  # (T, N, 2S+1)
    last = alpha[jnp.maximum(il - 1, 0), jnp.arange(batch)]
    end = jnp.take_along_axis(last, (2 * tl)[:, None], axis=1)[:, 0]
    before = jnp.where(tl > 0, jnp.take_along_axis(last, jnp.maximum(2 * tl - 1, 0)[:, None], axis=1)[:, 0], neg)
    nll = -jnp.logaddexp(end, before)
    nll = jnp.where(nll > -0.1 * _NEG, jnp.inf, nll)
    log_alpha = jnp.transpose(jnp.where(alpha < 0.1 * _NEG, -jnp.inf, alpha), (1, 0, 2))
    return nll, log_alpha


def _ctc_args(op, log_probs, targets, input_lengths, target_lengths):
    lp = float_arg(op, log_probs, "log_probs")
    tg, il, tl = (tensor_arg(op, a, n) for a, n in ((targets, "targets"), (input_lengths, "input_lengths"),
                                                     (target_lengths, "target_lengths")))
    if lp.ndim != 3:
        raise ValueError(f"For '{op}', 'log_probs' must be (T, N, C), but got shape {tuple(lp.shape)}.")
    return lp, tg, il, tl


@_public
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """Connectionist temporal classification loss of ``log_probs`` (T, N, C) against padded ``targets``
    (N, S); returns ``(loss, log_alpha)`` as MindSpore, ``log_alpha`` the forward variables (N, T, 2S+1).
    ``'mean'`` divides each loss by its target length, then averages over the batch;
    ``zero_infinity`` replaces infinite losses by 0."""
    op = "ctc_loss"
    check_reduction(op, reduction)
    lp, tg, il, tl = _ctc_args(op, log_probs, targets, input_lengths, target_lengths)
    loss, log_alpha = ctc_forward(lp, tg, il, tl, blank)
    if zero_infinity:
        loss = jnp.where(jnp.isinf(loss), 0.0, loss)
    loss = loss.astype(lp.dtype)
    if reduction == "mean":
        return jnp.mean(loss / jnp.maximum(tl, 1).astype(lp.dtype)), log_alpha
    return reduce_loss(loss, reduction), log_alpha
