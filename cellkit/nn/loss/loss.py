"""Loss Cells with MindSpore 2.10's signatures, defaults and reductions.

Every loss is a Cell whose ``construct(logits, labels)`` returns a
``jax.Array``; ``reduction`` is ``'mean'``, ``'sum'`` or ``'none'``, with
MindSpore's default per class (``SmoothL1Loss`` and
``SoftmaxCrossEntropyWithLogits`` default to ``'none'``, the others to
``'mean'``). Shape and dtype checks run while tracing, so the losses work
eagerly, inside ``cellkit.jit`` and under plain ``jax.jit``/``jax.grad``.

>>> import cellkit as ms
>>> from cellkit import nn
>>> nn.L1Loss()(ms.Tensor([1., 2., 3.]), ms.Tensor([1., 1., 1.]))
Array(1., dtype=float32)
>>> loss = nn.CrossEntropyLoss()(ms.Tensor([[2., 1., 0.1]]), ms.Tensor([0], ms.int32))
>>> round(float(loss), 4)
0.417

Where cellkit differs from MindSpore 2.10:

* Class-index labels may be any integer dtype. MindSpore's
  ``CrossEntropyLoss`` refuses int64 (``For 'CrossEntropyLoss', the 'labels'
  should be Int32``); ``NLLLoss`` and ``SoftmaxCrossEntropyWithLogits(sparse=True)``
  accept int32 and int64 in both.
* Float64 inputs are computed in float64 (MindSpore refuses them in
  ``CrossEntropyLoss`` and computes ``LossBase.get_loss`` in float32).
  Float16/bfloat16 inputs are computed in float32 and the result is cast back.
* ``SoftmaxCrossEntropyWithLogits`` accepts logits of any rank >= 1 (classes
  on the last axis); MindSpore's kernel needs exactly 2-D logits.
* ``SmoothL1Loss(beta<=0)`` raises ``ValueError`` when it is built (MindSpore
  raises ``RuntimeError`` at the first call).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...cell import Cell
from ...eager_jit import eager_jit, host_first
from ...parameter import Parameter
from ...tensor import as_array
from ...ops.function.loss_func import _class_axis, _labels_in_range
from ...ops.function.loss_func import check_ignore_index as _check_ignore_index
from ...ops.function.loss_func import nll as _nll
from ...ops.function.loss_func import reduce_loss as _reduce

__all__ = ["LossBase", "MSELoss", "L1Loss", "SmoothL1Loss", "CrossEntropyLoss", "NLLLoss",
           "BCEWithLogitsLoss", "SoftmaxCrossEntropyWithLogits"]

_REDUCTIONS = ("mean", "sum", "none")

# (an eager call on the host or, inside an eager grad, through cellkit.eager_grad)
_log_softmax = host_first(jax.nn.log_softmax)


def _array(x):
    """A Parameter's value or ``jnp.asarray`` of anything else."""
    if isinstance(x, Parameter):
        return x.value
    return as_array(x)


@eager_jit
def _weighted_reduce(x, weights, dtype, mode):
    """``weights * x`` in ``dtype``, then mean/sum over every axis (mode 'mean'/'sum'/'none'), in x's dtype."""
    out = weights.astype(dtype) * x.astype(dtype)
    if mode == "mean":
        out = jnp.mean(out, axis=tuple(range(out.ndim)))
    elif mode == "sum":
        out = jnp.sum(out, axis=tuple(range(out.ndim)))
    return out.astype(x.dtype)


@eager_jit
def _softmax_cross_entropy(logits, labels, sparse, dtype):
    """Per-sample cross-entropy of ``logits`` (..., C) with class indices (sparse) or probabilities."""
    target = jax.nn.one_hot(labels, logits.shape[-1], dtype=dtype) if sparse else labels.astype(dtype)
    loss = -jnp.sum(target * jax.nn.log_softmax(logits.astype(dtype), axis=-1), axis=-1)
    return loss.astype(logits.dtype)


def _compute_dtype(*dtypes):
    """float64 if any input is float64, else float32 (half precision is upcast)."""
    return jnp.float64 if any(np.dtype(d) == np.float64 for d in dtypes) else jnp.float32


