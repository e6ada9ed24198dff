"""MindSpore's Tensor methods on JAX's arrays and tracers.

cellkit's Tensor is a plain ``jax.Array``. :func:`install` (run once when
``cellkit`` is imported) adds MindSpore's Tensor methods and properties that
``jax.Array`` lacks to JAX's array class and to its tracer class, so they work
eagerly and inside ``cellkit.jit``, ``jax.jit``, ``jax.grad`` and ``jax.vmap``:

* ``METHODS``/``PROPERTIES``: new names, one registry line each, by family
  (:mod:`.conversion`, :mod:`.shape`, :mod:`.math`, :mod:`.reduction`,
  :mod:`.indexing`, :mod:`.random`, :mod:`.delegated` (``cellkit.ops`` functions as methods)).
* ``ADAPTERS``: names JAX already has (``view``, ``sum``, ``max``, ``flatten``, ...).
  Every call JAX accepts keeps JAX's meaning; MindSpore's spellings that JAX
  would refuse (``x.view(2, -1)``, ``x.sum(dim=1, keepdim=True)``) are added.
* ``INPLACE`` (:mod:`.inplace`): ``add_``, ``zero_``, ... update a Parameter
  through ``assign_value``; on a jax.Array, code :mod:`cellkit.rewrite` reached
  rebinds the name (``x = inplace.apply(x, "add_", y)``), anywhere else they raise
  TypeError saying what to write, as ``x[i] = v`` does (:mod:`.assignment`).

>>> import jax
>>> import cellkit as ms
>>> x = ms.Tensor([[1., 2.], [3., 4.]])
>>> x.view(-1).asnumpy()
array([1., 2., 3., 4.], dtype=float32)
>>> jax.jit(lambda t: t.unsqueeze(0).sum(dim=2, keepdim=True))(x).shape
(1, 2, 1)
"""

from __future__ import annotations

import functools
import types

import jax

from ..eager_jit import eager_jit, host_first
from . import assignment, conversion, delegated, indexing, inplace, math, random, reduction, shape

__all__ = ["install", "METHODS", "PROPERTIES", "ADAPTERS", "UNSUPPORTED", "INPLACE", "FAMILIES",
           "array_classes"]

FAMILIES = {"conversion": conversion, "shape": shape, "math": math, "reduction": reduction,
            "indexing": indexing, "random": random, "inplace": inplace, "delegated": delegated}


def _merge(attr):
    merged = {}
    for family, module in FAMILIES.items():
        for name, value in getattr(module, attr).items():
            if name in merged:
                raise RuntimeError(f"Tensor method {name!r} is registered twice (family {family!r})")
            merged[name] = value
    return merged


METHODS = _merge("METHODS")
# The methods of families that set ``EAGER_JIT = False`` run op by op; the others run an eager call as
# one compiled executable (``cellkit.eager_jit``; a method opts out with ``op_by_op``).
_OP_BY_OP = {name for module in FAMILIES.values() if not getattr(module, "EAGER_JIT", True)
             for name in module.METHODS}
PROPERTIES = _merge("PROPERTIES")
ADAPTERS = _merge("ADAPTERS")
UNSUPPORTED = dict(conversion.UNSUPPORTED, **delegated.UNSUPPORTED)
INPLACE = inplace.INPLACE
# JAX's own methods that move data: an eager call on a small CPU array runs with NumPy (cellkit.host_ops),
# with no compilation per shape.
HOST_FIRST = ("reshape", "swapaxes", "transpose", "squeeze", "flatten", "ravel", "view", "astype", "repeat",
              "__getitem__")
HOST_FIRST_PROPERTIES = ("T", "mT")   # (JAX's transposing properties: their getters, the same way)
# JAX's arithmetic operators: a small eager one runs with NumPy as XLA's CPU code computes it
# (cellkit.host_compute), with no compilation per shape; on an eager grad's tracers its forward value
# is made so (staging tracers pass straight on).
HOST_ARITHMETIC = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
                   "__rtruediv__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__abs__",
                   "__lt__", "__le__", "__gt__", "__ge__",
                   # JAX's reductions (with MindSpore's spellings: ADAPTERS), the same way
                   "sum", "mean", "max", "min", "prod", "all", "any", "argmax", "argmin", "std", "var", "cumsum")

