"""Losses MindSpore 2.10 builds from several ops in the Cell itself: ``FocalLoss``, ``MultiClassDiceLoss``,
``SampledSoftmaxLoss`` and ``TripletMarginWithDistanceLoss``.

>>> import cellkit as ms
>>> from cellkit import nn
>>> loss = nn.FocalLoss(gamma=2.0)
>>> round(float(loss(ms.Tensor([[0.0, 0.0]]), ms.Tensor([[1.0, 0.0]]))), 4)
0.0866
>>> d = nn.TripletMarginWithDistanceLoss()
>>> float(d(ms.Tensor([[0.0, 0.0]]), ms.Tensor([[0.0, 0.0]]), ms.Tensor([[3.0, 4.0]])))
0.0
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...cell import Cell
from ...ops.function.activation_func import tensor_arg
from ...random import next_key
from ..layer.activation import get_activation
from .loss import LossBase
from .wrapped import DiceLoss

__all__ = ["FocalLoss", "MultiClassDiceLoss", "SampledSoftmaxLoss", "TripletMarginWithDistanceLoss"]
EAGER_LOOPS = True   # (JAX loops from Python: cellkit.tracing)


def _float_type(owner, name, value) -> float:
    if not isinstance(value, float):
        raise TypeError(f"For '{owner}', the type of '{name}' should be 'float', but got type "
                        f"'{type(value).__name__}'.")
    return value


class FocalLoss(LossBase):
    """Focal loss ``-weight * (1 - p)**gamma * log p`` (``nn.FocalLoss(weight=None, gamma=2.0, reduction='mean')``).

    ``logits`` is ``(N, C)``, ``(N, C, H)`` or ``(N, C, H, W)``; ``labels`` has
    the same rank and either one-hot/probabilities over ``C`` channels (the
    loss is then averaged over the spatial positions per class: shape
    ``(N, C)`` before the reduction) or one class index per position
    (``labels.shape[1] == 1``: shape ``(N,)`` before the reduction), as in
    MindSpore. ``log p`` is the log-softmax over axis 1.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.FocalLoss(reduction='none')(ms.Tensor([[0.0, 0.0]]), ms.Tensor([[1]], ms.int32))
    Array([0.1732868], dtype=float32)
    """

    def __init__(self, weight=None, gamma=2.0, reduction="mean"):
        super().__init__(reduction)
        self.gamma = _float_type(self.cls_name, "gamma", gamma)
        if weight is not None and not isinstance(weight, jax.Array):
            raise TypeError(f"For '{self.cls_name}', the type of 'weight' must be a Tensor, but got "
                            f"{type(weight).__name__}.")
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"For '{self.cls_name}', the dimension of 'weight' must be 1, but got {weight.ndim}.")
        self.weight = weight

    def construct(self, logits, labels):
        name = self.cls_name
        x, y = tensor_arg(name, logits, "logits"), tensor_arg(name, labels, "labels")
        for what, t in (("logits", x), ("labels", y)):
            if not 2 <= t.ndim <= 4:
                raise ValueError(f"For '{name}', the dimensions of '{what}' must be in [2, 4], but got "
                                 f"dimension of '{what}' {t.ndim}.")
        if x.ndim != y.ndim:
            raise ValueError(f"For '{name}', the dimensions of 'logits' and 'labels' must be equal, but got "
                             f"dimension of 'logits' {x.ndim} and dimension of 'labels' {y.ndim}.")
        c = x.shape[1]
        if c == 1:
            raise ValueError(f"For '{name}', the 'logits'.shape[1] cannot be one, but got {c}.")
        if y.shape[1] not in (1, c):
            raise ValueError(f"For '{name}', the 'labels'.shape[1] must be one or equal to 'logits'.shape[1]: "
                             f"{c}, but got {y.shape[1]}.")
        if not (jnp.issubdtype(y.dtype, jnp.integer) or jnp.issubdtype(y.dtype, jnp.floating)):
            raise TypeError(f"For '{name}', the 'labels' must be an int or float Tensor, but got {y.dtype}.")
        x = x.reshape(x.shape[0], c, -1)
        y = y.reshape(y.shape[0], y.shape[1], -1)
        logp = jax.nn.log_softmax(x, axis=1)
        index = y.shape[1] == 1
        if index:
            idx = y.astype(jnp.int32)
            logp = jnp.take_along_axis(logp, idx, axis=1)[:, 0]
        p = jnp.exp(logp)
        if self.weight is not None:
            w = jnp.broadcast_to(jnp.asarray(self.weight, x.dtype)[None, :, None], (y.shape[0], c, y.shape[2]))
            if index:
                w = jnp.take_along_axis(w, idx, axis=1)[:, 0]
            logp = logp * w
        focal = (1.0 - p) ** self.gamma
        loss = jnp.mean(-focal * logp, axis=1) if index else jnp.mean(-focal * y * logp, axis=-1)
        return self.get_loss(loss)


_DICE_ACTIVATIONS = ("softmax", "logsoftmax", "relu", "relu6", "tanh", "sigmoid")


class MultiClassDiceLoss(LossBase):
    """Mean over channels of :class:`DiceLoss` (``smooth=1e-5``) of ``logits[:, i]`` and ``labels[:, i]``
    (``nn.MultiClassDiceLoss(weights=None, ignore_indiex=None, activation='softmax')``).

    ``activation`` (a name among ``'softmax'``, ``'logsoftmax'``, ``'relu'``,
    ``'relu6'``, ``'tanh'``, ``'sigmoid'``, a Cell, or None) is applied to the
    logits first (MindSpore's Cells: ``softmax`` over the last axis).
    ``weights`` of shape ``(C, dim)`` multiplies channel ``i``'s loss by
    ``weights[i]``; channel ``ignore_indiex`` is left out of the sum but not of
    the division by ``C``, as in MindSpore.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> x = ms.Tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> round(float(nn.MultiClassDiceLoss(activation=None)(x, x)), 4)
    0.0
    """

    def __init__(self, weights=None, ignore_indiex=None, activation="softmax"):
        super().__init__()
        name = self.cls_name
        self.binarydiceloss = DiceLoss(smooth=1e-5)
        if weights is not None and not isinstance(weights, jax.Array):
            raise TypeError(f"For '{name}', the type of 'weights' should be 'Tensor', but got "
                            f"'{type(weights).__name__}'.")
        if weights is not None and weights.ndim != 2:
            raise ValueError(f"For '{name}', the dimension of 'weights' must be 2, but got {weights.ndim}.")
        self.weights = weights
        if ignore_indiex is not None and (isinstance(ignore_indiex, bool) or not isinstance(ignore_indiex, int)):
            raise TypeError(f"For '{name}', the type of 'ignore_indiex' should be 'int', but got type "
                            f"'{type(ignore_indiex).__name__}'.")
        self.ignore_indiex = ignore_indiex
        if isinstance(activation, str) and activation not in _DICE_ACTIVATIONS:
            raise ValueError(f"For '{name}', the 'activation' must be in {list(_DICE_ACTIVATIONS)}, but got "
                             f"{activation}.")
        if isinstance(activation, str):
            activation = get_activation(activation)
        if activation is not None and not isinstance(activation, Cell):
            raise TypeError(f"For '{name}', the 'activation' must be str or Cell, but got {type(activation)}.")
        self.activation = activation

    def construct(self, logits, label):
        name = self.cls_name
        x, y = tensor_arg(name, logits, "logits"), tensor_arg(name, label, "labels")
        if x.shape != y.shape:
            raise ValueError(f"For '{name}', the 'logits_shape' should be = label_shape: {tuple(y.shape)}, but "
                             f"got {tuple(x.shape)}.")
        for what, t in (("logits", x), ("labels", y)):
            if t.ndim < 2:
                raise ValueError(f"For '{name}', the '{what}' dimension must be greater than 1, but got {t.ndim}.")
        if self.activation is not None:
            x = self.activation(x)
        n = y.shape[1]
        if self.weights is not None and self.weights.shape[0] != n:
            raise ValueError(f"For '{name}', the weight_shape[0] must be equal to label_shape[1], but got "
                             f"weight_shape[0]: {self.weights.shape[0]} and label_shape[1]: {n}.")
        total = 0
        for i in range(n):
            if i != self.ignore_indiex:
                loss = self.binarydiceloss(x[:, i], y[:, i])
                if self.weights is not None:
                    loss = loss * self.weights[i]
                total = total + loss
        return total / n


def _uniform_candidates(key, true_ids, num_sampled, num_classes, unique, remove_accidental_hits):
    """MindSpore's ``UniformCandidateSampler``: draws one class at a time; with ``unique`` a class drawn
    before (or, with ``remove_accidental_hits``, a true class) is redrawn, and the expected counts use
    the number of draws made: ``1 - (1 - 1/C)**tries`` (``num_sampled / C`` when nothing was redrawn)."""
    if not unique:
        sampled = jax.random.randint(key, (num_sampled,), 0, num_classes, jnp.int32)
        tries = jnp.float32(num_sampled)
    else:
        excluded = jnp.zeros((num_classes,), bool)
        if remove_accidental_hits:
            excluded = excluded.at[true_ids].set(True)

        def body(state):
            k, n, t, out, seen = state
            k, sub = jax.random.split(k)
            c = jax.random.randint(sub, (), 0, num_classes, jnp.int32)
            ok = ~seen[c]
            out = jnp.where(ok, out.at[n].set(c), out)
            return k, n + ok.astype(jnp.int32), t + 1, out, seen.at[c].set(seen[c] | ok)

        init = (key, jnp.int32(0), jnp.int32(0), jnp.zeros((num_sampled,), jnp.int32), excluded)
        _, _, t, sampled, _ = jax.lax.while_loop(lambda s: s[1] < num_sampled, body, init)
        tries = t.astype(jnp.float32)
    p = jnp.float32(1.0 / num_classes)
    count = jnp.where(tries == num_sampled, p * num_sampled, -jnp.expm1(tries * jnp.log1p(-p)))
    return sampled, count


class SampledSoftmaxLoss(LossBase):
    """Sampled softmax cross entropy (``nn.SampledSoftmaxLoss(num_sampled, num_classes, num_true=1,
    sampled_values=None, remove_accidental_hits=True, seed=0, reduction='none')``).

    ``construct(weights (C, dim), biases (C,), labels (N, num_true) int, logits (N, dim))``:
    the logits of the true classes and of the sampled classes, each less the
    log of its expected count, go through a softmax cross entropy whose
    targets are ``1 / num_true`` on the true classes. ``sampled_values`` is
    ``(sampled_candidates, true_expected_count, sampled_expected_count)``;
    without it the candidates are drawn uniformly, ``num_sampled`` distinct
    classes, leaving out the true classes when ``remove_accidental_hits``
    (MindSpore's ``UniformCandidateSampler``). The draws come from cellkit's
    key stream (``set_seed``), so they differ from MindSpore's; ``seed`` is
    checked and kept but does not select the draws. As in MindSpore, the
    result is the per-example loss ``(N,)`` whatever ``reduction`` is.

    >>> import cellkit as ms
    >>> from cellkit import nn, ops
    >>> loss = nn.SampledSoftmaxLoss(2, 4, sampled_values=(ms.Tensor([1, 2], ms.int32),
    ...                              ops.ones((1, 1)), ops.ones((2,))))
    >>> out = loss(ops.zeros((4, 3)), ops.zeros((4,)), ms.Tensor([[0]], ms.int32), ops.ones((1, 3)))
    >>> round(float(out[0]), 4)
    1.0986
    """

    def __init__(self, num_sampled, num_classes, num_true=1, sampled_values=None, remove_accidental_hits=True,
                 seed=0, reduction="none"):
        super().__init__(reduction)
        name = self.cls_name
        if num_true < 1:
            raise ValueError(f"For '{name}', the 'num_true' must be greater than or equal to 1, but got {num_true}.")
        if seed < 0:
            raise ValueError(f"For '{name}', the 'seed' must be greater than or equal to 0, but got {seed}.")
        if num_sampled > num_classes:
            raise ValueError(f"For '{name}', the 'num_sampled' must be smaller than or equal to 'num_classes', "
                             f"but got 'num_sampled': {num_sampled} and 'num_classes': {num_classes}.")
        if num_true > num_classes:
            raise ValueError(f"For '{name}', the 'num_true' must be smaller than or equal to 'num_classes', but "
                             f"got 'num_true': {num_true} and 'num_classes': {num_classes}.")
        if sampled_values is not None:
            if not isinstance(sampled_values, (list, tuple)):
                raise TypeError(f"For '{name}', the type of 'sampled_values' must be a list or tuple, but got "
                                f"{type(sampled_values).__name__}.")
            if len(sampled_values) != 3:
                raise ValueError(f"For '{name}', the length of 'sampled_values' must be equal to 3, but got "
                                 f"{len(sampled_values)}.")
        self.num_sampled, self.num_classes, self.num_true = num_sampled, num_classes, num_true
        self.sampled_values = sampled_values
        self.remove_accidental_hits, self.seed = remove_accidental_hits, seed

    def construct(self, weights, biases, labels, logits):
        name = self.cls_name
        w, b = tensor_arg(name, weights, "weights"), tensor_arg(name, biases, "biases")
        labels, x = tensor_arg(name, labels, "labels"), tensor_arg(name, logits, "logits")
        if labels.dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
            raise TypeError(f"For '{name}', the 'labels' must be int32 or int64, but got {labels.dtype}.")
        labels = labels.astype(jnp.int32).reshape(-1, self.num_true)
        if self.sampled_values is None:
            sampled, count = _uniform_candidates(next_key(), labels.reshape(-1), self.num_sampled,
                                                 self.num_classes, True, self.remove_accidental_hits)
            true_count = jnp.broadcast_to(count, labels.shape)
            sampled_count = jnp.broadcast_to(count, (self.num_sampled,))
        else:
            sampled, true_count, sampled_count = (jnp.asarray(tensor_arg(name, v, "sampled_values"))
                                                  for v in self.sampled_values)
        sampled = sampled.astype(jnp.int32)
        true_w = w[labels]                                        # (N, num_true, dim)
        true_logits = jnp.sum(x[:, None, :] * true_w, axis=-1) + b[labels] - jnp.log(true_count)
        sampled_logits = x @ w[sampled].T + b[sampled] - jnp.log(sampled_count)
        out_logits = jnp.concatenate([true_logits, sampled_logits], axis=1)
        targets = jnp.concatenate([jnp.full_like(true_logits, 1.0 / self.num_true),
                                   jnp.zeros_like(sampled_logits)], axis=1)
        e = jnp.exp(out_logits - jnp.max(out_logits, axis=1, keepdims=True))
        pred = e / jnp.sum(e, axis=1, keepdims=True)
        # MindSpore validates ``reduction`` but returns the per-example losses whatever it is.
        return -jnp.sum(targets * jnp.log(pred + 1.0e-20), axis=1)


def _pairwise_distance(a, b):
    d = jnp.abs(a - b)
    if d.ndim < 2:
        raise ValueError("For 'pairwise_distance' in 'TripletMarginWithDistanceLoss', the inputs must have at "
                         f"least 2 dimensions (N, D), but got {d.ndim}.")
    return jnp.sqrt(jnp.sum(d * d, axis=1))


class TripletMarginWithDistanceLoss(LossBase):
    """``max(d(x, positive) - d(x, negative) + margin, 0)`` (``nn.TripletMarginWithDistanceLoss(
    distance_function=None, swap=False, reduction='mean', margin=1.0)``).

    ``d`` is ``distance_function`` (any callable of two Tensors), by default
    the L2 norm of ``|a - b|`` over axis 1. With ``swap``, ``d(x, negative)``
    is replaced by ``min(d(x, negative), d(positive, negative))``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> loss = nn.TripletMarginWithDistanceLoss(reduction='none')
    >>> loss(ms.Tensor([[0.0, 0.0]]), ms.Tensor([[3.0, 4.0]]), ms.Tensor([[0.0, 1.0]]))
    Array([5.], dtype=float32)
    """

    def __init__(self, distance_function=None, swap=False, reduction="mean", margin=1.0):
        super().__init__(reduction)
        name = self.cls_name
        if not isinstance(margin, float):
            raise TypeError(f"For '{name}', the type of 'margin' must be 'float', but got "
                            f"'{type(margin).__name__}'.")
        if not isinstance(swap, bool):
            raise TypeError(f"For '{name}', the 'swap' must be a bool, but got {type(swap).__name__}.")
        if distance_function is not None and not callable(distance_function):
            raise TypeError(f"For '{name}', 'distance_function' must be callable, but got "
                            f"{type(distance_function).__name__}.")
        self.distance_function = distance_function or _pairwise_distance
        self.swap, self.margin = swap, margin

    def construct(self, x, positive, negative):
        name = self.cls_name
        x, p, n = (tensor_arg(name, v, what) for v, what in ((x, "x"), (positive, "positive"),
                                                             (negative, "negative")))
        d1 = self.distance_function(x, p)
        d2 = self.distance_function(x, n)
        if self.swap:
            d2 = jnp.minimum(d2, self.distance_function(p, n))
        return self.get_loss(jnp.maximum(d1 - d2 + self.margin, 0))
