"""Initializers with MindSpore's names, defaults and formulas.

An Initializer describes how to fill an array. ``initializer(init, shape,
dtype)`` binds one to a shape and dtype and returns a :class:`LazyInit`:
nothing is computed until ``init_data()`` (a Parameter built from it stays
lazy until first use). Random initializers draw their key from cellkit's
random stream, so ``set_seed`` makes them reproducible. Each class also has a
pure ``generate(key, shape, dtype)`` usable inside ``jax.jit``.

Outside any trace, cellkit's random initializers take their numbers from
:mod:`cellkit.draws`: the same numbers ``jax.random`` gives for the key (so an
eager build and a sharded ``parallel.initialize`` agree), made by one
executable per distribution instead of one per weight shape, and finished on
the host. Building a model therefore compiles a handful of programs, not one
per shape. Inside a trace ``generate`` draws with ``jax.random``.

>>> import cellkit as ms
>>> from cellkit.common.initializer import initializer, Normal
>>> t = initializer('ones', [1, 2, 3], ms.float32)
>>> t.shape, t.dtype
((1, 2, 3), Float32)
>>> t.init_data().sum()
Array(6., dtype=float32)
>>> ms.set_seed(1)
>>> w = initializer(Normal(0.2), (64, 3, 3, 3)).init_data()
>>> w.shape
(64, 3, 3, 3)
"""

from __future__ import annotations

import functools
import math
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from . import dtype as mstype
from . import random as ckrandom
from .tensor import _initializer as _tensor_initializer_slot  # (cellkit.tensor is also ms.tensor, a function)
from .tensor import host_to_device
from . import draws
from .suggest import did_you_mean

__all__ = [
    "Initializer", "initializer", "LazyInit", "One", "Zero", "Constant", "Normal", "Uniform",
    "TruncatedNormal", "XavierUniform", "XavierNormal", "HeUniform", "HeNormal", "Orthogonal",
    "Identity", "Dirac", "VarianceScaling", "Sparse",
]

_REGISTRY: dict = {}


def _register(*aliases):
    def deco(cls):
        _REGISTRY[cls.__name__.lower()] = cls
        for a in aliases:
            _REGISTRY[a] = cls
        return cls
    return deco


def _fans(shape):
    """(fan_in, fan_out) as MindSpore computes them: (out, in, *kernel) layouts."""
    if len(shape) < 2:
        raise ValueError(f"fan in/out need an array of at least 2 dimensions, got shape {tuple(shape)}")
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def _gain(nonlinearity, param=None):
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
              "conv_transpose2d", "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"unknown nonlinearity {nonlinearity!r}; expected one of {linear + ('tanh', 'relu', 'leaky_relu', 'selu')}")


class Initializer:
    """Base class: subclasses implement ``generate(key, shape, dtype)``.

    Calling an instance with a shape (and dtype) returns a new array, drawing
    the key from the global random stream.

    >>> import cellkit as ms
    >>> from cellkit.common.initializer import Constant
    >>> Constant(3)((2,), ms.float32)
    Array([3., 3.], dtype=float32)
    """

    random = True  # whether generate() uses its key
    host = False   # whether generate() also takes a _HostDraw (cellkit.draws' numbers) for its key

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        for k, v in kwargs.items():
            setattr(self, k, v)

    def generate(self, key, shape, dtype):
        raise NotImplementedError

    def __call__(self, shape, dtype=mstype.float32):
        shape = _as_shape(shape)
        key = ckrandom.next_key() if self.random else None
        if type(self) in (Zero, One) and _eager():   # made on the host and copied over: no compilation
            return host_to_device(np.full(shape, 0 if type(self) is Zero else 1, np.dtype(dtype)))
        if self.random and type(self).__module__ == __name__ and not isinstance(key, jax.core.Tracer):
            if self.host and _eager():   # jax.random's numbers without a compilation per shape
                try:
                    return host_to_device(np.asarray(self.generate(_HostDraw(key), shape, np.dtype(dtype))))
                except _NoHostDraw:
                    pass
            try:   # cellkit's own random initializers: one compiled executable per (initializer, shape)
                return _generate(self, key, shape, np.dtype(dtype))
            except Exception:   # noqa: BLE001 - unhashable settings, a draw jit cannot trace: eagerly
                pass
        return self.generate(key, shape, np.dtype(dtype))

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other):
        return type(self) is type(other) and self._kwargs == other._kwargs

    def __hash__(self):
        return hash((type(self), tuple(sorted((k, repr(v)) for k, v in self._kwargs.items()))))


def _eager() -> bool:
    """Whether no JAX trace is active (an initializer's array may then be made on the host)."""
    try:
        from jax._src.core import trace_state_clean
    except ImportError:
        return False
    return trace_state_clean()


