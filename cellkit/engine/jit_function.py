"""``jit``: compile a function with ``jax.jit``; Parameters it reads are inputs, those it assigns are written back.

A cache miss runs one abstract trace to discover the Parameters the function
reaches through closures and globals, and which of them it writes
(:meth:`JitFunction._discover`), then compiles. A hit gathers the Parameters'
stored values, calls the compiled function, and stores the values of the
Parameters it wrote. The old values of the written Parameters are donated to
the compiled call (see :mod:`cellkit.engine.donation`).
"""

from __future__ import annotations

import functools
import operator
import threading
import types

import jax

from .. import random as ckrandom
from ..cell import Cell
from ..parallel import keep_sharding
from ..parameter import Parameter, commit, local, structure_epoch
from ..rewrite import rewrite_function
from . import donation
from .arguments import _is_stateful, dyn_shardings, layout, rebuild, split
from .capture import _RELEVANT, Transformed, _bindings_hold, _collect_bindings, cell_signature, cell_token
from .fallback import CONCRETE_ERRORS, fall_back, refuse, where
from .frame import Frame, _Active, _Rediscover, _to_values, _Tracer

__all__ = ["jit", "JitFunction", "compile_count"]

_tls = threading.local()
_compiles = [0]
_MAX_ENTRIES = 64
_stored_value = operator.attrgetter("_value")   # per call, for hundreds of Parameters: no Python frame each


def compile_count() -> int:
    """How many times any ``cellkit.jit`` function has been traced for compilation."""
    return _compiles[0]


class _Call:
    """What one call of a jitted function hands to its trace."""

    __slots__ = ("args", "kwargs", "kinds", "plist")


class _Entry:
    """One compiled version: the captured Parameters and the ``jax.jit`` functions.

    The Parameters are passed in the order ``order`` (positions in the
    arguments' unique Parameters followed by the captured ones): first the
    ``n_donate`` written ones whose buffers can be donated, then the other
    written ones (``n_written`` in all), then those only read. The compiled
    function takes ``(donated values, other values, dynamic leaves)`` and
    returns ``(output, new values of the first n_written, {position: value}
    for writes the discovery did not see})``.
    """

    __slots__ = ("jitted", "plain", "make", "captured", "epoch", "covered", "roots", "order", "n_donate",
                 "n_written", "last_unique", "last_plist", "last_split")

    def plist(self, unique):
        """The Parameters in call order (reused while ``unique`` is the same list)."""
        if self.last_unique is unique:
            return self.last_plist
        base = list(unique)
        base.extend(self.captured)
        plist = [base[i] for i in self.order]
        n = self.n_donate
        self.last_unique, self.last_plist = unique, plist
        self.last_split = (plist[:n], plist[n:], plist[:self.n_written])
        return plist

    def compiled(self, donate):
        """The donating ``jax.jit`` function, or the plain one (made on first use)."""
        if donate and self.n_donate:
            return self.jitted
        if self.plain is None:
            self.plain = self.make(False)
        return self.plain


