"""The rest of MindSpore's ``Cell`` members (``Cell`` inherits :class:`MembersMixin`).

Flags (``add_flags``, ``get_flags``, ``set_grad``, ``set_boost``, ...), dynamic inputs
(``set_inputs``/``get_inputs``), compiling (``compile``, ``compile_and_run``), scopes and
prefixes, ``apply``/``to``/``to_empty``, and the Parameter-set helpers
(``init_parameters_data``, ``parameters_broadcast_dict``, ``check_names``, ...).

Graph-compiler and Ascend/parallel knobs with no meaning on JAX (``set_boost``,
``set_comm_fusion``, ``set_data_parallel``, ``offload``, ``set_broadcast_flag``) check their
arguments as MindSpore does, record what MindSpore records, and change nothing else
(docs/differences.md lists them). Flags are instance attributes, so they are part of a Cell's
structure: a ``cellkit.jit`` function recompiles when they change.

>>> import cellkit as ms
>>> from cellkit import nn
>>> net = nn.SequentialCell([nn.Dense(2, 2), nn.ReLU()])
>>> net[0].set_grad() is net[0], net[0].requires_grad
(True, True)
>>> net.add_flags_recursive(sink_mode=True)[0].get_flags()
{'sink_mode': True}
>>> _ = net.apply(lambda cell: print(type(cell).__name__))
Dense
ReLU
SequentialCell
"""

from __future__ import annotations

import time
import typing
import warnings
import weakref
from collections import OrderedDict
from enum import IntEnum

import jax
import jax.numpy as jnp
import numpy as np

from . import dtype as mstype
from .cell_state import set_buffer
from .parameter import Parameter, ParameterTuple, bump_structure, commit

__all__ = ["MembersMixin", "MixedPrecisionType", "default_attribute", "graph_call"]

# Set by the engine: the shared ``cellkit.jit`` of ``cell(*args)`` that GRAPH_MODE calls run through.
graph_call = [None]


class MixedPrecisionType(IntEnum):
    """MindSpore's mixed-precision types (``Cell.get_mixed_precision_type()``)."""

    def __str__(self):
        return f"MixedPrecisionType.{self.name}"

    NOTSET = 0
    FP16 = 1
    FP32 = 2
    BF16 = 3


_PRECISION = {MixedPrecisionType.FP16: mstype.float16, MixedPrecisionType.FP32: mstype.float32,
              MixedPrecisionType.BF16: mstype.bfloat16}
_FLAGS = {"fp16": MixedPrecisionType.FP16, "fp32": MixedPrecisionType.FP32, "bf16": MixedPrecisionType.BF16}


class default_attribute:
    """A read-only default computed from the instance, which an instance attribute of the same name
    overrides (a non-data descriptor): ``cell.x = v`` then reads back ``v``, as on MindSpore, where
    these are plain instance attributes or settable properties."""

    def __init__(self, fget):
        self.fget = fget
        self.__doc__ = fget.__doc__

    def __get__(self, obj, objtype=None):
        return self if obj is None else self.fget(obj)


def _is_cell(obj) -> bool:
    return isinstance(obj, MembersMixin)


def _check_non_negative_int(value, name, owner):
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"For '{owner}', the argument '{name}' must be a non-negative int, but got {value!r}.")


def _parse_to_args(args, kwargs, owner):
    """``(device, dtype)`` from ``to(device=None, dtype=None, non_blocking=False)``,
    ``to(dtype, non_blocking=False)`` or ``to(tensor, non_blocking=False)``."""
    device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    kwargs.pop("copy", None)
    if "tensor" in kwargs:
        args = (kwargs.pop("tensor"),) + tuple(args)
    if kwargs:
        raise TypeError(f"{owner}.to: unexpected keyword argument(s) {sorted(kwargs)}; expected "
                        "device, dtype, tensor or non_blocking")
    for arg in args:
        if isinstance(arg, bool):  # non_blocking, positionally
            continue
        if isinstance(arg, (str, jax.Device)):
            device = arg
        elif isinstance(arg, (jax.Array, np.ndarray)):
            dtype = mstype.get_dtype(arg.dtype)
            device = next(iter(arg.devices())) if isinstance(arg, jax.Array) else device
        else:
            try:
                dtype = mstype.get_dtype(arg)
            except TypeError:
                raise TypeError(f"{owner}.to: cannot read {arg!r} as a device, a dtype or a Tensor") from None
    if dtype is not None:
        dtype = mstype.get_dtype(dtype)
        if not (jnp.issubdtype(dtype.dtype, jnp.floating) or jnp.issubdtype(dtype.dtype, jnp.complexfloating)):
            raise TypeError(f"{owner}.to: dtype must be a floating point or complex dtype, got {dtype}")
    return _device(device, owner), dtype