@functools.partial(jax.jit, static_argnums=(0, 2, 3))
def _generate(init, key, shape, dtype):
    return init.generate(key, shape, dtype)


class _HostDraw:
    """What ``generate`` gets as its key outside a trace: jax.random's draws for that key, made by
    :mod:`cellkit.draws` (one executable per distribution, not per shape), as NumPy arrays."""

    def __init__(self, key):
        self.key = key

    def _draw(self, kind, shape, dtype, *bounds):
        out = draws.standard(kind, self.key, shape, dtype, *bounds)
        if out is None:
            raise _NoHostDraw
        return out

    def normal(self, shape, dtype):
        return self._draw("normal", shape, dtype)

    def uniform(self, shape, dtype, lo, hi):
        floats = self._draw("uniform", shape, dtype)
        lo, hi = np.asarray(lo, floats.dtype), np.asarray(hi, floats.dtype)
        floats *= hi - lo       # (in place: jax.random.uniform's max(lo, floats * (hi - lo) + lo), rounded the same)
        floats += lo
        return np.maximum(floats, lo, out=floats)

    def truncated_normal(self, lo, hi, shape, dtype):
        return self._draw("truncated_normal", shape, dtype, lo, hi)


class _NoHostDraw(Exception):
    """The key or dtype is one :mod:`cellkit.draws` does not serve: draw with jax.random."""


def _normal(key, shape, dtype):
    return key.normal(shape, dtype) if isinstance(key, _HostDraw) else jax.random.normal(key, shape, dtype)


def _truncated_normal(key, lo, hi, shape, dtype):
    if isinstance(key, _HostDraw):
        return key.truncated_normal(lo, hi, shape, dtype)
    return jax.random.truncated_normal(key, lo, hi, shape, dtype)


def _uniform(key, shape, dtype, lo, hi):
    if isinstance(key, _HostDraw):
        return key.uniform(shape, dtype, lo, hi)
    return jax.random.uniform(key, shape, dtype, lo, hi)


def _real(key, shape, dtype, draw):
    """Draw in float32 (or the float dtype asked for), then cast (a host draw already of that dtype: as is)."""
    work = dtype if np.dtype(dtype).kind == "f" else np.float32
    out = draw(key, shape, work)
    return out.astype(dtype, copy=False) if isinstance(out, np.ndarray) else out.astype(dtype)


def _affine(x, scale, shift=None):
    """``scale * x`` (``shift + scale * x`` with a shift): a host draw's array in place, with the same
    roundings (its dtype kept by both steps); else as written."""
    if not (isinstance(x, np.ndarray) and x.flags.writeable and np.result_type(scale, x) == x.dtype
            and (shift is None or np.result_type(shift, x) == x.dtype)):
        return scale * x if shift is None else shift + scale * x
    np.multiply(x, scale, out=x)
    return x if shift is None else np.add(x, shift, out=x)


@_register("zero", "zeros")
class Zero(Initializer):
    """All zeros."""
    random = False

    def generate(self, key, shape, dtype):
        return jnp.zeros(shape, dtype)


@_register("one", "ones")
class One(Initializer):
    """All ones."""
    random = False

    def generate(self, key, shape, dtype):
        return jnp.ones(shape, dtype)


class Constant(Initializer):
    """Every element ``value``."""
    random = False

    def __init__(self, value):
        super().__init__(value=value)

    def generate(self, key, shape, dtype):
        return jnp.full(shape, self.value, dtype)


@_register()
class Normal(Initializer):
    """N(mean, sigma²): MindSpore's defaults ``sigma=0.01, mean=0.0``."""
    host = True

    def __init__(self, sigma=0.01, mean=0.0):
        super().__init__(sigma=sigma, mean=mean)

    def generate(self, key, shape, dtype):
        return _real(key, shape, dtype,
                     lambda k, s, d: _affine(_normal(k, s, d), self.sigma, self.mean))


@_register()
class Uniform(Initializer):
    """U(-scale, scale): MindSpore's default ``scale=0.07``."""
    host = True

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)

    def generate(self, key, shape, dtype):
        return _real(key, shape, dtype,
                     lambda k, s, d: _uniform(k, s, d, -self.scale, self.scale))


@_register()
class TruncatedNormal(Initializer):
    """N(mean, sigma²) truncated to ``[a, b]`` (absolute bounds, as MindSpore)."""
    host = True

    def __init__(self, sigma=0.01, mean=0.0, a=-2.0, b=2.0):
        super().__init__(sigma=sigma, mean=mean, a=a, b=b)

    def generate(self, key, shape, dtype):
        lo, hi = (self.a - self.mean) / self.sigma, (self.b - self.mean) / self.sigma
        return _real(key, shape, dtype,
                     lambda k, s, d: _affine(_truncated_normal(k, lo, hi, s, d), self.sigma, self.mean))


