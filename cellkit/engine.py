"""The state engine: frames, ``jit``, ``grad``/``value_and_grad`` and custom ``bprop``.

One mechanism serves every stateful transform. A *frame* maps Parameters to
the (traced) values they have inside a transform and records which ones were
written. Parameters read through a frame never become baked-in constants:

* ``jit`` opens a frame whose values are the compiled function's inputs. The
  Parameters a function reads are those reachable from its Cell/Parameter
  arguments plus those it reaches through closures or globals, found by one
  extra (abstract) trace the first time. After the call, exactly the written
  Parameters are updated.
* ``grad``/``value_and_grad`` open a nested frame for the differentiated
  weights; writes made inside (BatchNorm statistics, the random key) come out
  as auxiliary outputs and are applied to the enclosing frame afterwards.
* A Cell with a ``bprop`` method runs as a ``jax.custom_vjp`` whose primal
  takes the Cell's Parameter values (and the random key) as explicit inputs.

>>> import numpy as np
>>> import cellkit as ms
>>> from cellkit import nn, ops
>>> b = ms.Parameter(ms.Tensor([1., 2., 3.]), name="b")
>>> @ms.jit
... def modify():
...     ops.assign(b, ms.Tensor([7, 8, 9]))
...     return True
>>> _ = modify()
>>> b.asnumpy()
array([7., 8., 9.], dtype=float32)
"""

from __future__ import annotations

import functools
import operator
import threading
import types

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec

from . import random as ckrandom
from .cell import Cell, _note, _static_key, special_call
from .parallel import keep_sharding
from .parameter import Parameter, ParameterTuple, commit, local, structure_epoch

__all__ = ["jit", "grad", "value_and_grad", "JitFunction", "GradFunction", "Frame", "compile_count"]

_MISS = object()
_Tracer = jax.core.Tracer


class _Rediscover(Exception):
    """A compiled function met a Parameter it was not given: discover again."""

    _ck_internal = True  # control flow, not an error: Cells do not annotate it


class Frame:
    """Values of Parameters inside one transform, and the set written there.

    ``staged`` frames belong to a ``jit`` trace: reads of Parameters the frame
    does not know are captured (``discover``) or force a new discovery.
    """

    __slots__ = ("parent", "values", "params", "written", "staged", "discover", "captured", "created")

    def __init__(self, parent=None, staged=False, discover=False):
        self.parent = parent
        self.values = {}
        self.params = {}
        self.written = {}
        self.staged = staged
        self.discover = discover
        self.captured = {}
        self.created = set()

    def bind(self, param, value) -> None:
        self.values[id(param)] = value
        self.params[id(param)] = param

    def read(self, param):
        f = self
        key = id(param)
        while f is not None:
            v = f.values.get(key, _MISS)
            if v is not _MISS:
                return v
            if key in f.created:
                return param._get()
            root = f
            f = f.parent
        return root._miss(param)

    def _miss(self, param):
        value = param._value
        if isinstance(value, _Tracer):  # a copy made inside a JAX trace: its value is current
            return value
        if not self.staged:
            return param._get()
        if self.discover:
            value = param._get()
            self.captured[id(param)] = param
            self.bind(param, value)
            return value
        raise _Rediscover(param)

    def write(self, param, value) -> None:
        key = id(param)
        if self.parent is None and key not in self.values and key not in self.created:
            self._miss(param)  # a write-only Parameter is captured like a read one
        self.values[key] = value
        self.params[key] = param
        self.written[key] = param

    def adopt(self, param) -> None:
        """A Parameter created while this frame is active is local to it."""
        self.created.add(id(param))
        self.params[id(param)] = param

    def owns(self, param) -> bool:
        """Was ``param`` created inside this frame (or one it is nested in)?"""
        f = self
        while f is not None:
            if id(param) in f.created:
                return True
            f = f.parent
        return False

    def writes(self):
        """(param, value) for each written Parameter that outlives the frame."""
        return [(p, self.values[k]) for k, p in self.written.items() if k not in self.created]


def _apply_writes(parent, writes) -> None:
    if parent is None:
        for p, v in writes:
            commit(p, v)
    else:
        for p, v in writes:
            parent.write(p, v)


class _Active:
    """Context manager making ``frame`` the active one on this thread."""

    __slots__ = ("frame", "saved")

    def __init__(self, frame):
        self.frame = frame

    def __enter__(self):
        self.saved = local.frame
        local.frame = self.frame
        return self.frame

    def __exit__(self, *exc):
        local.frame = self.saved


