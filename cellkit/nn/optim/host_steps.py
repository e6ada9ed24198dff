"""An optimizer's first eager updates computed with NumPy, before its compiled update takes over.

An eager training script pays for compiling its optimizer's update before the
first step: 50 ms for ``nn.Momentum`` over a LeNet, 0.2 s for ``nn.Adam`` over
a small UNet's 33 Parameters, more than the script's few steps then take. For a
model of at most :data:`MAX_ELEMENTS` parameter elements, :class:`HostFirst`
computes the first :data:`STEPS` eager updates with NumPy
(:mod:`cellkit.host_ops`: adds, multiplies, square roots, the bias corrections'
powers), about a millisecond each; the update after them is compiled as before
and runs from then on (a compiled update is faster per step).

The host's arithmetic is XLA's, with one difference: XLA's CPU code contracts
``a * b + c`` into a fused multiply-add, which rounds once, and NumPy rounds
twice. The first :data:`STEPS` updates may therefore differ from compiled ones
in the last bit, as the same script under ``cellkit.jit`` does; a script gives
the same numbers on every run. ``CELLKIT_HOST_COMPUTE=0`` turns this off with
the rest of the host's computing.

Inside a trace (``cellkit.jit``, ``jax.grad``) the update is always the compiled one.

>>> import cellkit as ms
>>> from cellkit import nn
>>> net = nn.Dense(3, 2, bias_init="zeros")
>>> opt = nn.Adam(net.trainable_params(), learning_rate=0.1)
>>> _ = opt(tuple(ms.ops.ones_like(p) for p in net.trainable_params()))   # computed with NumPy
>>> round(float(net.bias[0]), 4)
-0.1
"""

from __future__ import annotations

import math

from ... import host_ops

__all__ = ["HostFirst", "STEPS", "MAX_ELEMENTS"]

STEPS = 16                # eager updates computed on the host, per input signature
MAX_ELEMENTS = 1 << 18    # parameter elements at most (an Adam step over them: a few ms on the host)
_MISS = object()


class HostFirst:
    """``update(grads, params, leaves)`` (a compiled optax update) whose first :data:`STEPS` eager calls
    per input signature are computed with NumPy, where :func:`cellkit.host_ops.plan` can run it."""

    def __init__(self, update):
        self.update = update
        self.plans = {}   # input signature -> host_ops.Plan, or None where the host cannot run it

    def __call__(self, grads, params, leaves):
        out = self._host(grads, params, leaves)
        return self.update(grads, params, leaves) if out is _MISS else out

    def _host(self, grads, params, leaves):
        arrays = [*grads, *params, *leaves]
        if not (host_ops.ready() and host_ops.local(arrays)
                and sum(math.prod(p.shape) for p in params) <= MAX_ELEMENTS):
            return _MISS
        signature = tuple((a.shape, a.dtype, a.weak_type) for a in arrays)
        plan = self.plans.get(signature, _MISS)
        if plan is _MISS:
            plan = self.plans[signature] = self._plan(grads, params, leaves, arrays)
        if plan is None or plan.calls >= STEPS:
            return _MISS
        try:
            return host_ops.run(plan, arrays)
        except Exception:   # noqa: BLE001 - NumPy would differ from XLA here (a dtype it would change)
            self.plans[signature] = None
            return _MISS

    def _plan(self, grads, params, leaves, arrays):
        n, m = len(grads), len(grads) + len(params)
        grads_type, params_type, leaves_type = type(grads), type(params), type(leaves)

        def update(*values):
            return self.update(grads_type(values[:n]), params_type(values[n:m]), leaves_type(values[m:]))
        try:
            plan = host_ops.plan(update, arrays, limit=None)
        except Exception:   # noqa: BLE001 - not traceable as a function of these values: compiled
            return None
        return plan if isinstance(plan, host_ops.Plan) else None
