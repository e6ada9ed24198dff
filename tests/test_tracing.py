"""cellkit.tracing.trace gives what jax.make_jaxpr(fn, return_shape=True) gives."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from cellkit import tracing

CONST = np.arange(4.0, dtype=np.float32)


@jax.custom_jvp
def _soft(x):
    return jnp.log1p(jnp.exp(x))


_soft.defjvp(lambda primals, tangents: (_soft(primals[0]), tangents[0] * jax.nn.sigmoid(primals[0])))

CASES = {
    "nested outputs": (lambda x, y: {"a": (x @ y, x.T), "b": [jnp.tanh(y)]},
                       (jnp.ones((2, 3)), jnp.ones((3, 2)))),
    "python scalars (weak types)": (lambda x, s, n: x * s + n, (jnp.ones(3), 2.5, 3)),
    "numpy float64 input": (lambda x: jnp.sum(x ** 2), (np.ones((2, 2), np.float64),)),
    "shape structs": (lambda x, i: jnp.take(x, i, axis=0),
                      (jax.ShapeDtypeStruct((5, 4), jnp.float32), jax.ShapeDtypeStruct((3,), jnp.int32))),
    "closed-over constant": (lambda x: x + CONST, (jnp.zeros(4),)),
    "nested jit and custom jvp": (lambda x: jax.jit(lambda z: _soft(z) * 2)(x).mean(), (jnp.ones((2, 3)),)),
    "jvp inside": (lambda x, t: jax.jvp(jnp.sin, (x,), (t,)), (jnp.ones(3), jnp.ones(3))),
    "integer and bool ops": (lambda i, b: jnp.where(b, i // 2, i % 3).astype(jnp.int8),
                             (jnp.arange(6, dtype=jnp.int32), jnp.ones(6, bool))),
    "no inputs": (lambda: jnp.arange(3) * 2, ()),
}


def _describe(closed):
    vs = (*closed.jaxpr.constvars, *closed.jaxpr.invars, *closed.jaxpr.outvars)
    return (str(closed), [(v.aval.shape, v.aval.dtype, v.aval.weak_type) for v in vs],
            [np.asarray(c).tolist() for c in closed.consts])


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_jaxpr_and_shapes_as_make_jaxpr(name):
    fn, args = CASES[name]
    closed, shapes = tracing.trace(fn, *args)
    want_closed, want_shapes = jax.make_jaxpr(fn, return_shape=True)(*args)
    assert _describe(closed) == _describe(want_closed)
    assert jax.tree_util.tree_structure(shapes) == jax.tree_util.tree_structure(want_shapes)
    assert jax.tree_util.tree_leaves(shapes) == jax.tree_util.tree_leaves(want_shapes)
    flat = [a for a in jax.tree_util.tree_leaves(args) if not isinstance(a, jax.ShapeDtypeStruct)]
    if len(flat) == len(jax.tree_util.tree_leaves(args)):   # (concrete arguments: the jaxpr runs to fn's values)
        got = jax.core.eval_jaxpr(closed.jaxpr, closed.consts, *flat)
        want = jax.tree_util.tree_leaves(fn(*args))
        for g, w in zip(got, want):   # (op by op here, fused there: float32 rounding apart)
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def test_the_direct_path_is_taken_on_this_jax():
    tracing.trace(lambda x: x + 1, jnp.ones(2))
    assert tracing._direct[0] is not None


def test_an_error_in_the_function_propagates():
    def bad(x):
        raise KeyError("inside the op")
    with pytest.raises(KeyError, match="inside the op"):
        tracing.trace(bad, jnp.ones(2))
    with pytest.raises(TypeError):
        tracing.trace(lambda x: x + jnp.ones(3), jnp.ones(2))   # (shapes that do not broadcast)


def test_another_jax_falls_back_to_make_jaxpr(monkeypatch):
    def broken():
        raise AttributeError("no such internal")
    monkeypatch.setattr(tracing, "_direct_trace", broken)
    monkeypatch.setattr(tracing, "_direct", [])
    closed, shapes = tracing.trace(lambda x: jnp.cos(x), jnp.ones(3))
    assert tracing._direct == [None]
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["cos"] and shapes.shape == (3,)


def test_a_direct_path_that_differs_is_not_used(monkeypatch):
    def differs():
        return lambda fn, args: jax.make_jaxpr(lambda *a: 0.0, return_shape=True)(*args)
    monkeypatch.setattr(tracing, "_direct_trace", differs)
    monkeypatch.setattr(tracing, "_direct", [])
    closed, _ = tracing.trace(lambda x: jnp.cos(x), jnp.ones(3))
    assert tracing._direct == [None] and [e.primitive.name for e in closed.jaxpr.eqns] == ["cos"]