def _run_in_frame(parent, staged, params, vals, fn, args, positions, xs, kwargs):
    """``fn(*args, **kwargs)`` with ``args[positions]`` replaced by ``xs``, in a new frame
    (child of ``parent``) that binds ``params`` to ``vals``; returns (output values, frame)."""
    frame = Frame(parent, staged=staged)
    for p, v in zip(params, vals):
        frame.bind(p, v)
    full = list(args)
    for i, x in zip(positions, xs):
        full[i] = x
    with _Active(frame):
        out = _to_values(fn(*full, **kwargs))
    return out, frame


def _is_param(x) -> bool:
    return isinstance(x, Parameter)


def _to_values(tree):
    """Replace Parameters in an output tree by their current values."""
    if isinstance(tree, Parameter):
        return tree.value
    if isinstance(tree, jax.Array):
        return tree
    return jax.tree_util.tree_map(lambda x: x.value if isinstance(x, Parameter) else x,
                                  tree, is_leaf=_is_param)


# ----------------------------------------------------------------------------------------
# Cell signatures: the structure of a Cell argument, flattened once and cached.

def cell_signature(cell):
    """(treedef, unique Parameters in order) for a Cell, cached until the structure changes."""
    d = cell.__dict__
    cached = d.get("_ck_sig")
    if cached is not None and cached[0] == structure_epoch[0]:
        return cached[1], cached[2]
    leaves, treedef = jax.tree_util.tree_flatten(cell, is_leaf=_is_param)
    seen, params = set(), []
    for leaf in leaves:
        if isinstance(leaf, Parameter) and id(leaf) not in seen:
            seen.add(id(leaf))
            leaf._get()
            params.append(leaf)
    d["_ck_sig"] = (structure_epoch[0], treedef, tuple(params))
    return treedef, tuple(params)


# ----------------------------------------------------------------------------------------
# Closure and global bindings: detect that a name a function uses now means another object.

_RELEVANT = (Cell, Parameter, ParameterTuple, list, tuple, dict)


def _code_names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


_FUNCS = (types.FunctionType, functools.partial)


def _collect_bindings(fn, out, seen, depth=0) -> None:
    """Record (namespace, name, object) for every global or closure variable that
    ``fn`` (and the functions it calls by name) uses and that may hold Parameters."""
    if depth > 6 or id(fn) in seen:
        return
    seen.add(id(fn))
    if isinstance(fn, (JitFunction, GradFunction)):
        return _collect_bindings(fn.fn, out, seen, depth + 1)
    if isinstance(fn, functools.partial):
        return _collect_bindings(fn.func, out, seen, depth + 1)
    if isinstance(fn, types.MethodType):
        return _collect_bindings(fn.__func__, out, seen, depth + 1)
    code = getattr(fn, "__code__", None)
    if code is None:
        return
    found = []
    g = getattr(fn, "__globals__", {})
    for name in _code_names(code):
        v = g.get(name, _MISS)
        if v is not _MISS:
            found.append((g, name, v))
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            found.append((cell, None, cell.cell_contents))
        except ValueError:  # not bound yet
            continue
    for ns, name, v in found:
        if isinstance(v, _RELEVANT):
            out.append((ns, name, v))
        elif isinstance(v, _FUNCS + (JitFunction, GradFunction)):
            out.append((ns, name, v))
            _collect_bindings(v, out, seen, depth + 1)


def _bindings_hold(bindings) -> bool:
    for ns, name, obj in bindings:
        if name is None:
            try:
                if ns.cell_contents is not obj:
                    return False
            except ValueError:
                return False
        elif ns.get(name, _MISS) is not obj:
            return False
    return True


# ----------------------------------------------------------------------------------------
# jit

_ARRAY_TYPES = (jax.Array, np.ndarray, np.generic, int, float, complex, bool)
_tls = threading.local()
_compiles = [0]


def compile_count() -> int:
    """How many times any ``cellkit.jit`` function has been traced for compilation."""
    return _compiles[0]


class _Call:
    """What one call of a jitted function hands to its trace."""

    __slots__ = ("args", "kwargs", "kinds", "plist")


class _Entry:
    """One compiled version: the captured Parameters and the ``jax.jit`` function."""

    __slots__ = ("jitted", "captured", "epoch", "covered", "roots", "last_unique", "last_plist")

    def plist(self, unique):
        """The arguments' unique Parameters, then the captured ones (reused while ``unique`` is the same list)."""
        if self.last_unique is unique:
            return self.last_plist
        plist = list(unique)
        plist.extend(self.captured)
        self.last_unique, self.last_plist = unique, plist
        return plist


