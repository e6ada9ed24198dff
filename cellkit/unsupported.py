"""MindSpore names that have no meaning on JAX, each raising ``NotImplementedError`` that says what
to use instead; and compiler hints that are accepted because XLA needs none.

The names are importable (``from cellkit import export`` works, as a ported script's imports
do); calling one, or making one of the classes, raises. ``docs/differences.md`` lists them.

>>> import cellkit as ms
>>> ms.export(None, file_name="net", file_format="MINDIR")
Traceback (most recent call last):
...
NotImplementedError: cellkit.export: MindIR is MindSpore's graph format; export a compiled function with jax.export (jax.export.export(jax.jit(fn))(*args).serialize()), or save the weights with save_checkpoint
>>> @ms.lazy_inline
... def f(x):
...     return x
>>> f(3)
3
"""

from __future__ import annotations

__all__ = ["UNSUPPORTED", "unsupported", "lazy_inline", "no_inline", "jit_class", "set_recursion_limit",
           "set_algo_parameters", "get_algo_parameters", "reset_algo_parameters"]

_MINDIR = ("MindIR is MindSpore's graph format; export a compiled function with jax.export "
           "(jax.export.export(jax.jit(fn))(*args).serialize()), or save the weights with save_checkpoint")
_SPARSE = "cellkit has no sparse Tensor types; use dense arrays or jax.experimental.sparse (BCOO, BCSR)"
_STRATEGY = ("MindSpore's saved parallel strategies do not exist here: shardings are jax.sharding on each "
             "Parameter; save and load full (gathered) weights, or place them with cellkit.parallel")
_ASCEND = "this is a feature of Ascend devices and MindSpore's runtime, which JAX does not have"

# name -> what to use instead
UNSUPPORTED = {
    "export": _MINDIR, "load": _MINDIR, "save_mindir": _MINDIR, "load_mindir": _MINDIR,
    "export_split_mindir": _MINDIR, "load_obf_params_into_net": _MINDIR, "obfuscate_ckpt": _MINDIR,
    "RowTensor": _SPARSE, "COOTensor": _SPARSE, "CSRTensor": _SPARSE, "SparseTensor": _SPARSE,
    "load_distributed_checkpoint": _STRATEGY, "transform_checkpoints": _STRATEGY,
    "transform_checkpoint_by_rank": _STRATEGY, "merge_pipeline_strategys": _STRATEGY,
    "build_searched_strategy": _STRATEGY, "merge_sliced_parameter": _STRATEGY,
    "restore_group_info_list": _STRATEGY, "get_ckpt_path_with_strategy": _STRATEGY,
    "rank_list_for_transform": _STRATEGY, "load_segmented_checkpoints": _STRATEGY,
    "unified_safetensors": _STRATEGY, "sync_pipeline_shared_parameters": _STRATEGY,
    "set_ps_context": "parameter-server training is not supported; use data parallelism (docs/distributed.md)",
    "get_ps_context": "parameter-server training is not supported; use data parallelism (docs/distributed.md)",
    "reset_ps_context": "parameter-server training is not supported; use data parallelism (docs/distributed.md)",
    "set_dump": "graph dumps are XLA's: set XLA_FLAGS=--xla_dump_to=DIR before the first computation",
    "sdc_detect_start": _ASCEND, "sdc_detect_stop": _ASCEND, "get_sdc_detect_result": _ASCEND,
    "mindio_preload": _ASCEND, "set_mindio_server_info": _ASCEND, "set_kernel_launch_group": _ASCEND,
    "set_kernel_launch_capture": _ASCEND, "set_cpu_affinity": _ASCEND, "set_memory": _ASCEND,
    "stress_detect": _ASCEND, "qint4x2": "JAX has no packed int4x2 type (jax.numpy.int4 is one 4-bit value)",
    "DeviceCtx": "use jax.default_device(device) as a context manager, or set_device",
}


def unsupported(name: str):
    """A stand-in for ``name`` that raises ``NotImplementedError`` with what to use instead."""
    why = UNSUPPORTED[name]

    def refuse(*args, **kwargs):
        raise NotImplementedError(f"cellkit.{name}: {why}")
    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"Not available in cellkit: {why}."
    return refuse


def lazy_inline(fn=None, attrs=None, policy=None):
    """MindSpore's hint to compile a Cell's graph once and reuse it: XLA decides that itself; returns
    ``fn`` unchanged (usable as ``@lazy_inline`` or ``@lazy_inline(...)``)."""
    return fn if fn is not None else (lambda f: f)


def no_inline(fn=None):
    """MindSpore's hint not to inline a function's graph: returns ``fn`` unchanged."""
    return fn if fn is not None else (lambda f: f)


def jit_class(cls):
    """MindSpore's mark for classes usable inside graphs: any Python class is, under JAX tracing."""
    if not isinstance(cls, type):
        raise TypeError(f"jit_class: expected a class, got {type(cls).__name__}")
    return cls


def set_recursion_limit(recursion_limit=1000):
    """The graph compiler's recursion limit: JAX traces Python, whose limit is ``sys.setrecursionlimit``."""
    if isinstance(recursion_limit, bool) or not isinstance(recursion_limit, int) or recursion_limit <= 0:
        raise ValueError(f"set_recursion_limit: recursion_limit must be a positive int, got {recursion_limit!r}")


_ALGO = {}


def set_algo_parameters(**kwargs):
    """Options of MindSpore's sharding-strategy search; XLA's sharding propagation takes none, so they
    are kept for ``get_algo_parameters`` only."""
    _ALGO.update(kwargs)


def get_algo_parameters(attr_key):
    if attr_key not in _ALGO:
        raise ValueError(f"get_algo_parameters: {attr_key!r} was not set with set_algo_parameters")
    return _ALGO[attr_key]


def reset_algo_parameters():
    _ALGO.clear()
