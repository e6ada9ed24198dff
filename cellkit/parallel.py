"""Scale-out on ``jax.sharding``: Parameter shardings, meshes, lazy init onto a mesh.

A Parameter's ``sharding`` is a ``PartitionSpec`` over the named axes of a
mesh: ``P('model', None)`` splits dimension 0 over the ``model`` axis and keeps
dimension 1 whole; ``P()`` (or no annotation) replicates. Annotations come
from name rules (:func:`annotate`, :func:`shard`, ``Cell.shard``) or from the
layer (``nn.Dense(..., weight_sharding=..., bias_sharding=...)``). Arrays are
placed with ``jax.device_put(value, NamedSharding(mesh, spec))``; lazy
Parameters (built from initializers, or under :func:`abstract`) are made
straight into their shards by one jitted function (:func:`initialize`), with
the same values an eager init draws for the same seed. ``cellkit.jit`` keeps
these shardings: values it writes back to an annotated Parameter are
constrained to the Parameter's sharding. Nothing here communicates by itself:
XLA inserts the collectives (GSPMD), so meshes use ``Auto`` axes
(:func:`make_mesh`).

>>> import jax
>>> import cellkit as ms
>>> from cellkit import nn, parallel
>>> from jax.sharding import PartitionSpec as P
>>> mesh = parallel.make_mesh((2, 4), ("data", "model"))
>>> net = nn.SequentialCell([nn.Dense(8, 16), nn.ReLU(), nn.Dense(16, 8)])
>>> _ = net.shard(mesh, {"0.*": P("model"), "2.weight": P(None, "model")})
>>> [(p.name, p.sharding) for p in net.get_parameters()]
[('0.weight', P('model',)), ('0.bias', P('model',)), ('2.weight', P(None, 'model')), ('2.bias', P())]
>>> [s.data.shape for s in net[0].weight.value.addressable_shards][:2]
[(4, 8), (4, 8)]
"""

from __future__ import annotations

import contextlib
import fnmatch
import math
import re

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec, Sharding

from . import random as ckrandom
from .initializer import LazyInit, _TensorInit
from . import parameter as _parameter
from .parameter import Parameter, bump_structure, local

__all__ = ["make_mesh", "abstract", "AbstractValue", "annotate", "initialize", "shard"]


def make_mesh(axis_shapes, axis_names, devices=None) -> Mesh:
    """A device mesh with ``Auto`` axes (XLA propagates shardings and adds the collectives).

    ``devices`` defaults to every device of every process (``jax.devices()``),
    as ``jax.make_mesh`` arranges them. cellkit's ops do not spell out output
    shardings, so they need ``Auto`` axes; ``jax.make_mesh`` alone makes
    ``Explicit`` ones in this JAX.

    >>> import jax
    >>> from cellkit import parallel
    >>> mesh = parallel.make_mesh((2, 4), ("data", "model"))
    >>> dict(mesh.shape), mesh.axis_types
    ({'data': 2, 'model': 4}, (Auto, Auto))
    >>> parallel.make_mesh((1,), ("data",), devices=jax.devices()[:1]).size
    1
    """
    names = tuple(axis_names)
    return jax.make_mesh(tuple(axis_shapes), names, axis_types=(AxisType.Auto,) * len(names),
                         devices=devices)


def _check_mesh(mesh) -> None:
    if not isinstance(mesh, Mesh):
        raise TypeError(f"expected a jax.sharding.Mesh (see parallel.make_mesh), got {type(mesh).__name__}")
    explicit = [n for n, t in zip(mesh.axis_names, mesh.axis_types) if t == AxisType.Explicit]
    if explicit:
        raise ValueError(
            f"mesh axes {explicit} are Explicit; cellkit's ops leave shardings to XLA's propagation "
            f"and need Auto axes: build the mesh with parallel.make_mesh(...) or "
            f"jax.make_mesh(..., axis_types=(AxisType.Auto,) * n)")


# ----------------------------------------------------------------------------------------
# Abstract Parameters

class AbstractValue(jax.ShapeDtypeStruct):
    """The value of a Parameter made under :func:`abstract`: a shape, a dtype, an initializer.

    A ``jax.ShapeDtypeStruct`` (so an abstract Cell works with ``jax.eval_shape``
    and ``jax.jit(...).trace``) that also keeps the ``LazyInit`` that
    :func:`initialize` uses to make the array.
    """

    __slots__ = ("init",)

    def __init__(self, init: LazyInit):
        super().__init__(tuple(init.shape), np.dtype(init.dtype))
        self.init = init

    def no_data_error(self, what) -> AttributeError:
        return AttributeError(
            f"'{what}': this Parameter value is abstract (shape {self.shape}, dtype {self.dtype}, made "
            "under parallel.abstract()) and has no data yet; make it with parallel.initialize(cell, "
            "mesh) or give it a value with set_data")

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        raise self.no_data_error(name)


