"""``grad`` and ``value_and_grad`` with MindSpore's conventions, over ``jax.vjp``.

The differentiated function runs in a nested :class:`~cellkit.engine.frame.Frame`
that binds the weights to the values ``jax.vjp`` traces. Writes made inside it
(BatchNorm statistics, the random key) come out as auxiliary outputs and are
applied to the enclosing frame (or stored, at the top) after the call.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import context
from ..cell import Cell
from ..parameter import Parameter, local
from ..rewrite import rewrite_function
from ..tensor import host_to_device
from .backward import run_backward
from .capture import Transformed
from .frame import _apply_writes, _Rediscover, _run_in_frame, _to_values
from .jit_function import JitFunction
from .int_inputs import cast_back, cast_like, is_int, is_scalar, no_float0, out_dtypes, to_float, weak, zeros_of

__all__ = ["grad", "value_and_grad", "GradFunction"]


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


def _sens_like(main, sens):
    """The caller's sensitivity shaped as the output ``main`` (a list for a tuple output is fine)."""
    sens = _to_values(sens)
    if isinstance(main, tuple) and isinstance(sens, list):
        sens = tuple(sens)
    try:
        return jax.tree_util.tree_map(lambda m, s: jnp.broadcast_to(jnp.asarray(s, jnp.result_type(m)), jnp.shape(m)),
                                      main, sens)
    except (ValueError, TypeError) as err:
        raise ValueError("grad(sens_param=True): the sensitivity (last input) must have the structure and "
                         f"shapes of the output, {jax.tree_util.tree_map(jnp.shape, main)}; got "
                         f"{jax.tree_util.tree_map(jnp.shape, sens)}") from err


def _ones_like(x):
    x = jnp.asarray(x)
    if jnp.issubdtype(x.dtype, jnp.inexact):
        if isinstance(x, jax.core.Tracer) or x.weak_type:
            return jnp.ones_like(x)
        return host_to_device(np.ones(x.shape, x.dtype))   # (no compiled fill per shape)
    return np.zeros(x.shape, jax.dtypes.float0)


class GradFunction(Transformed):
    """What ``grad``/``value_and_grad`` return: call it like the function it differentiates."""

    def __init__(self, fn, grad_position, weights, has_aux, return_value, return_ids=False,
                 sens_param=False):
        if grad_position is None and weights is None:
            raise ValueError("grad: grad_position and weights cannot both be None; there would be "
                             "nothing to differentiate with respect to")
        self.fn = fn = rewrite_function(fn)
        self.grad_position = grad_position
        self.positions = _positions(grad_position)
        self.weights, self.single_weight = _weights_tuple(weights)
        self.has_aux = has_aux
        self.return_value = return_value
        self.return_ids = return_ids
        self.sens_param = bool(sens_param)
        functools.update_wrapper(self, fn, updated=())

    def _differentiate(self, args, kwargs, positions=None, sens=None):
        """``(output, input gradients, weight gradients, positions differentiated)``.

        Positions holding Python numbers get no gradient (MindSpore's rule) and are left out;
        integer Tensors follow :mod:`~cellkit.engine.int_inputs`."""
        if positions is None:
            positions = self.positions or ()
        for i in positions:
            if not -len(args) <= i < len(args):
                raise IndexError(f"grad: grad_position {i} is out of range for {len(args)} "
                                 f"positional inputs of {getattr(self.fn, '__name__', 'the function')}")
        positions = tuple(i for i in positions if not is_scalar(args[i]))
        xs = [_to_values(args[i]) for i in positions]
        ints = [k for k, x in enumerate(xs) if is_int(x)]
        if not ints:
            out, gx, gw = self._vjp(args, kwargs, positions, xs, (), sens)
            return out, gx, gw, positions
        try:
            out, gx, gw = self._vjp(args, kwargs, positions, xs, ints, sens)
        except _Rediscover:
            raise
        except Exception:  # noqa: BLE001 - the function needs the integers as integers: no gradient flows
            kept = [i for k, i in enumerate(positions) if k not in ints]
            out, gk, gw = self._vjp(args, kwargs, tuple(kept), [xs[k] for k in range(len(xs)) if k not in ints],
                                    (), sens)
            it = iter(gk)
            gx = [zeros_of(x) if k in ints else next(it) for k, x in enumerate(xs)]
            return out, gx, gw, positions
        gx = [cast_back(g, xs[k].dtype) if k in ints else g for k, g in enumerate(gx)]
        if self.return_value or self.has_aux:
            out = cast_like(out, self._out_dtypes(args, kwargs))
        return out, gx, gw, positions

    def _out_dtypes(self, args, kwargs):
        parent = local.frame
        staged = parent.staged if parent is not None else False

        def run(*a):
            return _run_in_frame(parent, staged, (), (), self.fn, a, (), (), kwargs)[0]

        return out_dtypes(run, *[_to_values(a) for a in args])

    def _vjp(self, args, kwargs, positions, xs, ints, sens):
        parent = local.frame
        weights = self.weights or ()
        wvals = [p.value for p in weights]
        if ints:
            xs = [to_float(x) if k in ints else x for k, x in enumerate(xs)]
        fn, has_aux = self.fn, self.has_aux
        written = []

        staged = parent.staged if parent is not None else False

        def f(wvals, xs):
            if ints:
                xs = [weak(x) if k in ints else x for k, x in enumerate(xs)]
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
        ct = jax.tree_util.tree_map(_ones_like, main) if sens is None else _sens_like(main, sens)
        gw, gx = vjp_fn(ct) if parent is not None else run_backward(vjp_fn, ct)
        _apply_writes(parent, list(zip(written, write_vals)))
        gw = [g if p.requires_grad else jnp.zeros_like(g) for p, g in zip(weights, gw)]
        return out, no_float0(list(gx), list(xs)), gw

    def _package(self, gx, gw, positions):
        if self.return_ids:
            gx = tuple(zip(positions, gx))
            gw = tuple(zip((p.name for p in self.weights or ()), gw))
        # MindSpore returns a bare gradient where one position is differentiated, (0,) included,
        # and () where the only positions held Python numbers.
        single_x = self.positions is not None and len(gx) == 1
        if self.weights is None:
            return gx[0] if single_x else tuple(gx)
        gw = gw[0] if self.single_weight else tuple(gw)
        if self.positions is None:
            return gw
        return (gx[0] if single_x else tuple(gx)), gw

    def __call__(self, *args, **kwargs):
        if local.frame is None and context.graph[0] and _graph_compilable(args, kwargs):
            # GRAPH_MODE: forward and backward compiled together, as MindSpore compiles a gradient
            # function in graph mode (the forward's Python runs when traced, not on every call).
            jitted = self.__dict__.get("_graph_jit")
            if jitted is None:
                jitted = self._graph_jit = JitFunction(self._call)
            return jitted(*args, **kwargs)
        return self._call(*args, **kwargs)

    def _call(self, *args, **kwargs):
        sens = None
        if self.sens_param:
            if not args:
                raise TypeError(f"grad(sens_param=True): call {getattr(self.fn, '__name__', 'the function')} "
                                "with its inputs followed by the sensitivity (the output's gradient)")
            args, sens = args[:-1], args[-1]
        out, gx, gw, positions = self._differentiate(args, kwargs, sens=sens)
        grads = self._package(gx, gw, positions)
        if self.return_value:
            return out, grads
        if self.has_aux:
            return grads, tuple(out[1:])
        return grads