def _layout(stateful):
    """(the arguments' Parameters without repeats, in order; where each occurrence went, or None).

    A Parameter reached through two arguments (a Cell and its optimizer, the
    same Cell twice) is passed in once. The pattern is part of the cache key:
    ``f(a, a)`` and ``f(a, b)`` share a structure but not a computation.
    """
    seen, unique, pattern = {}, [], []
    for group in stateful:
        for p in group:
            i = seen.get(id(p))
            if i is None:
                i = seen[id(p)] = len(unique)
                unique.append(p)
            pattern.append(i)
    return unique, (None if len(unique) == len(pattern) else tuple(pattern))


_MAX_ENTRIES = 64
_stored_value = operator.attrgetter("_value")   # per call, for hundreds of Parameters: no Python frame each


def _classify_leaf(leaf, stateful):
    if isinstance(leaf, Cell):
        treedef, params = cell_signature(leaf)
        stateful.append(params)
        return ("c", treedef)
    if isinstance(leaf, Parameter):
        leaf._get()
        stateful.append((leaf,))
        return ("p",)
    if isinstance(leaf, _ARRAY_TYPES) or hasattr(leaf, "__jax_array__"):
        return None
    return ("s", _static_key(leaf))


def _is_stateful(x) -> bool:
    return isinstance(x, (Cell, Parameter))


def _broadcast_prefix(prefix, tree) -> list:
    """One entry of the sharding tree ``prefix`` per leaf of ``tree`` (Cells and Parameters are leaves)."""
    leaves = []

    def repeat(s, sub):
        leaves.extend([s] * len(jax.tree_util.tree_leaves(sub, is_leaf=_is_stateful)))

    jax.tree_util.tree_map(repeat, prefix, tree,
                           is_leaf=lambda x: x is None or isinstance(x, (jax.sharding.Sharding, PartitionSpec)))
    return leaves


