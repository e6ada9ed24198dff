"""``Cell``: MindSpore's layer base class, and a registered JAX pytree.

A Cell keeps its Parameters and sub-Cells as ordinary attributes. Assigning a
sub-Cell (with ``auto_prefix``) renames the sub-Cell's Parameters to their
attribute paths (``dense.weight``), as MindSpore does.

As a pytree, a Cell flattens to its Parameters, sub-Cells and array attributes;
everything else (the class, attribute names, hyper-parameters, the
train/predict phase) is static aux data. Unflattening builds an equal Cell
without calling ``__init__``, so ``jax.jit``, ``jax.grad`` and ``jax.tree.map``
work on Cells directly:

>>> import jax, jax.numpy as jnp
>>> import cellkit as ms
>>> from cellkit import nn
>>> class Scale(nn.Cell):
...     def __init__(self):
...         super().__init__()
...         self.w = ms.Parameter(ms.Tensor([2.0, 3.0]), name="w")
...     def construct(self, x):
...         return x * self.w
>>> net = Scale()
>>> g = jax.grad(lambda n, x: n(x).sum())(net, jnp.ones(2))
>>> type(g).__name__, g.w.value
('Scale', Array([1., 1.], dtype=float32))
"""

from __future__ import annotations

import inspect
import types
from collections import OrderedDict

import jax
import numpy as np

from . import context
from .cell_errors import call_failed as _call_failed
from .cell_hooks import HookHandle, HooksMixin
from .cell_members import MembersMixin
from .cell_state import StateDictMixin
from .parameter import PARAMETER_NAME_DEFAULT, Parameter, ParameterTuple, bump_structure, local, structure_epoch
from .rewrite import rewrite_function

__all__ = ["Cell", "HookHandle"]

# Set by the engine: handles GRAPH_MODE calls and Cells with a custom bprop.
special_call = [None]
# Set by cellkit.amp: runs a Cell that has a mixed-precision type (``Cell.to_float``).
precision_call = [None]
# Set by the engine: runs a Cell that has hooks or recompute (``cellkit.engine.hooks``).
extras_call = [None]


def _special_call(cell, args, kwargs):
    d = cell.__dict__
    if "_cell_hooks" in d or "_cell_recompute" in d:
        return extras_call[0](cell, args, kwargs)
    if cell._mixed_precision_type is not None and not (context.graph[0] and local.frame is None):
        return precision_call[0](cell, args, kwargs)
    return special_call[0](cell, args, kwargs)


def _call_inner(cell, args, kwargs):
    """``cell(*args)`` without its hooks and recompute (inside a transform, or eagerly)."""
    if cell._mixed_precision_type is not None:
        return precision_call[0](cell, args, kwargs)
    if cell._ck_bprop:
        return special_call[0](cell, args, kwargs)
    try:
        return cell.construct(*args, **kwargs)
    except Exception as err:
        new = _call_failed(cell, err, args, kwargs)
        if new is None:
            raise
        raise new from err


def _rewrite_methods(cls) -> None:
    """Rewrite the assignments into Tensors (``x[i] = v``, ``x.add_(y)``) in a Cell subclass's methods."""
    for name, attr in list(cls.__dict__.items()):
        if isinstance(attr, (types.FunctionType, staticmethod, classmethod)):
            new = rewrite_function(attr)
            if new is not attr:
                type.__setattr__(cls, name, new)


# Attributes Cell.__init__ sets for itself: a Parameter or sub-Cell stored over one would break the Cell.
_OWN_ATTRIBUTES = frozenset({"training", "phase", "_auto_prefix"})


def _hides_class_attribute(cls, name) -> bool:
    """Would an instance attribute ``name`` hide (or be hidden by) a method or property of ``cls``?"""
    try:
        raw = inspect.getattr_static(cls, name)
    except AttributeError:
        return False
    return inspect.isroutine(raw) or isinstance(raw, (property, staticmethod, classmethod))


def _is_child(value) -> bool:
    """Is an attribute value part of the pytree (rather than static)?"""
    if isinstance(value, (Parameter, Cell, jax.Array, np.ndarray)):
        return True
    if isinstance(value, (list, tuple)):
        return any(isinstance(v, (Parameter, Cell)) for v in value)
    if isinstance(value, dict):
        return any(isinstance(v, (Parameter, Cell)) for v in value.values())
    return False