def _graph_compilable(args, kwargs) -> bool:
    """Arrays (and Parameters) only: a Python number is a constant of MindSpore's graph and gets no
    gradient, which a traced argument would."""
    leaves = jax.tree_util.tree_leaves((args, kwargs), is_leaf=lambda x: isinstance(x, Parameter))
    return all(isinstance(x, (jax.Array, Parameter)) for x in leaves)


def grad(fn, grad_position=0, weights=None, has_aux=False, return_ids=False, sens_param=False) -> GradFunction:
    """Gradient of ``fn`` with MindSpore's conventions.

    ``grad_position`` (an int, a tuple of ints or None) picks the inputs;
    ``weights`` (a Parameter, a list/ParameterTuple, or None) the Parameters.
    Returns the input gradient(s), the weight gradients, or ``(inputs, weights)``
    when both are asked for. With ``has_aux=True`` ``fn`` returns
    ``(output, aux...)``, only ``output`` is differentiated, and the result is
    ``(gradients, aux)``. A non-scalar output is differentiated as the sum of
    its elements (MindSpore's all-ones sensitivity); with ``sens_param=True``
    the last input given to the returned function is the sensitivity instead. Parameters with
    ``requires_grad=False`` get zero gradients. Writes made inside ``fn``
    (running statistics, the random key) are applied after it.

    >>> import cellkit as ms
    >>> w = ms.Parameter(ms.Tensor([1., 2.]), name="w")
    >>> g = ms.grad(lambda x: (x * w).sum(), grad_position=0, weights=[w])
    >>> gx, (gw,) = g(ms.Tensor([3., 4.]))
    >>> gx, gw
    (Array([1., 2.], dtype=float32), Array([3., 4.], dtype=float32))
    """
    return GradFunction(fn, grad_position, weights, has_aux, return_value=False, return_ids=return_ids,
                        sens_param=sens_param)


def value_and_grad(fn, grad_position=0, weights=None, has_aux=False, return_ids=False,
                   sens_param=False) -> GradFunction:
    """Like :func:`grad` but returns ``(value, gradients)``; with ``has_aux`` the value is the whole tuple.

    >>> import cellkit as ms
    >>> w = ms.Parameter(ms.Tensor(3.), name="w")
    >>> vg = ms.value_and_grad(lambda x: (w * x * x, x), None, [w], has_aux=True)
    >>> (loss, aux), (gw,) = vg(ms.Tensor(2.))
    >>> float(loss), float(gw)
    (12.0, 4.0)
    """
    return GradFunction(fn, grad_position, weights, has_aux, return_value=True, return_ids=return_ids,
                        sens_param=sens_param)