_parameter.abstract_types = (AbstractValue,)


def _make_abstract(param: Parameter) -> None:
    if param._value is None and isinstance(param._init, LazyInit):
        param._value = AbstractValue(param._init)
        param._init = None


@contextlib.contextmanager
def abstract():
    """Build Cells whose initializer-made Parameters hold only shapes and dtypes.

    Inside the block, every Parameter created from ``initializer(...)`` (what
    the ``nn`` layers do) holds an :class:`AbstractValue` (a
    ``jax.ShapeDtypeStruct``) instead of an array, and nothing makes one
    implicitly: reading it gives the ShapeDtypeStruct, not a value. Make the
    arrays with :func:`initialize` (or :func:`shard`), straight into their
    shards, or give values with ``set_data`` (e.g. from a checkpoint). As with
    MindSpore's ``no_init_parameters``, a Parameter built from an array your
    code already made (``Parameter(Tensor(...))``) keeps that array.

    >>> import jax, jax.numpy as jnp
    >>> from cellkit import nn, parallel
    >>> with parallel.abstract():
    ...     net = nn.Dense(1024, 4096)
    >>> net.weight.value
    AbstractValue(shape=(4096, 1024), dtype=float32)
    >>> jax.eval_shape(lambda net, x: net(x), net, jax.ShapeDtypeStruct((2, 1024), jnp.float32))
    ShapeDtypeStruct(shape=(2, 4096), dtype=float32)
    """
    saved = local.on_create
    local.on_create = _make_abstract
    try:
        yield
    finally:
        local.on_create = saved


# ----------------------------------------------------------------------------------------
# Annotations

def _as_spec(spec, what):
    if spec is None:
        return PartitionSpec()
    if isinstance(spec, (PartitionSpec, NamedSharding)):
        return spec
    if callable(getattr(spec, "partition_spec", None)):  # a cellkit.Layout
        return spec.partition_spec()
    if isinstance(spec, str):
        return PartitionSpec(spec)
    if isinstance(spec, (tuple, list)):
        return PartitionSpec(*spec)
    raise TypeError(f"{what}: a sharding must be a PartitionSpec, a NamedSharding, a Layout, a tuple of "
                    f"mesh axis names or None, got {type(spec).__name__}")


def _compile_rules(rules):
    items = rules.items() if isinstance(rules, dict) else rules
    compiled = []
    for item in items:
        try:
            pattern, spec = item
        except (TypeError, ValueError):
            raise TypeError(f"sharding rules must be a dict or (pattern, spec) pairs, got {item!r}") from None
        if isinstance(pattern, re.Pattern):
            match = pattern.search
        elif isinstance(pattern, str):
            match = (lambda pat: lambda name: fnmatch.fnmatchcase(name, pat))(pattern)
        else:
            raise TypeError(f"a sharding rule's pattern must be a glob string or a compiled regex "
                            f"(re.compile), got {pattern!r}")
        compiled.append((match, _as_spec(spec, f"rule {pattern!r}")))
    return compiled


def _parameters(cell):
    """The Cell's Parameters, each once, in the order ``jax.tree_util`` flattens it."""
    leaves = jax.tree_util.tree_leaves(cell, is_leaf=lambda x: isinstance(x, Parameter))
    seen, params = set(), []
    for leaf in leaves:
        if isinstance(leaf, Parameter) and id(leaf) not in seen:
            seen.add(id(leaf))
            params.append(leaf)
    return params


