"""MindSpore's auto-parallel context: ``set_auto_parallel_context(parallel_mode=..., ...)``.

cellkit runs two of MindSpore's parallel modes: ``STAND_ALONE`` (the default)
and ``DATA_PARALLEL``. In data-parallel mode the batch of a training step is
split over the devices of a one-axis ``("data",)`` mesh (``device_num``
devices, all of them by default) and the Parameters are replicated; XLA
computes the gradient of the whole batch's loss, which is MindSpore's
``gradients_mean=True`` (with ``gradients_mean=False`` the gradients are
multiplied by ``device_num``, MindSpore's sum over devices). ``Model.train``
and ``TrainOneStepCell`` do this by themselves; :func:`shard_batch` and
:func:`gradient_scale` are the two pieces for a hand-written step. The modes
that search or take operator strategies (``SEMI_AUTO_PARALLEL``,
``AUTO_PARALLEL``, ``HYBRID_PARALLEL``) raise; shard Parameters with
``cellkit.parallel`` instead (see docs/distributed.md).

>>> import cellkit as ms
>>> ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
>>> ms.get_auto_parallel_context("parallel_mode")
'data_parallel'
>>> ms.reset_auto_parallel_context()
>>> ms.get_auto_parallel_context("parallel_mode")
'stand_alone'
"""

from __future__ import annotations

import jax
from jax.sharding import NamedSharding, PartitionSpec

__all__ = ["ParallelMode", "set_auto_parallel_context", "get_auto_parallel_context",
           "reset_auto_parallel_context", "data_parallel", "data_mesh", "shard_batch", "gradient_scale"]


class ParallelMode:
    """MindSpore's parallel modes (strings, as MindSpore's)."""
    STAND_ALONE = "stand_alone"
    DATA_PARALLEL = "data_parallel"
    HYBRID_PARALLEL = "hybrid_parallel"
    SEMI_AUTO_PARALLEL = "semi_auto_parallel"
    AUTO_PARALLEL = "auto_parallel"
    MODE_LIST = [STAND_ALONE, DATA_PARALLEL, HYBRID_PARALLEL, SEMI_AUTO_PARALLEL, AUTO_PARALLEL]


SUPPORTED = (ParallelMode.STAND_ALONE, ParallelMode.DATA_PARALLEL)

_DEFAULTS = {"parallel_mode": ParallelMode.STAND_ALONE, "gradients_mean": False, "device_num": 1,
             "global_rank": 0, "gradient_fp32_sync": True, "loss_repeated_mean": True,
             "parameter_broadcast": False, "full_batch": False, "enable_parallel_optimizer": False,
             "search_mode": "recursive_programming", "strategy_ckpt_load_file": "",
             "strategy_ckpt_save_file": "", "auto_parallel_search_mode": "recursive_programming",
             "pipeline_stages": 1, "grad_accumulation_step": 1, "all_reduce_fusion_config": [],
             "dataset_strategy": "data_parallel", "comm_fusion": {}}
_context = dict(_DEFAULTS)
_device_num_set = [False]
_mesh_cache = {}


def set_auto_parallel_context(**kwargs) -> None:
    """Set MindSpore's auto-parallel settings; ``parallel_mode`` must be stand_alone or data_parallel."""
    unknown = [k for k in kwargs if k not in _DEFAULTS]
    if unknown:
        raise ValueError(f"set_auto_parallel_context: unknown setting {unknown[0]!r}; known: "
                         f"{', '.join(sorted(_DEFAULTS))}")
    mode = kwargs.get("parallel_mode", _context["parallel_mode"])
    if mode not in ParallelMode.MODE_LIST:
        raise ValueError(f"The context configuration parameter 'parallel_mode' only support "
                         f"{', '.join(repr(m) for m in ParallelMode.MODE_LIST)}, but got the value : {mode}")
    if mode not in SUPPORTED:
        raise ValueError(f"set_auto_parallel_context: parallel_mode {mode!r} is not supported by cellkit; "
                         f"supported: {', '.join(repr(m) for m in SUPPORTED)}. For model parallelism, shard "
                         "Parameters over a mesh with cellkit.parallel (docs/distributed.md)")
    if "device_num" in kwargs:
        n = kwargs["device_num"]
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= jax.device_count():
            raise ValueError(f"set_auto_parallel_context: device_num must be an int in [1, "
                             f"{jax.device_count()}] (the devices JAX sees), got {n!r}")
        _device_num_set[0] = True
    if "gradients_mean" in kwargs and not isinstance(kwargs["gradients_mean"], bool):
        raise TypeError(f"set_auto_parallel_context: gradients_mean must be a bool, got "
                        f"{type(kwargs['gradients_mean']).__name__}")
    _context.update(kwargs)


def get_auto_parallel_context(attr_key: str):
    """One setting; ``device_num`` is every device JAX sees unless it was set."""
    if attr_key not in _DEFAULTS:
        raise ValueError(f"get_auto_parallel_context: unknown setting {attr_key!r}")
    if attr_key == "device_num" and not _device_num_set[0]:
        return jax.device_count() if data_parallel() else 1
    return _context[attr_key]


def reset_auto_parallel_context() -> None:
    """Every setting back to its default (stand-alone)."""
    _context.clear()
    _context.update(_DEFAULTS)
    _device_num_set[0] = False


def data_parallel() -> bool:
    """Whether training steps split their batch over the devices."""
    return _context["parallel_mode"] == ParallelMode.DATA_PARALLEL


def data_mesh():
    """The one-axis ``("data",)`` mesh of the first ``device_num`` devices."""
    n = get_auto_parallel_context("device_num")
    if n not in _mesh_cache:
        from .parallel import make_mesh
        _mesh_cache[n] = make_mesh((n,), ("data",), devices=jax.devices()[:n])
    return _mesh_cache[n]


def shard_batch(*arrays):
    """In data-parallel mode, each array split along its first axis over the data mesh; else unchanged.

    A batch whose size ``device_num`` does not divide raises, naming both.
    """
    if not data_parallel():
        return arrays if len(arrays) != 1 else arrays[0]
    mesh = data_mesh()
    n = mesh.devices.size
    out = []
    for a in arrays:
        shape = getattr(a, "shape", ())
        if not shape:
            out.append(a)
            continue
        if shape[0] % n:
            raise ValueError(f"data parallel: a batch of {shape[0]} does not split over device_num={n} devices; "
                             "use a batch size divisible by it (drop_remainder=True in batch())")
        spec = PartitionSpec("data", *([None] * (len(shape) - 1)))
        out.append(jax.device_put(a, NamedSharding(mesh, spec)))
    return tuple(out) if len(out) != 1 else out[0]


def gradient_scale() -> float:
    """What the whole batch's gradient is multiplied by: ``device_num`` when gradients are summed
    over devices (``gradients_mean=False`` in data-parallel mode), else 1."""
    if data_parallel() and not _context["gradients_mean"]:
        return float(get_auto_parallel_context("device_num"))
    return 1.0
