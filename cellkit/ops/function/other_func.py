"""Graph-mode helpers, printing and dumping, and user ops over Python functions.

MindSpore's ``depend`` and ``identity`` are plain data flow here; ``print_`` and
``tensordump`` go through ``jax.debug`` callbacks, so they also act inside ``jit``;
``Custom(func, out_shape, out_dtype, func_type="pyfunc")`` runs a NumPy function
through ``jax.pure_callback``.

>>> import cellkit as ms
>>> import numpy as np
>>> add = ms.ops.Custom(lambda a, b: np.add(a, b), out_shape=(2,), out_dtype=ms.float32)
>>> add(ms.Tensor([1., 2.]), ms.Tensor([3., 4.]))
Array([4., 6.], dtype=float32)
"""

from __future__ import annotations

import itertools
import pathlib

import jax
import jax.numpy as jnp
import numpy as np

from ... import dtype as mstype
from ..op_info_register import CustomRegOp, DataType
from ..primitive import Primitive
from ._utils import _v, exporter

# Stateful, host-side or transform ops: eager calls run op by op (see cellkit.eager_jit).
EAGER_JIT = False
__all__ = ["CustomRegOp", "DataType"]  # re-exported: ops.CustomRegOp, as in MindSpore
_public = exporter(__all__)


@_public
def depend(value, expr):
    """Return ``value`` (ordering is implicit in JAX's data flow)."""
    return value


@_public
def isinstance_(x, t):
    """Python's isinstance (MindSpore exposes it for graph mode)."""
    return isinstance(x, t)


@_public
def identity(x):
    """``x`` itself (a new array when given a Parameter)."""
    return jnp.asarray(_v(x))


@_public
def print_(*input_x):
    """Print strings and tensors, one per line (also inside ``jit``, when the computation runs)."""
    texts = [item if isinstance(item, str) else None for item in input_x]
    values = [_v(item) for item in input_x if not isinstance(item, str)]

    def show(*arrays):
        it = iter(arrays)
        print("\n".join(t if t is not None else str(np.asarray(next(it))) for t in texts), flush=True)
    jax.debug.callback(show, *values, ordered=True)


_dump_count = itertools.count()


def _write_dump(path, mode, x):
    x = np.asarray(x)
    target = pathlib.Path(path)
    stem = target.name[:-4] if target.name.endswith(".npy") else target.name
    np.save(target.with_name(f"{stem}_{x.dtype.name}_{next(_dump_count)}.npy"), x)


@_public
def tensordump(file_name, tensor, mode="out"):
    """Save ``tensor`` to ``<file_name>_<dtype>_<n>.npy`` (n counts the dumps), also inside ``jit``."""
    if mode not in ("in", "out", "all"):
        raise ValueError(f"tensordump: mode must be 'in', 'out' or 'all', got {mode!r}")
    if not isinstance(file_name, str) or not file_name:
        raise ValueError(f"tensordump: file_name must be a non-empty str, got {file_name!r}")
    jax.debug.callback(_write_dump, file_name, mode, _v(tensor), ordered=True)


_FUNC_TYPES = ("hybrid", "akg", "tbe", "aicpu", "aot", "pyfunc", "julia")


def _struct(shape, dtype):
    return jax.ShapeDtypeStruct(tuple(int(s) for s in shape), np.dtype(dtype))


class Custom(Primitive):
    """MindSpore's ``ops.Custom`` for ``func_type="pyfunc"``: ``func`` gets and returns NumPy arrays
    and runs through ``jax.pure_callback``, eagerly and inside ``jit``.

    ``out_shape``/``out_dtype`` are a shape and dtype (tuples of them for several outputs)
    or functions of the inputs' shapes/dtypes. ``bprop(*inputs, out, dout)``, if given,
    returns the inputs' gradients. Kernel languages (``hybrid``, ``akg``, ``aot``,
    ``tbe``, ``aicpu``, ``julia``) compile for MindSpore's backends and are refused.

    >>> import cellkit as ms
    >>> ms.ops.Custom(print, (1,), ms.float32, func_type="aot")
    Traceback (most recent call last):
    ...
    TypeError: Custom: func_type 'aot' builds a MindSpore backend kernel; cellkit runs func_type='pyfunc' (a Python function on NumPy arrays) only
    """

    def __init__(self, func, out_shape=None, out_dtype=None, func_type="pyfunc", bprop=None, reg_info=None):
        super().__init__("Custom")
        if func_type not in _FUNC_TYPES:
            raise ValueError(f"Custom: func_type must be one of {list(_FUNC_TYPES)}, got {func_type!r}")
        if func_type != "pyfunc":
            raise TypeError(f"Custom: func_type {func_type!r} builds a MindSpore backend kernel; cellkit runs "
                            "func_type='pyfunc' (a Python function on NumPy arrays) only")
        if not callable(func):
            raise TypeError(f"Custom: func must be a Python function, got {type(func).__name__}")
        if out_shape is None or out_dtype is None:
            raise ValueError("Custom: a pyfunc needs out_shape and out_dtype (values, or functions of the "
                             "inputs' shapes and dtypes)")
        self.func, self.out_shape, self.out_dtype, self.func_type, self.bprop = func, out_shape, out_dtype, func_type, bprop
        self._config = {"func": func, "out_shape": out_shape, "out_dtype": out_dtype, "func_type": func_type,
                        "bprop": bprop}
        self._call = self._build()

    def _result(self, arrays):
        shape, dtype = self.out_shape, self.out_dtype
        if callable(shape):
            shape = shape(*[list(a.shape) for a in arrays])
        if callable(dtype) and not isinstance(dtype, mstype.Type):
            dtype = dtype(*[mstype.get_dtype(a.dtype) for a in arrays])
        if isinstance(dtype, (tuple, list)):
            return tuple(_struct(s, d) for s, d in zip(shape, dtype))
        return _struct(shape, dtype)

    def _build(self):
        func, bprop = self.func, self.bprop

        def run(*arrays):
            result = self._result(arrays)

            def host(*xs):
                out = func(*xs)
                if isinstance(result, tuple):
                    return tuple(np.asarray(o, r.dtype) for o, r in zip(out, result))
                return np.asarray(out, result.dtype)
            return jax.pure_callback(host, result, *arrays)

        if bprop is None:
            return run
        op = jax.custom_vjp(run)
        op.defvjp(lambda *xs: (run(*xs), (xs, run(*xs))),
                  lambda res, dout: tuple(bprop(*res[0], res[1], dout)))
        return op

    def __call__(self, *inputs):
        return self._call(*[jnp.asarray(_v(x)) for x in inputs])


