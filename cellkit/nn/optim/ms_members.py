"""MindSpore's public ``Optimizer`` members that describe the optimizer rather than run it (a base class of ``Optimizer``).

MindSpore's ``nn.Optimizer`` exposes its bookkeeping as attributes that
subclasses and training scripts read: ``dynamic_lr``, ``need_scale``,
``reciprocal_scale``, ``exec_weight_decay``, ``param_length``, ``optim_filter``,
``group_lr``, the graph helpers ``map_``/``hyper_map`` and ``assignadd``, the
kernel ``opt``, ``init_args``... Here they are read-only views of the
optimizer's own state (``parameters``, the learning-rate sources, the groups),
so they never disagree with what the update does.

The kernel attributes (``opt``, ``sparse_opt``, ``fused_opt``, ...) name
MindSpore's Primitive of each optimizer: they are cellkit's Primitive of that
name where cellkit has it, else a callable that raises ``NotImplementedError``
saying to call the optimizer itself.

>>> import cellkit as ms
>>> from cellkit import nn
>>> net = nn.Dense(3, 2)
>>> opt = nn.Momentum(net.trainable_params(), learning_rate=[0.1, 0.05], momentum=0.9, loss_scale=2.0)
>>> opt.dynamic_lr, opt.need_scale, float(opt.reciprocal_scale), opt.param_length, opt.optim_filter
(True, True, 0.5, 2, (True, True))
>>> opt.hyper_map(lambda g: g * 2, (ms.Tensor([1.0]),))
(Array([2.], dtype=float32),)
"""

from __future__ import annotations

import functools
import inspect

import jax.numpy as jnp

from ... import context
from ...cell import Cell
from ...ops import composite as C
from ...ops import operations as P

__all__ = ["MindSporeMembers", "MissingKernel", "opt_init_args_register"]


class MissingKernel:
    """Stands for a MindSpore optimizer kernel (a Primitive) that cellkit does not expose on its own."""

    def __init__(self, name, owner):
        self.name, self.owner = name, owner

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(
            f"{self.owner}: MindSpore's kernel Primitive '{self.name}' is not available in cellkit; call the "
            f"optimizer itself (optimizer(gradients)), which applies the same update to every Parameter.")

    def __repr__(self):
        return f"MissingKernel({self.name})"


def kernel(name, owner, *args, **kwargs):
    """cellkit's Primitive ``name`` built with ``args``, or a :class:`MissingKernel`."""
    cls = getattr(P, name, None)
    if cls is None:
        return MissingKernel(name, owner)
    try:
        try:
            return cls(*args, **kwargs)
        except TypeError:
            return cls()
    except NotImplementedError:  # an Ascend-only Primitive, refused when made: refuse when called
        return MissingKernel(name, owner)


def opt_init_args_register(fn):
    """Record an optimizer's ``__init__`` arguments as ``init_args``, ``init_params``, ``init_learning_rate``.

    As MindSpore's decorator of the same name (the outermost ``__init__`` wins):
    ``init_params`` is ``{'params': params}``, ``init_learning_rate`` the
    learning rate (a list for a Tensor, None for a schedule Cell), and
    ``init_args`` every other argument.
    """
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def deco(self, *args, **kwargs):
        fn(self, *args, **kwargs)
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError:
            return
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        arguments.pop("self", None)
        d = self.__dict__
        if "params" in arguments:
            d["_ck_init_params"] = {"params": arguments.pop("params")}
        if "optimizer" in arguments:
            inner = arguments.pop("optimizer")
            d["_ck_init_params"] = {"params": getattr(inner, "init_params", {}).get("params")}
        if "learning_rate" in arguments:
            lr = arguments.pop("learning_rate")
            if hasattr(lr, "shape") and not isinstance(lr, Cell):
                lr = jnp.asarray(lr).tolist()
            d["_ck_init_learning_rate"] = None if isinstance(lr, Cell) or callable(lr) else lr
        d["_ck_init_args"] = arguments
    deco._ck_init_args_register = True
    return deco


