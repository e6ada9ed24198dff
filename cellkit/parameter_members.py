"""MindSpore's descriptive ``Parameter`` members (a base class of ``Parameter``).

MindSpore's Parameter carries parallel, cache and graph-compiler knobs (``comm_fusion``,
``parallel_optimizer``, ``layerwise_parallel``, ``requires_aggr``, ``cache_enable``, ``key``,
``param_info``, ...). On JAX they steer nothing (sharding is ``Parameter.sharding`` and
``cellkit.parallel``), so they are stored and read back with MindSpore's defaults and type checks,
and ``param_info`` is a live view of the Parameter's name and ``requires_grad``.

>>> import cellkit as ms
>>> w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
>>> w.comm_fusion, w.parallel_optimizer, w.key, w.param_info.name
(1, True, -1, 'w')
>>> w.param_info.name = "v"
>>> w.name
'v'
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

__all__ = ["ParameterMembers", "ParamInfo"]

# name -> (default, accepted type(s)) of the knobs a Parameter stores.
_KNOBS = {
    "comm_fusion": (1, int),
    "parallel_optimizer": (True, bool),
    "parallel_optimizer_comm_recompute": (False, bool),
    "layerwise_parallel": (False, bool),
    "requires_aggr": (True, bool),
    "cache_enable": (False, bool),
    "sliced": (False, bool),
    "unique": (False, bool),
}


class ParamInfo:
    """MindSpore's ``ParamInfo`` of a Parameter: its name, ``requires_grad`` and knobs, read and written
    through to the Parameter."""

    __slots__ = ("_param",)

    def __init__(self, param):
        object.__setattr__(self, "_param", param)

    def __getattr__(self, name):
        if name in ("name", "requires_grad") or name in _KNOBS:
            return getattr(self._param, name)
        raise AttributeError(f"'ParamInfo' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        if name in ("name", "requires_grad") or name in _KNOBS:
            setattr(self._param, name, value)
        else:
            raise AttributeError(f"'ParamInfo' object has no attribute '{name}'")

    def __repr__(self):
        return f"ParamInfo(name={self._param.name!r}, requires_grad={self._param.requires_grad})"


def _knob(name):
    default, kind = _KNOBS[name]

    def fget(self):
        knobs = getattr(self, "_ck_knobs", None)
        return default if knobs is None or name not in knobs else knobs[name]

    def fset(self, value):
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise TypeError(f"Parameter '{self.name}': '{name}' must be {kind.__name__}, got "
                            f"{type(value).__name__}")
        knobs = getattr(self, "_ck_knobs", None)
        if knobs is None:
            knobs = {}
            object.__setattr__(self, "_ck_knobs", knobs)
        knobs[name] = value

    return property(fget, fset, doc=f"MindSpore's ``{name}`` (default {default!r}); stored, steers nothing on JAX.")


class ParameterMembers:
    """MindSpore's Parameter members that describe it (see the module docstring)."""

    __slots__ = ("_ck_knobs",)

    comm_fusion = _knob("comm_fusion")
    parallel_optimizer = _knob("parallel_optimizer")
    parallel_optimizer_comm_recompute = _knob("parallel_optimizer_comm_recompute")
    layerwise_parallel = _knob("layerwise_parallel")
    requires_aggr = _knob("requires_aggr")
    cache_enable = _knob("cache_enable")
    sliced = _knob("sliced")
    unique = _knob("unique")  # MindSpore: whether the Parameter is unique (its optimizer reads it); not Tensor.unique()

    # Constants: a Parameter here is never initialised by a parameter server, cached, or a graph input.
    init_mode = None
    is_default_input_init = False
    is_in_parallel = False
    is_init = False
    inited_param = None
    cache_shape = property(lambda self: [], doc="``[]``: no embedding cache.")
    key = property(lambda self: -1, doc="``-1``: not a parameter-server key.")

    @property
    def param_info(self) -> ParamInfo:
        """The Parameter's ``ParamInfo``: a view of its name, ``requires_grad`` and knobs."""
        return ParamInfo(self)

    def set_param_info(self, info) -> None:
        """Take ``info``'s name and ``requires_grad`` (another Parameter's ``param_info``)."""
        self.name = info.name
        self.requires_grad = info.requires_grad

    def add_pipeline_stage(self, stage) -> None:
        """MindSpore's pipeline-parallel bookkeeping: accepted and ignored (one process holds every stage)."""
        if not isinstance(stage, int) or isinstance(stage, bool) or stage < 0:
            raise TypeError(f"Parameter '{self.name}': the pipeline stage must be an int >= 0, got {stage!r}")

    @staticmethod
    def from_numpy(array):
        """A Tensor holding a copy of the NumPy ``array`` (MindSpore's ``Tensor.from_numpy``).

        >>> import numpy as np
        >>> import cellkit as ms
        >>> ms.Parameter.from_numpy(np.array([1, 2], np.int32)).tolist()
        [1, 2]
        """
        return jnp.asarray(np.asarray(array))
