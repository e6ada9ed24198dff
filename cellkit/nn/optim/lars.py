"""``LARS``: layer-wise adaptive rate scaling of the gradients handed to another optimizer (MindSpore's ``nn.LARS``).

>>> import cellkit as ms
>>> from cellkit import nn
>>> w = ms.Parameter(ms.Tensor([3.0, 4.0]), name="w")
>>> opt = nn.LARS(nn.SGD([w], learning_rate=1.0), coefficient=0.1, epsilon=0.0)
>>> _ = opt((ms.Tensor([0.6, 0.8]),))
>>> w.asnumpy()
array([2.7, 3.6], dtype=float32)
"""

from __future__ import annotations

import jax.numpy as jnp

from ...cell import Cell
from ._checks import check_bool, check_type_float, value_of
from .optimizer import Optimizer

__all__ = ["LARS"]


def _default_filter(param) -> bool:
    return "LayerNorm" not in param.name and "bias" not in param.name


class LARS(Optimizer):
    """Wraps ``optimizer``: each gradient of a Parameter that ``lars_filter`` accepts becomes, before
    ``optimizer`` sees it (MindSpore's ``LARSUpdate`` kernel)::

        g = g / loss_scale
        coeff = coefficient * ||w|| / (||g|| + wd * ||w|| + epsilon)
        coeff = clip(coeff / lr, 0, 1)              with use_clip (lr: the optimizer's current rate)
        g = coeff * (g + wd * w)

    where ``wd`` is ``optimizer``'s weight decay divided by its ``loss_scale``
    (0 for Parameters it does not decay). ``optimizer`` then runs with its own
    weight decay and loss scaling switched off, as in MindSpore. Parameters
    the filter refuses get ``g / loss_scale`` unchanged. ``LARS`` shares
    ``optimizer``'s Parameters, ``global_step`` and learning rate.

    Arguments and defaults (MindSpore's): ``epsilon=1e-05``, ``coefficient=0.001``,
    ``use_clip=False``, ``lars_filter=lambda x: 'LayerNorm' not in x.name and 'bias' not in x.name``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.LARS(nn.SGD([ms.Parameter(ms.Tensor([1.0]), name="w")]), epsilon=1)
    Traceback (most recent call last):
    ...
    TypeError: For 'LARS', the type of 'epsilon' should be 'float', but got type 'int'.
    """

    def __init__(self, optimizer, epsilon=1e-05, coefficient=0.001, use_clip=False, lars_filter=_default_filter):
        Cell.__init__(self, auto_prefix=False)
        owner = self.cls_name
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"For '{owner}', the 'optimizer' must be an nn.Optimizer, but got "
                            f"{type(optimizer).__name__}.")
        check_type_float(owner, "epsilon", epsilon)
        check_type_float(owner, "coefficient", coefficient)
        check_bool(owner, "use_clip", use_clip)
        if not callable(lars_filter):
            raise TypeError(f"For '{owner}', 'lars_filter' must be a callable of a Parameter, but got "
                            f"{type(lars_filter).__name__}.")
        self.opt = optimizer
        self.epsilon, self.coefficient, self.use_clip = epsilon, coefficient, use_clip
        self.lars_flag = tuple(bool(lars_filter(p)) for p in optimizer.parameters)
        n = len(optimizer.parameters)
        wds = optimizer.weight_decay if optimizer.is_group else (optimizer.weight_decay,) * n
        self._loss_scale = optimizer.loss_scale
        # Weight decay per Parameter, as LARSUpdate receives it (MindSpore divides it by loss_scale).
        self._lars_wd = tuple(wd / optimizer.loss_scale if flag else 0.0
                              for wd, flag in zip(wds, optimizer.decay_flags))
        self.decay_flags = tuple(optimizer.decay_flags)  # MindSpore's LARS keeps the optimizer's flags
        optimizer.decay_flags = (False,) * n
        optimizer.loss_scale = 1.0
        optimizer._decay_and_scale_outside = True
        optimizer._rebuild_tx()
        self.tx = None
        self._init_ms_members()
        self._init_kernels(lars=("LARSUpdate", (epsilon, coefficient, use_clip), {}), cast="Cast")

    # The wrapped optimizer's state, seen through LARS.
    parameters = property(lambda self: self.opt.parameters)
    global_step = property(lambda self: self.opt.global_step)
    learning_rate = property(lambda self: self.opt.learning_rate)
    is_group = property(lambda self: self.opt.is_group)
    is_group_lr = property(lambda self: self.opt.is_group_lr)
    weight_decay = property(lambda self: self.opt.weight_decay)
    dynamic_lr = property(lambda self: self.opt.dynamic_lr)
    _groups = property(lambda self: self.opt._groups)
    loss_scale = property(lambda self: self._loss_scale)

    def get_lr(self):
        return self.opt.get_lr()

    def construct(self, gradients):
        grads = self.opt._check_gradients(gradients)
        if self._loss_scale != 1.0:
            grads = tuple(g / self._loss_scale for g in grads)
        lrs = None
        if self.use_clip:
            lr = self.opt.get_lr()
            lrs = lr if isinstance(lr, tuple) else (lr,) * len(grads)
        out = []
        for i, (g, p) in enumerate(zip(grads, self.opt.parameters)):
            if not self.lars_flag[i]:
                out.append(g)
                continue
            w = p.value
            wd = self._lars_wd[i]
            w_norm = jnp.sqrt(jnp.sum(w * w))
            g_norm = jnp.sqrt(jnp.sum(g * g))
            coeff = self.coefficient * w_norm / (g_norm + wd * w_norm + self.epsilon)
            if self.use_clip:
                coeff = jnp.clip(coeff / value_of(lrs[i]), 0.0, 1.0)
            out.append((coeff * (g + wd * w)).astype(g.dtype))
        return self.opt(tuple(out))
