"""Basic layers: ``Dense``, ``Flatten``, ``Dropout``, ``ParameterUpdate``.

>>> import cellkit as ms
>>> from cellkit import nn
>>> d = nn.Dense(3, 4)
>>> d
Dense(input_channels=3, output_channels=4, has_bias=True)
>>> d.weight.shape, d(ms.ops.ones((2, 3))).shape
((4, 3), (2, 4))
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ... import dtype as mstype
from ... import ops
from ...cell import Cell
from ...eager_jit import host_first
from ...ops.function._utils import _v
from ...ops.function.random_func import _channel_dropout
from ...ops.operations import MatMul as _MatMul
from ...ops.operations import Reshape as _Reshape
from ...ops.operations import Shape as _Shape
from ...ops.primitive import Primitive
from ...parameter import Parameter
from ...tiered_jit import tiered_jit
from .._checks import check_bool, is_int, positive_int
from .._init_util import default_bias_init, default_weight_init, make_param
from .activation import get_activation

__all__ = ["Dense", "Flatten", "Unflatten", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "ParameterUpdate",
           "Identity"]


def check_last_dim(cell, x, expected, what="in_channels"):
    """A clear error when an input's last dimension does not fit the layer."""
    shape = jnp.shape(x)
    if not shape or shape[-1] != expected:
        raise ValueError(f"{cell.cls_name}: expected an input whose last dimension is {expected} "
                         f"({what}), got shape {tuple(shape)}")


class Dense(Cell):
    """Fully connected layer ``y = activation(x @ weight.T + bias)`` (MindSpore 2.10's ``nn.Dense``).

    Args:
        in_channels (int): input features.
        out_channels (int): output features.
        weight_init: default ``None``, i.e. ``HeUniform(negative_slope=sqrt(5))``
            (U(±1/sqrt(in_channels))); an initializer name, Initializer,
            number or an (out_channels, in_channels) Tensor.
        bias_init: default ``None``, i.e. U(±1/sqrt(in_channels)).
        has_bias (bool): default ``True``.
        activation: default ``None``; a name ('relu', ...), a Cell or a
            Primitive, kept as the sub-Cell ``activation``.
        dtype: the Parameters' dtype; default ``float32``.
        weight_sharding, bias_sharding: default ``None`` (cellkit only); a
            ``PartitionSpec`` over named mesh axes stored as the Parameter's
            ``sharding``, used by ``cellkit.parallel.initialize`` / ``Cell.shard``.

    Parameters: ``weight`` (out_channels, in_channels) (PyTorch's layout) and
    ``bias`` (out_channels,). Inputs of any rank ≥ 1 are accepted; the last
    axis holds the features.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Dense(3, 4, weight_init='ones', bias_init='zeros')(ms.ops.ones((2, 5, 3)))[0, 0]
    Array([3., 3., 3., 3.], dtype=float32)
    >>> nn.Dense(3, 4, has_bias=False)
    Dense(input_channels=3, output_channels=4)
    """

    def __init__(self, in_channels, out_channels, weight_init=None, bias_init=None, has_bias=True,
                 activation=None, dtype=mstype.float32, *, weight_sharding=None, bias_sharding=None):
        super().__init__()
        self.in_channels = positive_int(in_channels, "in_channels", "Dense")
        self.out_channels = positive_int(out_channels, "out_channels", "Dense")
        self.has_bias = check_bool(has_bias, "has_bias", "Dense")
        shape = (self.out_channels, self.in_channels)
        self.weight = make_param(default_weight_init() if weight_init is None else weight_init,
                                 shape, dtype, "weight", what="Dense")
        self.weight.sharding = weight_sharding
        self.bias = None
        if self.has_bias:
            self.bias = make_param(default_bias_init(shape) if bias_init is None else bias_init,
                                   (self.out_channels,), dtype, "bias", what="Dense")
            self.bias.sharding = bias_sharding
        self.activation = get_activation(activation) if isinstance(activation, str) else activation
        if activation is not None and not isinstance(self.activation, (Cell, Primitive)):
            raise TypeError(f"For 'Dense', the 'activation' must be str or Cell or Primitive, but got "
                            f"{type(activation).__name__}.")

    # MindSpore's Dense keeps its operators as attributes; subclasses' construct methods use them.
    matmul = _MatMul(transpose_b=True)
    reshape = _Reshape()
    shape_op = _Shape()

    @staticmethod
    def bias_add(input_x, bias):
        """``input_x + bias`` along axis 1 (MindSpore's BiasAdd, NCHW layout)."""
        x = _v(input_x)
        return x + jnp.reshape(_v(bias), (-1,) + (1,) * (x.ndim - 2)) if x.ndim > 2 else x + _v(bias)

    @property
    def activation_flag(self) -> bool:
        """Whether the Dense applies an activation."""
        return self.activation is not None

    def construct(self, x):
        check_last_dim(self, x, self.in_channels)
        y = _dense(ops.function._utils._v(x), self.weight.value, None if self.bias is None else self.bias.value)
        if self.activation is not None:
            y = self.activation(y)
        return y

    def extend_repr(self):
        s = f"input_channels={self.in_channels}, output_channels={self.out_channels}"
        if self.has_bias:
            s += f", has_bias={self.has_bias}"
        if self.activation is not None:
            s += f", activation={self.activation!r}"
        return s