@_register("xavier_uniform")
class XavierUniform(Initializer):
    """U(-b, b) with ``b = gain * sqrt(6 / (fan_in + fan_out))``."""
    host = True

    def __init__(self, gain=1):
        super().__init__(gain=gain)

    def generate(self, key, shape, dtype):
        fan_in, fan_out = _fans(shape)
        bound = self.gain * math.sqrt(6.0 / (fan_in + fan_out))
        return _real(key, shape, dtype, lambda k, s, d: _uniform(k, s, d, -bound, bound))


@_register("xavier_normal")
class XavierNormal(Initializer):
    """N(0, std²) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    host = True

    def __init__(self, gain=1):
        super().__init__(gain=gain)

    def generate(self, key, shape, dtype):
        fan_in, fan_out = _fans(shape)
        std = self.gain * math.sqrt(2.0 / (fan_in + fan_out))
        return _real(key, shape, dtype, lambda k, s, d: _affine(_normal(k, s, d), std))


def _he_std(shape, negative_slope, mode, nonlinearity):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _fans(shape)
    fan = fan_in if mode == "fan_in" else fan_out
    return _gain(nonlinearity, negative_slope) / math.sqrt(fan)


@_register("he_uniform")
class HeUniform(Initializer):
    """Kaiming uniform: U(-b, b), ``b = sqrt(3) * gain / sqrt(fan)``."""
    host = True

    def __init__(self, negative_slope=0, mode="fan_in", nonlinearity="leaky_relu"):
        super().__init__(negative_slope=negative_slope, mode=mode, nonlinearity=nonlinearity)

    def generate(self, key, shape, dtype):
        bound = math.sqrt(3.0) * _he_std(shape, self.negative_slope, self.mode, self.nonlinearity)
        return _real(key, shape, dtype, lambda k, s, d: _uniform(k, s, d, -bound, bound))


@_register("he_normal")
class HeNormal(Initializer):
    """Kaiming normal: N(0, std²), ``std = gain / sqrt(fan)``."""
    host = True

    def __init__(self, negative_slope=0, mode="fan_in", nonlinearity="leaky_relu"):
        super().__init__(negative_slope=negative_slope, mode=mode, nonlinearity=nonlinearity)

    def generate(self, key, shape, dtype):
        std = _he_std(shape, self.negative_slope, self.mode, self.nonlinearity)
        return _real(key, shape, dtype, lambda k, s, d: _affine(_normal(k, s, d), std))


@_register()
class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix, scaled by ``gain``, over the first axis."""

    def __init__(self, gain=1.0):
        super().__init__(gain=gain)

    def generate(self, key, shape, dtype):
        if len(shape) < 2:
            raise ValueError(f"Orthogonal needs at least 2 dimensions, got shape {tuple(shape)}")
        init = jax.nn.initializers.orthogonal(scale=self.gain, column_axis=0)
        rows, cols = shape[0], int(np.prod(shape[1:]))
        return _real(key, (rows, cols), dtype, lambda k, s, d: init(k, s, d)).reshape(shape)


@_register()
class Identity(Initializer):
    """The identity matrix (2-D arrays only)."""
    random = False

    def generate(self, key, shape, dtype):
        if len(shape) != 2:
            raise ValueError(f"Identity needs a 2-D shape, got {tuple(shape)}")
        return jnp.eye(*shape, dtype=dtype)