class MindSporeMembers:
    """MindSpore's descriptive ``Optimizer`` attributes (see the module docstring)."""

    # attribute -> (Primitive name, args, kwargs): MindSpore's kernels of this optimizer.
    _ms_kernels: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None and not getattr(init, "_ck_init_args_register", False):
            cls.__init__ = opt_init_args_register(init)

    def _init_ms_members(self):
        d = self.__dict__
        d["_ck_unique"] = True
        d["_ck_target"] = context.get_context("device_target")
        # MindSpore's graph helpers: plain Python here (HyperMap/Map apply the function eagerly or while traced).
        self.map_ = C.Map()
        self.map_reverse = C.Map(None, True)
        self.hyper_map = C.HyperMap()
        self.hyper_map_reverse = C.HyperMap(None, True)
        self.assignadd = P.AssignAdd()
        self.enable_tuple_broaden = True
        self.skip_auto_parallel_compile = True
        self.use_parallel = False
        self.param_rank = None
        self.grad_centralization = False
        self.dynamic_weight_decay = False

    def _init_kernels(self, **overrides):
        """Set the kernel attributes (``opt``, ``sparse_opt``, ...) from ``_ms_kernels`` (or ``overrides``)."""
        table = dict(self._ms_kernels, **overrides)
        for attr, spec in table.items():
            if isinstance(spec, str):
                spec = (spec, (), {})
            name, args, kwargs = spec
            object.__setattr__(self, attr, kernel(name, self.cls_name, *args, **kwargs))

    # ----- what MindSpore records at construction ------------------------------------

    @property
    def init_args(self):
        """The ``__init__`` arguments other than ``params`` and ``learning_rate`` (a dict)."""
        return self.__dict__.get("_ck_init_args", {})

    @property
    def init_params(self):
        """``{'params': <the params argument>}``."""
        return self.__dict__.get("_ck_init_params", {"params": list(self.parameters)})

    @property
    def init_learning_rate(self):
        """The ``learning_rate`` argument (None for a schedule)."""
        return self.__dict__.get("_ck_init_learning_rate")

    # ----- learning rate, scaling, weight decay ---------------------------------------

    @property
    def dynamic_lr(self):
        """True when the learning rate changes with the step (a list, a 1-D Tensor or a schedule)."""
        return any(kind != "fixed" for _, kind, _, _ in self._groups)

    @property
    def need_scale(self):
        """True when ``loss_scale != 1`` (gradients are divided by it)."""
        return self.loss_scale != 1.0

    @property
    def reciprocal_scale(self):
        """``1 / loss_scale`` as a float32 Tensor."""
        return jnp.asarray(1.0 / self.loss_scale, jnp.float32)

    @property
    def global_step_increase_tensor(self):
        """``Tensor([1], int32)``, what MindSpore adds to ``global_step`` each step."""
        return jnp.ones((1,), jnp.int32)

    @property
    def param_length(self):
        """The number of Parameters the optimizer updates."""
        return len(self.parameters)

    @property
    def optim_filter(self):
        """One True per Parameter: every Parameter is updated on this process (no parallel optimizer)."""
        return (True,) * len(self.parameters)

    @property
    def exec_weight_decay(self):
        """True when some Parameter is decayed."""
        if self.is_group:
            return any(self.decay_flags)
        return self.weight_decay > 0

    @property
    def dynamic_decay_flags(self):
        """False (per Parameter with groups): cellkit's weight decay is a number, never a schedule Cell."""
        return (False,) * len(self.parameters) if self.is_group else False

    @property
    def grad_centralization_flags(self):
        """With groups: one bool per Parameter, whether its gradient is centralized."""
        if not self.is_group:
            raise AttributeError(f"'{self.cls_name}' has 'grad_centralization_flags' only with parameter groups")
        return self._gc_flags

    @property
    def is_group_params_ordered(self):
        """True when the groups came with an ``{'order_params': [...]}`` entry."""
        return self.__dict__.get("_ck_ordered", False)

    def _group_lists(self, name):
        if not self.is_group:
            raise AttributeError(f"'{self.cls_name}' has '{name}' only with parameter groups")

    @property
    def group_params(self):
        """With groups: the Parameters, in the optimizer's order (a list)."""
        self._group_lists("group_params")
        return list(self.parameters)

    @property
    def group_lr(self):
        """With groups: the learning-rate Parameter (or schedule) of each Parameter (a list)."""
        self._group_lists("group_lr")
        return [self.get_lr_parameter(p) for p in self.parameters]

    @property
    def group_weight_decay(self):
        """With groups: the weight decay of each Parameter, times ``loss_scale`` as MindSpore stores it."""
        self._group_lists("group_weight_decay")
        return [w * self.loss_scale for w in self.weight_decay]

    @property
    def group_grad_centralization(self):
        """With groups: whether each Parameter's gradient is centralized (a list)."""
        self._group_lists("group_grad_centralization")
        return list(self._gc_flags)

    # ----- device, sparsity, parallelism ----------------------------------------------

    @property
    def target(self):
        """The device the update runs on ('CPU', 'GPU' or 'Ascend'; ``context.device_target``)."""
        return self.__dict__.get("_ck_target", "CPU")

    @target.setter
    def target(self, value):
        # MindSpore switches to its host-side fused kernels for 'CPU'; XLA places the update with the
        # Parameters, so the setting is checked and recorded only.
        self._set_base_target(value)

    def _set_base_target(self, value):
        """The base setter MindSpore's subclasses call from their own ``target`` setter (mindcv's Adan)."""
        if not isinstance(value, str):
            raise TypeError(f"For 'Optimizer', the property 'target' must be string, but got {type(value)}")
        if value not in ("CPU", "Ascend", "GPU"):
            raise ValueError(f"For 'Optimizer', the property 'target' must be one of ['CPU', 'Ascend' ,'GPU'], "
                             f"but got {value}")
        self.__dict__["_ck_target"] = value

    @property
    def unique(self):
        """Whether sparse gradients are made unique first (True by default; gradients here are dense)."""
        return self.__dict__.get("_ck_unique", True)

    @unique.setter
    def unique(self, value):
        if not isinstance(value, bool):
            raise TypeError(f"For 'Optimizer', the property 'unique' must be bool, but got {type(value)}")
        self.__dict__["_ck_unique"] = value

    def flatten_gradients(self, gradients):
        """The gradients unchanged (cellkit never flattens Parameters into one buffer).

        >>> import cellkit as ms
        >>> from cellkit import nn
        >>> w = ms.Parameter(ms.Tensor([1.0]), name="w")
        >>> g = (ms.Tensor([2.0]),)
        >>> nn.SGD([w]).flatten_gradients(g) is g
        True
        """
        return gradients

    def broadcast_params(self, optim_result):
        """MindSpore's parallel-optimizer broadcast: not available (there is no parallel optimizer here)."""
        raise RuntimeError(
            f"{self.cls_name}.broadcast_params belongs to MindSpore's parallel optimizer "
            "(enable_parallel_optimizer), which cellkit does not have: every process updates all its "
            "Parameters (optim_filter is all True). Shard Parameters with cellkit.parallel / jax.sharding instead.")
