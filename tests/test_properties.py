"""Property tests: pytree round-trips, jit == eager, grad == jax.grad, no aliasing."""

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cellkit as ms
from cellkit import nn, ops

SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Each example of these compiles a fresh model: fewer, to keep CI fast.
COMPILING = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class Leaf(nn.Cell):
    def __init__(self, shape, scale, requires_grad):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor(np.full(shape, scale, np.float32)), requires_grad=requires_grad)
        self.scale = scale

    def construct(self, x):
        return x * self.scale + self.w.sum()


class Node(nn.Cell):
    def __init__(self, children, tag):
        super().__init__()
        for i, c in enumerate(children):
            setattr(self, f"c{i}", c)
        self.tag = tag
        self.n = len(children)

    def construct(self, x):
        for i in range(self.n):
            x = getattr(self, f"c{i}")(x)
        return x


leaves = st.builds(Leaf, st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple),
                   st.floats(-2, 2, width=32), st.booleans())
trees = st.recursive(leaves, lambda kids: st.builds(Node, st.lists(kids, min_size=1, max_size=3),
                                                     st.sampled_from(["a", "b"])), max_leaves=6)


@SETTINGS
@given(trees)
def test_flatten_unflatten_round_trip(cell):
    leaves_, treedef = jax.tree_util.tree_flatten(cell)
    rebuilt = jax.tree_util.tree_unflatten(treedef, leaves_)
    assert type(rebuilt) is type(cell)
    assert jax.tree_util.tree_structure(rebuilt) == treedef
    assert [p.name for p in rebuilt.get_parameters()] == [p.name for p in cell.get_parameters()]
    assert [p.requires_grad for p in rebuilt.get_parameters()] == [p.requires_grad for p in cell.get_parameters()]
    for a, b in zip(jax.tree_util.tree_leaves(rebuilt), leaves_):
        np.testing.assert_array_equal(a, b)
    x = jnp.ones(())
    np.testing.assert_allclose(rebuilt(x), cell(x), rtol=1e-6)
    assert repr(rebuilt) == repr(cell)


def _stack(widths, acts, seed):
    ms.set_seed(seed)
    layers = []
    for i, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
        layers.append(nn.Dense(a, b))
        layers.append({"relu": nn.ReLU(), "tanh": nn.Tanh(), "gelu": nn.GELU()}[acts[i % len(acts)]])
    return nn.SequentialCell(layers)


stacks = st.tuples(st.lists(st.integers(1, 5), min_size=2, max_size=4),
                   st.lists(st.sampled_from(["relu", "tanh", "gelu"]), min_size=1, max_size=3),
                   st.integers(0, 1000))


@COMPILING
@given(stacks)
def test_jit_equals_eager(spec):
    widths, acts, seed = spec
    net = _stack(widths, acts, seed)
    x = jnp.asarray(np.random.default_rng(seed).normal(size=(3, widths[0])), jnp.float32)
    np.testing.assert_allclose(ms.jit(lambda n, x: n(x))(net, x), net(x), rtol=1e-5, atol=1e-6)
    captured = ms.jit(lambda x: net(x))
    np.testing.assert_allclose(captured(x), net(x), rtol=1e-5, atol=1e-6)


@COMPILING
@given(stacks)
def test_value_and_grad_equals_jax_on_the_pure_layer(spec):
    widths, acts, seed = spec
    net = _stack(widths, acts, seed)
    x = jnp.asarray(np.random.default_rng(seed + 1).normal(size=(3, widths[0])), jnp.float32)
    params = net.trainable_params()
    value, grads = ms.value_and_grad(lambda x: jnp.sum(net(x) ** 2), None, params)(x)
    ref_value, ref_grads = jax.value_and_grad(lambda n: jnp.sum(n(x) ** 2))(net)
    np.testing.assert_allclose(value, ref_value, rtol=1e-5)
    ref = [p.value for p in ref_grads.get_parameters()]
    assert len(ref) == len(grads)
    for g, r in zip(grads, ref):
        np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-6)


@SETTINGS
@given(st.lists(st.floats(-10, 10, width=32), min_size=1, max_size=6), st.integers(0, 5))
def test_clone_and_set_data_never_alias(values, index):
    index = index % len(values)
    source = np.array(values, np.float32)
    p = ms.Parameter(ms.Tensor(source), name="p")
    q = p.clone()
    r = ms.Parameter(ms.Tensor([0.0] * len(values)), name="r")
    r.set_data(source)
    source[index] += 1.0  # mutate the NumPy input
    q[index] = 123.0      # mutate the clone
    ops.assign(r, r + 1)  # mutate the set_data target
    np.testing.assert_array_equal(p.asnumpy(), np.array(values, np.float32))
    assert float(q[index]) == 123.0
    np.testing.assert_array_equal(r.asnumpy(), np.array(values, np.float32) + 1)