def _is_float(x) -> bool:
    return jnp.issubdtype(x.dtype, jnp.floating)


def _is_int(x) -> bool:
    return jnp.issubdtype(x.dtype, jnp.integer)


def _class_logits(name, logits):
    """``logits`` as an array of class scores (float, with a class axis), or a clear error."""
    logits = _array(logits)
    if not _is_float(logits):
        raise TypeError(f"For '{name}', 'logits' must be a float Tensor, but got {logits.dtype}.")
    if logits.ndim < 1:
        raise ValueError(f"For '{name}', 'logits' must have at least one dimension (the classes).")
    return logits


class LossBase(Cell):
    """Base class of the losses: validates ``reduction`` and reduces with :meth:`get_loss`.

    Args:
        reduction: ``'mean'`` (default), ``'sum'`` or ``'none'``.

    A subclass computes the element-wise loss in ``construct`` and returns
    ``self.get_loss(x)``:

    >>> import cellkit as ms
    >>> from cellkit import nn, ops
    >>> class Abs(nn.LossBase):
    ...     def construct(self, logits, labels):
    ...         return self.get_loss(ops.abs(logits - labels))
    >>> Abs()(ms.Tensor([1., 2., 3.]), ms.Tensor([1., 1., 1.]))
    Array(1., dtype=float32)
    >>> Abs('sum')(ms.Tensor([1., 2., 3.]), ms.Tensor([1., 1., 1.]))
    Array(3., dtype=float32)
    >>> nn.MSELoss(reduction='avg')
    Traceback (most recent call last):
    ...
    ValueError: For 'MSELoss', the 'reduction' must be in ['mean', 'sum', 'none'], but got avg.
    """

    def __init__(self, reduction="mean"):
        super().__init__()
        if not isinstance(reduction, str) or reduction not in _REDUCTIONS:
            raise ValueError(f"For '{self.cls_name}', the 'reduction' must be in ['mean', 'sum', 'none'], "
                             f"but got {reduction}.")
        self.reduction = reduction
        self.average = reduction == "mean"
        self.reduce = reduction != "none"

    def get_axis(self, x) -> tuple:
        """All axes of ``x``, as a tuple (what ``get_loss`` reduces over).

        >>> from cellkit import nn, ops
        >>> nn.MSELoss().get_axis(ops.ones((2, 3)))
        (0, 1)
        """
        return tuple(range(jnp.ndim(_array(x))))

    def get_loss(self, x, weights=1.0):
        """``weights * x`` reduced by ``reduction``, in the dtype of ``x``.

        The product and the reduction are computed in float32 (float64 for
        float64 input) and cast back to ``x``'s dtype, as MindSpore does.
        ``weights`` is a number or a Tensor that broadcasts to ``x``.

        >>> import cellkit as ms
        >>> from cellkit import nn
        >>> nn.L1Loss().get_loss(ms.Tensor([1., 3.]), ms.Tensor([1., 0.]))
        Array(0.5, dtype=float32)
        """
        x = _array(x)
        weights = _array(weights)
        dtype = _compute_dtype(x.dtype, weights.dtype)
        try:
            jnp.broadcast_shapes(weights.shape, x.shape)
        except (TypeError, ValueError) as err:
            raise ValueError(f"For '{self.cls_name}', the weights of shape {tuple(weights.shape)} do not "
                             f"broadcast to the loss of shape {tuple(x.shape)}") from err
        if type(self).get_axis is LossBase.get_axis:   # every axis: one executable
            mode = "mean" if self.reduce and self.average else "sum" if self.reduce else "none"
            return _weighted_reduce(x, weights, np.dtype(dtype), mode)
        out = weights.astype(dtype) * x.astype(dtype)
        if self.reduce and self.average:
            out = jnp.mean(out, axis=self.get_axis(out))
        elif self.reduce:
            out = jnp.sum(out, axis=self.get_axis(out))
        return out.astype(x.dtype)

    def construct(self, logits, labels):
        raise NotImplementedError(f"{self.cls_name} must define construct()")

    # ----- shared checks --------------------------------------------------------

    def _float_input(self, x, what):
        x = _array(x)
        if not (_is_float(x) or _is_int(x)):
            raise TypeError(f"For '{self.cls_name}', '{what}' must be a real-valued Tensor, "
                            f"but got dtype {x.dtype}.")
        return x

    def _broadcast(self, a, b, names=("logits", "labels")):
        try:
            jnp.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            raise ValueError(f"For '{self.cls_name}', the shapes of '{names[0]}' {tuple(a.shape)} and "
                             f"'{names[1]}' {tuple(b.shape)} do not broadcast.") from None

    def _same_shape(self, a, b, names=("logits", "labels")):
        if a.shape != b.shape:
            raise ValueError(f"For '{self.cls_name}', '{names[0]}' and '{names[1]}' must have the same "
                             f"shape, but got {tuple(a.shape)} and {tuple(b.shape)}.")


