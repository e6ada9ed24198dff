"""MindSpore's loop Primitives ``ForiLoop``, ``WhileLoop`` and ``Scan`` over ``jax.lax``, with state.

The loop body may read any Parameter and assign some: a first abstract trace of
the body (``jax.eval_shape``) finds the Parameters it assigns; they become part of
the loop's carry (bound in the body's frame, so each iteration sees the last
one's values), and their final values are written back after the loop, to the
enclosing frame or to the Parameters. A random op in the body advances the key
on every iteration.

>>> import cellkit as ms
>>> from cellkit import ops
>>> total = ms.Parameter(ms.Tensor(0.0), name="total")
>>> def body(i, x):
...     ops.assign(total, total + x.sum())
...     return x * 2
>>> ops.ForiLoop()(0, 3, body, ms.Tensor([1., 2.]))
Array([ 8., 16.], dtype=float32)
>>> total.asnumpy()
array(21., dtype=float32)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ..parameter import local
from .frame import _to_values
from .transforms import finish, pure

__all__ = ["ForiLoop", "WhileLoop", "Scan"]
EAGER_LOOPS = True   # (JAX loops from Python: cellkit.tracing)


def _values(tree):
    return jax.tree_util.tree_map(_to_values, tree, is_leaf=lambda x: hasattr(x, "_value"))


def _assigned(fn, args):
    """The Parameters ``fn(*args)`` assigns (found by one abstract trace)."""
    f, written, _ = pure(fn, (), args, range(len(args)))
    jax.eval_shape(lambda xs: f([], xs)[0], list(args))
    return tuple(written)


def _stateful_body(fn, state, n_args, who):
    """``body(state values, *args) -> (fn's output, new state values)``; ``fn`` runs in a frame
    binding ``state`` (the Parameters it assigns) to the carried values."""
    index = {id(p): k for k, p in enumerate(state)}

    def body(svals, *args):
        f, written, _ = pure(fn, state, args, range(n_args))
        out, wv = f(list(svals), list(args))
        new = list(svals)
        for p, v in zip(written, wv):
            k = index.get(id(p))
            if k is None:
                raise RuntimeError(f"{who}: the loop body assigned Parameter '{p.name}' on this "
                                   "iteration but not on the first; assign the same Parameters every time")
            new[k] = jnp.asarray(v, jnp.result_type(svals[k]))
        return out, new

    return body


def _like_init(new, init):
    """The body's output with the init's container types (a list where the init had a tuple...)."""
    if isinstance(init, (tuple, list)) and isinstance(new, (tuple, list)) and type(new) is not type(init):
        new = type(init)(new)
    return jax.tree_util.tree_map(lambda n, i: jnp.asarray(n, jnp.result_type(i)), new, init)


class ForiLoop:
    """``ForiLoop()(lower, upper, loop_func, init_val, unroll=True)``: ``val = loop_func(i, val)`` for
    ``i`` in ``[lower, upper)`` (``jax.lax.fori_loop``); differentiable when the bounds are Python ints.
    ``unroll``: MindSpore's bool is a compile hint and is ignored; an int is ``jax.lax``'s unroll factor."""

    def __init__(self):
        pass  # MindSpore's loop Primitives take no constructor arguments

    def __call__(self, lower, upper, loop_func, init_val, unroll=True):
        init = _values(init_val)
        state = _assigned(loop_func, (jnp.asarray(lower), init))
        body = _stateful_body(loop_func, state, 2, "ForiLoop")

        def step(i, carry):
            val, svals = carry
            out, svals = body(svals, i, val)
            return _like_init(out, val), svals

        val, svals = jax.lax.fori_loop(lower, upper, step, (init, [p.value for p in state]),
                                       unroll=_unroll(unroll))
        finish(_parent(), state, svals)
        return val


class WhileLoop:
    """``WhileLoop()(cond_func, loop_func, init_val)``: ``val = loop_func(val)`` while
    ``cond_func(val)`` (``jax.lax.while_loop``; not differentiable in reverse mode, as in JAX)."""

    def __init__(self):
        pass  # MindSpore's loop Primitives take no constructor arguments

    def __call__(self, cond_func, loop_func, init_val):
        init = _values(init_val)
        state = _assigned(loop_func, (init,))
        body = _stateful_body(loop_func, state, 1, "WhileLoop")
        cond = _stateful_body(cond_func, state, 1, "WhileLoop's cond_func")

        def step(carry):
            val, svals = carry
            out, svals = body(svals, val)
            return _like_init(out, val), svals

        def test(carry):
            val, svals = carry
            out, new = cond(svals, val)
            return jnp.asarray(out).reshape(())

        val, svals = jax.lax.while_loop(test, step, (init, [p.value for p in state]))
        finish(_parent(), state, svals)
        return val


class Scan:
    """``Scan()(loop_func, init, xs, length=None, unroll=True)``: ``carry, y = loop_func(carry, x)``
    over the leading axis of ``xs``; returns ``(carry, stacked ys)`` (``jax.lax.scan``)."""

    def __init__(self):
        pass  # MindSpore's loop Primitives take no constructor arguments

    def __call__(self, loop_func, init, xs, length=None, unroll=True):
        init = _values(init)
        xs = _values(xs)
        first = None if xs is None else jax.tree_util.tree_map(lambda a: a[0], xs)
        state = _assigned(loop_func, (init, first))
        body = _stateful_body(loop_func, state, 2, "Scan")

        def step(carry, x):
            c, svals = carry
            (new_c, y), svals = body(svals, c, x)
            return (_like_init(new_c, c), svals), y

        (carry, svals), ys = jax.lax.scan(step, (init, [p.value for p in state]), xs, length=length,
                                          unroll=_unroll(unroll))
        finish(_parent(), state, svals)
        return carry, ys


def _parent():
    return local.frame


def _unroll(unroll) -> int:
    """MindSpore's ``unroll=True/False`` is a compile-time hint (ignored: the loop stays rolled, one
    body compiled); an int is ``jax.lax``'s unroll factor."""
    return 1 if isinstance(unroll, bool) or unroll is None else int(unroll)
