"""Buffer donation for ``jit``: a compiled step reuses the memory of the Parameters it overwrites.

A ``cellkit.jit`` step that assigns a Parameter (a weight, an optimizer slot,
a BatchNorm statistic, the random key) stores the new value and drops the old
one. Donating the old value's buffer to the compiled computation lets XLA
write the new value into it, so a step holds one copy of each such array
instead of two (JAX's ``donate_argnums``).

Donation deletes the old array. That is safe only when nothing but the
Parameter holds it, so before each call every candidate is checked:

* Python references: a value the user took earlier (``w = net.weight.value``,
  a ``Parameter.clone()`` sharing it, an argument of the same call, a NumPy
  view made with ``np.asarray``) raises the array's reference count above the
  engine's own; such a value is copied first and the copy is donated, so the
  user's array stays valid. (NumPy views and zero-copy host arrays are also
  protected by XLA itself, which refuses to donate a buffer with external
  references.)
* JAX's NaN/Inf checks (``jax_debug_nans``/``jax_debug_infs``) re-run a failing
  computation on its inputs: with either on, nothing is donated.
* Inside an outer JAX transform the values are tracers: nothing is donated.
* Threads: donation happens while one thread calls ``cellkit.jit`` functions.
  From the first call on a second thread on, nothing is donated (that call
  first waits for a donating call in flight), so one thread's step never
  consumes a buffer another thread has just gathered. A thread that only
  *reads* Parameters (``p.value``, ``asnumpy()``) while another runs a step
  that writes them may see the donated old value: such programs should turn
  donation off.

Off switches: ``cellkit.jit(fn, donate=False)`` for one function,
``cellkit.set_context(jit_donate=False)`` for every function that does not
say (``donate=None``, the default).

>>> import cellkit as ms
>>> from cellkit import ops
>>> w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
>>> step = ms.jit(lambda: ops.assign(w, w * 2))
>>> old = w.value          # a reference the user keeps: never invalidated
>>> _ = step()
>>> old.is_deleted(), w.asnumpy()
(False, array([2., 4.], dtype=float32))
"""

from __future__ import annotations

import operator
import sys
import threading

import jax

from .. import context

__all__ = ["enabled", "protect", "check_lost", "register", "lock", "shared"]

_getrefcount = sys.getrefcount


class _Probe:
    __slots__ = ("_value",)


def _baseline() -> int:
    """The reference count of a value held only by its Parameter's slot and the list ``jit`` builds."""
    probe = _Probe()
    probe._value = object()
    values = list(map(operator.attrgetter("_value"), [probe]))
    return max(map(_getrefcount, values))


# A candidate with a higher count is referenced from somewhere else as well.
BASELINE = _baseline()

try:  # JAX's flags as objects: reading .value is cheaper than jax.config's attribute lookup
    from jax._src.config import debug_infs as _debug_infs, debug_nans as _debug_nans
except ImportError:  # pragma: no cover - other JAX layouts
    _debug_nans = _debug_infs = None


def _debugging() -> bool:
    if _debug_nans is not None:
        return _debug_nans.value or _debug_infs.value
    return bool(jax.config.jax_debug_nans or jax.config.jax_debug_infs)


# Held by a donating call from gathering the values to storing the new ones.
lock = threading.RLock()
_register_lock = threading.Lock()
_owner = [None]      # the thread that calls cellkit.jit functions
shared = [False]     # a second thread has called one: nothing is donated from then on


def register() -> None:
    """Note the calling thread (each ``jit`` call); the first call on a second thread ends donation."""
    ident = threading.get_ident()
    if ident == _owner[0] or shared[0]:
        return
    with _register_lock:
        if _owner[0] is None:
            _owner[0] = ident
            return
        if ident == _owner[0] or shared[0]:
            return
        shared[0] = True
    # Let a donating call in flight finish (a bounded wait: a host callback inside it may be us).
    if lock.acquire(timeout=1.0):
        lock.release()


def enabled(donate) -> bool:
    """Should a call donate now? ``donate`` is the function's own switch (None: the context's)."""
    if donate is None:
        donate = context.donate[0]
    return bool(donate) and not shared[0] and not _debugging()


def protect(values) -> None:
    """Replace, in the list ``values``, every array referenced outside the engine by a copy (in place).

    ``values`` must be the list handed to the compiled call, built from the
    Parameters' slots, with no other reference held by the caller.
    """
    if not values or max(map(_getrefcount, values)) <= BASELINE:
        return
    counts = list(map(_getrefcount, values))
    for i, n in enumerate(counts):
        if n > BASELINE:
            values[i] = values[i].copy()


def check_lost(params, values, error) -> None:
    """After a failed call: if donated buffers were consumed, say which Parameters lost their values."""
    lost = [p.name for p, v in zip(params, values) if getattr(v, "is_deleted", lambda: False)()]
    if lost:
        shown = ", ".join(repr(n) for n in lost[:5]) + (", ..." if len(lost) > 5 else "")
        raise RuntimeError(f"cellkit.jit: the compiled call failed after its inputs were donated; the "
                           f"Parameters {shown} ({len(lost)} in all) no longer hold values (set_data them "
                           "again, e.g. from a checkpoint). Run with cellkit.jit(..., donate=False) or "
                           "set_context(jit_donate=False) to keep them on failure.") from error