class MSELoss(LossBase):
    """Mean squared error: ``l = (logits - labels)**2``, then ``reduction``.

    ``logits`` and ``labels`` broadcast against each other (as in MindSpore).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> loss = nn.MSELoss(reduction='none')
    >>> loss(ms.Tensor([1., 2., 3.]), ms.Tensor([[1., 1., 1.], [1., 2., 2.]]))
    Array([[0., 1., 4.],
           [0., 0., 1.]], dtype=float32)
    """

    def construct(self, logits, labels):
        logits, labels = self._float_input(logits, "logits"), self._float_input(labels, "labels")
        self._broadcast(logits, labels)
        return self.get_loss(jnp.square(logits - labels))


class L1Loss(LossBase):
    """Mean absolute error: ``l = |logits - labels|``, then ``reduction``.

    ``logits`` and ``labels`` broadcast against each other (as in MindSpore).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.L1Loss()(ms.Tensor([1., 2., 3.]), ms.Tensor([1., 1., 1.]))
    Array(1., dtype=float32)
    >>> nn.L1Loss('sum')(ms.Tensor([1., 2., 3.]), ms.Tensor([1., 1., 1.]))
    Array(3., dtype=float32)
    """

    def construct(self, logits, labels):
        logits, labels = self._float_input(logits, "logits"), self._float_input(labels, "labels")
        self._broadcast(logits, labels)
        return self.get_loss(jnp.abs(logits - labels))


class SmoothL1Loss(LossBase):
    """Smooth L1 (Huber-like) loss; **MindSpore's default reduction is 'none'**.

    With ``d = logits - labels``::

        l = 0.5 * d**2 / beta    if |d| < beta
            |d| - 0.5 * beta     otherwise

    Args:
        beta: the threshold between the quadratic and the linear part (> 0).
        reduction: ``'none'`` (default), ``'mean'`` or ``'sum'``.

    ``logits`` and ``labels`` must have the same shape and a float dtype.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.SmoothL1Loss()(ms.Tensor([1., 2., 3.]), ms.Tensor([1., 2., 2.]))
    Array([0. , 0. , 0.5], dtype=float32)
    """

    def __init__(self, beta=1.0, reduction="none"):
        super().__init__(reduction)
        if isinstance(beta, bool) or not isinstance(beta, (int, float)):
            raise TypeError(f"For '{self.cls_name}', 'beta' must be a float, but got {type(beta).__name__}.")
        if beta <= 0:
            raise ValueError(f"For '{self.cls_name}', 'beta' must be greater than 0, but got {beta}.")
        self.beta = float(beta)

    def construct(self, logits, labels):
        logits, labels = _array(logits), _array(labels)
        if not (_is_float(logits) and _is_float(labels)):
            raise TypeError(f"For '{self.cls_name}', 'logits' and 'labels' must be float Tensors, but got "
                            f"{logits.dtype} and {labels.dtype}.")
        self._same_shape(logits, labels)
        d = jnp.abs(logits - labels)
        loss = jnp.where(d < self.beta, 0.5 * jnp.square(d) / self.beta, d - 0.5 * self.beta)
        return self.get_loss(loss)


def _class_weight(name, weight):
    """A (C,) float weight Tensor (or None), checked."""
    if weight is None:
        return None
    if isinstance(weight, Parameter):
        weight = weight.value
    if not isinstance(weight, (jax.Array, np.ndarray)):
        raise TypeError(f"For '{name}', 'weight' must be a Tensor or None, but got {type(weight).__name__}.")
    weight = jnp.asarray(weight)
    if weight.ndim != 1 or not _is_float(weight):
        raise TypeError(f"For '{name}', 'weight' must be a 1-D float Tensor of shape (C,), but got shape "
                        f"{tuple(weight.shape)} and dtype {weight.dtype}.")
    return weight