# inline=True: one compiled computation per eager call, but inlined into an enclosing trace;
# kept as a nested call, it made the demo CNN's jitted train step ~15% slower on CPU.
@host_first
@functools.partial(tiered_jit, inline=True)
def _dense(x, w, b):
    y = jnp.matmul(x, w.T)
    return y if b is None else y + b


class Flatten(Cell):
    """Flatten dimensions ``start_dim`` to ``end_dim`` into one (MindSpore 2.10's ``nn.Flatten``).

    Args:
        start_dim (int): default ``1`` (the batch axis is kept).
        end_dim (int): default ``-1``.

    A 0-D input counts as 1-D, so only ``start_dim`` 0 or -1 fits it (MindSpore's check).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Flatten()(ms.ops.ones((2, 3, 4, 5))).shape
    (2, 60)
    >>> nn.Flatten(0, 1)(ms.ops.ones((2, 3, 4))).shape
    (6, 4)
    >>> nn.Flatten()
    Flatten()
    """

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        for arg, value in (("start_dim", start_dim), ("end_dim", end_dim)):
            if not is_int(value):
                raise TypeError(f"For 'Flatten', '{arg}' must be an int, but got {type(value).__name__} {value!r}.")
        self.start_dim, self.end_dim = int(start_dim), int(end_dim)

    def construct(self, x):
        ndim = max(jnp.ndim(x), 1)
        for arg, axis in (("start_dim", self.start_dim), ("end_dim", self.end_dim)):
            if not -ndim <= axis < ndim:
                raise ValueError(f"Flatten: '{arg}'={axis} is out of range for an input of shape "
                                 f"{tuple(jnp.shape(x))} (rank {jnp.ndim(x)})")
        if self.start_dim % ndim > self.end_dim % ndim:
            raise ValueError(f"Flatten: 'start_dim' ({self.start_dim}) must not come after 'end_dim' "
                             f"({self.end_dim}) for an input of shape {tuple(jnp.shape(x))}")
        return ops.flatten(x, start_dim=self.start_dim, end_dim=self.end_dim)


class Identity(Cell):
    """Returns its input.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Identity()(ms.Tensor([1., 2.]))
    Array([1., 2.], dtype=float32)
    """

    def construct(self, x):
        return x


class Dropout(Cell):
    """Zero elements with probability ``p`` while training (MindSpore 2.10's ``nn.Dropout``).

    Args:
        keep_prob (float): probability of keeping an element, in (0, 1];
            default ``0.5``. Deprecated in MindSpore in favour of ``p``; used
            only when ``p`` is None.
        p (float or None): probability of dropping an element, in [0, 1);
            default ``None``.
        dtype: accepted for compatibility, unused; default ``float32``.

    Kept elements are scaled by ``1 / (1 - p)`` (inverted dropout). Like every
    Cell it starts in predict mode (``training=False``), where it is the
    identity: call ``set_train()`` to make it drop. It is also the identity
    when ``p == 0`` or ``keep_prob == 1``. Each call draws a fresh mask from
    cellkit's random stream, also inside ``cellkit.jit``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> drop = nn.Dropout(p=0.5)
    >>> x = ms.ops.ones((2, 4))
    >>> bool((drop(x) == x).all())          # predict mode: identity
    True
    >>> sorted(set(drop.set_train()(x).reshape(-1).tolist())) in ([0.0, 2.0], [0.0], [2.0])
    True
    >>> drop, nn.Dropout(keep_prob=0.8)
    (Dropout(p=0.5), Dropout(keep_prob=0.8))
    """

    def __init__(self, keep_prob=0.5, p=None, dtype=mstype.float32):
        super().__init__()
        if p is None:
            if not isinstance(keep_prob, float):
                raise TypeError(f"For 'Dropout', the 'keep_prob' must be a float, but got "
                                f"{type(keep_prob).__name__} {keep_prob!r}.")
            if keep_prob <= 0 or keep_prob > 1:
                raise ValueError(f"For 'Dropout', the 'keep_prob' must be a number in range (0, 1], "
                                 f"but got {keep_prob}.")
            self._drop = 1.0 - keep_prob
        else:
            if isinstance(p, bool) or not isinstance(p, (int, float)):
                raise TypeError(f"For 'Dropout', the 'p' must be a float or an int, but got "
                                f"{type(p).__name__} {p!r}.")
            if p < 0 or p >= 1:
                raise ValueError(f"For 'Dropout', the 'p' must be a number in range [0, 1), but got {p}.")
            self._drop = float(p)
        self.p = p
        self.keep_prob = keep_prob

    def construct(self, x):
        if not self.training or self._drop == 0.0:
            return x
        return ops.dropout(x, p=self._drop)

    def extend_repr(self):
        return f"keep_prob={self.keep_prob}" if self.p is None else f"p={self.p}"