class JitFunction(Transformed):
    """A function compiled with ``jax.jit`` that reads and writes Parameters in place.

    Attributes:
        trace_count: how many times the function was traced for compilation.
        discovery_count: how many abstract traces found its captured Parameters.
    """

    def __init__(self, fn, static_argnums=(), static_argnames=(), in_shardings=None,
                 out_shardings=None, donate=None):
        self.fn = rewrite_function(fn)
        if donate is not None and not isinstance(donate, bool):
            raise TypeError(f"cellkit.jit: donate must be True, False or None (the context's jit_donate), "
                            f"got {donate!r}")
        self.donate = donate
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

    def _run(self, call, vals, dyn, frame):
        for p, v in zip(call.plist, vals):
            frame.bind(p, v)
        args, kwargs = rebuild(call, dyn)
        with _Active(frame):
            out = _to_values(self.fn(*args, **kwargs))
        return out

    # -- tracing --

    def _trace(self, entry, donated, kept, dyn):
        call = _tls.call
        self.trace_count += 1
        _compiles[0] += 1
        frame = Frame(staged=True)
        vals = list(donated) + list(kept)
        out = self._run(call, vals, dyn, frame)
        index = {id(p): i for i, p in enumerate(call.plist)}
        writes = {}
        for p, v in frame.writes():
            i = index.get(id(p))
            if i is None:
                raise _Rediscover(p)
            writes[i] = v if p.sharding is None else keep_sharding(p, v)
        # Every expected write gets a value, the old one where the trace wrote none: a donated
        # buffer must always be replaced.
        written = [writes.pop(i, vals[i]) for i in range(entry.n_written)]
        return out, written, writes

    def _discover(self, call, unique):
        """(captured Parameters, [(Parameter, written shape, written dtype)]) from one abstract trace."""
        self.discovery_count += 1
        frame = Frame(staged=True, discover=True)
        plist = list(unique)
        call.plist = plist
        vals = [p._value for p in plist]
        written = []

        def run(v, d):
            try:
                return self._run(call, v, d, frame)
            finally:  # the frame outlives the trace (``captured``): it must not keep its tracers
                written.extend((p, getattr(x, "shape", None), getattr(x, "dtype", None))
                               for p, x in frame.writes())
                frame.values.clear()
                frame.written.clear()

        jax.eval_shape(run, vals, _tls.dyn)
        known = {id(p) for p in plist}
        return tuple(p for k, p in frame.captured.items() if k not in known), written

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
        entry.captured, written = self._discover(call, unique)
        entry.covered = self._covered(entry.captured)
        entry.roots = self._root_cells + self._root_params  # keeps their ids from being reused
        entry.last_unique = entry.plain = None
        _order(entry, list(unique) + list(entry.captured), written, self.donate is not False)
        kwargs = {}
        if self.in_shardings is not None:
            dyn = dyn_shardings(self.fn, self.in_shardings, self.static_argnums, call)
            kwargs["in_shardings"] = (None, None, dyn)
        if self.out_shardings is not None:
            kwargs["out_shardings"] = (self.out_shardings, None, None)

        def make(donate):
            # A fresh function per entry: jax caches traces per function object.
            return jax.jit(lambda donated, kept, dyn: self._trace(entry, donated, kept, dyn),
                           donate_argnums=(0,) if donate else (), **kwargs)
        entry.make = make
        entry.jitted = make(True) if entry.n_donate else None
        if len(self._entries) >= _MAX_ENTRIES:
            self._entries.pop(next(iter(self._entries)))
        self._entries[key] = entry
        return entry

    def _revalidate(self, entry, call, unique) -> bool:
        """After a structural change somewhere: is this entry still right?"""
        if not entry.covered:
            # Captured Parameters were reached in ways the key cannot see: look again.
            if self._discover(call, unique)[0] != entry.captured:
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
        """:func:`~cellkit.engine.arguments.layout` of ``stateful``, reused while its groups are the same objects (the usual case:
        the same Cells, whose Parameter tuples are cached)."""
        last = self._last_layout
        if last is not None and len(last[0]) == len(stateful) and all(a is b for a, b in zip(last[0], stateful)):
            return last[1], last[2]
        unique, alias = layout(stateful)
        self._last_layout = (stateful, unique, alias)
        return unique, alias

    def _prepare(self, args, kwargs):
        """(entry, Parameters in call order, dynamic leaves) of a call; sets the trace's thread state."""
        roots = self._roots()
        arg_key, stateful, dyn = split(args, kwargs, self.static_argnums, self.static_argnames)
        unique, alias = self._unique(stateful)
        key = (arg_key, alias, self._roots_id, tuple(map(cell_token, roots)))
        call = _Call()
        call.args, call.kwargs, call.kinds = args, kwargs, arg_key
        _tls.call, _tls.dyn = call, dyn
        return key, call, unique, dyn

    def __call__(self, *args, **kwargs):
        if local.frame is not None:  # inside another transform: run inline in its frame
            return self.fn(*args, **kwargs)
        donation.register()
        if donation.enabled(self.donate):
            with donation.lock:  # no other thread gathers a value this call donates
                return self._call(args, kwargs, not donation.shared[0])
        return self._call(args, kwargs, False)

    def _call(self, args, kwargs, may_donate):
        key, call, unique, dyn = self._prepare(args, kwargs)
        try:
            for _ in range(3):
                entry = self._entry(key, call, unique)
                plist = entry.plist(unique)
                call.plist = plist
                donated_params, kept_params, written_params = entry.last_split
                donated = list(map(_stored_value, donated_params))
                kept = list(map(_stored_value, kept_params))
                donate = may_donate and bool(donated) and not isinstance(donated[0], _Tracer)
                if donate:
                    donation.protect(donated)  # copies what the user can still reach
                try:
                    out, written, extra = entry.compiled(donate)(donated, kept, dyn)
                    break
                except _Rediscover:
                    self._entries.pop(key, None)
                except Exception as e:
                    if donate:
                        donation.check_lost(donated_params, donated, e)
                    raise
            else:
                raise RuntimeError(f"cellkit.jit({getattr(self.fn, '__name__', self.fn)}): the set of "
                                   "Parameters the function uses keeps changing between traces")
        except CONCRETE_ERRORS as err:  # Python control flow on a traced value
            if any(isinstance(x, _Tracer) for x in jax.tree_util.tree_leaves(dyn)):
                raise refuse(getattr(self.fn, "__name__", "fn"), where(err)) from err
            return fall_back(self, key, err, call, structure_epoch[0], _tls)
        finally:
            _tls.call = _tls.dyn = None
        if written and isinstance(written[0], _Tracer):  # called inside an outer jax transform
            for p, v in zip(written_params, written):
                commit(p, v)
        else:
            for p, v in zip(written_params, written):
                p._value = v
        for i, v in extra.items():  # writes the discovery did not predict (none, usually)
            commit(plist[i], v)
        return out

    def lower(self, *args, **kwargs):
        """``jax.stages.Lowered`` of the computation a call with these arguments runs (nothing is run or
        written; for ``.compile().memory_analysis()``, ``.as_text()``, ``.cost_analysis()``).

        >>> import cellkit as ms
        >>> from cellkit import ops
        >>> w = ms.Parameter(ms.ops.ones((256,)), name="w")
        >>> step = ms.jit(lambda x: ops.assign(w, w * x))
        >>> mem = step.lower(ms.Tensor(2.0)).compile().memory_analysis()
        >>> mem.argument_size_in_bytes   # w and x
        1028

        ``alias_size_in_bytes`` is the part of the output written into a donated
        argument's buffer (1024 here, w's, while donation is on).
        """
        if local.frame is not None:
            raise RuntimeError("cellkit.jit(...).lower() cannot be called inside another transform")
        key, call, unique, dyn = self._prepare(args, kwargs)
        try:
            entry = self._entry(key, call, unique)
            call.plist = entry.plist(unique)
            donated_params, kept_params, _ = entry.last_split
            donated = list(map(_stored_value, donated_params))
            kept = list(map(_stored_value, kept_params))
            return entry.compiled(bool(donated) and donation.enabled(self.donate)).lower(donated, kept, dyn)
        finally:
            _tls.call = _tls.dyn = None