def _static_key(value):
    """A hashable stand-in for a static attribute (equal values, equal keys)."""
    try:
        hash(value)
        return value
    except TypeError:
        pass
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_static_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, _static_key(v)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):
        return ("set", frozenset(_static_key(v) for v in value))
    return ("id", id(value))


class _Statics:
    """Static aux data of a Cell node: attribute order, static values, and their key."""

    __slots__ = ("order", "keys", "values", "template", "_key")

    def __init__(self, order, keys, values):
        self.order, self.keys, self.values = order, keys, values
        # The attribute dict in its original order, children still to be filled in.
        self.template = {k: values.get(k) for k in order}
        self._key = (order, keys, tuple((k, _static_key(v)) for k, v in values.items()))

    def __eq__(self, other):
        return isinstance(other, _Statics) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return f"Statics({self.order})"


def _flat_info(cell):
    """(child attribute names, aux) for ``cell``, cached until the structure changes."""
    d = cell.__dict__
    cached = d.get("_ck_flat")
    if cached is not None and cached[0] == structure_epoch[0]:
        return cached[1], cached[2]
    order = tuple(k for k in d if not k.startswith("_ck_"))
    keys = tuple(k for k in order if _is_child(d[k]))
    statics = {k: d[k] for k in order if k not in keys}
    aux = _Statics(order, keys, statics)
    d["_ck_flat"] = (structure_epoch[0], keys, aux)
    return keys, aux


def _flatten_cell(cell):
    keys, aux = _flat_info(cell)
    d = cell.__dict__
    return [d[k] for k in keys], aux


def _flatten_cell_with_keys(cell):
    keys, aux = _flat_info(cell)
    d = cell.__dict__
    return [(jax.tree_util.GetAttrKey(k), d[k]) for k in keys], aux


def _unflatten_cell(cls, aux, children):
    cell = object.__new__(cls)
    d = cell.__dict__
    d.update(aux.template)
    d.update(zip(aux.keys, children))
    # The copy has exactly the structure ``aux`` describes: reuse it.
    d["_ck_flat"] = (structure_epoch[0], aux.keys, aux)
    return cell


def _register(cls):
    jax.tree_util.register_pytree_with_keys(
        cls, _flatten_cell_with_keys,
        lambda aux, children: _unflatten_cell(cls, aux, children),
        _flatten_cell)


def _addindent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