class JitFunction:
    """A function compiled with ``jax.jit`` that reads and writes Parameters in place.

    Attributes:
        trace_count: how many times the function was traced for compilation.
        discovery_count: how many abstract traces found its captured Parameters.
    """

    def __init__(self, fn, static_argnums=(), static_argnames=(), in_shardings=None,
                 out_shardings=None):
        self.fn = fn
        if isinstance(static_argnums, int):
            static_argnums = (static_argnums,)
        if isinstance(static_argnames, str):
            static_argnames = (static_argnames,)
        self.static_argnums = frozenset(static_argnums)
        self.static_argnames = frozenset(static_argnames)
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        self.trace_count = 0
        self.discovery_count = 0
        self._entries = {}
        self._bindings = None
        self._last_layout = None
        # Copy the name and docstring only: merging fn.__dict__ would let a wrapped
        # GradFunction's (or JitFunction's) own ``fn`` replace ours.
        functools.update_wrapper(self, fn, updated=())

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def clear_cache(self) -> None:
        """Forget every compiled version (the next call traces again)."""
        self._entries.clear()

    # -- argument handling --

    def _split(self, args, kwargs):
        kinds, stateful, dyn = [], [], []
        for i, a in enumerate(args):
            if i in self.static_argnums:
                kinds.append(("s", _static_key(a)))
                dyn.append(None)
            elif isinstance(a, _ARRAY_TYPES):
                kinds.append(None)
                dyn.append(a)
            elif isinstance(a, (Cell, Parameter)):
                kinds.append(_classify_leaf(a, stateful))
                dyn.append(None)
            else:
                kind, d = self._split_tree(a, stateful)
                kinds.append(kind)
                dyn.append(d)
        kw = ()
        if kwargs:
            kw = tuple(sorted(kwargs))
            for name in kw:
                a = kwargs[name]
                if name in self.static_argnames:
                    kinds.append(("s", _static_key(a)))
                    dyn.append(None)
                else:
                    kind, d = self._split_tree(a, stateful)
                    kinds.append(kind)
                    dyn.append(d)
        return (tuple(kinds), kw), tuple(stateful), dyn

    @staticmethod
    def _split_tree(a, stateful):
        leaves, treedef = jax.tree_util.tree_flatten(a, is_leaf=_is_stateful)
        leaf_kinds = tuple(_classify_leaf(leaf, stateful) for leaf in leaves)
        d = [leaf if k is None else None for leaf, k in zip(leaves, leaf_kinds)]
        return ("t", treedef, leaf_kinds), d

    @staticmethod
    def _rebuild(call, dyn):
        """The arguments inside the trace: traced values where dynamic, objects elsewhere."""
        kinds, kw = call.kinds
        n = len(call.args)
        originals = list(call.args) + [call.kwargs[k] for k in kw]
        rebuilt = []
        for kind, orig, d in zip(kinds, originals, dyn):
            if kind is None:
                rebuilt.append(d)
            elif kind[0] == "t":
                leaves = jax.tree_util.tree_leaves(orig, is_leaf=_is_stateful)
                merged = [x if k is None else leaf for x, k, leaf in zip(d, kind[2], leaves)]
                rebuilt.append(jax.tree_util.tree_unflatten(kind[1], merged))
            else:
                rebuilt.append(orig)
        return rebuilt[:n], dict(zip(kw, rebuilt[n:]))

    def _run(self, call, vals, dyn, frame):
        for p, v in zip(call.plist, vals):
            frame.bind(p, v)
        args, kwargs = self._rebuild(call, dyn)
        with _Active(frame):
            out = _to_values(self.fn(*args, **kwargs))
        return out

    # -- tracing --

    def _trace(self, vals, dyn):
        call = _tls.call
        self.trace_count += 1
        _compiles[0] += 1
        frame = Frame(staged=True)
        out = self._run(call, vals, dyn, frame)
        index = {id(p): i for i, p in enumerate(call.plist)}
        writes = {}
        for p, v in frame.writes():
            i = index.get(id(p))
            if i is None:
                raise _Rediscover(p)
            writes[i] = v if p.sharding is None else keep_sharding(p, v)
        return out, writes

    def _discover(self, call, unique):
        self.discovery_count += 1
        frame = Frame(staged=True, discover=True)
        plist = list(unique)
        call.plist = plist
        vals = [p._value for p in plist]

        def run(v, d):
            try:
                return self._run(call, v, d, frame)
            finally:  # the frame outlives the trace (``captured``): it must not keep its tracers
                frame.values.clear()
                frame.written.clear()

        jax.eval_shape(run, vals, _tls.dyn)
        known = {id(p) for p in plist}
        return tuple(p for k, p in frame.captured.items() if k not in known)

    def _roots(self):
        """Cells and Parameters the function reaches through globals and closures.

        Collected once, and again whenever one of those names is rebound.
        """
        if self._bindings is None or not _bindings_hold(self._bindings):
            bindings = []
            _collect_bindings(self.fn, bindings, set())
            objs = [obj for _, _, obj in bindings if isinstance(obj, _RELEVANT)]
            leaves = jax.tree_util.tree_leaves(objs, is_leaf=_is_stateful)
            self._root_cells = tuple({id(c): c for c in leaves if isinstance(c, Cell)}.values())
            self._root_params = tuple(p for p in leaves if isinstance(p, Parameter))
            self._roots_id = tuple(id(o) for o in self._root_cells + self._root_params)
            self._bindings = bindings
        return self._root_cells

    def _covered(self, captured):
        """Would any change to which Parameters are captured show up in the cache key?"""
        ids = {id(p) for p in self._root_params}
        ids.add(id(ckrandom.rng_state))
        for cell in self._root_cells:
            ids.update(id(p) for p in cell_signature(cell)[1])
        return all(id(p) in ids for p in captured)

    def _build(self, key, call, unique):
        entry = _Entry()
        entry.epoch = structure_epoch[0]
        entry.captured = self._discover(call, unique)
        entry.covered = self._covered(entry.captured)
        entry.roots = self._root_cells + self._root_params  # keeps their ids from being reused
        entry.last_unique = None
        kwargs = {}
        if self.in_shardings is not None:
            kwargs["in_shardings"] = (None, self._dyn_shardings(call))
        if self.out_shardings is not None:
            kwargs["out_shardings"] = (self.out_shardings, None)
        # A fresh function per entry: jax caches traces per function object.
        entry.jitted = jax.jit(lambda vals, dyn: self._trace(vals, dyn), **kwargs)
        if len(self._entries) >= _MAX_ENTRIES:
            self._entries.pop(next(iter(self._entries)))
        self._entries[key] = entry
        return entry

    def _dyn_shardings(self, call):
        """The user's ``in_shardings`` (one per non-static positional argument of ``fn``) laid
        out like ``dyn``; the Parameters' values (``vals``) keep the shardings they have."""
        spec, args = self.in_shardings, call.args
        kinds = call.kinds[0]
        positions = [i for i in range(len(args)) if i not in self.static_argnums]
        explicit = isinstance(spec, (tuple, list))
        if explicit and len(spec) != len(positions):
            raise ValueError(f"cellkit.jit({getattr(self.fn, '__name__', 'fn')}): in_shardings has "
                             f"{len(spec)} entries but the call has {len(positions)} non-static "
                             "positional arguments; give one per argument (None: as it comes)")
        per_arg = dict(zip(positions, spec)) if explicit else dict.fromkeys(positions, spec)
        out = []
        for i, kind in enumerate(kinds):
            s = per_arg.get(i) if i < len(args) else None  # keyword arguments keep their sharding
            if s is None or kind is None:
                out.append(s)
            elif kind[0] == "t":  # a tree: the prefix broadcast over its leaves, Parameters skipped
                leaves = _broadcast_prefix(s, args[i])
                out.append([x if k is None else None for x, k in zip(leaves, kind[2])])
            else:
                if explicit and kind[0] in ("c", "p"):
                    raise ValueError(f"cellkit.jit({getattr(self.fn, '__name__', 'fn')}): in_shardings "
                                     f"entry {positions.index(i)} is for a {type(args[i]).__name__}; it must be "
                                     "None: Parameters are placed by their own sharding (parallel.shard)")
                out.append(None)
        return out

    def _revalidate(self, entry, call, unique) -> bool:
        """After a structural change somewhere: is this entry still right?"""
        if not entry.covered:
            # Captured Parameters were reached in ways the key cannot see: look again.
            if self._discover(call, unique) != entry.captured:
                return False
            entry.last_unique = None
        entry.epoch = structure_epoch[0]
        return True

    def _entry(self, key, call, unique):
        entry = self._entries.get(key)
        if entry is None:
            return self._build(key, call, unique)
        if entry.epoch != structure_epoch[0] and not self._revalidate(entry, call, unique):
            del self._entries[key]
            return self._build(key, call, unique)
        return entry

    def _unique(self, stateful):
        """:func:`_layout` of ``stateful``, reused while its groups are the same objects (the usual case:
        the same Cells, whose Parameter tuples are cached)."""
        last = self._last_layout
        if last is not None and len(last[0]) == len(stateful) and all(a is b for a, b in zip(last[0], stateful)):
            return last[1], last[2]
        unique, alias = _layout(stateful)
        self._last_layout = (stateful, unique, alias)
        return unique, alias

    def __call__(self, *args, **kwargs):
        if local.frame is not None:  # inside another transform: run inline in its frame
            return self.fn(*args, **kwargs)
        roots = self._roots()
        arg_key, stateful, dyn = self._split(args, kwargs)
        unique, alias = self._unique(stateful)
        key = (arg_key, alias, self._roots_id, tuple(cell_signature(c)[0] for c in roots))
        call = _Call()
        call.args, call.kwargs, call.kinds = args, kwargs, arg_key
        _tls.call, _tls.dyn = call, dyn
        try:
            for _ in range(3):
                entry = self._entry(key, call, unique)
                plist = entry.plist(unique)
                call.plist = plist
                vals = list(map(_stored_value, plist))
                try:
                    out, writes = entry.jitted(vals, dyn)
                    break
                except _Rediscover:
                    self._entries.pop(key, None)
            else:
                raise RuntimeError(f"cellkit.jit({getattr(self.fn, '__name__', self.fn)}): the set of "
                                   "Parameters the function uses keeps changing between traces")
        finally:
            _tls.call = _tls.dyn = None
        if writes:
            first = next(iter(writes.values()))
            if isinstance(first, _Tracer):  # called inside an outer jax transform
                for i, v in writes.items():
                    commit(plist[i], v)
            else:
                for i, v in writes.items():
                    plist[i]._value = v
        return out


