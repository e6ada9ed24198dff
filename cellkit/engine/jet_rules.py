"""Taylor-mode rules for the primitives ``jax.experimental.jet`` has none for.

JAX's ``jet`` propagates a truncated Taylor series through each primitive by a
rule of its own; about a hundred primitives have one (arithmetic, ``sin``,
``exp``, ``dot_general``, ``gather``, ...), the rest (``tan``, ``atan``,
``lgamma``, ``sort``, loops, ``argmax``, ...) raise a ``KeyError``. For those,
:func:`generic_rule` derives the series from the primitive's JVP rule: the
output series of ``p`` at ``x(t) = x0 + x1 t + ... + xk t^k`` is the list of
Taylor coefficients of ``t -> p(x(t))`` at 0, which ``k`` nested ``jax.jvp``
calls in the scalar ``t`` give exactly (the cost grows as ``2^k`` for that
primitive only). Integer outputs carry no series.

:func:`run` calls a ``jet`` and, where it meets a primitive without a rule,
registers :func:`generic_rule` for that primitive (once per process) and runs
again. The registration adds entries to JAX's table for primitives it lacks;
it changes no rule JAX has.

JAX 0.10's ``JetTrace`` runs the body of a ``custom_jvp``/``custom_vjp`` function
(``softplus``, ``logaddexp``, ``relu``, ...) outside its own trace, which leaks
a tracer; :func:`run` first makes it run the body under the ``JetTrace`` (the
rule is ignored either way, as JAX's ``jet`` documents; the series comes from
the body).

>>> import jax.numpy as jnp
>>> from jax.experimental import jet
>>> out, (d1, d2) = run(lambda: jet.jet(jnp.tan, (jnp.float32(0.5),), ((1., 0.),)))
>>> round(float(d2), 4)   # tan'' = 2 tan (1 + tan^2)
1.4187
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
from jax.experimental import jet as _jet

try:   # (jax.extend.core's own names; importing jax.extend loads Pallas, ~13 ms of every import)
    from jax._src.core import set_current_trace as _set_current_trace
except ImportError:  # pragma: no cover
    from jax.extend.core import set_current_trace as _set_current_trace

__all__ = ["generic_rule", "run"]

try:
    from jax._src.core import Primitive as _Primitive
except ImportError:  # pragma: no cover
    from jax.extend.core import Primitive as _Primitive


def _inexact(dtype) -> bool:
    return jnp.issubdtype(dtype, jnp.inexact)


def generic_rule(prim, primals_in, series_in, **params):
    """``(primal_out, series_out)`` of ``prim`` by nested JVPs (Taylor coefficients, not scaled)."""
    order = len(series_in[0])
    real = [_inexact(jnp.result_type(x)) for x in primals_in]
    dtype = jnp.result_type(*[x for x, r in zip(primals_in, real) if r]) if any(real) else jnp.float32

    def g(t):
        xs = [x + sum(c * t ** (j + 1) for j, c in enumerate(cs)) if r else x
              for x, cs, r in zip(primals_in, series_in, real)]
        out = prim.bind(*xs, **params)
        return list(out) if prim.multiple_results else [out]

    t0 = jnp.zeros((), dtype)
    keep = [i for i, o in enumerate(jax.eval_shape(g, t0)) if _inexact(o.dtype)]

    def level0(t):
        out = g(t)
        return ([out[i] for i in keep],)

    h = level0
    for _ in range(order):
        def h(t, inner=h):
            p, tangent = jax.jvp(inner, (t,), (jnp.ones((), dtype),))
            return p + (tangent[-1],)

    derivs = h(t0)
    primal_out = g(t0)
    series_out = [_jet.zero_series] * len(primal_out)
    for j, i in enumerate(keep):
        primal_out[i] = derivs[0][j]
        series_out[i] = [derivs[k][j] / math.factorial(k) for k in range(1, order + 1)]
    if prim.multiple_results:
        return primal_out, series_out
    return primal_out[0], series_out[0]


def _custom_call(self, primitive, fun, *rest, **params):
    with _set_current_trace(self):
        return fun.call_wrapped(*rest[-1])


def _patch_custom_calls():
    trace = _jet.JetTrace
    if getattr(trace, "_ck_patched", False):
        return
    # process_custom_jvp_call(self, primitive, fun, jvp, tracers, *, symbolic_zeros) and
    # process_custom_vjp_call(self, primitive, fun, fwd, bwd, tracers, *, out_trees, symbolic_zeros)
    trace.process_custom_jvp_call = _custom_call
    trace.process_custom_vjp_call = _custom_call
    trace._ck_patched = True


def run(thunk):
    """``thunk()`` (a call of ``jet``), registering :func:`generic_rule` for each primitive met without a rule."""
    _patch_custom_calls()
    while True:
        try:
            return thunk()
        except KeyError as err:
            prim = err.args[0] if err.args else None
            if not isinstance(prim, _Primitive) or prim in _jet.jet_rules:
                raise
            _jet.jet_rules[prim] = functools.partial(generic_rule, prim)
