"""``Tensor``: build a ``jax.Array`` with MindSpore's conversion rules.

cellkit has no Tensor wrapper class: ``Tensor(...)`` returns a plain
``jax.Array``, and ``isinstance(x, Tensor)`` is true for every ``jax.Array``
(and for Parameters, as in MindSpore where Parameter subclasses Tensor).

Conversion rules (MindSpore's):

* Python ``float`` → float32; ``bool`` → bool; ``complex`` → complex64.
* Python ``int`` → int64 when ``jax_enable_x64`` is on. With it off (JAX's
  default) JAX has no 64-bit types, so ints become int32, and NumPy int64 /
  float64 data become int32 / float32. cellkit never flips the flag itself.
* NumPy arrays and scalars keep their dtype; lists take the widest kind of
  their elements (any float → float32, else int, else bool).
* A Python int that does not fit the requested integer dtype raises
  ``OverflowError`` (MindSpore wraps it silently).

>>> import numpy as np
>>> import cellkit as ms
>>> ms.Tensor(1.5).dtype == ms.float32
True
>>> ms.Tensor([1, 2, 3], ms.float32)
Array([1., 2., 3.], dtype=float32)
>>> isinstance(ms.Tensor(np.ones(2)), ms.Tensor)
True
"""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp
import numpy as np

from . import dtype as mstype

__all__ = ["Tensor", "tensor", "from_numpy", "is_tensor", "x64_enabled", "default_int_dtype", "to_array", "check_data"]

# ``cellkit.initializer.initializer``, installed by that module when it is imported (``import
# cellkit`` always does). It sits above this module: its random initializers draw keys from
# the random stream, which is a Parameter; ``Tensor(init=...)`` and ``Parameter.clone(init=...)``
# reach it through here.
_initializer = [None]


def from_initializer(init, shape, dtype):
    """The array ``initializer(init, shape, dtype)`` makes (``init``: an Initializer, a name, a number)."""
    make = _initializer[0]
    if make is None:
        raise RuntimeError("cellkit.initializer is not imported yet; import cellkit first")
    return make(init, shape, dtype).init_data()


def x64_enabled() -> bool:
    """Whether JAX's 64-bit mode (``jax_enable_x64``) is on."""
    return bool(jax.config.jax_enable_x64)


def default_int_dtype():
    """Int64 with ``jax_enable_x64`` on, else Int32 (what a Python int becomes)."""
    return mstype.int64 if x64_enabled() else mstype.int32


def _python_kind(data):
    """'b', 'i', 'f', 'c' for (nested lists of) Python scalars, else None."""
    if isinstance(data, bool):
        return "b"
    if isinstance(data, int):
        return "i"
    if isinstance(data, float):
        return "f"
    if isinstance(data, complex):
        return "c"
    if isinstance(data, (list, tuple)):
        kinds = {_python_kind(d) for d in data}
        if None in kinds:
            return None
        for k in ("c", "f", "i", "b"):
            if k in kinds:
                return k
        return "f"  # an empty list: MindSpore gives Float32
    return None


def _python_ints(data):
    if isinstance(data, bool):
        return
    if isinstance(data, int):
        yield data
    elif isinstance(data, (list, tuple)):
        for d in data:
            yield from _python_ints(d)


def check_int_range(data, dtype, what="value") -> None:
    """Raise OverflowError if a Python int in ``data`` does not fit ``dtype``."""
    np_dtype = np.dtype(dtype)
    if np_dtype.kind not in "iu":
        return
    info = np.iinfo(np_dtype)
    for v in _python_ints(data):
        if not info.min <= v <= info.max:
            raise OverflowError(
                f"{what}: Python int {v} does not fit {mstype.get_dtype(np_dtype)} "
                f"(range {info.min}..{info.max}); pass a wider dtype")


_PY_DTYPES = {"b": np.bool_, "f": np.float32, "c": np.complex64}
_ACCEPTED = "a number, a (nested) list or tuple of numbers, a NumPy array or a jax.Array"


