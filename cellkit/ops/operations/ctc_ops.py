"""MindSpore's ``CTCLoss`` Primitive: TensorFlow's CTC loss over sparse labels, with its gradient.

``x`` (max_time, batch, classes) holds logits (a log-softmax is taken inside), the last class is
the blank; the labels come as ``labels_indices`` ((k, 2): batch, position) and ``labels_values``
(k,). The result is ``(loss per batch element, d loss / d x)``. The forward variables follow
TensorFlow's rules: with ``ctc_merge_repeated=False`` a label does not repeat over frames (so two
equal labels in a row need no blank between them); ``preprocess_collapse_repeated`` merges repeated
labels before the loss. The labels must be concrete (they set the lattice's shape).

>>> import numpy as np
>>> import cellkit as ms
>>> from cellkit.ops import operations as P
>>> x = ms.Tensor(np.zeros((2, 1, 3), np.float32))
>>> loss, grad = P.CTCLoss()(x, ms.Tensor([[0, 0]], ms.int32), ms.Tensor([1], ms.int32), ms.Tensor([2], ms.int32))
>>> round(float(loss[0]), 4)      # -log(3 / 9): paths "1b", "b1", "11" of 9
1.0986
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..function._utils import _v
from ..primitive import install_primitives

__all__ = []
EAGER_LOOPS = True   # (JAX loops from Python: cellkit.tracing)


def _labels(indices, values, batch, collapse):
    idx, vals = np.asarray(_v(indices)).reshape(-1, 2), np.asarray(_v(values)).reshape(-1)
    labels = []
    for b in range(batch):
        rows = np.nonzero(idx[:, 0] == b)[0]
        seq = [int(v) for v in vals[rows[np.argsort(idx[rows, 1], kind="stable")]]]
        if collapse:
            seq = [v for i, v in enumerate(seq) if i == 0 or v != seq[i - 1]]
        labels.append(seq)
    return labels


def _logsumexp(terms, axis):
    """``logsumexp`` whose gradient is 0, not NaN, where every term is -inf (unreachable lattice states)."""
    top = jax.lax.stop_gradient(jnp.max(terms, axis))
    top = jnp.where(jnp.isfinite(top), top, 0.)
    total = jnp.sum(jnp.exp(terms - jnp.expand_dims(top, axis)), axis)
    return jnp.where(total > 0, top + jnp.log(jnp.where(total > 0, total, 1.)), -jnp.inf)


def _ctc_loss(x, labels_indices, labels_values, sequence_length, *, preprocess_collapse_repeated,
              ctc_merge_repeated, ignore_longer_outputs_than_inputs):
    logits = jnp.asarray(_v(x))
    if logits.ndim != 3:
        raise ValueError(f"For 'CTCLoss', x must be 3-D (max_time, batch_size, num_classes), got {logits.shape}")
    steps, batch, classes = logits.shape
    blank = classes - 1
    labels = _labels(labels_indices, labels_values, batch, preprocess_collapse_repeated)
    seq_len = jnp.asarray(_v(sequence_length)).astype(jnp.int32)
    width = 2 * max([len(seq) for seq in labels] + [0]) + 1
    ext = np.full((batch, width), blank, np.int32)
    for b, seq in enumerate(labels):
        ext[b, 1:2 * len(seq):2] = seq
    ext_len = np.array([2 * len(seq) + 1 for seq in labels], np.int32)
    s = np.arange(width)
    self_ok = jnp.asarray((ext == blank) | ctc_merge_repeated)
    shifted = np.concatenate([np.full((batch, 2), -1, np.int32), ext[:, :-2]], 1)
    skip_ok = jnp.asarray((ext != blank) & (s >= 2) & ~(ctc_merge_repeated & (ext == shifted)))
    ext_j, neg = jnp.asarray(ext), -jnp.inf
    too_long = jnp.asarray([len(seq) for seq in labels]) > seq_len

    def losses(logits):
        logp = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
        emit = jnp.take_along_axis(logp, jnp.broadcast_to(ext_j[None], (steps, batch, width)), axis=2)
        alpha = jnp.where(jnp.asarray(s[None] < np.minimum(2, ext_len)[:, None]), emit[0], neg)

        def step(alpha, t):
            prev = jnp.concatenate([jnp.full((batch, 1), neg), alpha[:, :-1]], 1)
            skip = jnp.concatenate([jnp.full((batch, 2), neg), alpha[:, :-2]], 1)
            terms = jnp.stack([jnp.where(self_ok, alpha, neg), prev, jnp.where(skip_ok, skip, neg)])
            new = _logsumexp(terms, 0) + emit[t]
            return jnp.where((t < seq_len)[:, None], new, alpha), None

        alpha, _ = jax.lax.scan(step, alpha, jnp.arange(1, steps))
        last = jnp.take_along_axis(alpha, jnp.asarray(ext_len - 1)[:, None], 1)[:, 0]
        before = jnp.take_along_axis(alpha, jnp.asarray(np.maximum(ext_len - 2, 0))[:, None], 1)[:, 0]
        total = jnp.where(jnp.asarray(ext_len > 1), _logsumexp(jnp.stack([last, before]), 0), last)
        loss = -total
        if ignore_longer_outputs_than_inputs:
            loss = jnp.where(too_long, 0., loss)
        return loss

    loss, vjp = jax.vjp(losses, logits)
    grad = vjp(jnp.ones_like(loss))[0]
    return loss.astype(logits.dtype), grad.astype(logits.dtype)


# Name: (op, constructor arguments with MindSpore's defaults[, check])
PRIMITIVES = {
    "CTCLoss": (_ctc_loss, {"preprocess_collapse_repeated": False, "ctc_merge_repeated": True,
                            "ignore_longer_outputs_than_inputs": False}),
}
install_primitives(globals(), __all__, PRIMITIVES)
