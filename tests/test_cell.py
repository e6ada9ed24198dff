import chex
import jax
import jax.numpy as jnp
from jax.test_util import check_grads
import numpy as np
import pytest

import cellkit as ms
from cellkit import nn, ops


class Inner(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor(np.ones((2, 2)), ms.float32), name="myw")
        self.b = ms.Parameter(ms.Tensor(np.zeros(2), ms.float32))

    def construct(self, x):
        return ops.matmul(x, self.w) + self.b


class Mid(nn.Cell):
    def __init__(self):
        super().__init__()
        self.c = ms.Parameter(ms.Tensor([1.0]), name="c")
        self.inner = Inner()
        self.d = nn.Dense(2, 3)

    def construct(self, x):
        return self.d(self.inner(x)) * self.c


class Outer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.mid = Mid()

    def construct(self, x):
        return self.mid(x)


def test_unnamed_parameter_takes_attribute_name_explicit_keeps_own():
    i = Inner()
    assert [(n, p.name) for n, p in i.parameters_and_names()] == [("w", "myw"), ("b", "b")]
    assert list(i.parameters_dict()) == ["myw", "b"]


def test_auto_prefix_renames_to_attribute_paths_like_mindspore():
    o = Outer()
    names = [(n, p.name) for n, p in o.parameters_and_names()]
    assert names == [("mid.c", "mid.c"), ("mid.inner.w", "mid.inner.w"), ("mid.inner.b", "mid.inner.b"),
                     ("mid.d.weight", "mid.d.weight"), ("mid.d.bias", "mid.d.bias")]
    assert list(o.parameters_dict()) == [n for n, _ in names]
    assert [p.name for p in o.trainable_params()] == [n for n, _ in names]
    assert [n for n, _ in o.cells_and_names()] == ["", "mid", "mid.inner", "mid.d"]
    assert list(o.mid.name_cells()) == ["inner", "d"]
    assert [type(c).__name__ for c in o.mid.cells()] == ["Inner", "Dense"]


def test_auto_prefix_false_keeps_names():
    class NoPrefix(nn.Cell):
        def __init__(self):
            super().__init__(auto_prefix=False)
            self.inner = Inner()
    n = NoPrefix()
    assert [p.name for p in n.get_parameters()] == ["myw", "b"]
    assert [k for k, _ in n.parameters_and_names()] == ["inner.w", "inner.b"]


def test_get_parameters_is_generator_and_trainable_split():
    net = Mid()
    net.c.requires_grad = False
    assert type(net.get_parameters()).__name__ == "generator"
    assert [p.name for p in net.untrainable_params()] == ["c"]
    assert "c" not in [p.name for p in net.trainable_params()]


def test_shared_parameter_listed_once():
    class Shared(nn.Cell):
        def __init__(self):
            super().__init__()
            p = ms.Parameter(ms.Tensor([1.0]), name="p")
            self.a = p
            self.b = p
    s = Shared()
    assert len(list(s.get_parameters())) == 1


def test_distinct_parameters_with_one_name_are_refused_where_they_collide():
    class Dup(nn.Cell):
        def __init__(self):
            super().__init__()
            self.x = ms.Parameter(ms.Tensor([1.0]), name="same")
            self.y = ms.Parameter(ms.Tensor([2.0]), name="same")
    d = Dup()
    assert len(list(d.get_parameters())) == 2  # traversal by path is fine
    with pytest.raises(ValueError, match="two different Parameters are both named 'same'"):
        d.parameters_dict()
    p, q = ms.Parameter(ms.Tensor([1.]), name="n"), ms.Parameter(ms.Tensor([1.]), name="n")
    holder = nn.Cell()
    with pytest.raises(ValueError, match="both named 'n'"):
        holder.params = ms.ParameterTuple((p, q))