def _data_shape(data, what, path=""):
    """The shape of ``data`` (a number, array or nested list), or a clear error saying what is wrong."""
    where = f"element {path}" if path else "the data"
    if isinstance(data, (np.ndarray, np.generic)):
        if data.dtype.kind in "OSUMm" or data.dtype.type is np.void:  # object, bytes, str, datetime, raw bytes
            raise TypeError(f"{what}: {where} is a NumPy array of dtype {data.dtype}, which is not "
                            f"numeric; expected {_ACCEPTED}")
        return data.shape
    if isinstance(data, (list, tuple)):
        shapes = [_data_shape(d, what, f"{path}[{i}]") for i, d in enumerate(data)]
        for i, s in enumerate(shapes[1:], 1):
            if s != shapes[0]:
                raise ValueError(f"{what}: the nested list is ragged: element {path}[0] has shape "
                                 f"{shapes[0]} but element {path}[{i}] has shape {s}; every row must "
                                 "have the same length")
        return (len(data),) + (shapes[0] if shapes else ())
    if isinstance(data, numbers.Number) or hasattr(data, "__array__") or hasattr(data, "__jax_array__"):
        return tuple(np.shape(data))
    raise TypeError(f"{what}: cannot convert {where} ({type(data).__name__} {data!r:.40}) to a tensor; "
                    f"expected {_ACCEPTED}")


def check_data(data, what="Tensor") -> None:
    """Raise TypeError (not numeric) or ValueError (a ragged list) for data no tensor can hold.

    >>> check_data([[1, 2], [3]])
    Traceback (most recent call last):
    ...
    ValueError: Tensor: the nested list is ragged: element [0] has shape (2,) but element [1] has shape (1,); every row must have the same length
    >>> check_data("1.5", "Parameter 'w'")
    Traceback (most recent call last):
    ...
    TypeError: Parameter 'w': cannot convert the data (str '1.5') to a tensor; expected a number, ...
    """
    if not isinstance(data, jax.Array):
        _data_shape(data, what)


def to_array(data, dtype=None, what="Tensor") -> jax.Array:
    """Convert ``data`` to a fresh ``jax.Array`` with MindSpore's rules.

    The result never shares memory with a NumPy input, so mutating the NumPy
    array later does not change it.
    """
    if hasattr(data, "__cellkit_value__"):  # a Parameter
        data = data.__cellkit_value__()
    kind = _python_kind(data)
    if dtype is not None:
        dtype = np.dtype(dtype)
        if kind is not None:
            check_int_range(data, dtype, what)
    elif kind is not None:
        dtype = np.dtype(default_int_dtype()) if kind == "i" else np.dtype(_PY_DTYPES[kind])
    if isinstance(data, jax.Array):
        return data if dtype is None or data.dtype == dtype else data.astype(dtype)
    check_data(data, what)
    if type(data) is np.ndarray and (dtype is None or dtype == data.dtype):
        return host_to_device(np.array(data, copy=True))
    if (type(data) is np.ndarray and data.dtype.kind in "biufc" and dtype.kind in "biufc"
            and jax.dtypes.canonicalize_dtype(dtype) == dtype):
        return host_to_device(np.asarray(data, dtype=dtype))   # (jnp.array converts with NumPy too)
    if kind is not None and dtype.kind in "biufc":   # (nested lists of) Python numbers: made on the host
        host = np.array(data, dtype=dtype)
        if host.dtype == dtype:
            return host_to_device(host)
    return jnp.array(data, dtype=dtype, copy=True)


def as_array(x) -> jax.Array:
    """``jnp.asarray(x)`` (same dtype, same weak type), without compiling a copy for a Python number
    or NumPy data.

    >>> x = as_array(2.0)
    >>> float(x), x.weak_type
    (2.0, True)
    """
    if isinstance(x, jax.Array):
        return x
    if type(x) in (float, bool) or type(x) is int and -2**31 <= x < 2**31:
        return jax.device_put(x)
    if type(x) is np.ndarray or isinstance(x, np.generic):
        return host_to_device(np.array(x, copy=True))
    return jnp.asarray(x)