class CrossEntropyLoss(LossBase):
    """Cross entropy between logits and class indices or class probabilities.

    Args:
        weight: a (C,) float Tensor rescaling each class, or None.
        ignore_index: a class-index target with this value counts as zero loss
            and is left out of the ``'mean'`` denominator (default -100).
        reduction: ``'mean'`` (default), ``'sum'`` or ``'none'``.
        label_smoothing: in [0, 1] (default 0.0).

    ``logits`` is (C,), (N, C) or (N, C, d1, ...) (classes on axis 1, or 0 for
    1-D input); ``logp = log_softmax(logits)`` over that axis.

    *Class indices* (``labels`` of integer dtype, one dimension fewer)::

        l_i = -w[y_i] * logp[i, y_i]                  (0 where y_i == ignore_index)
        smooth_i = -sum_c w[c] * logp[i, c]           (0 where y_i == ignore_index)
        'none': (1 - eps) * l_i + eps / C * smooth_i
        'sum':  (1 - eps) * sum(l) + eps / C * sum(smooth)
        'mean': the 'sum' terms divided by sum_i w[y_i] over non-ignored i

    *Probabilities* (``labels`` of float dtype, the shape of ``logits``)::

        t = labels * (1 - eps) + eps / C
        l_i = -sum_c w[c] * t[i, c] * logp[i, c]
        'mean' divides sum(l) by N (times the spatial size), not by the weights

    MindSpore's class-index path needs int32 labels; cellkit accepts any integer
    dtype, int64 included.

    >>> import numpy as np
    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> logits = ms.Tensor([[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]])
    >>> per_sample = nn.CrossEntropyLoss(reduction='none')(logits, ms.Tensor([0, 1], ms.int32))
    >>> np.round(np.asarray(per_sample), 4)
    array([0.417 , 0.1532], dtype=float32)
    >>> probs = ms.Tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    >>> round(float(nn.CrossEntropyLoss()(logits, probs)), 4)
    0.2851
    """

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction)
        self.ignore_index = _check_ignore_index(self.cls_name, ignore_index)
        if isinstance(label_smoothing, bool) or not isinstance(label_smoothing, (int, float)):
            raise TypeError(f"For '{self.cls_name}', 'label_smoothing' must be a float, but got "
                            f"{type(label_smoothing).__name__}.")
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(f"For '{self.cls_name}', the 'label_smoothing' must be in range of [0.0, 1.0], "
                             f"but got {label_smoothing}.")
        self.label_smoothing = float(label_smoothing)
        self.weight = _class_weight(self.cls_name, weight)

    def construct(self, logits, labels):
        logits, labels = _class_logits(self.cls_name, logits), _array(labels)
        name = self.cls_name
        dtype = _compute_dtype(logits.dtype)
        axis = _class_axis(logits)
        logp = _log_softmax(logits if logits.dtype == dtype else logits.astype(dtype), axis=axis)
        if labels.ndim == logits.ndim:
            if not _is_float(labels):
                raise TypeError(f"For '{name}', 'labels' with the rank of 'logits' are class probabilities "
                                f"and must be float, but got {labels.dtype}; class indices have one "
                                "dimension fewer than 'logits'.")
            self._same_shape(logits, labels)
            out = self._probabilities(logp, labels.astype(dtype), axis)
        elif labels.ndim == logits.ndim - 1:
            if not _is_int(labels):
                raise TypeError(f"For '{name}', 'labels' with one dimension fewer than 'logits' are class "
                                f"indices and must be integers, but got {labels.dtype}.")
            out = _nll(name, logp, labels, self.weight, self.ignore_index, self.reduction,
                       self.label_smoothing)
        else:
            raise ValueError(f"For '{name}', the rank of 'labels' must equal the rank of 'logits' "
                             f"(probabilities) or be one less (class indices), but got 'logits' rank "
                             f"{logits.ndim} and 'labels' rank {labels.ndim}.")
        return out.astype(logits.dtype)

    def _probabilities(self, logp, target, axis):
        n_classes = logp.shape[axis]
        eps = self.label_smoothing
        if eps > 0.0:
            target = target * (1.0 - eps) + eps / n_classes
        loss = logp * target
        if self.weight is not None:
            if self.weight.shape[0] != n_classes:
                raise ValueError(f"For '{self.cls_name}', 'weight' must have one entry per class "
                                 f"({n_classes}), but got shape {tuple(self.weight.shape)}.")
            shape = [1] * logp.ndim
            shape[axis] = n_classes
            loss = loss * self.weight.astype(logp.dtype).reshape(shape)
        if self.reduction == "mean":
            return -jnp.sum(loss) / (logp.size / n_classes)
        if self.reduction == "sum":
            return -jnp.sum(loss)
        return -jnp.sum(loss, axis=axis)