def test_insert_param_and_child():
    net = nn.Cell()
    net.insert_param_to_cell("bias", ms.Parameter(ms.Tensor([1., 2.])))
    assert net.bias.name == "bias"
    with pytest.raises(KeyError, match="must not contain '.'"):
        net.insert_param_to_cell("a.b", ms.Parameter(ms.Tensor([1.])))
    with pytest.raises(TypeError, match="must be a Parameter"):
        net.insert_param_to_cell("t", ms.Tensor([1.]))
    net.insert_child_to_cell("kid", Inner())
    assert net.kid.w.name == "myw"  # MindSpore: insert_child_to_cell does not prefix
    with pytest.raises(TypeError, match="must be a Cell"):
        net.insert_child_to_cell("k2", 3)
    with pytest.raises(KeyError, match="without '.'"):
        net.insert_child_to_cell("a.b", Inner())


def test_reassigning_attributes():
    net = Inner()
    net.w = ms.Tensor(np.full((2, 2), 3.0), ms.float32)  # a Tensor over a Parameter sets its data
    assert isinstance(net.w, ms.Parameter) and float(net.w.sum()) == 12
    with pytest.raises(TypeError, match="'w' is a Parameter"):
        net.w = 3
    outer = Mid()
    with pytest.raises(TypeError, match="'inner' is a sub-Cell"):
        outer.inner = 3


def test_set_train_sets_phase_and_training_recursively():
    o = Outer()
    assert o.phase == "predict" and not o.training
    o.set_train()
    assert (o.phase, o.mid.phase, o.mid.inner.training) == ("train", "train", True)
    o.set_train(False)
    assert (o.phase, o.mid.phase, o.mid.d.phase, o.mid.d.training) == ("predict", "predict", "predict", False)


def test_repr_like_mindspore():
    assert repr(Outer()) == (
        "Outer(\n"
        "  (mid): Mid(\n"
        "    (inner): Inner()\n"
        "    (d): Dense(input_channels=2, output_channels=3, has_bias=True)\n"
        "  )\n"
        ")")
    assert repr(nn.Dense(2, 3, activation="relu")) == (
        "Dense(\n  input_channels=2, output_channels=3, has_bias=True, activation=ReLU()\n  (activation): ReLU()\n)")


def test_cell_is_pytree_and_unflatten_skips_init():
    net = Mid()
    leaves = jax.tree_util.tree_leaves(net)
    assert len(leaves) == 5
    calls = []

    class Counting(Mid):
        def __init__(self):
            calls.append(1)
            super().__init__()
    c = Counting()
    doubled = jax.tree.map(lambda x: x * 2, c)
    assert len(calls) == 1 and type(doubled) is Counting
    assert doubled.inner.w.name == c.inner.w.name
    np.testing.assert_array_equal(doubled.inner.w.asnumpy(), 2 * c.inner.w.asnumpy())
    chex.assert_trees_all_close(jax.tree.map(lambda x: x / 2, doubled), c)
    assert jax.tree_util.tree_structure(doubled) == jax.tree_util.tree_structure(c)


def test_static_attributes_are_aux_data():
    class T(nn.Cell):
        def __init__(self, k):
            super().__init__()
            self.k = k
            self.hyper = {"a": [1, 2]}
            self.w = ms.Parameter(ms.Tensor([1.0]), name="w")
    s1, s2, s3 = T(1), T(1), T(2)
    assert jax.tree_util.tree_structure(s1) == jax.tree_util.tree_structure(s2)
    assert jax.tree_util.tree_structure(s1) != jax.tree_util.tree_structure(s3)
    s2.set_train()
    assert jax.tree_util.tree_structure(s1) != jax.tree_util.tree_structure(s2)


def test_jax_jit_and_grad_on_cells_against_reference():
    net = Mid()
    x = jnp.asarray(np.random.default_rng(0).normal(size=(4, 2)), jnp.float32)

    def loss(n, x):
        return jnp.sum(n(x) ** 2)

    def reference(w, b, dw, db, c, x):
        h = x @ w + b
        return jnp.sum(((h @ dw.T + db) * c) ** 2)

    g = jax.grad(loss)(net, x)
    assert type(g) is Mid
    ref = jax.grad(reference, argnums=(0, 1, 2, 3, 4))(
        net.inner.w.value, net.inner.b.value, net.d.weight.value, net.d.bias.value, net.c.value, x)
    for got, want in zip([g.inner.w, g.inner.b, g.d.weight, g.d.bias, g.c], ref):
        np.testing.assert_allclose(got.value, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jax.jit(loss)(net, x), loss(net, x), rtol=1e-6)