def annotate(cell, rules):
    """Set ``Parameter.sharding`` from name rules, without moving any array; returns ``cell``.

    ``rules`` is a dict or a sequence of ``(pattern, spec)`` pairs, tried in
    order against each Parameter's name (its attribute path, e.g.
    ``layers.0.weight``); the first match wins. A string pattern is a glob
    matched against the whole name (``*`` also crosses dots); a compiled
    regex (``re.compile``) matches if it is found anywhere in the name
    (``re.search``). A spec is a ``PartitionSpec``, a tuple of axis names
    (``('model', None)``), a single axis name, or None (replicated).
    Parameters no rule matches keep their annotation.

    >>> import re
    >>> from cellkit import nn, parallel
    >>> from jax.sharding import PartitionSpec as P
    >>> net = nn.SequentialCell([nn.Dense(4, 8), nn.Dense(8, 4)])
    >>> _ = parallel.annotate(net, [(re.compile(r"^0\\."), P("model")), ("*.weight", (None, "model"))])
    >>> [(p.name, p.sharding) for p in net.get_parameters()]
    [('0.weight', P('model',)), ('0.bias', P('model',)), ('1.weight', P(None, 'model')), ('1.bias', None)]
    """
    compiled = _compile_rules(() if rules is None else rules)
    for p in _parameters(cell):
        for match, spec in compiled:
            if match(p.name):
                p.sharding = spec
                break
    bump_structure()  # shardings are part of a Cell's pytree structure
    return cell


def _named_sharding(param, mesh) -> NamedSharding:
    """``param``'s annotation on ``mesh`` (replicated if it has none), checked against its shape."""
    label = f"Parameter '{param.name}'"
    spec = _as_spec(param.sharding, label)
    if isinstance(spec, NamedSharding):
        if spec.mesh != mesh:
            raise ValueError(f"{label}: its sharding is a NamedSharding on another mesh; annotate it "
                             "with a PartitionSpec to place it on this one")
        sharding, spec = spec, spec.spec
    else:
        sharding = None
    shape = param.shape
    if len(spec) > len(shape):
        raise ValueError(f"{label} has shape {shape} but its sharding {spec} names {len(spec)} dimensions")
    for dim, (size, axes) in enumerate(zip(shape, spec)):
        if axes is None:
            continue
        axes = (axes,) if isinstance(axes, str) else tuple(axes)
        for a in axes:
            if a not in mesh.shape:
                raise ValueError(f"{label}: sharding {spec} names mesh axis '{a}', but the mesh has "
                                 f"axes {tuple(mesh.axis_names)}")
        parts = math.prod(mesh.shape[a] for a in axes)
        if size % parts:
            raise ValueError(f"{label}: dimension {dim} has size {size}, which does not divide into "
                             f"{parts} shards over mesh axes {axes} (sharding {spec})")
    return NamedSharding(mesh, spec) if sharding is None else sharding


# ----------------------------------------------------------------------------------------
# Placement and lazy initialisation

def initialize(cell, mesh):
    """Put every Parameter of ``cell`` on ``mesh`` in its sharding; returns ``cell``.

    Lazy Parameters (built from initializers and not used yet, or made under
    :func:`abstract`) are made by one ``jax.jit`` whose ``out_shardings`` are
    their shardings, so each device computes only its own shards and no full
    copy exists anywhere. Their keys come from cellkit's random stream in the
    order ``jax.tree_util`` flattens the Cell (the order in which
    ``cellkit.jit`` would make them), so the values equal an eager init after
    the same ``set_seed``. Parameters that hold arrays are moved with
    ``jax.device_put``. A Parameter without an annotation is replicated and
    annotated ``P()``, so ``cellkit.jit`` keeps it replicated.

    >>> import cellkit as ms
    >>> from cellkit import nn, parallel
    >>> from jax.sharding import PartitionSpec as P
    >>> mesh = parallel.make_mesh((8,), ("model",))
    >>> with parallel.abstract():
    ...     net = nn.Dense(16, 32, weight_sharding=P("model"))
    >>> _ = parallel.initialize(net, mesh)
    >>> net.weight.value.sharding.spec, net.bias.sharding
    (P('model',), P())
    >>> {s.data.shape for s in net.weight.value.addressable_shards}
    {(4, 16)}
    """
    _check_mesh(mesh)
    if local.frame is not None:
        raise RuntimeError("parallel.initialize places arrays and cannot run inside cellkit.jit, "
                           "grad or a custom bprop; call it before the traced function")
    params = _parameters(cell)
    shardings = [_named_sharding(p, mesh) for p in params]
    made = {}          # id(LazyInit) -> index into `plan`
    plan = []          # (LazyInit, key or None, sharding)
    targets = []       # (param, index into plan) for Parameters made by the jitted function
    for p, sharding in zip(params, shardings):
        value = p._value
        lazy = value.init if isinstance(value, AbstractValue) else (p._init if value is None else None)
        if isinstance(lazy, LazyInit) and lazy._data is None:
            i = made.get(id(lazy))
            if i is None:
                key = ckrandom.next_key() if lazy.init.random else None
                i = made[id(lazy)] = len(plan)
                plan.append((lazy, key, sharding))
            targets.append((p, i, sharding))
            continue
        if isinstance(lazy, LazyInit):  # made already (shared with a Parameter used eagerly)
            value = lazy._data
        elif type(value) is jax.ShapeDtypeStruct:
            raise ValueError(f"Parameter '{p.name}' holds only a ShapeDtypeStruct and has no "
                             "initializer; give it a value with set_data (or load a checkpoint)")
        elif value is None:
            value = p._get()  # some other lazy value: made eagerly, then placed
        p._value, p._init = jax.device_put(value, sharding), None
    if plan:
        values = _make_sharded(plan)
        for p, i, sharding in targets:
            value = values[i]
            if value.sharding != sharding:  # one LazyInit shared by differently sharded Parameters
                value = jax.device_put(value, sharding)
            p._value, p._init = value, None
        for (lazy, _, _), value in zip(plan, values):
            lazy._data = value  # as LazyInit.init_data would, for anyone else holding it
    for p in params:
        if p.sharding is None:
            p.sharding = PartitionSpec()
    bump_structure()
    return cell