class Cell(HooksMixin, MembersMixin, StateDictMixin):
    """Base class of all layers: subclass it and define ``construct``.

    Args:
        auto_prefix: prefix the names of sub-Cells' Parameters with the
            attribute name a sub-Cell is stored under (default True).

    >>> import numpy as np
    >>> import cellkit as ms
    >>> from cellkit import nn, ops
    >>> class Network(nn.Cell):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.w = ms.Parameter(ms.Tensor(np.ones((5, 3)), ms.float32), name='w')
    ...         self.b = ms.Parameter(ms.Tensor(np.zeros(3), ms.float32), name='b')
    ...     def construct(self, x):
    ...         return ops.matmul(x, self.w) + self.b
    >>> net = Network()
    >>> [name for name, _ in net.parameters_and_names()]
    ['w', 'b']
    >>> net(ms.Tensor(np.ones((1, 5)), ms.float32))
    Array([[5., 5., 5.]], dtype=float32)
    """

    _ck_bprop = False
    _ck_jvp = False
    _cell_special = False  # a bprop (class) or hooks/recompute (instance): calls take the special path
    _mixed_precision_type = None  # set by to_float: the float type this Cell computes in

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._ck_jvp = callable(getattr(cls, "jvp", None))  # a forward-mode rule (cellkit.engine.custom_jvp)
        cls._ck_bprop = callable(getattr(cls, "bprop", None)) or cls._ck_jvp
        cls._cell_special = cls._ck_bprop
        if not cls.__module__.startswith("cellkit."):
            _rewrite_methods(cls)
        _register(cls)

    def __init__(self, auto_prefix=True, flags=None):
        d = self.__dict__
        d["_auto_prefix"] = bool(auto_prefix)
        d["training"] = False
        d["phase"] = "predict"
        frame = local.frame
        if frame is not None:  # built inside a traced function: its own business
            d["_ck_in_trace"] = True
        if flags:
            self.add_flags(**flags)
        bump_structure()

    # ----- attributes ----------------------------------------------------------

    def _check_mutable(self, name, value, action=None) -> None:
        """Refuse changing this Cell's attributes (its structure) while a function is traced."""
        frame = local.frame
        if frame is None or self.__dict__.get("_ck_in_trace"):
            return
        if isinstance(value, jax.core.Tracer) or getattr(frame, "staged", False):
            raise RuntimeError(
                f"{self.cls_name}: cannot {action or f'set attribute {name!r}'} inside a traced function "
                "(cellkit.jit, GRAPH_MODE or a gradient): the change would not be replayed on "
                "later calls. Keep state that changes in a Parameter and update it with "
                "ops.assign / set_data, or change the attribute outside the traced function.")

    def _check_slot(self, name, kind) -> None:
        """Refuse storing a ``kind`` (Parameter or Cell) as attribute ``name`` where that would
        replace something of another kind or hide a method; checked before anything is renamed."""
        noun = "a Parameter" if kind is Parameter else "a sub-Cell"
        old = self.__dict__.get(name)
        if name.startswith("_ck_"):
            problem = "names starting with '_ck_' are reserved for cellkit's bookkeeping"
        elif (isinstance(old, (Parameter, Cell)) and not isinstance(old, kind)) \
                or (name in _OWN_ATTRIBUTES and old is not None and not isinstance(old, kind)):
            # MindSpore: a Parameter and a sub-Cell never replace each other; any other value
            # (None, a list, a number, a Tensor) gives way to either, except the Cell's own state
            problem = f"attribute '{name}' already exists and is a {type(old).__name__}, not {noun}"
        elif name not in self.__dict__ and _hides_class_attribute(type(self), name):
            problem = f"'{name}' is a method or property of {self.cls_name}"
        else:
            return
        raise KeyError(f"{self.cls_name}: cannot store {noun} as '{name}': {problem}; choose another "
                       "name (nothing was changed)")

    def __setattr__(self, name, value):
        self._check_mutable(name, value)
        d = self.__dict__
        if isinstance(value, Parameter):
            self.insert_param_to_cell(name, value, check_name_contain_dot=False)
            return
        if isinstance(value, Cell):
            self._check_slot(name, Cell)
            if self.__dict__.get("_auto_prefix", True):
                value.update_parameters_name(name + ".")
            self.insert_child_to_cell(name, value)
            return
        old = d.get(name)
        if isinstance(old, Parameter) and value is not None and not isinstance(value, ParameterTuple):
            if getattr(value, "__cellkit_lazy__", False):  # initializer(...): MindSpore's lazy Tensor
                value = value.init_data()
            if isinstance(value, (jax.Array, np.ndarray)):
                # MindSpore: a Tensor assigned over a Parameter sets its data, in place (the
                # same Parameter, its name and dtype kept), and may change its shape
                old.set_data(value, slice_shape=True)
                return
            raise TypeError(f"{self.cls_name}: '{name}' is a Parameter; assign a Parameter or a "
                            f"Tensor to it, not a {type(value).__name__}")
        if isinstance(old, Cell) and value is not None:
            raise TypeError(f"{self.cls_name}: '{name}' is a sub-Cell; assign a Cell to it, "
                            f"not a {type(value).__name__}")
        if isinstance(value, ParameterTuple):
            names = {}
            for p in value:
                if p.name in names and names[p.name] is not p:
                    raise ValueError(f"{self.cls_name}.{name}: two different Parameters in the "
                                     f"ParameterTuple are both named '{p.name}'; give them unique names")
                names[p.name] = p
        d[name] = value
        bump_structure()

    def __delattr__(self, name):
        self._check_mutable(name, None)
        object.__delattr__(self, name)
        bump_structure()

    def insert_param_to_cell(self, param_name, param, check_name_contain_dot=True) -> None:
        """Store ``param`` as attribute ``param_name`` (naming it so if it is unnamed).

        >>> import cellkit as ms
        >>> from cellkit import nn
        >>> net = nn.Cell()
        >>> net.insert_param_to_cell("bias", ms.Parameter(ms.Tensor([1., 2.])))
        >>> net.bias.name
        'bias'
        """
        if not isinstance(param_name, str) or not param_name:
            raise KeyError(f"{self.cls_name}.insert_param_to_cell: param_name must be a non-empty "
                           f"string, got {param_name!r}")
        if check_name_contain_dot and "." in param_name:
            raise KeyError(f"{self.cls_name}.insert_param_to_cell: param_name '{param_name}' must not contain '.'")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"{self.cls_name}.insert_param_to_cell: '{param_name}' must be a "
                            f"Parameter, got {type(param).__name__}")
        self._check_slot(param_name, Parameter)
        self._check_mutable(param_name, param)
        if param is not None and param.name == PARAMETER_NAME_DEFAULT:
            param.name = param_name
        self.__dict__[param_name] = param
        bump_structure()

    def insert_child_to_cell(self, child_name, child_cell) -> None:
        """Store ``child_cell`` as attribute ``child_name``.

        Unlike attribute assignment, this does not rename the child's
        Parameters (MindSpore's behaviour).

        >>> from cellkit import nn
        >>> net = nn.Cell()
        >>> net.insert_child_to_cell("fc", nn.Dense(2, 3))
        >>> [(path, p.name) for path, p in net.parameters_and_names()]
        [('fc.weight', 'weight'), ('fc.bias', 'bias')]
        """
        if not isinstance(child_name, str) or not child_name or "." in child_name:
            raise KeyError(f"{self.cls_name}.insert_child_to_cell: child_name must be a non-empty "
                           f"string without '.', got {child_name!r}")
        if child_cell is not None and not isinstance(child_cell, Cell):
            raise TypeError(f"{self.cls_name}.insert_child_to_cell: '{child_name}' must be a Cell, "
                            f"got {type(child_cell).__name__}")
        self._check_slot(child_name, Cell)
        self._check_mutable(child_name, child_cell)
        self.__dict__[child_name] = child_cell
        bump_structure()

    def update_parameters_name(self, prefix="", recurse=True) -> None:
        """Rename every Parameter to ``prefix`` + its attribute path."""
        for path, param in self.parameters_and_names(expand=recurse):
            param.name = prefix + path

    @property
    def cls_name(self) -> str:
        return type(self).__name__

    @property
    def _params(self) -> "OrderedDict[str, Parameter]":
        return OrderedDict((k, v) for k, v in self.__dict__.items() if isinstance(v, Parameter))

    @property
    def _cells(self) -> "OrderedDict[str, Cell]":
        return OrderedDict((k, v) for k, v in self.__dict__.items() if isinstance(v, Cell))

    def _own_params(self):
        for k, v in self.__dict__.items():
            if isinstance(v, Parameter):
                yield k, v
            elif isinstance(v, ParameterTuple):
                for p in v:
                    yield p.name, p

    # ----- traversal -------------------------------------------------------------

    def cells_and_names(self, cells=None, name_prefix=""):
        """Yield ``(path, cell)`` for this Cell and every sub-Cell, each once.

        >>> from cellkit import nn
        >>> seq = nn.SequentialCell([nn.Dense(2, 2), nn.ReLU()])
        >>> [name for name, _ in seq.cells_and_names()]
        ['', '0', '1']
        """
        seen = cells if cells is not None else set()
        if id(self) in seen:
            return
        seen.add(id(self))
        yield name_prefix, self
        for name, cell in self.__dict__.items():
            if isinstance(cell, Cell):
                yield from cell.cells_and_names(seen, f"{name_prefix}.{name}" if name_prefix else name)

    def name_cells(self) -> "OrderedDict[str, Cell]":
        """The direct sub-Cells, by attribute name."""
        return self._cells

    def cells(self):
        """The direct sub-Cells."""
        return self._cells.values()

    def parameters_and_names(self, name_prefix="", expand=True):
        """Yield ``(path, parameter)`` for every Parameter, each object once.

        >>> from cellkit import nn
        >>> [n for n, _ in nn.Dense(3, 4).parameters_and_names()]
        ['weight', 'bias']
        """
        cells = self.cells_and_names(name_prefix=name_prefix) if expand else [(name_prefix, self)]
        seen = set()
        for cell_name, cell in cells:
            for name, param in cell._own_params():
                if id(param) not in seen:
                    seen.add(id(param))
                    yield (f"{cell_name}.{name}" if cell_name else name), param

    def get_parameters(self, expand=True):
        """A generator over the Parameters (each once)."""
        for _, param in self.parameters_and_names(expand=expand):
            yield param

    def trainable_params(self, recurse=True) -> list:
        """The Parameters with ``requires_grad=True``."""
        return [p for p in self.get_parameters(expand=recurse) if p.requires_grad]

    def untrainable_params(self, recurse=True) -> list:
        """The Parameters with ``requires_grad=False``."""
        return [p for p in self.get_parameters(expand=recurse) if not p.requires_grad]

    def parameters_dict(self, recurse=True) -> "OrderedDict[str, Parameter]":
        """``OrderedDict`` of Parameter name → Parameter.

        Two different Parameters with one name cannot both be keys, so that
        raises ValueError (MindSpore silently keeps one).
        """
        out = OrderedDict()
        for path, param in self.parameters_and_names(expand=recurse):
            other = out.get(param.name)
            if other is not None and other is not param:
                raise ValueError(
                    f"{self.cls_name}: two different Parameters are both named '{param.name}' "
                    f"(one at '{path}'); rename one (Parameter.name = ...) so names stay unique")
            out[param.name] = param
        return out

    # ----- phase -----------------------------------------------------------------

    def set_train(self, mode=True) -> "Cell":
        """Set ``training`` and ``phase`` ('train'/'predict') on this Cell and every sub-Cell.

        >>> from cellkit import nn
        >>> seq = nn.SequentialCell([nn.Dropout(p=0.5)])
        >>> seq.set_train(False)[0].phase
        'predict'
        """
        mode = bool(mode)
        for _, cell in self.cells_and_names():
            cell._check_mutable("training", mode)
            cell.__dict__["training"] = mode
            cell.__dict__["phase"] = "train" if mode else "predict"
        bump_structure()
        return self

    def set_jit_config(self, jit_config) -> "Cell":
        """Keep MindSpore's graph-compiler options (a ``JitConfig``) on the Cell, as ``jit_config``;
        XLA compiles the same way whatever they say."""
        if type(jit_config).__name__ != "JitConfig":
            raise TypeError(f"{self.cls_name}.set_jit_config: jit_config must be a JitConfig, "
                            f"got {type(jit_config).__name__}")
        self.__dict__["jit_config"] = jit_config.jit_config_dict.copy()
        return self

    # ----- calling -----------------------------------------------------------------

    def construct(self, *args, **kwargs):
        raise NotImplementedError(f"{self.cls_name} must define construct()")

    def __call__(self, *args, **kwargs):
        if self._cell_special or self._mixed_precision_type is not None or (context.graph[0] and local.frame is None):
            return _special_call(self, args, kwargs)
        try:
            return self.construct(*args, **kwargs)
        except Exception as err:
            # Only on the way out of a failure (at trace time under jit): free when all is well.
            new = _call_failed(self, err, args, kwargs)
            if new is None:
                raise
            raise new from err

    def to_float(self, dst_type) -> "Cell":
        """Compute this Cell and its sub-Cells in ``dst_type`` (float16, bfloat16 or float32).

        As MindSpore: floating Tensor inputs and the Cell's own Parameters are cast to
        ``dst_type`` when it is called; the Parameters stay stored in their own type and their
        gradients come back in it. A later call on a sub-Cell overrides its setting.

        >>> import cellkit as ms
        >>> from cellkit import nn
        >>> net = nn.Dense(2, 1).to_float(ms.float16)
        >>> net(ms.Tensor([[1.0, 2.0]])).dtype, net.weight.dtype
        (dtype('float16'), Float32)
        """
        from . import dtype as mstype
        if dst_type not in (mstype.float16, mstype.float32, mstype.bfloat16):
            raise ValueError("For 'to_float', the argument 'dst_type' must be mstype.float32, mstype.float16 or "
                             f"mstype.bfloat16, but got type: {type(dst_type)} and value: {dst_type}.")
        for _, cell in self.cells_and_names():
            cell._check_mutable("to_float", dst_type)
            d = cell.__dict__
            d["_mixed_precision_type"] = dst_type
            d["fp16"], d["fp32"], d["bf16"] = (dst_type == mstype.float16, dst_type == mstype.float32,
                                               dst_type == mstype.bfloat16)
        bump_structure()
        return self

    def shard(self, mesh, rules=None) -> "Cell":
        """Annotate Parameters by name ``rules`` and place them on ``mesh``: :func:`cellkit.parallel.shard`.

        >>> import jax
        >>> from cellkit import nn, parallel
        >>> mesh = parallel.make_mesh((jax.device_count(),), ("model",))
        >>> net = nn.Dense(4, 8).shard(mesh, {"*": ("model",)})
        >>> net.bias.value.sharding.spec
        P('model',)
        """
        from .parallel import shard
        return shard(self, mesh, rules)

    # ----- display -----------------------------------------------------------------

    def extend_repr(self) -> str:
        """Extra text shown inside the Cell's repr (override it)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extend_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({k}): {_addindent(repr(c), 2)}" for k, c in self._cells.items()]
        lines = extra_lines + child_lines
        text = self.cls_name + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"

    __str__ = __repr__

    def _repr_html_(self) -> str:
        from .display import cell_html
        return cell_html(self)


_register(Cell)