def jit(fn=None, *, static_argnums=(), static_argnames=(), in_shardings=None, out_shardings=None,
        **mindspore_options):
    """Compile ``fn`` with ``jax.jit``; Parameters it reads are inputs, those it assigns are written back.

    Works as ``@jit``, ``@jit(...)``, on functions, on ``Cell.construct`` and on
    bound methods. Parameters reached through arguments, closures or globals
    are passed in as inputs on every call (never baked in), so ``set_data``
    between calls takes effect without recompiling. Python numbers are traced
    (as in ``jax.jit``); ``static_argnums``/``static_argnames`` make arguments
    static. MindSpore's options (``mode``, ``jit_config``, ...) are accepted
    and ignored.

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> counter = ms.Parameter(ms.Tensor(0.0), name="counter")
    >>> @ms.jit
    ... def step(x):
    ...     ops.assign(counter, counter + x)
    ...     return counter * 2
    >>> step(ms.Tensor(1.0)), step(ms.Tensor(2.0))
    (Array(2., dtype=float32), Array(6., dtype=float32))
    >>> counter.asnumpy(), step.trace_count
    (array(3., dtype=float32), 1)

    ``in_shardings`` and ``out_shardings`` are ``jax.jit``'s, for ``fn``'s own
    arguments and outputs: ``in_shardings`` is one Sharding (for every
    argument) or a tuple with one entry per non-static positional argument,
    each a Sharding, a pytree prefix of that argument, or None (as it comes);
    keyword arguments keep the sharding they come with. The entry for a Cell
    or Parameter argument must be None: Parameters are never resharded by
    ``in_shardings`` but keep their own (``Parameter.sharding``, see
    ``cellkit.parallel``), and a value written back to an annotated Parameter
    is constrained to its sharding, so it stays in place across calls.

    >>> import jax, numpy as np
    >>> from jax.sharding import NamedSharding, PartitionSpec as P
    >>> from cellkit import parallel
    >>> rows = NamedSharding(parallel.make_mesh((jax.device_count(),), ("data",)), P("data"))
    >>> double = ms.jit(lambda x, k: x * k, in_shardings=(rows, None))
    >>> double(np.ones((16, 2), np.float32), 2.0).sharding.is_equivalent_to(rows, 2)
    True
    """
    if fn is None:
        return functools.partial(jit, static_argnums=static_argnums, static_argnames=static_argnames,
                                 in_shardings=in_shardings, out_shardings=out_shardings)
    if isinstance(fn, JitFunction):
        return fn
    if isinstance(fn, types.MethodType):
        if isinstance(in_shardings, (tuple, list)):
            in_shardings = (None,) + tuple(in_shardings)  # none for self
        return functools.partial(JitFunction(fn.__func__, _shift(static_argnums), static_argnames,
                                             in_shardings, out_shardings), fn.__self__)
    return JitFunction(fn, static_argnums, static_argnames, in_shardings, out_shardings)