def _device(device, owner):
    """A ``jax.Device`` for MindSpore's device names ('CPU', 'GPU', 'Ascend', 'cuda:1', ...)."""
    if device is None or isinstance(device, jax.Device):
        return device
    name, _, index = str(device).partition(":")
    kind = {"cpu": "cpu", "gpu": "gpu", "cuda": "gpu", "tpu": "tpu"}.get(name.lower())
    if kind is None:
        raise ValueError(f"{owner}.to: device {device!r} is not one JAX has here; use 'CPU', 'GPU' "
                         f"(or 'cuda'), 'TPU', optionally with ':index' ({jax.devices()[0].platform} is the default)")
    try:
        devices = jax.devices(kind)
    except RuntimeError:
        raise ValueError(f"{owner}.to: no {kind.upper()} device is available (devices: {jax.devices()})") from None
    i = int(index) if index else 0
    if i >= len(devices):
        raise ValueError(f"{owner}.to: {kind.upper()} device {i} does not exist ({len(devices)} available)")
    return devices[i]


class MembersMixin:
    """MindSpore's Cell members beyond attributes, traversal, phase and hooks (see the module docstring)."""

    # MindSpore's class attributes.
    IGNORE_LIST = ['_scope', '_cell_init_args', '_auto_prefix', '_cells', '_params', '_create_time',
                   '_func_graph_flags', '_parameter_layout_dict', '_params_list', '_phase', '_bprop_debug',
                   '_forward_pre_hook', '_forward_hook', '_backward_pre_hook', '_backward_hook',
                   '_cell_backward_pre_hook', '_cell_backward_hook', '_param_prefix',
                   'requires_grad', 'cell_type', '_in_strategy', '_out_strategy']
    T_destination = typing.TypeVar("T_destination", bound=typing.Dict[str, typing.Any])
    total_instance_count = 0  # Cells constructed so far (MindSpore also counts down as they are freed)
    global_cells = weakref.WeakKeyDictionary()  # MindSpore fills it for lazy_inline only: empty here

    # Per-instance values, with MindSpore's defaults (an instance attribute overrides them).
    arguments_key = ""
    cell_type = None
    grad_ops_label = False
    is_top_cell = False
    requires_grad = False
    compile_phase = None
    bprop_debug = False
    pipeline_stage = 0
    pipeline_segment = 0
    enable_backward_hook = False

    def __new__(cls, *args, **kwargs):
        obj = super().__new__(cls)
        MembersMixin.total_instance_count += 1
        obj.__dict__["_ck_create_time"] = time.time_ns()
        return obj

    # ----- read-only state ---------------------------------------------------------

    @default_attribute
    def create_time(self) -> int:
        """When the Cell was constructed, in nanoseconds since the epoch."""
        return self.__dict__.get("_ck_create_time", 0)

    @default_attribute
    def has_bprop(self) -> bool:
        """Whether the Cell's class defines a custom ``bprop``."""
        return callable(getattr(type(self), "bprop", None))

    @default_attribute
    def cell_init_args(self) -> str:
        """MindSpore's record of constructor arguments for its graph cache: '' here (jit keys on structure)."""
        return self.__dict__.get("_cell_init_args", "")

    @default_attribute
    def compiled(self) -> bool:
        """Whether ``compile`` or ``compile_and_run`` compiled this Cell."""
        return self.__dict__.get("_ck_compiled", False)

    @default_attribute
    def compile_cache(self) -> set:
        """The phases this Cell was compiled for (``compile``)."""
        return self.__dict__.setdefault("_ck_compile_cache", set())

    @default_attribute
    def phase_cache(self) -> dict:
        return self.__dict__.setdefault("_ck_phase_cache", {})

    @default_attribute
    def exist_names(self) -> set:
        """Names of the Parameters held in list or tuple attributes of this Cell."""
        return {p.name for p in self._listed_params()}

    @default_attribute
    def exist_objs(self) -> set:
        """The Parameters held in list or tuple attributes of this Cell."""
        return set(self._listed_params())

    def _listed_params(self):
        for value in self.__dict__.values():
            if isinstance(value, (list, tuple)) and not isinstance(value, ParameterTuple):
                yield from (p for p in value if isinstance(p, Parameter))

    @default_attribute
    def param_prefix(self) -> str:
        """The prefix of this Cell's own Parameters, set by ``update_cell_prefix``."""
        return self.__dict__.get("_param_prefix", "")

    @default_attribute
    def parameter_layout_dict(self) -> dict:
        """MindSpore's per-Parameter tensor layouts from operator strategies: empty here (a
        Parameter's placement is its ``sharding``, see ``Cell.shard``)."""
        return self.__dict__.setdefault("_ck_parameter_layout_dict", {})

    @default_attribute
    def parallel_parameter_name_list(self) -> tuple:
        return self.__dict__.get("_ck_parallel_parameter_name_list", ())

    @default_attribute
    def parallel_parameter_merge_net_dict(self) -> dict:
        return self.__dict__.setdefault("_ck_parallel_parameter_merge_net_dict", {})

    @default_attribute
    def jit_config_dict(self) -> dict:
        """The options ``set_jit_config`` stored ({} when none)."""
        return self.__dict__.get("jit_config", {})

    @default_attribute
    def mixed_precision_type(self):
        """``MixedPrecisionType`` set by ``to_float``/``add_flags(fp16=...)``, or None."""
        dst = self.__dict__.get("_mixed_precision_type")
        return None if dst is None else next(k for k, v in _PRECISION.items() if v == dst)

    def get_mixed_precision_type(self) -> MixedPrecisionType:
        """This Cell's ``MixedPrecisionType`` (``NOTSET`` when none)."""
        return self.mixed_precision_type or MixedPrecisionType.NOTSET

    def set_mixed_precision_type(self, mixed_type) -> None:
        """Compute this Cell (not its sub-Cells) in a ``MixedPrecisionType`` or a float dtype."""
        if mixed_type in _PRECISION:
            dst = _PRECISION[MixedPrecisionType(mixed_type)]
        elif mixed_type == MixedPrecisionType.NOTSET:
            dst = None
        elif mixed_type in _PRECISION.values():
            dst = mixed_type
        else:
            raise TypeError(f"{self.cls_name}.set_mixed_precision_type: expected a MixedPrecisionType or "
                            f"float16/float32/bfloat16, got {mixed_type!r}")
        self._check_mutable("mixed_precision_type", None)
        self.__dict__["_mixed_precision_type"] = dst
        bump_structure()

    # ----- flags ----------------------------------------------------------------------

    def add_flags(self, **flags):
        """Set each flag as an attribute and remember it in ``get_flags()``; ``fp16``/``fp32``/``bf16``
        set the mixed-precision type, as ``to_float`` does. Returns the Cell.

        >>> from cellkit import nn
        >>> net = nn.Dense(2, 2).add_flags(sink_mode=True)
        >>> net.sink_mode, net.get_flags()
        (True, {'sink_mode': True})
        """
        self._check_mutable("flags", None, "add flags")
        d = self.__dict__
        d["_func_graph_flags"] = {**d.get("_func_graph_flags", {}), **flags}
        d.update(flags)
        for flag, kind in _FLAGS.items():
            if flags.get(flag):
                d["_mixed_precision_type"] = _PRECISION[kind]
        bump_structure()
        return self

    def add_flags_recursive(self, **flags):
        """``add_flags`` on this Cell and every sub-Cell. Returns the Cell."""
        self.add_flags(**flags)
        for cell in self.cells():
            cell.add_flags_recursive(**flags)
        return self

    def get_flags(self) -> dict:
        """The flags ``add_flags`` set."""
        return self.__dict__.setdefault("_func_graph_flags", {})

    def set_grad(self, requires_grad=True):
        """Set ``requires_grad`` (MindSpore's PyNative hint that a backward graph will be built).
        cellkit differentiates any Cell whatever the flag says. Returns the Cell."""
        self._check_mutable("requires_grad", requires_grad)
        self.__dict__["requires_grad"] = requires_grad
        bump_structure()
        return self

    def set_boost(self, boost_type):
        """Accept MindSpore's Ascend acceleration ``'less_bn'`` (sets the flag ``less_bn``; XLA
        compiles the same network). Returns the Cell."""
        if boost_type not in ("less_bn",):
            raise ValueError(f"For 'set_boost', the argument 'boost_type' must be 'less_bn', but got {boost_type}.")
        return self.add_flags_recursive(less_bn=True)

    def set_broadcast_flag(self, mode=True):
        """Set the flag ``broadcast_flag`` on every Cell (MindSpore's parameter-broadcast mode;
        ``cellkit.parallel`` replicates Parameters by their sharding). Returns the Cell."""
        return self.add_flags_recursive(broadcast_flag=mode)

    def set_comm_fusion(self, fusion_type, recurse=True):
        """Set ``comm_fusion`` on the trainable Parameters (MindSpore's gradient all-reduce bucket;
        XLA fuses collectives itself). Returns the Cell."""
        _check_non_negative_int(fusion_type, "fusion_type", "set_comm_fusion")
        for param in self.trainable_params(recurse):
            if hasattr(type(param), "comm_fusion"):
                param.comm_fusion = fusion_type
        return self

    def set_data_parallel(self):
        """MindSpore's auto-parallel hint (data-parallel strategies for this Cell's operators):
        nothing to do here, where data parallelism is ``parallel_context``'s batch sharding."""
        return None

    def offload(self, backward_prefetch="Auto"):
        """MindSpore's activation offload to host memory (GRAPH_MODE with lazy_inline on Ascend):
        checks ``backward_prefetch`` and changes nothing; to save activation memory use
        ``Cell.recompute()``."""
        if isinstance(backward_prefetch, str):
            if backward_prefetch != "Auto":
                raise ValueError(f"For '{self.cls_name}', the argument 'backward_prefetch' must be 'Auto' or a "
                                 f"non-negative int, but got {backward_prefetch!r}.")
        else:
            _check_non_negative_int(backward_prefetch, "backward_prefetch", self.cls_name)

    def update_cell_type(self, cell_type):
        """Set ``cell_type`` ('quant' or 'second-order' in MindSpore's own uses)."""
        self._check_mutable("cell_type", cell_type)
        self.__dict__["cell_type"] = cell_type
        bump_structure()

    # ----- inputs and compiling ---------------------------------------------------------------

    def set_inputs(self, *inputs, **kwargs):
        """Keep the inputs a dynamic-shape graph is compiled for; ``get_inputs()`` returns them.
        ``cellkit.jit`` compiles once per input shape, so they change nothing else."""
        if kwargs and inputs:
            raise ValueError(f"For Cell, set_inputs should only set inputs or kwargs(inputs: {inputs}, "
                             f"kwargs: {kwargs})!")
        self.__dict__["_ck_dynamic_shape_inputs"] = inputs if not kwargs else dict(kwargs)

    def get_inputs(self):
        """What ``set_inputs`` kept (None when it was not called)."""
        return self.__dict__.get("_ck_dynamic_shape_inputs")

    def compile(self, *args, **kwargs):
        """Compile the call ``self(*args, **kwargs)`` with XLA as GRAPH_MODE would run it, without running it.

        >>> import cellkit as ms
        >>> from cellkit import nn
        >>> net = nn.Dense(2, 1)
        >>> net.compile(ms.Tensor([[1.0, 2.0]]))
        >>> net.compiled
        True
        """
        graph_call[0].lower(self, *args, **kwargs).compile()
        self._mark_compiled()

    def compile_and_run(self, *args, **kwargs):
        """Compile and run ``self(*args, **kwargs)`` through the shared GRAPH_MODE ``cellkit.jit``."""
        out = graph_call[0](self, *args, **kwargs)
        self._mark_compiled()
        return out

    def _mark_compiled(self):
        d = self.__dict__
        d["_ck_compiled"] = True
        d.setdefault("_ck_compile_cache", set()).add(self.phase)

    def cast_inputs(self, inputs, dst_type):
        """Deprecated in MindSpore (it warns and returns None); cast with ``ops.cast`` or use ``to_float``."""
        warnings.warn("'cast_inputs' will be deprecated in future versions.", FutureWarning, stacklevel=2)

    def run_construct(self, cast_inputs, kwargs):
        """Deprecated in MindSpore: ``construct(*cast_inputs, **kwargs)``."""
        warnings.warn(f"The 'run_construct' function of '{self.cls_name}' will be removed in a future version. "
                      "Calling this function is not recommended.", FutureWarning, stacklevel=2)
        return self.construct(*cast_inputs, **(kwargs or {}))

    def remove_redundant_parameters(self):
        """Deprecated in MindSpore (it warns and does nothing)."""
        warnings.warn("'remove_redundant_parameters' will be deprecated in future versions.",
                      FutureWarning, stacklevel=2)

    # ----- Parameters -----------------------------------------------------------------------

    def init_parameters_data(self, auto_parallel_mode=False) -> dict:
        """Make the value of every lazy Parameter now (``Parameter.init_data``).

        Returns ``{parameter: parameter}`` (MindSpore maps each to its replacement; cellkit
        initialises Parameters in place, so each maps to itself).
        """
        return {param: param.init_data() for param in self.get_parameters()}

    def parameters_broadcast_dict(self, recurse=True):
        """``OrderedDict`` name -> Parameter of the Parameters that are not ``layerwise_parallel``
        (None when there are none)."""
        out = OrderedDict((p.name, p) for p in self.get_parameters(expand=recurse)
                          if not getattr(p, "layerwise_parallel", False))
        return out or None

    def check_names(self):
        """Raise ValueError if two Parameters share a name."""
        names = set()
        for path, param in self.parameters_and_names():
            if param.name in names:
                raise ValueError(f"The value of {path} is {param}, its name '{param.name}' already exists. "
                                 "Please set a unique name for the parameter.")
            names.add(param.name)

    def check_names_and_refresh_name(self):
        """If Parameter names repeat, rename every Parameter to its attribute path, then ``check_names``."""
        names = [p.name for _, p in self.parameters_and_names()]
        if len(set(names)) < len(names):
            self.update_parameters_name()
            self.check_names()

    def update_cell_prefix(self):
        """Set each sub-Cell's ``param_prefix`` to its path."""
        for path, cell in self.cells_and_names():
            cell.__dict__["_param_prefix"] = path
        bump_structure()

    def get_scope(self):
        """The scope ``generate_scope`` gave this Cell ('Default/0-Dense'), or None."""
        return self.__dict__.get("_scope")

    def generate_scope(self):
        """Give every sub-Cell its scope: 'Default/<path>' with '-<class>' after each name."""
        def walk(cell, prefix):
            for name, child in cell.name_cells().items():
                scope = f"{prefix}/{name}-{type(child).__name__}"
                if child.__dict__.get("_scope") is None:
                    child.__dict__["_scope"] = scope
                walk(child, scope)
        walk(self, "Default")
        bump_structure()

    def get_sub_cell(self, target: str):
        """The sub-Cell at the dotted path ``target`` ('' is the Cell itself)."""
        if target == "":
            return self
        cell = self
        for item in target.split("."):
            if not hasattr(cell, item):
                raise AttributeError(f"{type(cell).__name__} has no attribute `{item}`")
            cell = getattr(cell, item)
            if not _is_cell(cell):
                raise AttributeError(f"`{item}` is not an nn.Cell")
        return cell

    # ----- applying functions ----------------------------------------------------------------

    def apply(self, fn):
        """Call ``fn`` on every sub-Cell (children first) and then on this Cell; returns the Cell.

        >>> import cellkit as ms
        >>> from cellkit import nn
        >>> from cellkit.common.initializer import One
        >>> def init(cell):
        ...     if isinstance(cell, nn.Dense):
        ...         cell.weight.set_data(ms.common.initializer.initializer(One(), cell.weight.shape))
        >>> nn.SequentialCell([nn.Dense(2, 2)]).apply(init)[0].weight.asnumpy()
        array([[1., 1.],
               [1., 1.]], dtype=float32)
        """
        for cell in self.cells():
            cell.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, recurse=True):
        """Replace every Parameter's and buffer's value by ``fn(value)``; Parameters stay the same objects."""
        if recurse:
            for cell in self.cells():
                if cell is not None and cell is not self:
                    cell._apply(fn)
        d = self.__dict__
        for key, param in list(self._params.items()):
            new = jnp.asarray(fn(param.value))
            if new.dtype != param.value.dtype or new.shape != param.shape:
                self._check_mutable(key, None, f"change Parameter '{param.name}'")
                commit(param, new)
                bump_structure()
            else:
                param.assign_value(new)
        for key in self.__dict__.get("_buffer_names", ()):
            if d.get(key) is not None:
                set_buffer(self, key, jnp.asarray(fn(d[key])))
        return self

    def to(self, *args, **kwargs):
        """Cast the floating Parameters and buffers to ``dtype`` and/or move them to ``device``;
        returns the Cell (the Parameters stay the same objects).

        >>> import cellkit as ms
        >>> from cellkit import nn
        >>> net = nn.Dense(2, 1).to(ms.float16)
        >>> net.weight.dtype, net.to("CPU") is net
        (Float16, True)
        """
        device, dtype = _parse_to_args(args, dict(kwargs), self.cls_name)

        def convert(value):
            floating = jnp.issubdtype(value.dtype, jnp.floating) or jnp.issubdtype(value.dtype, jnp.complexfloating)
            if dtype is not None and floating:
                value = value.astype(dtype.dtype)
            return jax.device_put(value, device) if device is not None else value
        return self._apply(convert)

    def to_empty(self, *, device=None, recurse=True):
        """Give every Parameter and buffer new storage of its shape and dtype on ``device``, without
        reading its value (JAX has no uninitialised memory: the values are zeros)."""
        target = _device(device, self.cls_name)
        return self._apply(lambda v: jax.device_put(jnp.zeros(v.shape, v.dtype), target), recurse=recurse)

    # ----- members with no meaning on JAX ------------------------------------------------------

    def get_func_graph_proto(self):
        """MindSpore's compiled graph as MindIR protobuf: refused (XLA compiles here)."""
        raise NotImplementedError(
            f"{self.cls_name}.get_func_graph_proto: there is no MindIR graph on JAX; to see the compiled "
            "computation use cellkit.jit(fn).lower(*args).as_text() (StableHLO) or "
            ".lower(*args).compile().as_text() (optimised HLO)")

    def register_parameter_forward_hook(self, hook):
        """MindSpore's graph-mode hook on Parameter reads: refused."""
        raise NotImplementedError(
            f"{self.cls_name}.register_parameter_forward_hook: cellkit has no hook on Parameter reads; "
            "transform the Parameter where construct uses it, or use register_forward_pre_hook")

    def register_saved_tensors_hooks(self, pack_hook, unpack_hook):
        """MindSpore's pack/unpack hooks on the tensors saved for backward: refused."""
        raise NotImplementedError(
            f"{self.cls_name}.register_saved_tensors_hooks: JAX keeps the values saved for the backward "
            "pass inside the compiled computation, out of reach of Python hooks; to save memory use "
            "Cell.recompute() (jax.checkpoint), whose policies choose what is saved")