class _ChannelDropout(Cell):
    """Zero whole channels of an (N, C, *) input with probability ``p`` while training; scale by 1/(1-p).

    An unbatched (C, *) input is accepted. Identity in predict mode or with ``p == 0``.
    """

    _ndim = 3

    def __init__(self, p=0.5):
        super().__init__()
        name = self.cls_name
        if not isinstance(p, float):
            raise TypeError(f"For '{name}', the type of 'p' must be float, but got {type(p).__name__}.")
        if p < 0 or p > 1:
            raise ValueError(f"For '{name}', the 'p' must be a number in range [0, 1], but got {p}.")
        self.p = p
        self.keep_prob = 1.0 - p

    def construct(self, x):
        if not self.training or self.p == 0:
            return x
        x = _v(x)
        unbatched = jnp.ndim(x) == self._ndim - 1
        if unbatched:
            x = x[None]
        y = _channel_dropout(x, self.p, self._ndim, self.cls_name)[0]
        return y[0] if unbatched else y


class Dropout1d(_ChannelDropout):
    """Channel dropout of an (N, C, L) or (C, L) input (MindSpore 2.10's ``nn.Dropout1d``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> y = nn.Dropout1d(0.5).set_train()(ms.ops.ones((4, 8, 3)))
    >>> sorted(set(y.reshape(-1).tolist())) in ([0.0, 2.0], [0.0], [2.0]), bool((y == y[:, :, :1]).all())
    (True, True)
    """

    _ndim = 3


class Dropout2d(_ChannelDropout):
    """Channel dropout of an (N, C, H, W) or (C, H, W) input (MindSpore 2.10's ``nn.Dropout2d``).

    The repr shows the keep probability under the name ``p``, as MindSpore's does.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Dropout2d(p=0.5).set_train(False)(ms.ops.ones((1, 2, 3, 3))).shape
    (1, 2, 3, 3)
    """

    _ndim = 4

    def extend_repr(self):
        return f"p={self.keep_prob}"


class Dropout3d(_ChannelDropout):
    """Channel dropout of an (N, C, D, H, W) or (C, D, H, W) input (MindSpore 2.10's ``nn.Dropout3d``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Dropout3d(p=0.5).set_train(False)(ms.ops.ones((1, 2, 2, 3, 3))).shape
    (1, 2, 2, 3, 3)
    """

    _ndim = 5

    def extend_repr(self):
        return f"p={self.keep_prob}"


class Unflatten(Cell):
    """Split axis ``axis`` into ``unflattened_size`` (MindSpore 2.10's ``nn.Unflatten``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Unflatten(1, (2, 3))(ms.ops.ones((4, 6, 5))).shape
    (4, 2, 3, 5)
    """

    def __init__(self, axis, unflattened_size):
        super().__init__()
        if not is_int(axis):
            raise TypeError(f"For 'Unflatten', 'axis' must be an int, but got {type(axis).__name__} {axis!r}.")
        if not isinstance(unflattened_size, (list, tuple)):
            raise TypeError(f"For 'Unflatten', the type of 'unflattended_size' must be list or tuple, but got "
                            f"{type(unflattened_size).__name__}.")
        self.axis = int(axis)
        self.unflattened_size = tuple(unflattened_size)

    def construct(self, input_x):
        x = _v(input_x)
        shape = tuple(jnp.shape(x))
        rest = shape[self.axis + 1:] if self.axis != -1 else ()
        new = shape[:self.axis] + self.unflattened_size + rest
        if int(np.prod(new)) != int(np.prod(shape)) and -1 not in self.unflattened_size:
            raise ValueError(f"For 'Unflatten', 'unflattened_size' {self.unflattened_size} does not multiply to "
                             f"axis {self.axis} of the input's shape {shape}.")
        return jnp.reshape(x, new)


class ParameterUpdate(Cell):
    """Assign its input to ``param`` (same shape) and return the input (MindSpore 2.10).

    Args:
        param (Parameter): the Parameter to update.

    It is built with ``auto_prefix=False``, as in MindSpore.

    >>> import numpy as np
    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> p = ms.Parameter(ms.Tensor(np.zeros((2,)), ms.float32), name="p")
    >>> update = nn.ParameterUpdate(p)
    >>> update(ms.Tensor([1., 2.]))
    Array([1., 2.], dtype=float32)
    >>> p.asnumpy(), update
    (array([1., 2.], dtype=float32), ParameterUpdate())
    """

    def __init__(self, param):
        super().__init__(auto_prefix=False)
        if not isinstance(param, Parameter):
            raise TypeError(f"ParameterUpdate: param must be a Parameter, got {type(param).__name__}")
        self._param = param

    def construct(self, x):
        ops.assign(self._param, x)
        return x