_installed = []


def array_classes():
    """JAX's concrete array class and its tracer base class."""
    from jax._src.array import ArrayImpl
    return (ArrayImpl, jax.core.Tracer)


def _unsupported(name, reason):
    def method(self, *args, **kwargs):
        raise TypeError(f"Tensor.{name}() is not available on cellkit's Tensor (a jax.Array): {reason}")
    method.__name__ = name
    return method


def _named(name, fn):
    """``fn`` as a function called ``name`` (a copy: one function may serve several names)."""
    if getattr(fn, "__name__", name) == name or not isinstance(fn, types.FunctionType):
        return fn
    named = types.FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    named.__kwdefaults__, named.__doc__, named.__qualname__ = fn.__kwdefaults__, fn.__doc__, name
    return named


def _traceable(cls, name):
    """``cls``'s method ``name``, callable on a tracer too (the host's trace of the call): the concrete
    array's ``__getitem__`` checks that its buffer is alive first, which a tracer cannot; a tracer's
    own (``Tracer.__getitem__``) is the same indexing."""
    method = getattr(cls, name)
    if name != "__getitem__" or issubclass(cls, jax.core.Tracer):
        return method

    @functools.wraps(method)
    def getitem(self, index):
        return self[index] if isinstance(self, jax.core.Tracer) else method(self, index)
    return getitem


def install() -> None:
    """Add the registries' methods to JAX's array and tracer classes and the in-place ones to Parameter.

    Idempotent. A name JAX itself defines is never replaced by a registry
    entry of ``METHODS``/``PROPERTIES`` (only ``ADAPTERS`` wrap JAX's own).
    """
    if _installed:
        return
    from ..parameter import Parameter
    for cls in array_classes():
        have = set(dir(cls))   # (each name set below is added: a later table never replaces it)
        for name, fn in METHODS.items():
            if name not in have:
                plain = name in _OP_BY_OP or not isinstance(fn, types.FunctionType)  # staticmethod: as it is
                setattr(cls, name, _named(name, fn) if plain else eager_jit(_named(name, fn)))
                have.add(name)
        for name, fget in PROPERTIES.items():
            if name not in have:
                setattr(cls, name, property(fget))
                have.add(name)
        for name, reason in UNSUPPORTED.items():
            if name not in have:
                setattr(cls, name, _unsupported(name, reason))
                have.add(name)
        for name, adapter in ADAPTERS.items():
            jax_method = getattr(cls, name)
            method = functools.wraps(jax_method)(adapter(jax_method))
            del method.__wrapped__   # its signature is the adapter's (JAX's calls and MindSpore's), not JAX's
            setattr(cls, name, method)
        for name in HOST_FIRST:   # (on tracers: an eager grad's forward values; other traces pass straight on)
            setattr(cls, name, host_first(_traceable(cls, name)))   # (host_first keeps the name and text)
        for name in HOST_ARITHMETIC:
            setattr(cls, name, host_first(getattr(cls, name)))
        for name in HOST_FIRST_PROPERTIES:
            prop = getattr(cls, name)
            setattr(cls, name, property(host_first(prop.fget), doc=prop.__doc__))
        for name, (_, functional) in INPLACE.items():
            if name not in have:
                setattr(cls, name, inplace.array_method(name, functional))
                have.add(name)
        cls.__setitem__ = inplace.array_setitem
    for name, (fn, _) in INPLACE.items():
        if name not in dir(Parameter):
            setattr(Parameter, name, inplace.parameter_method(name, fn))
    if "requires_grad_" not in dir(Parameter):
        Parameter.requires_grad_ = _requires_grad_
    _installed.append(True)


def _requires_grad_(self, requires_grad=True):
    """Set ``requires_grad`` (in place) and return the Parameter."""
    self.requires_grad = requires_grad
    return self