class NLLLoss(LossBase):
    """Negative log-likelihood of log-probabilities ``logits`` at class indices ``labels``.

    ``l_i = -w[y_i] * logits[i, y_i]`` (0 where ``y_i == ignore_index``);
    ``'mean'`` divides the sum by ``sum_i w[y_i]`` over non-ignored targets.
    ``logits`` is (C,), (N, C) or (N, C, d1, ...); ``labels`` (int32 or int64)
    has its shape without the class axis.

    Args (MindSpore's defaults): ``weight=None`` (per-class weights, all 1),
    ``ignore_index=-100``, ``reduction='mean'``.

    >>> import numpy as np
    >>> import cellkit as ms
    >>> from cellkit import nn, ops
    >>> logp = ops.log_softmax(ms.Tensor([[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]]))
    >>> round(float(nn.NLLLoss()(logp, ms.Tensor([0, 1], ms.int32))), 4)
    0.2851
    >>> per_sample = nn.NLLLoss(reduction='none', ignore_index=1)(logp, ms.Tensor([0, 1], ms.int32))
    >>> np.round(np.asarray(per_sample), 4)
    array([0.417, 0.   ], dtype=float32)
    """

    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__(reduction)
        self.ignore_index = _check_ignore_index(self.cls_name, ignore_index)
        self.weight = _class_weight(self.cls_name, weight)

    def construct(self, logits, labels):
        logits, labels = _array(logits), _array(labels)
        name = self.cls_name
        if not _is_float(logits):
            raise TypeError(f"For '{name}', 'logits' must be a float Tensor of log-probabilities, but got "
                            f"{logits.dtype}.")
        if logits.ndim < 1:
            raise ValueError(f"For '{name}', 'logits' must have at least one dimension (the classes).")
        if not _is_int(labels):
            raise TypeError(f"For '{name}', 'labels' must be class indices of an integer dtype, but got "
                            f"{labels.dtype}.")
        dtype = _compute_dtype(logits.dtype)
        out = _nll(name, logits.astype(dtype), labels, self.weight, self.ignore_index, self.reduction, 0.0)
        return out.astype(logits.dtype)