__all__.append("Custom")


class Morph(Primitive):
    """MindSpore's ``ops.Morph(fn, infer_shape, infer_dtype, bprop_fn=None)``: a Primitive that applies
    ``fn``; JAX differentiates through ``fn`` unless ``bprop_fn(*inputs, out, dout)`` is given.
    ``infer_shape``/``infer_dtype`` are kept (JAX infers by tracing). MindSpore allows Morph only
    in graph mode; here it runs eagerly and inside ``jit`` alike.

    >>> import cellkit as ms
    >>> double = ms.ops.Morph(lambda x: 2 * x, lambda s: s, lambda t: t)
    >>> double(ms.Tensor([1., 2.]))
    Array([2., 4.], dtype=float32)
    """

    def __init__(self, fn, infer_shape, infer_dtype, bprop_fn=None):
        super().__init__("Morph")
        if not callable(fn):
            raise TypeError(f"Morph: fn must be a function, got {type(fn).__name__}")
        self.fn, self.infer_shape, self.infer_dtype, self.bprop_fn = fn, infer_shape, infer_dtype, bprop_fn
        self._config = {"fn": fn, "infer_shape": infer_shape, "infer_dtype": infer_dtype, "bprop_fn": bprop_fn}
        if bprop_fn is None:
            self._call = fn
        else:
            op = jax.custom_vjp(fn)
            op.defvjp(lambda *xs: (fn(*xs), (xs, fn(*xs))), lambda res, dout: tuple(bprop_fn(*res[0], res[1], dout)))
            self._call = op

    def __call__(self, *inputs):
        return self._call(*[_v(x) for x in inputs])


__all__.append("Morph")


@_public
def partial(func, *args):
    """``func`` with its first arguments fixed (``functools.partial``; MindSpore's graph-mode ``partial``)."""
    import functools
    return functools.partial(func, *args)


_PLATFORMS = {"CPU": "cpu", "GPU": "gpu", "Ascend": "tpu"}


@_public
def move_to(input, to="CPU", blocking=True):  # noqa: A002
    """``input`` on the first device of platform ``to`` ("CPU", "GPU"; "Ascend" is not a JAX platform)."""
    if to not in ("CPU", "GPU", "Ascend"):
        raise ValueError(f"move_to: to must be 'CPU', 'GPU' or 'Ascend', got {to!r}")
    try:
        device = jax.devices(_PLATFORMS[to])[0] if to != "Ascend" else None
    except RuntimeError:
        device = None
    if device is None:
        raise ValueError(f"move_to: no {to} device here; JAX sees {sorted({d.platform for d in jax.devices()})}")
    out = jax.device_put(_v(input), device)
    return out.block_until_ready() if blocking else out


@_public
def mixed_precision_cast(dst_dtype, x):
    """Cast the floating tensors in ``x`` (a tensor, or nested tuples/lists/dicts of them) to ``dst_dtype``;
    other values pass unchanged."""
    if isinstance(x, (tuple, list)):
        return type(x)(mixed_precision_cast(dst_dtype, e) for e in x)
    if isinstance(x, dict):
        return {k: mixed_precision_cast(dst_dtype, v) for k, v in x.items()}
    v = _v(x)
    if isinstance(v, (jax.Array, np.ndarray)) and jnp.issubdtype(v.dtype, jnp.floating):
        return jnp.asarray(v).astype(np.dtype(dst_dtype))
    return x