def _shift(nums):
    if isinstance(nums, int):
        nums = (nums,)
    return tuple(n + 1 for n in nums)


# ----------------------------------------------------------------------------------------
# grad / value_and_grad

def _weights_tuple(weights):
    if weights is None:
        return None, False
    if isinstance(weights, Parameter):
        return (weights,), True
    if isinstance(weights, Cell):
        return tuple(weights.trainable_params()), False
    try:
        items = tuple(weights)
    except TypeError:
        raise TypeError(f"grad: weights must be a Parameter, a list/tuple/ParameterTuple of "
                        f"Parameters or None, got {type(weights).__name__}") from None
    for i, p in enumerate(items):
        if not isinstance(p, Parameter):
            raise TypeError(f"grad: weights[{i}] is a {type(p).__name__}, expected a Parameter")
    return items, False


def _positions(grad_position):
    if grad_position is None:
        return None
    if isinstance(grad_position, bool) or not isinstance(grad_position, (int, tuple, list)):
        raise TypeError(f"grad: grad_position must be an int, a tuple of ints or None, got {grad_position!r}")
    if isinstance(grad_position, int):
        return (grad_position,)
    if not grad_position or not all(isinstance(i, int) and not isinstance(i, bool) for i in grad_position):
        raise TypeError(f"grad: grad_position must be a non-empty tuple of ints, got {grad_position!r}")
    return tuple(grad_position)


def _ones_like(x):
    x = jnp.asarray(x)
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return jnp.ones_like(x)
    return np.zeros(x.shape, jax.dtypes.float0)