class BCEWithLogitsLoss(LossBase):
    """Binary cross entropy on logits (a sigmoid folded in, computed stably).

    ::

        l = -weight * (pos_weight * y * log(sigmoid(x)) + (1 - y) * log(1 - sigmoid(x)))

    Args:
        reduction: ``'mean'`` (default), ``'sum'`` or ``'none'``.
        weight: a Tensor that broadcasts to the input, or None.
        pos_weight: a Tensor that broadcasts to the input (usually one value per
            class, the last axis), or None.

    ``logits`` and ``labels`` must have the same shape. ``weight`` and
    ``pos_weight`` may not be Parameters (as in MindSpore).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> x = ms.Tensor([[0.5, -1.0], [2.0, 0.0]])
    >>> y = ms.Tensor([[1.0, 0.0], [0.3, 1.0]])
    >>> round(float(nn.BCEWithLogitsLoss()(x, y)), 4)
    0.7519
    """

    def __init__(self, reduction="mean", weight=None, pos_weight=None):
        super().__init__(reduction)
        for what, value in (("weight", weight), ("pos_weight", pos_weight)):
            if isinstance(value, Parameter):
                raise TypeError(f"For '{self.cls_name}', the '{what}' can not be a Parameter.")
            if value is not None and not isinstance(value, (jax.Array, np.ndarray)):
                raise TypeError(f"For '{self.cls_name}', '{what}' must be a Tensor or None, but got "
                                f"{type(value).__name__}.")
        self.weight = None if weight is None else jnp.asarray(weight)
        self.pos_weight = None if pos_weight is None else jnp.asarray(pos_weight)

    def construct(self, logits, labels):
        x, y = _array(logits), _array(labels)
        name = self.cls_name
        if not (_is_float(x) and _is_float(y)):
            raise TypeError(f"For '{name}', 'logits' and 'labels' must be float Tensors, but got "
                            f"{x.dtype} and {y.dtype}.")
        self._same_shape(x, y)
        dtype = _compute_dtype(x.dtype, y.dtype)
        xc, yc = x.astype(dtype), y.astype(dtype)
        log_p, log_not_p = jax.nn.log_sigmoid(xc), jax.nn.log_sigmoid(-xc)
        positive = yc * log_p
        if self.pos_weight is not None:
            self._broadcast(self.pos_weight, x, ("pos_weight", "logits"))
            positive = self.pos_weight.astype(dtype) * positive
        loss = -(positive + (1.0 - yc) * log_not_p)
        if self.weight is not None:
            self._broadcast(self.weight, x, ("weight", "logits"))
            loss = self.weight.astype(dtype) * loss
        if loss.shape != x.shape:
            raise ValueError(f"For '{name}', 'weight' and 'pos_weight' must broadcast to the shape of "
                             f"'logits' {tuple(x.shape)}, but the loss has shape {tuple(loss.shape)}.")
        return _reduce(loss, self.reduction).astype(x.dtype)


class SoftmaxCrossEntropyWithLogits(LossBase):
    """``-sum(labels * log_softmax(logits), -1)`` per sample; **default reduction 'none'**.

    Args:
        sparse: ``labels`` are class indices (int32 or int64, shape
            ``logits.shape[:-1]``), one-hot encoded here; otherwise they are
            float one-hot vectors or probabilities of the shape of ``logits``.
        reduction: ``'none'`` (default), ``'mean'`` or ``'sum'``.

    >>> import numpy as np
    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> logits = ms.Tensor([[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]])
    >>> per_sample = nn.SoftmaxCrossEntropyWithLogits(sparse=True)(logits, ms.Tensor([0, 1], ms.int32))
    >>> np.round(np.asarray(per_sample), 4)
    array([0.417 , 0.1532], dtype=float32)
    >>> mean = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction='mean')(logits, ms.Tensor([0, 1]))
    >>> round(float(mean), 4)
    0.2851
    """

    def __init__(self, sparse=False, reduction="none"):
        super().__init__(reduction)
        if not isinstance(sparse, bool):
            raise TypeError(f"For '{self.cls_name}', 'sparse' must be a bool, but got {type(sparse).__name__}.")
        self.sparse = sparse

    def construct(self, logits, labels):
        logits, labels = _class_logits(self.cls_name, logits), _array(labels)
        name = self.cls_name
        dtype = _compute_dtype(logits.dtype)
        n_classes = logits.shape[-1]
        if self.sparse:
            if not _is_int(labels):
                raise TypeError(f"For '{name}', with sparse=True 'labels' must be class indices of an integer "
                                f"dtype (int32 or int64), but got {labels.dtype}.")
            if tuple(labels.shape) != tuple(logits.shape[:-1]):
                raise ValueError(f"For '{name}', with sparse=True 'labels' must have shape "
                                 f"{tuple(logits.shape[:-1])} (logits without the class axis), but got "
                                 f"{tuple(labels.shape)}.")
            _labels_in_range(name, labels, n_classes)
        else:
            if not _is_float(labels):
                raise TypeError(f"For '{name}', with sparse=False 'labels' must be float one-hot vectors or "
                                f"probabilities, but got {labels.dtype}; pass sparse=True for class indices.")
            self._same_shape(logits, labels)
        return self.get_loss(_softmax_cross_entropy(logits, labels, self.sparse, np.dtype(dtype)))