def test_check_grads_through_a_cell():
    net = Inner()
    x = jnp.asarray([[0.5, -1.0]], jnp.float32)

    def f(w, b):
        copy = jax.tree.map(lambda v: v, net)
        copy.__dict__["w"] = ms.Parameter(w, name="w")
        copy.__dict__["b"] = ms.Parameter(b, name="b")
        return jnp.sum(jnp.tanh(copy(x)))
    check_grads(f, (net.w.value, net.b.value), order=2, modes=["rev"], atol=1e-2, rtol=1e-2)


def test_construct_errors_name_the_cell():
    d = nn.Dense(3, 4)
    with pytest.raises(ValueError, match="Dense: expected an input whose last dimension is 3"):
        d(ms.ops.ones((2, 5)))

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(3, 4)

        def construct(self, x):
            return self.fc(x)
    with pytest.raises(ValueError) as err:
        Net()(ms.ops.ones((2, 5)))
    notes = "\n".join(getattr(err.value, "__notes__", []))
    assert notes == "  in Cell fc (Dense(input_channels=3, output_channels=4, has_bias=True)) of Net"
    with pytest.raises(TypeError, match=r"Net was called with 2 positional input\(s\), but its construct\(x\)") as err:
        Net()(ms.ops.ones((2, 3)), ms.ops.ones((2, 3)))
    assert isinstance(err.value.__cause__, TypeError)  # the original error, chained
    with pytest.raises(NotImplementedError, match="must define construct"):
        nn.Cell()(1)


def test_html_display_for_notebooks():
    o = Outer()
    o.mid.c.requires_grad = False
    html = o._repr_html_()
    for text in ("Outer", "mid: ", "Mid", "inner: ", "Inner", "mid.inner.w", "(2, 2)", "Float32",
                 "Dense(input_channels=2, output_channels=3, has_bias=True)", "ck-frozen"):
        assert text in html, text
    assert "16 params" in html  # 1 + 4 + 2 + 6 + 3
    p_html = o.mid.c._repr_html_()
    assert "mid.c" in p_html and "requires_grad=False" in p_html and "[1.]" in p_html


def test_html_display_opens_the_first_level_and_counts_frozen_values_apart():
    net = nn.SequentialCell([nn.Dense(2, 3), nn.BatchNorm1d(3)])
    html = net._repr_html_()
    # the root and its direct sub-Cells are open, so their Parameter tables show
    assert html.count("<details open>") == 3
    assert "21 params (15 trainable)" in html  # 9 + 12, the running mean and variance frozen
    assert "(not initialised yet)" in nn.Dense(2, 3).weight._repr_html_()
    conv = nn.Conv2d(1, 4, 3)._repr_html_()
    assert "Conv2d(<span title='input_channels=1, output_channels=4, kernel_size=(3, 3)" in conv
    assert "format=NCHW'>input_channels=1, output_channels=4, kernel_size=(3, 3), stride=(1, 1), …</span>)" in conv


def test_repr_and_html_of_a_cell_mapped_to_non_array_leaves():
    """jax.tree.map(jnp.shape, net) gives a Cell whose Parameters hold tuples: it still prints."""
    net = nn.SequentialCell([nn.Dense(2, 3), nn.BatchNorm1d(3)])
    shapes = jax.tree.map(jnp.shape, net)
    assert shapes[0].weight._value == (3, 2)
    text = repr(shapes)
    assert "Parameter (name=1.gamma, value=(3,), requires_grad=True)" in text
    html = shapes._repr_html_()
    assert "<td>0.weight</td><td colspan='2'>(3, 2)</td>" in html and "0 params" in html
    assert "value=None" in repr(jax.tree.map(lambda a: None, net)[1].gamma)
    assert "(3, 2)" in shapes[0].weight._repr_html_()
