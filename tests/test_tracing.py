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


# ----- families: a loop-free op traced again for new shapes, JAX's jitted functions inline ----------

def _attention(q, k, mask):
    s = jnp.where(mask, jnp.matmul(q, jnp.swapaxes(k, -1, -2)) / jnp.sqrt(q.shape[-1]), -1e9)
    return jax.nn.softmax(s, axis=-1).mean(axis=1), jnp.concatenate([q, k], axis=-1)


def _layer_norm(x, g, b):
    m, v = jnp.mean(x, -1, keepdims=True), jnp.var(x, -1, keepdims=True)
    return (x - m) / jnp.sqrt(v + 1e-5) * g + b


def _cross_entropy(logits, labels):
    return -jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=1).mean()


def _conv_gelu(x, w):
    y = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"))
    return jnp.clip(jax.nn.gelu(y), -3, 3) ** 2


def _spec(*shapes):
    return [jax.ShapeDtypeStruct(s, d) for s, d in shapes]


FAMILIES = {
    "attention": (_attention, lambda n: _spec(((2, n, 8), jnp.float32), ((2, n, 8), jnp.float32),
                                              ((2, n, n), jnp.bool_))),
    "layer norm": (_layer_norm, lambda n: _spec(((n, 16), jnp.float32), ((16,), jnp.float32),
                                                ((16,), jnp.float32))),
    "cross entropy": (_cross_entropy, lambda n: _spec(((n, 5), jnp.float32), ((n,), jnp.int32))),
    "conv and gelu": (_conv_gelu, lambda n: _spec(((1, 2, n, n), jnp.float32), ((3, 2, 3, 3), jnp.float32))),
}


_CALLS = ("jit", "pjit", "closed_call")


def _concrete(specs, seed):
    rng = np.random.default_rng(seed)
    return [rng.random(s.shape) < 0.7 if s.dtype == jnp.bool_ else
            rng.integers(0, 5, s.shape).astype(s.dtype) if s.dtype == jnp.int32 else
            rng.normal(size=s.shape).astype(s.dtype) for s in specs]


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_a_loop_free_family_is_traced_again_inline_to_the_same_values(name, monkeypatch):
    # (Inline, a jitted function's Python scalars stay literals: jnp.var's ddof, jnp.where's -1e9. The
    # equations differ there, not the values: both jaxprs are evaluated equation by equation.)
    from cellkit import host_ops
    monkeypatch.setattr(tracing, "_loop_free", {})
    fn, specs = FAMILIES[name]
    first, _ = tracing.trace(fn, *specs(4), family=("test", name))
    assert _describe(first) == _describe(jax.make_jaxpr(fn)(*specs(4)))   # (the first: make_jaxpr's own)
    assert tracing._loop_free == {("test", name): True}
    again, shapes = tracing.trace(fn, *specs(6), family=("test", name))
    want, want_shapes = jax.make_jaxpr(fn, return_shape=True)(*specs(6))
    assert any(e.primitive.name in _CALLS for e in want.jaxpr.eqns)
    assert not any(e.primitive.name in _CALLS for e in again.jaxpr.eqns)   # (inline: no nested jaxprs)
    assert jax.tree_util.tree_structure(shapes) == jax.tree_util.tree_structure(want_shapes)
    assert jax.tree_util.tree_leaves(shapes) == jax.tree_util.tree_leaves(want_shapes)   # (weak types too)
    args = _concrete(specs(6), 0)
    got = host_ops.eval_inlined(again.jaxpr, again.consts, *args)
    expected = host_ops.eval_inlined(want.jaxpr, want.consts, *args)
    for g, w in zip(got, expected):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def _scan_sum(x):
    return jax.lax.scan(lambda c, v: (c + v, c * v), jnp.zeros((), x.dtype), x)


def _while_in_cond(x):
    def body(v):
        return jax.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2), (0, v))[1]
    return jax.jit(lambda y: jax.lax.cond(y.sum() > 0, body, lambda v: v, y))(x)


@pytest.mark.parametrize("fn", [_scan_sum, _while_in_cond], ids=["scan", "while inside cond inside jit"])
def test_a_family_holding_a_loop_is_never_traced_inline(fn, monkeypatch):
    monkeypatch.setattr(tracing, "_loop_free", {})
    first, _ = tracing.trace(fn, jnp.ones(3), family="looped")
    assert tracing.has_loop(first) and tracing._loop_free == {"looped": False}
    again, _ = tracing.trace(fn, jnp.ones(5), family="looped")
    assert _describe(again) == _describe(jax.make_jaxpr(fn)(jnp.ones(5)))   # (no loop unrolled)


