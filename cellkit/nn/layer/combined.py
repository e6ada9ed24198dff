"""Combined layers of MindSpore's ``nn/layer/combined.py``: ``Conv2dBnAct`` and ``DenseBnAct``.

A convolution (or dense layer), an optional batch normalisation and an optional activation, as
the sub-Cells ``conv``/``dense``, ``batchnorm`` and ``activation`` (MindSpore's Parameter names).

>>> import cellkit as ms
>>> from cellkit import nn
>>> net = nn.DenseBnAct(3, 2, has_bn=True, activation='relu')
>>> [name for name, _ in net.parameters_and_names()][:3]
['dense.weight', 'dense.bias', 'batchnorm.moving_mean']
"""

from __future__ import annotations

from ...cell import Cell
from ...ops.primitive import Primitive
from .._checks import check_bool
from .activation import LeakyReLU, get_activation
from .basic import Dense
from .conv import Conv2d
from .normalization import BatchNorm1d, BatchNorm2d

__all__ = ["Conv2dBnAct", "DenseBnAct"]


def _activation(cell, activation, alpha):
    if activation == "leakyrelu":
        return LeakyReLU(alpha)
    act = get_activation(activation) if isinstance(activation, str) else activation
    if activation is not None and not isinstance(act, (Cell, Primitive)):
        raise TypeError(f"For '{cell.cls_name}', the 'activation' must be str or Cell or Primitive, but got "
                        f"{type(activation).__name__}.")
    return act


class _BnAct(Cell):
    def _finish(self, has_bn, activation, alpha, after_fake, make_bn):
        self.has_bn = check_bool(has_bn, "has_bn", self.cls_name)
        self.has_act = activation is not None
        self.after_fake = check_bool(after_fake, "after_fake", self.cls_name)
        if self.has_bn:
            self.batchnorm = make_bn()
        self.activation = _activation(self, activation, alpha)

    def _tail(self, x):
        if self.has_bn:
            x = self.batchnorm(x)
        if self.has_act:
            x = self.activation(x)
        return x


class Conv2dBnAct(_BnAct):
    """``Conv2d`` → optional ``BatchNorm2d`` → optional activation (MindSpore 2.10's ``nn.Conv2dBnAct``).

    Defaults (MindSpore's): ``stride=1``, ``pad_mode='same'``, ``padding=0``, ``dilation=1``,
    ``group=1``, ``has_bias=False``, ``weight_init='normal'``, ``bias_init='zeros'``,
    ``has_bn=False``, ``momentum=0.997``, ``eps=1e-5``, ``activation=None``, ``alpha=0.2`` (the
    slope of ``'leakyrelu'``), ``after_fake=True`` (kept; it only matters to quantisation).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Conv2dBnAct(1, 2, 3, has_bn=True, activation='relu')(ms.ops.ones((1, 1, 4, 4))).shape
    (1, 2, 4, 4)
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init="normal", bias_init="zeros", has_bn=False, momentum=0.997,
                 eps=1e-5, activation=None, alpha=0.2, after_fake=True):
        super().__init__()
        self.conv = Conv2d(in_channels, out_channels, kernel_size=kernel_size, stride=stride, pad_mode=pad_mode,
                           padding=padding, dilation=dilation, group=group, has_bias=has_bias,
                           weight_init=weight_init, bias_init=bias_init)
        self._finish(has_bn, activation, alpha, after_fake, lambda: BatchNorm2d(out_channels, eps, momentum))

    def construct(self, x):
        return self._tail(self.conv(x))


class DenseBnAct(_BnAct):
    """``Dense`` → optional ``BatchNorm1d`` → optional activation (MindSpore 2.10's ``nn.DenseBnAct``).

    Defaults (MindSpore's): ``weight_init='normal'``, ``bias_init='zeros'``, ``has_bias=True``,
    ``has_bn=False``, ``momentum=0.9``, ``eps=1e-5``, ``activation=None``, ``alpha=0.2``,
    ``after_fake=True``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.DenseBnAct(3, 2, activation='leakyrelu')(ms.ops.ones((4, 3))).shape
    (4, 2)
    """

    def __init__(self, in_channels, out_channels, weight_init="normal", bias_init="zeros", has_bias=True,
                 has_bn=False, momentum=0.9, eps=1e-5, activation=None, alpha=0.2, after_fake=True):
        super().__init__()
        self.dense = Dense(in_channels, out_channels, weight_init, bias_init, has_bias)
        self._finish(has_bn, activation, alpha, after_fake, lambda: BatchNorm1d(out_channels, eps, momentum))

    def construct(self, x):
        return self._tail(self.dense(x))