class GradFunction:
    """What ``grad``/``value_and_grad`` return: call it like the function it differentiates."""

    def __init__(self, fn, grad_position, weights, has_aux, return_value, return_ids=False):
        if grad_position is None and weights is None:
            raise ValueError("grad: grad_position and weights cannot both be None; there would be "
                             "nothing to differentiate with respect to")
        self.fn = fn
        self.grad_position = grad_position
        self.positions = _positions(grad_position)
        self.weights, self.single_weight = _weights_tuple(weights)
        self.has_aux = has_aux
        self.return_value = return_value
        self.return_ids = return_ids
        functools.update_wrapper(self, fn, updated=())

    def _differentiate(self, args, kwargs):
        parent = local.frame
        positions = self.positions or ()
        for i in positions:
            if not -len(args) <= i < len(args):
                raise IndexError(f"grad: grad_position {i} is out of range for {len(args)} "
                                 f"positional inputs of {getattr(self.fn, '__name__', 'the function')}")
        weights = self.weights or ()
        wvals = [p.value for p in weights]
        xs = [_to_values(args[i]) for i in positions]
        fn, has_aux = self.fn, self.has_aux
        written = []

        staged = parent.staged if parent is not None else False

        def f(wvals, xs):
            out, frame = _run_in_frame(parent, staged, weights, wvals, fn, args, positions, xs, kwargs)
            if has_aux:
                if not isinstance(out, tuple) or len(out) < 2:
                    raise ValueError("grad(has_aux=True): the function must return a tuple "
                                     "(output, aux, ...)")
                main = out[0]
            else:
                main = out
            writes = frame.writes()
            written[:] = [p for p, _ in writes]
            return main, (out, [v for _, v in writes])

        main, vjp_fn, (out, write_vals) = jax.vjp(f, wvals, xs, has_aux=True)
        gw, gx = vjp_fn(jax.tree_util.tree_map(_ones_like, main))
        _apply_writes(parent, list(zip(written, write_vals)))
        gw = [g if p.requires_grad else jnp.zeros_like(g) for p, g in zip(weights, gw)]
        return out, gx, gw

    def _package(self, gx, gw):
        if self.return_ids:
            gx = tuple(zip(self.positions or (), gx))
            gw = tuple(zip((p.name for p in self.weights or ()), gw))
        # MindSpore returns a bare gradient for a single position, (0,) included.
        single_x = self.positions is not None and len(self.positions) == 1
        if self.weights is None:
            return gx[0] if single_x else tuple(gx)
        gw = gw[0] if self.single_weight else tuple(gw)
        if self.positions is None:
            return gw
        return (gx[0] if single_x else tuple(gx)), gw

    def __call__(self, *args, **kwargs):
        out, gx, gw = self._differentiate(args, kwargs)
        grads = self._package(gx, gw)
        if self.return_value:
            return out, grads
        if self.has_aux:
            return grads, tuple(out[1:])
        return grads


def grad(fn, grad_position=0, weights=None, has_aux=False, return_ids=False) -> GradFunction:
    """Gradient of ``fn`` with MindSpore's conventions.

    ``grad_position`` (an int, a tuple of ints or None) picks the inputs;
    ``weights`` (a Parameter, a list/ParameterTuple, or None) the Parameters.
    Returns the input gradient(s), the weight gradients, or ``(inputs, weights)``
    when both are asked for. With ``has_aux=True`` ``fn`` returns
    ``(output, aux...)``, only ``output`` is differentiated, and the result is
    ``(gradients, aux)``. A non-scalar output is differentiated as the sum of
    its elements (MindSpore's all-ones sensitivity). Parameters with
    ``requires_grad=False`` get zero gradients. Writes made inside ``fn``
    (running statistics, the random key) are applied after it.

    >>> import cellkit as ms
    >>> w = ms.Parameter(ms.Tensor([1., 2.]), name="w")
    >>> g = ms.grad(lambda x: (x * w).sum(), grad_position=0, weights=[w])
    >>> gx, (gw,) = g(ms.Tensor([3., 4.]))
    >>> gx, gw
    (Array([1., 2.], dtype=float32), Array([3., 4.], dtype=float32))
    """
    return GradFunction(fn, grad_position, weights, has_aux, return_value=False, return_ids=return_ids)


def value_and_grad(fn, grad_position=0, weights=None, has_aux=False, return_ids=False) -> GradFunction:
    """Like :func:`grad` but returns ``(value, gradients)``; with ``has_aux`` the value is the whole tuple.

    >>> import cellkit as ms
    >>> w = ms.Parameter(ms.Tensor(3.), name="w")
    >>> vg = ms.value_and_grad(lambda x: (w * x * x, x), None, [w], has_aux=True)
    >>> (loss, aux), (gw,) = vg(ms.Tensor(2.))
    >>> float(loss), float(gw)
    (12.0, 4.0)
    """
    return GradFunction(fn, grad_position, weights, has_aux, return_value=True, return_ids=return_ids)


# ----------------------------------------------------------------------------------------
# Cells with a custom bprop, and GRAPH_MODE calls

def _is_array_arg(a) -> bool:
    return isinstance(a, (jax.Array, np.ndarray, np.generic, Parameter))