def _make_sharded(plan):
    """Run every initializer in ``plan`` in one jitted function, straight into its sharding."""
    specs = [(lazy.init, tuple(lazy.shape), np.dtype(lazy.dtype)) for lazy, _, _ in plan]
    keys = [key for _, key, _ in plan]
    # Arrays given to initializer(tensor, ...) are inputs, not constants baked into the program.
    data = [lazy.init.data if isinstance(lazy.init, _TensorInit) else None for lazy, _, _ in plan]

    def make(keys, data):
        out = []
        for (init, shape, dtype), key, d in zip(specs, keys, data):
            out.append(jnp.asarray(d).astype(dtype) if d is not None else init.generate(key, shape, dtype))
        return out

    # Inputs are replicated (every process passes the same keys: same seed), outputs sharded.
    replicated = NamedSharding(plan[0][2].mesh, PartitionSpec())
    return jax.jit(make, in_shardings=replicated, out_shardings=[s for _, _, s in plan])(keys, data)


def shard(cell, mesh, rules=None):
    """Annotate ``cell``'s Parameters by name ``rules`` and put them on ``mesh``; returns ``cell``.

    :func:`annotate` followed by :func:`initialize`: lazy Parameters are made
    straight into their shards, the others are moved there. ``Cell.shard(mesh,
    rules)`` calls this.

    >>> import cellkit as ms
    >>> from cellkit import nn, parallel
    >>> from jax.sharding import PartitionSpec as P
    >>> mesh = parallel.make_mesh((8,), ("model",))
    >>> net = parallel.shard(nn.Dense(4, 16), mesh, {"weight": P("model", None), "bias": P("model")})
    >>> net.weight.value.sharding
    NamedSharding(mesh=Mesh('model': 8, axis_types=(Auto,)), spec=P('model', None), memory_kind=device)
    >>> net(ms.ops.ones((2, 4))).shape
    (2, 16)
    """
    annotate(cell, rules)
    return initialize(cell, mesh)


# ----------------------------------------------------------------------------------------
# Used by cellkit.jit

def keep_sharding(param, value):
    """``value`` (traced, about to be written to ``param``) constrained to ``param``'s sharding.

    The mesh is the one ``param``'s current array lives on, or the mesh set
    with ``jax.set_mesh``; with neither, or without an annotation, ``value``
    is returned as it is.
    """
    spec = param.sharding
    if spec is None:
        return value
    if isinstance(spec, Sharding):
        sharding, mesh = spec, getattr(spec, "mesh", None)
    else:
        current = param._value
        placed = getattr(current, "sharding", None) if not isinstance(current, jax.core.Tracer) else None
        if isinstance(placed, NamedSharding):
            mesh = placed.mesh
            sharding = NamedSharding(mesh, _as_spec(spec, f"Parameter '{param.name}'"))
        else:
            mesh = jax.sharding.get_abstract_mesh()
            if mesh.empty:
                return value
            sharding = _as_spec(spec, f"Parameter '{param.name}'")
    if mesh is not None and AxisType.Explicit in tuple(getattr(mesh, "axis_types", ())):
        return jax.sharding.reshard(value, sharding)
    return jax.lax.with_sharding_constraint(value, sharding)
