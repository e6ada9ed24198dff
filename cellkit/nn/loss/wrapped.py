"""Loss Cells that are one functional op of ``ops.function.loss_func`` with their constructor's arguments
(MindSpore 2.10's ``MAELoss``, ``HuberLoss``, ``BCELoss``, ``KLDivLoss``, margin losses, ``CTCLoss``, ...).

>>> import cellkit as ms
>>> from cellkit import nn
>>> nn.HuberLoss(delta=0.5)(ms.Tensor([0.0, 2.0]), ms.Tensor([0.1, 0.0]))
Array(0.44, dtype=float32)
>>> nn.BCELoss(reduction='sum')(ms.Tensor([0.5, 0.5]), ms.Tensor([1.0, 0.0]))
Array(1.3862944, dtype=float32)
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from ...ops.function import loss_func as L
from ...ops.function.activation_func import number_arg, tensor_arg
from .loss import LossBase, MSELoss

__all__ = ["MAELoss", "L1LossExt", "RMSELoss", "HuberLoss", "SoftMarginLoss", "BCELoss", "KLDivLoss",
           "MarginRankingLoss", "CosineEmbeddingLoss", "HingeEmbeddingLoss", "MultiMarginLoss",
           "MultilabelMarginLoss", "MultiLabelSoftMarginLoss", "TripletMarginLoss", "PoissonNLLLoss",
           "GaussianNLLLoss", "CTCLoss", "DiceLoss"]


class MAELoss(LossBase):
    """Mean absolute error ``|logits - label|`` (``nn.MAELoss(reduction='mean')``), reduced by ``get_loss``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.MAELoss()(ms.Tensor([1., 2.]), ms.Tensor([0., 0.]))
    Array(1.5, dtype=float32)
    """

    def construct(self, logits, label):
        return self.get_loss(L.l1_loss(logits, label, "none"))


class L1LossExt(MAELoss):
    """``nn.L1LossExt(reduction='mean')``: the L1 loss (as ``MAELoss``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.L1LossExt('sum')(ms.Tensor([1., 2.]), ms.Tensor([0., 0.]))
    Array(3., dtype=float32)
    """


class RMSELoss(LossBase):
    """``sqrt(mean((logits - label)**2))`` (``nn.RMSELoss()``; no arguments).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.RMSELoss()(ms.Tensor([3., 3.]), ms.Tensor([0., 0.]))
    Array(3., dtype=float32)
    """

    def __init__(self):
        super().__init__()
        self.MSELoss = MSELoss()

    def construct(self, logits, label):
        return jnp.sqrt(self.MSELoss(logits, label))


class HuberLoss(LossBase):
    """``ops.huber_loss`` (``nn.HuberLoss(reduction='mean', delta=1.0)``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.HuberLoss()(ms.Tensor([0., 3.]), ms.Tensor([0.5, 0.]))
    Array(1.3125, dtype=float32)
    """

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction)
        number_arg(self.cls_name, delta, "delta")
        if delta <= 0:
            raise ValueError(f"For 'huber_loss', the argument 'delta' must > 0.0, but got {delta}.")
        self.delta = delta

    def construct(self, logits, labels):
        return L.huber_loss(logits, labels, self.reduction, self.delta)


class SoftMarginLoss(LossBase):
    """``ops.soft_margin_loss`` (``nn.SoftMarginLoss(reduction='mean')``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.SoftMarginLoss()(ms.Tensor([0., 0.]), ms.Tensor([1., -1.]))
    Array(0.6931472, dtype=float32)
    """

    def construct(self, logits, labels):
        return L.soft_margin_loss(logits, labels, self.reduction)


class BCELoss(LossBase):
    """``ops.binary_cross_entropy`` on probabilities (``nn.BCELoss(weight=None, reduction='mean')``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.BCELoss()(ms.Tensor([0.5, 0.5]), ms.Tensor([1., 0.]))
    Array(0.6931472, dtype=float32)
    """

    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction)
        self.weight = weight

    def construct(self, logits, labels):
        return L.binary_cross_entropy(logits, labels, self.weight, self.reduction)


class KLDivLoss(LossBase):
    """``ops.kl_div`` (``nn.KLDivLoss(reduction='mean')``; also ``'batchmean'``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.KLDivLoss('sum')(ms.Tensor([0., 0.]), ms.Tensor([0.5, 0.5]))
    Array(-0.6931472, dtype=float32)
    """

    def __init__(self, reduction="mean"):
        LossBase.__init__(self, "none")
        L.check_reduction(self.cls_name, reduction, ("none", "mean", "batchmean", "sum"))
        self.reduction = reduction

    def construct(self, logits, labels):
        return L.kl_div(logits, labels, self.reduction)


class MarginRankingLoss(LossBase):
    """``ops.margin_ranking_loss`` (``nn.MarginRankingLoss(margin=0.0, reduction='mean')``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.MarginRankingLoss()(ms.Tensor([1., 2.]), ms.Tensor([2., 1.]), ms.Tensor([1., 1.]))
    Array(0.5, dtype=float32)
    """

    def __init__(self, margin=0.0, reduction="mean"):
        super().__init__(reduction)
        self.margin = number_arg(self.cls_name, margin, "margin", (float,))

    def construct(self, input1, input2, target):
        return L.margin_ranking_loss(input1, input2, target, self.margin, self.reduction)


class CosineEmbeddingLoss(LossBase):
    """``ops.cosine_embedding_loss`` (``nn.CosineEmbeddingLoss(margin=0.0, reduction='mean')``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.CosineEmbeddingLoss()(ms.Tensor([[1., 0.]]), ms.Tensor([[0., 1.]]), ms.Tensor([1]))
    Array(1., dtype=float32)
    """

    def __init__(self, margin=0.0, reduction="mean"):
        super().__init__(reduction)
        self.margin = number_arg(self.cls_name, margin, "margin")

    def construct(self, logits_x1, logits_x2, labels):
        return L.cosine_embedding_loss(logits_x1, logits_x2, labels, self.margin, self.reduction)


class HingeEmbeddingLoss(LossBase):
    """``ops.hinge_embedding_loss`` (``nn.HingeEmbeddingLoss(margin=1.0, reduction='mean')``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.HingeEmbeddingLoss()(ms.Tensor([0.5, 0.5]), ms.Tensor([1., -1.]))
    Array(0.5, dtype=float32)
    """

    def __init__(self, margin=1.0, reduction="mean"):
        super().__init__(reduction)
        self.margin = number_arg(self.cls_name, margin, "margin")

    def construct(self, logits, labels):
        return L.hinge_embedding_loss(logits, labels, self.margin, self.reduction)


class MultiMarginLoss(LossBase):
    """``ops.multi_margin_loss`` (``nn.MultiMarginLoss(p=1, margin=1.0, reduction='mean', weight=None)``;
    a float ``margin``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.MultiMarginLoss()(ms.Tensor([[1., 0.]]), ms.Tensor([0]))
    Array(0., dtype=float32)
    """

    def __init__(self, p=1, margin=1.0, reduction="mean", weight=None):
        super().__init__(reduction)
        if isinstance(p, bool) or p not in (1, 2):
            raise ValueError(f"For '{self.cls_name}', the 'p' must be int and must in {{1, 2}}, but got '{p}'.")
        self.p, self.margin, self.weight = p, number_arg(self.cls_name, margin, "margin", (float,)), weight

    def construct(self, x, target, weight=None):
        w = self.weight if weight is None else weight
        return L.multi_margin(self.cls_name, x, target, self.p, self.margin, w, self.reduction)


class MultilabelMarginLoss(LossBase):
    """``ops.multilabel_margin_loss`` (``nn.MultilabelMarginLoss(reduction='mean')``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.MultilabelMarginLoss()(ms.Tensor([[1., 0.]]), ms.Tensor([[0, -1]]))
    Array(0., dtype=float32)
    """

    def construct(self, x, target):
        return L.multilabel_margin_loss(x, target, self.reduction)


class MultiLabelSoftMarginLoss(LossBase):
    """``ops.multilabel_soft_margin_loss`` (``nn.MultiLabelSoftMarginLoss(weight=None, reduction='mean')``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.MultiLabelSoftMarginLoss()(ms.Tensor([[0., 0.]]), ms.Tensor([[1., 0.]]))
    Array(0.6931472, dtype=float32)
    """

    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction)
        self.weight = weight

    def construct(self, x, target):
        return L.multilabel_soft_margin_loss(x, target, self.weight, self.reduction)


class TripletMarginLoss(LossBase):
    """``ops.triplet_margin_loss``
    (``nn.TripletMarginLoss(p=2, swap=False, eps=1e-06, reduction='mean', margin=1.0)``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.TripletMarginLoss()(ms.Tensor([[0., 0.]]), ms.Tensor([[0., 0.]]), ms.Tensor([[3., 4.]])).shape
    ()
    """

    def __init__(self, p=2, swap=False, eps=1e-06, reduction="mean", margin=1.0):
        super().__init__(reduction)
        self.p, self.swap, self.eps, self.margin = p, swap, eps, margin

    def construct(self, x, positive, negative, margin=None):
        margin = self.margin if margin is None else margin
        return L.triplet_margin_loss(x, positive, negative, margin, self.p, self.eps, self.swap, self.reduction)


class PoissonNLLLoss(LossBase):
    """Poisson negative log-likelihood (``nn.PoissonNLLLoss(log_input=True, full=False, eps=1e-08,
    reduction='mean')``): ``exp(x) - y x`` (``x - y log(x + eps)`` without ``log_input``), plus
    Stirling's term for ``y > 1`` when ``full``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.PoissonNLLLoss()(ms.Tensor([0., 0.]), ms.Tensor([1., 2.]))
    Array(1., dtype=float32)
    """

    def __init__(self, log_input=True, full=False, eps=1e-08, reduction="mean"):
        super().__init__(reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def construct(self, input, target):  # noqa: A002
        x = tensor_arg(self.cls_name, input, "input")
        y = tensor_arg(self.cls_name, target, "target").astype(x.dtype)
        loss = jnp.exp(x) - y * x if self.log_input else x - y * jnp.log(x + self.eps)
        if self.full:
            t = jnp.maximum(y, self.eps)
            stirling = (t + 0.5) * jnp.log(t) - t + 0.5 * math.log(2 * math.pi)
            loss = loss + jnp.where(t > 1, stirling, 0.0)
        return self.get_loss(loss)


class GaussianNLLLoss(LossBase):
    """``ops.gaussian_nll_loss`` (``nn.GaussianNLLLoss(*, full=False, eps=1e-06, reduction='mean')``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.GaussianNLLLoss()(ms.Tensor([0.]), ms.Tensor([1.]), ms.Tensor([1.]))
    Array(0.5, dtype=float32)
    """

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(reduction)
        if not isinstance(eps, float) or eps <= 0:
            raise ValueError(f"For '{self.cls_name}', 'eps' must be a positive float, but got {eps}.")
        self.full, self.eps = full, eps

    def construct(self, logits, labels, var):
        return L.gaussian_nll_loss(logits, labels, var, self.full, self.eps, self.reduction)


class CTCLoss(LossBase):
    """``ops.ctc_loss`` (``nn.CTCLoss(blank=0, reduction='mean', zero_infinity=False)``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.CTCLoss()(ms.ops.log_softmax(ms.ops.zeros((2, 1, 2))), ms.Tensor([[1]]), ms.Tensor([2]), ms.Tensor([1])).shape
    ()
    """

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def construct(self, log_probs, targets, input_lengths, target_lengths):
        return L.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)


class DiceLoss(LossBase):
    """``1 - 2 sum(x y) / (sum(x x) + sum(y y) + smooth)`` over all elements (``nn.DiceLoss(smooth=1e-5)``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.DiceLoss()(ms.Tensor([1., 0.]), ms.Tensor([1., 0.])).shape
    ()
    """

    def __init__(self, smooth=1e-5):
        super().__init__()
        number_arg(self.cls_name, smooth, "smooth", (float,))
        if smooth <= 0:
            raise ValueError(f"For '{self.cls_name}', 'smooth' must be a positive float, but got {smooth}.")
        self.smooth = smooth

    def construct(self, logits, label):
        x, y = tensor_arg(self.cls_name, logits, "logits"), tensor_arg(self.cls_name, label, "labels")
        if x.shape != y.shape:
            raise ValueError(f"For '{self.cls_name}', the 'logits_shape' should be = label_shape: "
                             f"{tuple(y.shape)}, but got {tuple(x.shape)}.")
        x, y = x.reshape(-1), y.reshape(-1)
        return 1 - 2 * jnp.sum(x * y) / (jnp.sum(x * x) + jnp.sum(y * y) + self.smooth)
