"""Activation Cells (MindSpore 2.10's ``mindspore.nn.layer.activation``) and ``get_activation``.

Each Cell calls the functional op of ``ops.function.activation_func`` with its
constructor's arguments, so dtype rules and exceptions are the op's. Constructors,
defaults, the reprs (``ReLU()``, ``ELU()``: no arguments shown, as in MindSpore)
and ``PReLU``'s Parameter (``w``, named ``'a'`` until the Cell is placed in a
container, as in MindSpore) are MindSpore's.

>>> import cellkit as ms
>>> from cellkit import nn
>>> nn.ReLU()(ms.Tensor([-1., 2.]))
Array([0., 2.], dtype=float32)
>>> nn.get_activation('gelu')
GELU()
>>> nn.PReLU(channel=2, w=0.1)(ms.Tensor([[-1.0, -2.0]]))
Array([[-0.1, -0.2]], dtype=float32)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ... import ops
from ...cell import Cell
from ...ops.function import activation_func as A
from ...parameter import Parameter

__all__ = ["Softmin", "Softmax", "Softmax2d", "LogSoftmax", "LogSoftmaxExt", "ReLU", "ReLU6", "RReLU", "SeLU",
           "SiLU", "Tanh", "Tanhshrink", "Hardtanh", "GELU", "FastGelu", "Sigmoid", "Softsign", "PReLU",
           "PReLUExt", "LeakyReLU", "HSigmoid", "HSwish", "ELU", "LogSigmoid", "SoftShrink", "HShrink", "CELU",
           "Threshold", "Mish", "GLU", "get_activation"]


def _plain(name, op, formula, example_in, example_out):
    """A Cell without constructor arguments whose ``construct(x)`` is ``op(x)``."""
    def construct(self, x):
        return op(x)
    doc = (f"``{formula}`` elementwise (MindSpore's ``nn.{name}()``; no arguments).\n\n"
           f"    >>> import cellkit as ms\n    >>> from cellkit import nn\n"
           f"    >>> nn.{name}()(ms.Tensor({example_in}))\n    {example_out}\n    ")
    return type(name, (Cell,), {"construct": construct, "__doc__": doc, "__module__": __name__})


ReLU = _plain("ReLU", A.relu, "max(x, 0)", "[-1., 0., 2.]", "Array([0., 0., 2.], dtype=float32)")
ReLU6 = _plain("ReLU6", A.relu6, "min(max(x, 0), 6)", "[-1., 3., 7.]", "Array([0., 3., 6.], dtype=float32)")
SeLU = _plain("SeLU", A.selu, "scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))", "[0., 1.]",
              "Array([0.      , 1.050701], dtype=float32)")
SiLU = _plain("SiLU", A.silu, "x * sigmoid(x)", "[0., 1.]", "Array([0.       , 0.7310586], dtype=float32)")
Sigmoid = _plain("Sigmoid", A.sigmoid, "1 / (1 + exp(-x))", "[0.]", "Array([0.5], dtype=float32)")
Tanh = _plain("Tanh", lambda x: jnp.tanh(A.float_arg("Tanh", x)), "tanh(x)", "[0.]", "Array([0.], dtype=float32)")
Tanhshrink = _plain("Tanhshrink", A.tanhshrink, "x - tanh(x)", "[0.]", "Array([0.], dtype=float32)")
FastGelu = _plain("FastGelu", A.fast_gelu, "x / (1 + exp(-1.702 |x|)) * exp(0.851 (x - |x|))", "[0.]",
                  "Array([0.], dtype=float32)")
Softsign = _plain("Softsign", A.softsign, "x / (1 + |x|)", "[1.]", "Array([0.5], dtype=float32)")
HSigmoid = _plain("HSigmoid", A.hardsigmoid, "relu6(x + 3) / 6", "[0.]", "Array([0.5], dtype=float32)")
HSwish = _plain("HSwish", A.hardswish, "x * relu6(x + 3) / 6", "[3.]", "Array([3.], dtype=float32)")
LogSigmoid = _plain("LogSigmoid", A.logsigmoid, "log(sigmoid(x))", "[0.]", "Array([-0.6931472], dtype=float32)")
Mish = _plain("Mish", A.mish, "x * tanh(softplus(x))", "[0.]", "Array([0.], dtype=float32)")


class Softmax(Cell):
    """Softmax over ``axis`` (``nn.Softmax(axis=-1)``; an int or a tuple of ints).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Softmax()(ms.Tensor([[0., 0.], [0., 0.]]))
    Array([[0.5, 0.5],
           [0.5, 0.5]], dtype=float32)
    """

    def __init__(self, axis=-1):
        super().__init__()
        self.softmax = ops.Softmax(axis)
        self.axis = axis

    def construct(self, x):
        return self.softmax(x)


class Softmin(Cell):
    """``softmax(-x)`` over ``axis`` (``nn.Softmin(axis=-1)``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Softmin()(ms.Tensor([1.0, 2.0]))
    Array([0.7310586 , 0.26894143], dtype=float32)
    """

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        return A.softmin(x, self.axis)


class Softmax2d(Cell):
    """Softmax over the channels of a (C, H, W) or (N, C, H, W) input (axis -3).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Softmax2d()(ms.ops.zeros((2, 1, 1))).ravel()
    Array([0.5, 0.5], dtype=float32)
    """

    def construct(self, x):
        x = A.tensor_arg(self.cls_name, x, "x")
        if x.ndim not in (3, 4):
            raise ValueError(f"For '{self.cls_name}', the in_shape must have 3 or 4 dims, but got {x.ndim}.")
        return jax.nn.softmax(A.float_arg(self.cls_name, x, "x"), axis=-3)


class LogSoftmax(Cell):
    """Log-softmax over the int ``axis`` (``nn.LogSoftmax(axis=-1)``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.LogSoftmax()(ms.Tensor([0., 0.]))
    Array([-0.6931472, -0.6931472], dtype=float32)
    """

    def __init__(self, axis=-1):
        super().__init__()
        self.log_softmax = ops.LogSoftmax(axis)
        self.axis = axis

    def construct(self, x):
        return self.log_softmax(x)


class LogSoftmaxExt(Cell):
    """Log-softmax over ``dim`` (``nn.LogSoftmaxExt(dim=None)``); ``None`` means axis 0 for 0-, 1- and
    3-D input and axis 1 otherwise (PyTorch's rule, which MindSpore's ``mint`` follows).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.LogSoftmaxExt()(ms.ops.zeros((2, 2)))[0]
    Array([-0.6931472, -0.6931472], dtype=float32)
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def construct(self, x):
        x = A.float_arg(self.cls_name, x, "x")
        dim = self.dim if self.dim is not None else (0 if x.ndim in (0, 1, 3) else 1)
        return A.log_softmax(x, dim)


class RReLU(Cell):
    """Randomized leaky ReLU (``nn.RReLU(lower=1/8, upper=1/3)``): negative inputs times a slope drawn from
    ``U(lower, upper)`` per element, in training and prediction alike (as MindSpore).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.RReLU()(ms.Tensor([0., 2.]))
    Array([0., 2.], dtype=float32)
    """

    def __init__(self, lower=1 / 8, upper=1 / 3):
        super().__init__()
        for what, v in (("upper", upper), ("lower", lower)):
            A.number_arg(self.cls_name, v, what)
        if lower > upper:
            raise ValueError(f"For {self.cls_name}, the value of 'upper' must be greater than or equal to 'lower', "
                             f"but got upper: {upper}, lower: {lower}.")
        self.lower, self.upper = lower, upper

    def construct(self, x):
        return A.rrelu(x, self.lower, self.upper)


class Hardtanh(Cell):
    """``x`` clipped to ``[min_val, max_val]`` (``nn.Hardtanh(min_val=-1.0, max_val=1.0)``; ``min_val < max_val``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Hardtanh()(ms.Tensor([-2., 0.5, 3.]))
    Array([-1. ,  0.5,  1. ], dtype=float32)
    """

    def __init__(self, min_val=-1.0, max_val=1.0):
        super().__init__()
        if min_val >= max_val:
            raise ValueError(f"For Hardtanh, min_val should be less than max_val, but got {min_val} and {max_val}")
        self.min_val, self.max_val = min_val, max_val

    def construct(self, x):
        return A.hardtanh(x, self.min_val, self.max_val)


class GELU(Cell):
    """GELU (``nn.GELU(approximate=True)``): by default the tanh approximation
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``; ``approximate=False`` gives
    ``0.5 x (1 + erf(x / sqrt(2)))``. ``approximate`` must be a bool.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.GELU()(ms.Tensor([1.0])), nn.GELU(approximate=False)(ms.Tensor([1.0]))
    (Array([0.841192], dtype=float32), Array([0.8413447], dtype=float32))
    """

    def __init__(self, approximate=True):
        super().__init__()
        if not isinstance(approximate, bool):
            raise TypeError(f"For '{self.cls_name}', the 'approximate' must be a bool, but got "
                            f"{type(approximate).__name__}.")
        self.approximate = "tanh" if approximate else "none"

    def construct(self, x):
        return A.gelu(x, approximate=self.approximate)


def _prelu_weight(name, channel, w):
    """PReLU's initial weight as MindSpore builds it: a float fills ``(channel,)``; a list or Tensor is checked."""
    if isinstance(channel, bool) or not isinstance(channel, int) or channel <= 0:
        raise ValueError(f"For '{name}', the 'channel' must be int and must > 0, but got {channel!r}.")
    if isinstance(w, (float, np.float32)):
        return jnp.full((channel,), w, jnp.float32)
    if isinstance(w, list):
        if len(w) != channel:
            raise ValueError(f"For '{name}', the length of 'w' must be equal to the 'channel' when the 'w' is a "
                             f"list, but got the length of 'w': {len(w)}, the 'channel': {channel}.")
        for i in w:
            if not isinstance(i, (float, np.float32)):
                raise ValueError(f"For '{name}', all elements in 'w' must be float when the 'w' is a list, but "
                                 f"got {i}.")
        return jnp.asarray(w, jnp.float32)
    if isinstance(w, (jax.Array, np.ndarray, Parameter)):
        w = A.tensor_arg(name, w, "w")
        if w.dtype not in (jnp.float16, jnp.float32):
            raise ValueError(f"For '{name}', the dtype of 'w' must be float16 or float32 when the 'w' is a "
                             f"tensor, but got {w.dtype}.")
        if w.ndim != 1 or w.shape[0] != channel:
            raise ValueError(f"For '{name}', the dimension of 'w' must be 1, and the elements number should be "
                             f"equal to the 'channel' when the 'w' is a tensor, but got 'w' shape "
                             f"{tuple(w.shape)}, the 'channel' {channel}.")
        return w
    raise TypeError(f"For '{name}', the 'w' only supported float, list and tensor, but got {type(w).__name__}.")


class PReLU(Cell):
    """``max(0, x) + min(0, w * x)`` with a learnt slope per channel (``nn.PReLU(channel=1, w=0.25)``).

    The Parameter is ``w`` of shape ``(channel,)``, named ``'a'`` (MindSpore's
    name; a container renames it after its path, e.g. ``'0.w'``). ``w`` is a
    float (filled), a list of ``channel`` floats or a float16/float32 Tensor of
    shape ``(channel,)``; the channel axis of the input is 1.

    >>> from cellkit import nn
    >>> p = nn.PReLU(channel=3, w=0.1)
    >>> p.w
    Parameter (name=a, shape=(3,), dtype=Float32, requires_grad=True)
    """

    def __init__(self, channel=1, w=0.25):
        super().__init__()
        self.w = Parameter(_prelu_weight(self.cls_name, channel, w), name="a")

    def construct(self, x):
        x = A.float_arg(self.cls_name, x, "x")
        return A.prelu(x, self.w.value.astype(x.dtype))


class PReLUExt(Cell):
    """PReLU with PyTorch's arguments (``nn.PReLUExt(num_parameters=1, init=0.25, dtype=None)``);
    the Parameter is ``weight``, of shape ``(num_parameters,)``.

    >>> from cellkit import nn
    >>> nn.PReLUExt(2).weight
    Parameter (name=weight, shape=(2,), dtype=Float32, requires_grad=True)
    """

    def __init__(self, num_parameters=1, init=0.25, dtype=None):
        super().__init__()
        dtype = np.float32 if dtype is None else np.dtype(dtype)
        self.weight = Parameter(jnp.full((num_parameters,), init, dtype), name="weight")

    def construct(self, input):  # noqa: A002
        return A.prelu(input, self.weight)


class LeakyReLU(Cell):
    """``max(alpha x, x)`` (``nn.LeakyReLU(alpha=0.2)``; ``min`` for ``alpha > 1``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.LeakyReLU()(ms.Tensor([-1., 1.]))
    Array([-0.2,  1. ], dtype=float32)
    """

    def __init__(self, alpha=0.2):
        super().__init__()
        self.alpha = alpha

    def construct(self, x):
        return A.leaky_relu(x, self.alpha)


class _OneArg(Cell):
    """A Cell whose construct is ``op(x, <argument>)``, the argument checked when the Cell is built."""

    _op = None
    _arg = None
    _check = None

    def __init__(self, value):
        super().__init__()
        if type(self)._check is not None:
            type(self)._check(value)
        setattr(self, self._arg, value)

    def construct(self, x):
        return type(self)._op(x, getattr(self, self._arg))


def _check_elu_alpha(alpha):
    A.number_arg("Elu", alpha, "alpha", (float,))


def _check_celu_alpha(alpha):
    A.number_arg("CeLU", alpha, "alpha")
    if alpha == 0:
        raise ValueError(f"For primitive[CeLU], the alpha must be not equal to 0, but got {alpha}.")


class ELU(_OneArg):
    """``x`` for ``x > 0``, ``alpha (exp(x) - 1)`` otherwise (``nn.ELU(alpha=1.0)``; a float ``alpha``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.ELU()(ms.Tensor([-1., 1.]))
    Array([-0.63212055,  1.        ], dtype=float32)
    """

    _op, _arg, _check = staticmethod(A.elu), "alpha", staticmethod(_check_elu_alpha)

    def __init__(self, alpha=1.0):
        super().__init__(alpha)


class CELU(_OneArg):
    """``max(0, x) + min(0, alpha (exp(x / alpha) - 1))`` (``nn.CELU(alpha=1.0)``; ``alpha != 0``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.CELU(2.0)(ms.Tensor([-2., 1.]))
    Array([-1.2642411,  1.       ], dtype=float32)
    """

    _op, _arg, _check = staticmethod(A.celu), "alpha", staticmethod(_check_celu_alpha)

    def __init__(self, alpha=1.0):
        super().__init__(alpha)


class HShrink(_OneArg):
    """``x`` where ``|x| > lambd``, else 0 (``nn.HShrink(lambd=0.5)``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.HShrink()(ms.Tensor([-1., 0.3]))
    Array([-1.,  0.], dtype=float32)
    """

    _op, _arg = staticmethod(A.hardshrink), "lambd"

    def __init__(self, lambd=0.5):
        super().__init__(lambd)


class SoftShrink(_OneArg):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0 (``nn.SoftShrink(lambd=0.5)``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.SoftShrink()(ms.Tensor([-1., 0.3]))
    Array([-0.5,  0. ], dtype=float32)
    """

    _op, _arg = staticmethod(A.softshrink), "lambd"

    def __init__(self, lambd=0.5):
        super().__init__(lambd)


class GLU(_OneArg):
    """Gated linear unit ``a * sigmoid(b)`` over the halves of ``axis`` (``nn.GLU(axis=-1)``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.GLU()(ms.Tensor([[1.0, 0.0]]))
    Array([[0.5]], dtype=float32)
    """

    _op, _arg = staticmethod(A.glu), "dim"

    def __init__(self, axis=-1):
        super().__init__(axis)


class Threshold(Cell):
    """``x`` where ``x > threshold``, else ``value`` (``nn.Threshold(threshold, value)``; both required).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Threshold(0.5, -1.0)(ms.Tensor([0.2, 0.9]))
    Array([-1. ,  0.9], dtype=float32)
    """

    def __init__(self, threshold, value):
        super().__init__()
        self.threshold, self.value = threshold, value

    def construct(self, input_x):
        return A.threshold(input_x, self.threshold, self.value)


# MindSpore's ``_activation`` table: the names ``get_activation`` knows (case-sensitive).
_activation = {
    "softmin": Softmin, "softmax": Softmax, "softmax2d": Softmax2d, "logsoftmax": LogSoftmax,
    "logsoftmaxExt": LogSoftmaxExt, "relu": ReLU, "relu6": ReLU6, "rrelu": RReLU, "silu": SiLU, "tanh": Tanh,
    "tanhshrink": Tanhshrink, "hardtanh": Hardtanh, "gelu": GELU, "fast_gelu": FastGelu, "elu": ELU,
    "sigmoid": Sigmoid, "softsign": Softsign, "prelu": PReLU, "preluExt": PReLUExt, "leakyrelu": LeakyReLU,
    "hswish": HSwish, "hsigmoid": HSigmoid, "logsigmoid": LogSigmoid, "softshrink": SoftShrink, "hshrink": HShrink,
    "threshold": Threshold, "mish": Mish,
}


def get_activation(name, prim_name=None):
    """The activation Cell for one of MindSpore's names (``'relu'``, ``'gelu'``, ...); ``None`` gives ``None``.

    Names are case-sensitive, as in MindSpore; an unknown one is a ``KeyError``.

    >>> from cellkit import nn
    >>> nn.get_activation('hswish')
    HSwish()
    >>> nn.get_activation('swish')
    Traceback (most recent call last):
    ...
    KeyError: "unknown activation 'swish'; did you mean 'hswish'...? known (MindSpore's names, case-sensitive): ..."
    """
    if name is None:
        return None
    if name not in _activation:
        from ...suggest import did_you_mean
        prefix = f"For '{prim_name}', " if prim_name else ""
        raise KeyError(f"{prefix}unknown activation {name!r}{did_you_mean(str(name), _activation) or ';'} "
                       f"known (MindSpore's names, case-sensitive): {', '.join(_activation)}")
    return _activation[name]()