def _order(entry, base, written, donate) -> None:
    """Set the entry's call order: written Parameters whose buffer can be donated, other written ones, the rest."""
    position = {id(p): i for i, p in enumerate(base)}
    first, second, seen = [], [], set()
    for p, shape, dtype in written:
        i = position.get(id(p))
        if i is None or i in seen:
            continue
        seen.add(i)
        old = p._value
        same = (not isinstance(old, _Tracer) and shape is not None and tuple(shape) == tuple(old.shape)
                and dtype == old.dtype)
        (first if donate and same else second).append(i)
    entry.order = first + second + [i for i in range(len(base)) if i not in seen]
    entry.n_donate = len(first)
    entry.n_written = len(first) + len(second)


def jit(fn=None, *, static_argnums=(), static_argnames=(), in_shardings=None, out_shardings=None,
        donate=None, **mindspore_options):
    """Compile ``fn`` with ``jax.jit``; Parameters it reads are inputs, those it assigns are written back.

    Works as ``@jit``, ``@jit(...)``, on functions, on ``Cell.construct`` and on
    bound methods. Parameters reached through arguments, closures or globals
    are passed in as inputs on every call (never baked in), so ``set_data``
    between calls takes effect without recompiling. Python numbers are traced
    (as in ``jax.jit``); ``static_argnums``/``static_argnames`` make arguments
    static. MindSpore's options (``mode``, ``jit_config``, ...) are accepted
    and ignored.

    The old values of the Parameters a call overwrites are donated to it (XLA
    reuses their buffers for the new values), so a training step holds one
    copy of each weight and optimizer slot. An old value the user can still
    reach (``w = net.weight.value``, a clone sharing it) is copied first and
    stays valid. ``donate=False`` turns this off for ``fn``; ``None`` (the
    default) follows ``set_context(jit_donate=...)``. See
    :mod:`cellkit.engine.donation`.

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
                                 in_shardings=in_shardings, out_shardings=out_shardings, donate=donate)
    if isinstance(fn, JitFunction):
        return fn
    if isinstance(fn, types.MethodType):
        if isinstance(in_shardings, (tuple, list)):
            in_shardings = (None,) + tuple(in_shardings)  # none for self
        return functools.partial(JitFunction(fn.__func__, _shift(static_argnums), static_argnames,
                                             in_shardings, out_shardings, donate), fn.__self__)
    return JitFunction(fn, static_argnums, static_argnames, in_shardings, out_shardings, donate)


def _shift(nums):
    if isinstance(nums, int):
        nums = (nums,)
    return tuple(n + 1 for n in nums)

