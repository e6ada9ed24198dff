"""Taylor mode and linearisation: MindSpore's ``ops.jet``, ``ops.derivative`` and ``ops.linearize``.

``jet`` pushes a truncated Taylor series of the inputs through a function in
one pass (``jax.experimental.jet``), so an ``n``-th derivative costs about ``n``
times a forward pass instead of the ``2^n`` of nested ``grad``. Series are in
MindSpore's (and JAX's) convention: term ``i`` is the ``(i+1)``-th derivative,
stacked on axis 0. ``derivative(fn, x, n)`` is ``jet`` with the series ``(1, 0,
..., 0)``: the ``n``-th derivative along the all-ones direction of every input.
``linearize`` is ``jax.linearize``: one linearisation, then as many JVPs as you
like, each without running the function again.

All three run the function through the state engine (:func:`~.transforms.pure`),
so, unlike MindSpore's Taylor mode, they work on Cells that read Parameters or
hold Tensor constants, on any op (a primitive JAX has no Taylor rule for gets
one from its JVP rule, :mod:`~.jet_rules`), inside ``jit``/``vmap``/GRAPH_MODE,
and under ``grad``: the gradient of a PDE residual computed in Taylor mode with
respect to the network's Parameters is what a PINN trains on. The Parameters
read are the values at call time; those the function assigns are written back.

>>> import cellkit as ms
>>> from cellkit import ops
>>> out, d3 = ops.derivative(ops.sin, ms.Tensor([0., 1.]), 3)
>>> d3                                   # sin''' = -cos
Array([-1.       , -0.5403023], dtype=float32)
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.experimental import jet as _jet

from . import jet_rules
from .frame import _to_values, modes
from .int_inputs import cast_like, to_float
from .transforms import _like, _name, finish, forward, pure

__all__ = ["jet", "derivative", "linearize"]


def _is_tensor(x) -> bool:
    return isinstance(x, jax.Array) or hasattr(x, "__jax_array__") or hasattr(x, "__array__")


def _real(x, who, what):
    """``x`` as an array MindSpore's Taylor mode takes: integers become float32, floats stay."""
    x = jnp.asarray(_to_values(x))
    if jnp.issubdtype(x.dtype, jnp.integer):
        return x.astype(jnp.float32)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise TypeError(f"ops.{who}: {what} has dtype {x.dtype}; it must be an integer or a float "
                        "Tensor (integers are taken as float32)")
    return x


def _taylor(fn, xs, series, who):
    """``(output, output series)`` of ``fn(*xs)`` for the input ``series`` (one list of terms per input)."""
    f, written, parent = pure(fn, (), xs, range(len(xs)))
    box = {}

    def g(*xs):
        out, wv = f([], list(xs))
        box["single"] = not isinstance(out, (tuple, list))
        return (tuple(out) if isinstance(out, list) else out), wv

    # Scaled here by exact factorials (JAX's own scaling computes them as exp(lgamma(k + 1))).
    coeffs = tuple([t / math.factorial(k + 1) for k, t in enumerate(terms)] for terms in series)
    saved, modes.taylor = modes.taylor, who
    try:
        (out, wv), (out_c, _) = jet_rules.run(lambda: _jet.jet(g, tuple(xs), coeffs, factorial_scaled=False))
    finally:
        modes.taylor = saved
    finish(parent, written, wv)
    out_s = jax.tree_util.tree_map(lambda terms: [t * math.factorial(k + 1) for k, t in enumerate(terms)],
                                   out_c, is_leaf=lambda t: isinstance(t, list))
    return out, out_s, box["single"]


def _check_order(order):
    if isinstance(order, bool) or not isinstance(order, int):
        raise TypeError(f"ops.derivative: order must be an int, got {type(order).__name__}")
    if order < 1:
        raise ValueError(f"ops.derivative: order must be at least 1, got {order}")