def test_has_loop_and_the_families_bound(monkeypatch):
    assert not tracing.has_loop(jax.make_jaxpr(_layer_norm)(*FAMILIES["layer norm"][1](3)))
    assert tracing.has_loop(jax.make_jaxpr(lambda x: jax.jit(_scan_sum)(x))(jnp.ones(2)))
    monkeypatch.setattr(tracing, "_loop_free", {})
    monkeypatch.setattr(tracing, "MAX_FAMILIES", 2)
    for i in range(3):
        tracing.trace(jnp.sin, jnp.ones(i + 1), family=i)
    assert tracing._loop_free == {2: True}   # (full: forgotten, then the new one kept)


def test_which_families_are_declared_free_of_loops():
    from cellkit import ops
    from cellkit.nn.layer import rnns
    from cellkit.ops.operations import loss_ops
    from cellkit.tiered_jit import tiered_jit
    cases = {
        "jax.numpy function": ((jnp.matmul, ()), True),
        "jax.nn function, in a grad's split": (("jvp", (jax.nn.softmax, ())), True),
        "cellkit op": ((ops.zeros, ()), True),
        "a loss of a module that names its looping ops": ((ops.cross_entropy, ()), True),
        "ctc_loss, named": ((ops.ctc_loss, ()), False),
        "a Primitive's function calling ctc_loss": ((loss_ops._ctc_v2, ()), False),
        "a module that loops throughout": ((ops.bessel_j0, ()), False),
        "a layer's compiled core there": ((tiered_jit(rnns._stacked_rnn), ()), False),
        "a user's function": ((_scan_sum, ()), False),
        "not an op": ("looped", False),
    }
    got = {name: tracing.declared_loop_free(family) for name, (family, _) in cases.items()}
    assert got == {name: want for name, (_, want) in cases.items()}


def test_a_declared_family_is_traced_inline_from_its_first_trace(monkeypatch):
    from cellkit import host_ops
    monkeypatch.setattr(tracing, "_loop_free", {})
    fn = _layer_norm
    first, _ = tracing.trace(fn, *FAMILIES["layer norm"][1](4), family=(jnp.matmul, ("layer norm",)))
    want = jax.make_jaxpr(fn)(*FAMILIES["layer norm"][1](4))
    assert any(e.primitive.name in _CALLS for e in want.jaxpr.eqns)
    assert not any(e.primitive.name in _CALLS for e in first.jaxpr.eqns)
    args = _concrete(FAMILIES["layer norm"][1](4), 1)
    for g, w in zip(host_ops.eval_inlined(first.jaxpr, first.consts, *args),
                    host_ops.eval_inlined(want.jaxpr, want.consts, *args)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


_LOOPS = {"scan", "fori_loop", "while_loop", "map"}


def _loop_calls(tree):
    """Names of the top-level functions of a module's syntax tree that call a JAX loop (``lax.<loop>``)."""
    import ast
    found = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(node):
                if (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in _LOOPS
                        and (isinstance(sub.func.value, ast.Name) and sub.func.value.id == "lax"
                             or isinstance(sub.func.value, ast.Attribute) and sub.func.value.attr == "lax")):
                    found.add(node.name)
    return found


def test_every_cellkit_function_that_loops_is_named_in_its_modules_eager_loops():
    # (else its op's first eager trace would run the loop in Python, unrolled: the same values, slowly)
    import ast
    import importlib
    import pathlib
    root = pathlib.Path(tracing.__file__).parent
    trees = {}
    for path in root.rglob("*.py"):
        module = "cellkit." + ".".join(path.relative_to(root).with_suffix("").parts)
        trees[module.removesuffix(".__init__")] = ast.parse(path.read_text())
    looping = {m: _loop_calls(t) for m, t in trees.items()}
    # (and the top-level functions that call one of those by name, in any module, to the last caller)
    while True:
        names = {n for found in looping.values() for n in found}
        grown = False
        for module, tree in trees.items():
            for node in tree.body:
                if isinstance(node, ast.FunctionDef) and node.name not in looping[module] and any(
                        (sub.attr if isinstance(sub, ast.Attribute) else sub.id) in names - {node.name}
                        for sub in ast.walk(node) if isinstance(sub, (ast.Attribute, ast.Name))):
                    looping[module].add(node.name)
                    grown = True
        if not grown:
            break
    missing = []
    for module, found in sorted(looping.items()):
        if not found:
            continue
        declared = getattr(importlib.import_module(module), "EAGER_LOOPS", False)
        missing += [f"{module}.{n}" for n in sorted(found) if declared is not True and n not in declared]
    assert not missing, f"name these in their module's EAGER_LOOPS: {missing}"
