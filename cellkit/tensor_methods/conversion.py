"""Conversion and introspection methods: ``asnumpy``, ``float``, ``to``, ``type``, ``numel``, ...

>>> import cellkit as ms
>>> x = ms.Tensor([[1, 2], [3, 4]], ms.int32)
>>> x.asnumpy()
array([[1, 2],
       [3, 4]], dtype=int32)
>>> x.float().dtype, x.type(), x.numel(), x.dim(), x.stride()
(dtype('float32'), 'Int32', 4, 2, [2, 1])
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import dtype as mstype
from ._common import canon

# Host-side or stateful methods: eager calls run op by op (see cellkit.eager_jit).
EAGER_JIT = False
__all__ = ["METHODS", "PROPERTIES", "ADAPTERS", "UNSUPPORTED"]


def _asnumpy(x):
    return np.array(x)  # a writable copy, as MindSpore's asnumpy() gives


def _cast(dtype):
    return lambda x: x.astype(canon(dtype))


def _is_dtype(obj) -> bool:
    if isinstance(obj, (mstype.Type, np.dtype)) or (isinstance(obj, type) and issubclass(obj, np.generic)):
        return True
    if isinstance(obj, str):
        try:
            np.dtype(obj)
            return True
        except TypeError:
            return False
    return False


def _to(x, *args, dtype=None, **_device_and_copy):
    """``to(dtype)``, ``to(other)`` (other's dtype), ``to('cpu')`` (device names are accepted and ignored)."""
    for a in args:
        if hasattr(a, "dtype") and hasattr(a, "shape"):
            dtype = a.dtype
        elif _is_dtype(a):
            dtype = a
    return x if dtype is None else x.astype(canon(dtype))


def _type(x, dtype=None):
    """``type()`` names the dtype (``'Float32'``); ``type(dtype)`` casts."""
    if dtype is None:
        return str(mstype.get_dtype(x.dtype))
    return x.astype(canon(dtype))


def _stride(x, dim=None):
    strides, step = [], 1
    for n in reversed(x.shape):
        strides.append(step)
        step *= n
    strides.reverse()
    return strides if dim is None else strides[dim]


def _data_ptr(x):
    if isinstance(x, jax.core.Tracer):
        raise TypeError("Tensor.data_ptr(): a traced value has no buffer; call it outside jit/grad")
    return x.unsafe_buffer_pointer()


def _self(x, *_args, **_kwargs):
    return x


def _convert_bytes_to_tensor(x, bytes_data, shape, dtype):
    return jnp.asarray(np.frombuffer(bytes_data, dtype=np.dtype(dtype)).reshape(shape))


METHODS = {
    "asnumpy": _asnumpy,
    "numpy": _asnumpy,
    "to": _to,
    "type": _type,
    "type_as": lambda x, other: x.astype(other.dtype),
    "float": _cast(np.float32),
    "half": _cast(np.float16),
    "bfloat16": _cast(jnp.bfloat16),
    "double": _cast(np.float64),
    "int": _cast(np.int32),
    "long": _cast(np.int64),
    "short": _cast(np.int16),
    "char": _cast(np.int8),
    "byte": _cast(np.uint8),
    "bool": _cast(np.bool_),
    "numel": lambda x: x.size,
    "nelement": lambda x: x.size,
    "dim": lambda x: x.ndim,
    "ndimension": lambda x: x.ndim,
    "contiguous": _self,
    "is_contiguous": lambda x: True,
    "stride": _stride,
    "storage_offset": lambda x: 0,
    "data_ptr": _data_ptr,
    "get_bytes": lambda x: np.asarray(x).tobytes(),
    "convert_bytes_to_tensor": _convert_bytes_to_tensor,
    "value": _self,
    "init_data": _self,
    "requires_grad_": _self,
    "pin_memory": _self,
    "is_pinned": lambda x: False,
    "flush_from_cache": lambda x: None,
    "is_floating_point": lambda x: bool(jnp.issubdtype(x.dtype, jnp.floating)),
    "is_complex": lambda x: bool(jnp.issubdtype(x.dtype, jnp.complexfloating)),
    "is_signed": lambda x: bool(jnp.issubdtype(x.dtype, jnp.signedinteger) or jnp.issubdtype(x.dtype, jnp.inexact)),
}

PROPERTIES = {
    "data": lambda x: x,
    "has_init": lambda x: False,
    "is_meta": lambda x: False,
    "H": lambda x: jnp.conj(jnp.swapaxes(x, -1, -2)) if x.ndim >= 2 else jnp.conj(x),
}

ADAPTERS = {}

# Names that cannot mean on a jax.Array what they mean on a MindSpore Tensor:
# calling them raises TypeError with this reason.
UNSUPPORTED = {
    "untyped_storage": "a jax.Array exposes no storage object; use x.asnumpy() or x.get_bytes()",
    "storage": "a jax.Array exposes no storage object; use x.asnumpy() or x.get_bytes()",
    "register_hook": "JAX computes gradients functionally; wrap the function in jax.custom_vjp "
                     "(or give a Cell a bprop) to change a gradient",
    "offload": "JAX manages device memory; move data with jax.device_put(x, device)",
}