def _bprop_params(cell):
    d = cell.__dict__
    cached = d.get("_ck_bprop_params")
    if cached is not None and cached[0] == structure_epoch[0]:
        return cached[1]
    params = tuple(cell.get_parameters())
    d["_ck_bprop_params"] = (structure_epoch[0], params)
    return params


def _parse_bprop_result(cell, result, n_inputs, state):
    param_grads = {}
    if (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict)
            and isinstance(result[0], (tuple, list))):
        result, param_grads = result
    if not isinstance(result, (tuple, list)):
        result = (result,)
    if len(result) != n_inputs:
        raise ValueError(f"{cell.cls_name}.bprop returned {len(result)} input gradient(s) but "
                         f"construct received {n_inputs} input(s); return one per input, as a tuple")
    index = {id(p): i for i, p in enumerate(state)}
    names = {p.name: i for i, p in enumerate(state)}
    by_index = {}
    for key, g in param_grads.items():
        i = index.get(id(key)) if isinstance(key, Parameter) else names.get(key)
        if i is None:
            raise ValueError(f"{cell.cls_name}.bprop returned a gradient for {key!r}, which is "
                             f"not a Parameter of this Cell")
        p = state[i]
        if tuple(jnp.shape(g)) != p.shape:
            raise ValueError(f"{cell.cls_name}.bprop: gradient for Parameter '{p.name}' has shape "
                             f"{tuple(jnp.shape(g))}, expected {p.shape}")
        by_index[i] = jnp.asarray(g, p.value.dtype)
    return tuple(result), by_index


def _call_with_bprop(cell, args, kwargs):
    params = _bprop_params(cell)
    state = params + (ckrandom.rng_state,)
    # The enclosing frame, reachable from the functions below only while this call runs: JAX
    # keeps them in the traced computation, and the frame holds that trace's tracers.
    outer = [local.frame]
    staged = outer[0].staged if outer[0] is not None else False
    dyn_idx = [i for i, a in enumerate(args) if _is_array_arg(a)]
    svals = [p.value for p in state]
    dvals = [_to_values(args[i]) for i in dyn_idx]
    # The functions below must not close over the (possibly traced) array inputs themselves.
    args = tuple(None if i in dyn_idx else a for i, a in enumerate(args))

    def run(svals, dvals):
        out, frame = _run_in_frame(outer[0], staged, state, svals, cell.construct, args, dyn_idx, dvals, kwargs)
        index = {id(p): i for i, p in enumerate(state)}
        writes = {}
        for p, v in frame.writes():
            if id(p) not in index:
                raise RuntimeError(f"{cell.cls_name} has a custom bprop and assigned Parameter "
                                   f"'{p.name}', which it does not own; only its own Parameters "
                                   "may be updated inside it")
            writes[index[id(p)]] = v
        return out, writes

    @jax.custom_vjp
    def primal(svals, dvals):
        return run(svals, dvals)

    def fwd(svals, dvals):
        out, writes = run(svals, dvals)
        return (out, writes), (svals, dvals, out)

    def bwd(res, cts):
        svals, dvals, out = res
        dout = cts[0]
        result, _ = _run_in_frame(None, False, state, svals, lambda *a: cell.bprop(*a, out, dout),
                                  args, dyn_idx, dvals, {})
        dx, by_index = _parse_bprop_result(cell, result, len(args), state)
        d_state = [by_index.get(i) for i in range(len(state))]
        d_dyn = []
        for k, i in enumerate(dyn_idx):
            dtype = jnp.asarray(dvals[k]).dtype
            ok = dx[i] is not None and jnp.issubdtype(dtype, jnp.inexact)
            d_dyn.append(jnp.asarray(dx[i]).astype(dtype) if ok else None)
        return d_state, d_dyn

    primal.defvjp(fwd, bwd)
    try:
        out, writes = primal(svals, dvals)
    except Exception as err:
        _note(err, f"  in Cell {cell.cls_name} (custom bprop)")
        raise
    finally:
        outer[0] = None
    for i, v in writes.items():
        state[i]._write(v)
    return out


_graph_call = None


def _special_call(cell, args, kwargs):
    if local.frame is None and _graph_mode():
        return _graph_call(cell, *args, **kwargs)
    return _call_with_bprop(cell, args, kwargs)


def _graph_mode() -> bool:
    from . import context
    return context.graph[0]


def _call_cell(cell, *args, **kwargs):
    return cell(*args, **kwargs)


_graph_call = JitFunction(_call_cell)
special_call[0] = _special_call