@_register()
class Dirac(Initializer):
    """Dirac delta for 3-, 4- or 5-D convolution weights (identity convolution)."""
    random = False

    def __init__(self, groups=1):
        super().__init__(groups=groups)

    def generate(self, key, shape, dtype):
        if len(shape) not in (3, 4, 5) or shape[0] % self.groups:
            raise ValueError(f"Dirac needs a 3-5-D shape whose dim 0 divides by groups={self.groups}, got {tuple(shape)}")
        out = np.zeros(shape, np.dtype(dtype))
        per = shape[0] // self.groups
        centre = tuple(s // 2 for s in shape[2:])
        for g in range(self.groups):
            for i in range(min(per, shape[1])):
                out[(g * per + i, i) + centre] = 1
        return jnp.asarray(out)


@_register()
class VarianceScaling(Initializer):
    """``scale / fan`` variance, ``distribution`` truncated_normal, untruncated_normal or uniform."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal"):
        super().__init__(scale=scale, mode=mode, distribution=distribution)

    def generate(self, key, shape, dtype):
        mode = {"fan_in": "fan_in", "fan_out": "fan_out", "fan_avg": "fan_avg"}.get(self.mode)
        dist = {"truncated_normal": "truncated_normal", "untruncated_normal": "normal",
                "uniform": "uniform"}.get(self.distribution)
        if mode is None or dist is None:
            raise ValueError(f"VarianceScaling: bad mode {self.mode!r} or distribution {self.distribution!r}")
        init = jax.nn.initializers.variance_scaling(self.scale, mode, dist, in_axis=1, out_axis=0)
        return _real(key, shape, dtype, lambda k, s, d: init(k, s, d))


@_register()
class Sparse(Initializer):
    """A 2-D matrix with a ``sparsity`` fraction of each column zero, the rest N(0, sigma²)."""

    def __init__(self, sparsity, sigma=0.01):
        super().__init__(sparsity=sparsity, sigma=sigma)

    def generate(self, key, shape, dtype):
        if len(shape) != 2:
            raise ValueError(f"Sparse needs a 2-D shape, got {tuple(shape)}")
        k1, k2 = jax.random.split(key)
        values = self.sigma * jax.random.normal(k1, shape, jnp.float32)
        zeros = int(math.ceil(self.sparsity * shape[0]))
        ranks = jnp.argsort(jax.random.uniform(k2, shape), axis=0).argsort(axis=0)
        return jnp.where(ranks < zeros, 0.0, values).astype(dtype)


def _as_shape(shape) -> tuple:
    if isinstance(shape, numbers.Integral):
        return (int(shape),)
    try:
        dims = tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        raise TypeError(f"shape must be an int or a sequence of ints, got {shape!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"initializer: shape {dims} is invalid: every dimension must be a "
                         "non-negative int")
    return dims


class _TensorInit(Initializer):
    """Initialise from a given array (its shape must match)."""
    random = False

    def __init__(self, data):
        super().__init__()
        self.data = data

    def generate(self, key, shape, dtype):
        return jnp.asarray(self.data).astype(dtype)


def known_names() -> list:
    """Every initializer name ``initializer()`` accepts (case-insensitive)."""
    return sorted(_REGISTRY)


def _resolve(init):
    if isinstance(init, Initializer):
        return init
    if isinstance(init, str):
        cls = _REGISTRY.get(init.lower())
        if cls is None:
            raise ValueError(f"unknown initializer {init!r}{did_you_mean(init.lower(), known_names()) or ';'} "
                             f"known names: {', '.join(known_names())}; or pass an Initializer, a number or a Tensor")
        return cls()
    if isinstance(init, bool):
        raise TypeError("initializer: init must be a str, an Initializer, a number or a Tensor, got a bool")
    if isinstance(init, numbers.Number):
        return Constant(init)
    return None


class LazyInit:
    """An initializer bound to a shape and dtype; ``init_data()`` makes the array.

    What :func:`initializer` returns. A Parameter built from it stays lazy
    until first use.
    """

    __cellkit_lazy__ = True

    def __init__(self, init: Initializer, shape: tuple, dtype):
        self.init, self.shape, self._dtype = init, shape, mstype.get_dtype(dtype)
        self._data = None

    @property
    def dtype(self):
        return self._dtype

    def init_data(self):
        """The array (made once, on the first call)."""
        if self._data is None:
            self._data = self.init(self.shape, self._dtype)
        return self._data

    def asnumpy(self):
        return np.asarray(self.init_data())

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.init_data(), dtype=dtype)

    def __jax_array__(self):
        return self.init_data()

    def __repr__(self):
        return f"LazyInit({self.init!r}, shape={self.shape}, dtype={self._dtype})"


def initializer(init, shape=None, dtype=mstype.float32) -> LazyInit:
    """Bind ``init`` to ``shape`` and ``dtype``, without computing anything yet.

    ``init`` is an Initializer, an initializer name (case-insensitive, e.g.
    ``'normal'``, ``'xavier_uniform'``, ``'HeUniform'``), a number (a constant),
    or an array whose shape must equal ``shape``.

    >>> import cellkit as ms
    >>> from cellkit.common.initializer import initializer
    >>> initializer(0.5, (2,), ms.float32).init_data()
    Array([0.5, 0.5], dtype=float32)
    >>> initializer('xavier_unifrom', (2, 2))
    Traceback (most recent call last):
    ...
    ValueError: unknown initializer 'xavier_unifrom'; did you mean 'xavier_uniform', 'xavieruniform', 'xavier_normal'? known names: dirac, ...
    """
    resolved = _resolve(init)
    if resolved is None:  # an array
        data = init.value if hasattr(init, "__cellkit_value__") else init
        data_shape = tuple(np.shape(data))
        if shape is not None and _as_shape(shape) != data_shape:
            raise ValueError(f"initializer: the given tensor has shape {data_shape} but shape "
                             f"{_as_shape(shape)} was asked for")
        return LazyInit(_TensorInit(data), data_shape, dtype)
    if shape is None:
        raise ValueError("initializer: a shape is needed unless init is a tensor")
    return LazyInit(resolved, _as_shape(shape), dtype)


_tensor_initializer_slot[0] = initializer