def jet(fn, primals, series):
    """``(out_primals, out_series)``: a Taylor series pushed through ``fn``, MindSpore's ``ops.jet``.

    ``primals`` is a Tensor or a tuple of Tensors (the inputs of ``fn``);
    ``series`` is shaped alike, each element holding the input's 1st to
    ``n``-th derivatives stacked on axis 0 (a single term may be given
    unstacked). The result holds ``fn(*primals)`` and its 1st to ``n``-th
    derivatives, stacked on axis 0; for a function with several outputs, a
    list of each. Integer inputs are taken as float32.

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> x = ms.Tensor([0., 1.])
    >>> out, s = ops.jet(ops.exp, x, ms.Tensor([[1., 1.], [0., 0.]]))
    >>> s.shape, s[1]                    # exp'' = exp
    ((2, 2), Array([1.       , 2.7182817], dtype=float32))
    """
    tensor_in = _is_tensor(primals) and _is_tensor(series)
    if not tensor_in and not (isinstance(primals, (tuple, list)) and isinstance(series, (tuple, list))):
        raise TypeError(f"ops.jet: primals and series must both be Tensors or both tuples of Tensors, got "
                        f"{type(primals).__name__} and {type(series).__name__}")
    ps, ss = ((primals,), (series,)) if tensor_in else (tuple(primals), tuple(series))
    if len(ps) != len(ss):
        raise ValueError(f"ops.jet: {len(ps)} primal(s) but {len(ss)} series; give one series per primal")
    xs, terms = [], []
    for i, (p, s) in enumerate(zip(ps, ss)):
        p0, s0 = jnp.asarray(_to_values(p)), jnp.asarray(_to_values(s))
        if p0.dtype != s0.dtype:
            raise TypeError(f"ops.jet: primals[{i}] is {p0.dtype} but series[{i}] is {s0.dtype}; they must "
                            "have the same dtype")
        x, s = _real(p0, "jet", f"primals[{i}]"), _real(s0, "jet", f"series[{i}]")
        if s.shape == x.shape:
            s = s[None]
        elif s.shape[1:] != x.shape:
            raise ValueError(f"ops.jet: series[{i}] has shape {s.shape}; each of its terms (axis 0) must "
                             f"have the shape of primals[{i}], {x.shape}")
        xs.append(x)
        terms.append(list(s))
    if len({len(t) for t in terms}) > 1:
        raise ValueError(f"ops.jet: the series have different numbers of terms, {[len(t) for t in terms]}; "
                         "give every input the same order")
    out, out_s, single = _taylor(fn, xs, terms, "jet")
    if single:
        return out, jnp.stack(out_s)
    return list(out), [jnp.stack(t) for t in out_s]


def derivative(fn, primals, order):
    """``(out_primals, out_series)``: ``fn(*primals)`` and its ``order``-th derivative, MindSpore's ``ops.derivative``.

    Every input moves along the all-ones direction (first-order series 1,
    higher ones 0), so for one input this is the elementwise ``order``-th
    derivative of an elementwise function. One Taylor-mode pass; integer inputs
    are taken as float32; several outputs give lists.

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> ops.derivative(lambda x: x ** 4, ms.Tensor([1., 2.]), 4)
    (Array([ 1., 16.], dtype=float32), Array([24., 24.], dtype=float32))
    """
    _check_order(order)
    if isinstance(primals, (tuple, list)):
        xs = [_real(p, "derivative", f"primals[{i}]") for i, p in enumerate(primals)]
    else:
        xs = [_real(primals, "derivative", "primals")]
    series = [[jnp.ones_like(x)] + [jnp.zeros_like(x)] * (order - 1) for x in xs]
    out, out_s, single = _taylor(fn, xs, series, "derivative")
    if single:
        return out, out_s[-1]
    return list(out), [t[-1] for t in out_s]


def linearize(fn, inputs):
    """``(output, jvp_fn)``, MindSpore's ``ops.linearize`` over ``jax.linearize``.

    ``jvp_fn(v)`` (``v`` shaped as ``inputs``: a Tensor, or a tuple/list of
    them) is the Jacobian-vector product at ``inputs``; the function is
    linearised once, at the Parameter values of the call, and not run again.
    Integer inputs follow MindSpore's rule (the JVP is computed as if they were
    real and cast to the output's dtype).

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> out, jvp_fn = ops.linearize(lambda x, y: x * y, (ms.Tensor([1., 2.]), ms.Tensor([3., 4.])))
    >>> jvp_fn((ms.Tensor([1., 0.]), ms.Tensor([0., 1.])))
    Array([3., 2.], dtype=float32)
    """
    if isinstance(inputs, (tuple, list)):
        xs, single = [_to_values(x) for x in inputs], False
    elif _is_tensor(inputs):
        xs, single = [_to_values(inputs)], True
    else:
        raise TypeError(f"ops.linearize: inputs must be a Tensor or a tuple/list of Tensors, got "
                        f"{type(inputs).__name__}")
    for i, x in enumerate(xs):
        if not _is_tensor(x):
            raise TypeError(f"ops.linearize: inputs[{i}] is a {type(x).__name__}; give Tensors")
    xs = [jnp.asarray(x) for x in xs]
    state = {}

    def run(g, dxs, positions, ints):
        state["positions"], state["ints"] = positions, ints
        return jax.linearize(g, dxs, has_aux=True)

    (out, lin, (_, wv)), done, dtypes = forward(fn, xs, False, "linearize", run)
    done(wv)
    shown = out if dtypes is None else cast_like(out, dtypes[0])
    positions, ints = state["positions"], state["ints"]

    def jvp_fn(v):
        if single and not isinstance(v, (tuple, list)):
            v = (v,)
        if not isinstance(v, (tuple, list)):
            raise TypeError(f"linearize's jvp_fn: give one tangent per input of {_name(fn)} as a tuple or "
                            f"list of {len(xs)} Tensors, got {type(v).__name__}")
        if len(v) != len(xs):
            raise ValueError(f"linearize's jvp_fn: {len(xs)} input(s) but {len(v)} tangent(s); give one per input")
        vs = [_like(t, x, "v", i) for i, (t, x) in enumerate(zip(v, xs))]
        tangent = lin([to_float(vs[k]) if k in ints else vs[k] for k in positions])
        return tangent if dtypes is None else cast_like(tangent, dtypes[0])

    return shown, jvp_fn