def host_to_device(data: np.ndarray) -> jax.Array:
    """A NumPy array on the device, without a compiled copy per shape.

    (``jnp.asarray`` of a NumPy array compiles one small executable per shape and dtype.) A dtype
    JAX does not hold (float64 without ``jax_enable_x64``) is converted with NumPy, as
    ``jnp.asarray`` converts it. The array may be shared with the result: pass a copy if it will
    change later.

    >>> host_to_device(np.arange(3, dtype=np.int32))
    Array([0, 1, 2], dtype=int32)
    """
    if data.dtype.kind in "biufc":
        return jax.device_put(data)
    return jnp.asarray(data)


class _TensorMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, jax.Array) or hasattr(obj, "__cellkit_value__")

    def __subclasscheck__(cls, sub):
        return issubclass(sub, jax.Array) or hasattr(sub, "__cellkit_value__")


def from_numpy(array) -> jax.Array:
    """A Tensor holding a NumPy array's data and dtype (MindSpore's ``from_numpy``).

    The result is a copy: a ``jax.Array`` never shares memory with a NumPy array
    that can still be written (MindSpore's shares it).

    >>> import numpy as np
    >>> import cellkit as ms
    >>> ms.from_numpy(np.array([1, 2], np.int32))
    Array([1, 2], dtype=int32)
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}")
    return to_array(array, None, "from_numpy")


class Tensor(metaclass=_TensorMeta):
    """Build a ``jax.Array`` from ``input_data`` (MindSpore's ``Tensor``).

    Args:
        input_data: a number, (nested) list or tuple, NumPy array, ``jax.Array``
            or Parameter.
        dtype: the dtype to cast to (a cellkit, NumPy or JAX dtype).
        shape, init: build the tensor from an Initializer instead
            (``Tensor(shape=(2, 3), dtype=ms.float32, init=One())``); all three
            of ``shape``, ``dtype`` and ``init`` are needed. The values are made
            at once; ``init_data()`` returns the tensor itself.
        const_arg: accepted for compatibility (a jax.Array passed to
            ``cellkit.jit`` is always an input, never a constant).

    ``isinstance(x, Tensor)`` is true for every ``jax.Array`` (and its tracers)
    and for Parameters, as MindSpore's Parameter is a Tensor.

    >>> import cellkit as ms
    >>> ms.Tensor([[1, 2], [3, 4]], dtype=ms.float32).shape
    (2, 2)
    >>> from cellkit.common.initializer import One
    >>> ms.Tensor(shape=(2,), dtype=ms.float32, init=One()).init_data()
    Array([1., 1.], dtype=float32)
    """

    def __new__(cls, input_data=None, dtype=None, shape=None, init=None, const_arg=False, **_ignored):
        if init is not None or (shape is not None and input_data is None):
            if init is None or shape is None or dtype is None:
                raise ValueError("Tensor: init, dtype and shape must all be given to build a tensor from an "
                                 f"initializer, got init={init!r}, dtype={dtype!r}, shape={shape!r}")
            if input_data is not None:
                raise ValueError("Tensor: give either input_data or (shape, dtype, init), not both")
            return from_initializer(init, shape, dtype)
        if input_data is None:
            raise TypeError("Tensor() needs input_data: a number, list, tuple, NumPy array or Tensor "
                            "(or shape, dtype and init), got None")
        return to_array(input_data, dtype)

    from_numpy = staticmethod(from_numpy)


def tensor(input_data=None, dtype=None, shape=None, init=None, const_arg=False):
    """``Tensor(...)`` as a function (MindSpore's ``ms.tensor``).

    >>> import cellkit as ms
    >>> ms.tensor([1, 2], ms.float32)
    Array([1., 2.], dtype=float32)
    """
    return Tensor(input_data, dtype, shape, init, const_arg)


def is_tensor(x) -> bool:
    """True for a ``jax.Array`` or a Parameter."""
    return isinstance(x, Tensor)
