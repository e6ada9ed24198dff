"""A compiled function's first eager calls computed with NumPy, before its executable takes over.

An eager training script pays, before its first step, for compiling executables
it then runs a few times: its optimizer's update (50 ms for ``nn.Momentum`` over
a LeNet, 0.2 s for ``nn.Adam`` over a small UNet's 33 Parameters) and the
backward pass of its ``value_and_grad`` (0.1 to 0.4 s). :class:`HostFirst`
wraps such a function: while its arrays hold at most :data:`MAX_ELEMENTS`
elements in all, its first :data:`STEPS` eager calls per input signature are a
host plan (:mod:`cellkit.host_ops`, :mod:`cellkit.host_compute`), a few
milliseconds each; the call after them compiles the function as before, and
the executable runs from then on (it is faster per call).

The function is traced under ``jax.disable_jit()``: JAX's jitted functions
inside it (every ``jnp`` function of an optax update) then run inline on the
tracers, the same values in a flat equation list, instead of each being traced
on its own for every new shape (an Adam update of a UNet's 33 Parameters:
24 ms instead of 40). ``disable_jit`` would also run a ``lax.scan`` or
``fori_loop`` called in the function's Python as a Python loop, the same values
unrolled: cellkit's optimizers call none, and the backward pass evaluates JAX's
own jaxpr, whose loops stay loops.

The host's arithmetic is XLA's, up to the last bit: XLA's CPU code contracts
``a * b + c`` into a fused multiply-add, which rounds once where NumPy rounds
twice, and sums and matrix products add in another order. The first
:data:`STEPS` calls may therefore differ from the executable's in the last bit,
as the same script under ``cellkit.jit`` does; a script gives the same numbers
on every run. ``CELLKIT_HOST_COMPUTE=0`` turns this off with the rest of the
host's computing. Inside a trace (``cellkit.jit``, ``jax.grad``) the call is
always the function's own.

>>> import cellkit as ms
>>> from cellkit import nn
>>> net = nn.Dense(3, 2, bias_init="zeros")
>>> opt = nn.Adam(net.trainable_params(), learning_rate=0.1)
>>> _ = opt(tuple(ms.ops.ones_like(p) for p in net.trainable_params()))   # computed with NumPy
>>> round(float(net.bias[0]), 4)
-0.1
"""

from __future__ import annotations

import jax

from . import host_ops

__all__ = ["HostFirst", "STEPS", "MAX_ELEMENTS"]

STEPS = 16                # eager calls computed on the host, per input signature
MAX_ELEMENTS = 1 << 20    # array elements in all, at most (an Adam update of 2**18 parameters: a few ms)
_MISS = object()


class HostFirst:
    """``fn`` (a compiled function of arrays) whose first :data:`STEPS` eager calls per input signature
    are computed with NumPy, where :func:`cellkit.host_ops.plan` can run it."""

    def __init__(self, fn, max_elements=None):
        self.fn = fn
        self.max_elements = MAX_ELEMENTS if max_elements is None else max_elements
        self.plans = {}   # input signature -> host_ops.Plan, or None where the host cannot run it

    def __call__(self, *args):
        out = self._host(args)
        return self.fn(*args) if out is _MISS else out

    def _host(self, args):
        if not host_ops.ready():
            return _MISS
        arrays, treedef = jax.tree_util.tree_flatten(args)
        try:
            signature = (treedef, tuple((a.shape, a.dtype, a.weak_type) for a in arrays))
        except AttributeError:   # (a leaf that is not a JAX array)
            return _MISS
        plan = self.plans.get(signature, _MISS)
        # A signature done with (every step of a training loop after the first STEPS) returns here,
        # before the arrays' devices and sizes are looked at.
        if plan is None or plan is not _MISS and plan.calls >= STEPS:
            return _MISS
        if not host_ops.small(arrays, self.max_elements):
            return _MISS
        if plan is _MISS:
            if len(self.plans) >= 64:
                self.plans.clear()   # (bounded: a plan dropped is made again, the same)
            plan = self.plans[signature] = self._plan(treedef, arrays)
            if plan is None:
                return _MISS
        try:
            return host_ops.run(plan, arrays)
        except Exception:   # noqa: BLE001 - NumPy would differ from XLA here (a dtype it would change)
            self.plans[signature] = None
            return _MISS

    def _plan(self, treedef, arrays):
        def call(*leaves):
            return self.fn(*jax.tree_util.tree_unflatten(treedef, leaves))
        try:
            # (JAX's own jitted functions inside, jnp's among them, traced inline rather than each for
            # its shapes: about 40% of the trace; see the module's text)
            with jax.disable_jit():
                plan = host_ops.plan(call, arrays, limit=None)
        except Exception:   # noqa: BLE001 - not traceable as a function of these values: compiled
            return None
        return plan if isinstance(plan, host_ops.Plan) else None
