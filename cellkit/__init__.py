"""cellkit: MindSpore's Cell/Parameter programming model on JAX.

Port MindSpore code by changing ``import mindspore as ms`` to
``import cellkit as ms``. Cells are JAX pytrees; ``cellkit.jit`` is ``jax.jit``
with Parameters read as inputs and written back.

>>> import cellkit as ms
>>> ms.Parameter(ms.Tensor([1., 2.]), name="w")
Parameter (name=w, shape=(2,), dtype=Float32, requires_grad=True)
"""

from . import startup as _startup

# A short script pays its imports every time: the collector is paused while cellkit, JAX and NumPy import,
# and the objects made are then frozen (see cellkit.startup; CELLKIT_GC_FREEZE=0 opts out).
with _startup.collector_paused(freeze=True):
    _startup.import_jax()   # (JAX's ROCm plugin scan narrowed to jax-rocm distributions)
    from . import compilation_cache
    compilation_cache.configure()   # JAX's persistent compilation cache, on unless CELLKIT_COMPILATION_CACHE=0
    from .compilation_cache import clear_compilation_cache
    from . import stored_executables   # (from the start: it notes executables read back from the cache)
    from . import dtype
    from .dtype import (Type, bfloat16, bool_, byte, cdouble, cfloat, complex64, complex128, double,
                        dtype_to_nptype, dtype_to_pytype, float8_e4m3fn, float8_e5m2, float16, float32,
                        float64, float_, half, int8, int16, int32, int64, int_, intc, intp, long,
                        pytype_to_dtype, short, single, ubyte, uint, uint8, uint16, uint32, uint64, uintc,
                        uintp, ushort)
    from .tensor import Tensor, from_numpy, is_tensor, tensor
    from .parameter import Parameter, ParameterTuple
    from .random import (Generator, default_generator, get_rng_state, get_seed, initial_seed, manual_seed, seed,
                         set_rng_state, set_seed)
    from . import initializer
    from .cell import Cell
    from .context import GRAPH_MODE, PYNATIVE_MODE, get_context, set_context
    from .parallel_context import (ParallelMode, get_auto_parallel_context, reset_auto_parallel_context,
                                   set_auto_parallel_context)
    from .engine import JitConfig, grad, jacfwd, jacrev, jit, jvp, mutable, recompute, value_and_grad, vjp, vmap
    from .checkpoint import load_checkpoint, load_param_into_net, save_checkpoint
    from . import common, ops, parallel, random
    from . import nn
    from . import tensor_methods
    from . import train
    from . import amp
    from . import device_manager, runtime
    from .device_manager import get_current_device, set_deterministic, set_device
    from .layout import Layout
    from .ops import constexpr
    from .profiler import Profiler
    from .runtime import (Event, Stream, StreamCtx, communication_stream, current_stream, default_stream,
                          empty_cache, max_memory_allocated, max_memory_reserved, memory_allocated, memory_reserved,
                          memory_stats, memory_summary, reset_max_memory_allocated, reset_max_memory_reserved,
                          reset_peak_memory_stats, set_cur_stream, synchronize)
    from .run_check import run_check
    from . import unsupported as _unsupported
    from .unsupported import (get_algo_parameters, jit_class, lazy_inline, no_inline, reset_algo_parameters,
                              set_algo_parameters, set_recursion_limit)

    globals().update({name: _unsupported.unsupported(name) for name in _unsupported.UNSUPPORTED})

    # MindSpore exports all of mindspore.train at the top level (``ms.Model``, ``ms.LossMonitor``, ...).
    _TRAIN = [n for n in train.__all__ if n not in ("callback", "metrics", "serialization", "loss_scale_manager",
                                                     "summary")]
    globals().update({n: getattr(train, n) for n in _TRAIN})
    globals().update({"bool": dtype.bool_, "int": dtype.int32, "float": dtype.float32})  # ms.bool, ms.int, ms.float

    tensor_methods.install()


def load_ipython_extension(ipython):
    """``%load_ext cellkit``: ``import mindspore`` gives cellkit in this IPython session, and
    notebook cells get the assignment rewrite (see :mod:`cellkit.compat`)."""
    from .compat.ipython import load_ipython_extension as load
    load(ipython)


def unload_ipython_extension(ipython):
    """``%unload_ext cellkit``: undo :func:`load_ipython_extension`."""
    from .compat.ipython import unload_ipython_extension as unload
    unload(ipython)


from .version import __version__

__all__ = [
    "Tensor", "Parameter", "ParameterTuple", "Cell", "set_seed", "get_seed", "jit", "grad",
    "value_and_grad", "vjp", "jvp", "jacfwd", "jacrev", "vmap", "recompute", "set_context", "get_context",
    "GRAPH_MODE", "PYNATIVE_MODE", "nn", "ops", "parallel",
    "dtype", "dtype_to_nptype", "pytype_to_dtype", "dtype_to_pytype", "is_tensor", "tensor", "from_numpy", "initializer",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
    "bfloat16", "float32", "float64", "bool_", "complex64", "complex128",
    "save_checkpoint", "load_checkpoint", "load_param_into_net", "common", "train", "communication",
    "ParallelMode", "set_auto_parallel_context", "get_auto_parallel_context", "reset_auto_parallel_context",
    "amp", "byte", "short", "long", "ubyte", "ushort", "intc", "uintc", "intp", "uintp", "cfloat", "cdouble",
    "float8_e4m3fn", "float8_e5m2", "bool", "int", "float", "half", "single", "double", "int_", "uint", "float_",
    "Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
    "JitConfig", "mutable", "constexpr", "Layout", "Profiler", "run_check", "runtime", "device_manager",
    "set_device", "get_current_device", "set_deterministic", "synchronize", "Stream", "StreamCtx", "Event",
    "current_stream", "default_stream", "communication_stream", "set_cur_stream", "empty_cache",
    "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_stats",
    "memory_summary", "reset_peak_memory_stats", "reset_max_memory_allocated", "reset_max_memory_reserved",
    "compilation_cache", "clear_compilation_cache", "ckpt_to_safetensors", "safetensors_to_ckpt", "load_checkpoint_async", "jit_class", "lazy_inline",
    "no_inline", "set_recursion_limit", "set_algo_parameters", "get_algo_parameters", "reset_algo_parameters",
    *_TRAIN, *_unsupported.UNSUPPORTED,
]
__all__ = list(dict.fromkeys(__all__))


def __getattr__(name):
    # Subpackages with heavier imports load on first use (``import cellkit.dataset`` works too).
    if name in ("dataset", "communication", "numpy"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'cellkit' has no attribute {name!r}")
