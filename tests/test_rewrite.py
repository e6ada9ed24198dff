"""The assignment rewrite (``cellkit.rewrite``): scopes, caching, tracebacks, Parameters, gradients.

MindSpore's values for the assignments themselves are in ``test_rewrite_cases.py``.
"""

import ast
import functools
import traceback

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import cellkit as ms
from cellkit import nn
from cellkit.rewrite import compile_source, needs_rewrite, rewrite_function, rewrite_tree

G = jnp.array([1.0, 2.0, 3.0])


def plain(x):
    return x * 2


def assigns(x, k=1, *, scale=2.0):
    x[0] = 10.0
    x[1:] += k
    x.mul_(scale)
    return x


def test_nothing_to_rewrite_is_the_same_function():
    assert not needs_rewrite(plain.__code__)
    assert rewrite_function(plain) is plain
    assert ms.jit(plain).fn is plain
    assert rewrite_function(len) is len


def test_rewritten_once_and_cached():
    f = rewrite_function(assigns)
    assert f is not assigns and rewrite_function(assigns) is f and rewrite_function(f) is f
    assert f.__name__ == "assigns" and f.__defaults__ == (1,) and f.__kwdefaults__ == {"scale": 2.0}
    assert f(jnp.array([1.0, 2.0, 3.0]), 2).tolist() == [20.0, 8.0, 10.0]
    assert f(jnp.array([1.0, 2.0, 3.0]), scale=1.0).tolist() == [10.0, 3.0, 4.0]


def test_closure_cells_are_shared():
    def outer():
        z = jnp.zeros(2)

        def inner(v):
            z[0] = v
            z.add_(1.0)
            return z
        return inner, lambda: z
    inner, get = outer()
    assert rewrite_function(inner)(5.0).tolist() == [6.0, 1.0]
    assert get().tolist() == [6.0, 1.0]  # the enclosing function's variable was rebound


def test_global_is_rebound():
    def change():
        G[1] = 9.0
    global G
    old = G
    try:
        rewrite_function(change)()
        assert G.tolist() == [1.0, 9.0, 3.0] and old.tolist() == [1.0, 2.0, 3.0]
    finally:
        G = old


def test_nested_function_writes_enclosing_local():
    @rewrite_function
    def f(x):
        def g():
            x[0] = -1.0
        g()
        return x
    assert f(jnp.ones(2)).tolist() == [-1.0, 1.0]


class Base(nn.Cell):
    def construct(self, x):
        return x * 2


class Net(Base):
    def __init__(self):
        super().__init__()
        self.buf = jnp.zeros(3)
        self.w = ms.Parameter(jnp.ones(3), name="w")

    def construct(self, x):
        """Doc kept."""
        y = super().construct(x)
        y[0] = 100.0
        self.buf[1] = 5.0
        self.w[2] = 7.0
        return y * self.w

    @staticmethod
    def helper(x):
        x[0] = 1.0
        return x

    @classmethod
    def make(cls, x):
        x.zero_()
        return x


def test_cell_methods_super_static_class():
    net = Net()
    assert Net.construct.__doc__ == "Doc kept."
    out = net(jnp.array([1.0, 2.0, 3.0]))
    assert out.tolist() == [100.0, 4.0, 42.0]
    assert net.buf.tolist() == [0.0, 5.0, 0.0] and net.w.value.tolist() == [1.0, 1.0, 7.0]
    assert isinstance(net.w, ms.Parameter)
    assert Net.helper(jnp.zeros(2)).tolist() == [1.0, 0.0]
    assert Net.make(jnp.ones(2)).tolist() == [0.0, 0.0]


def test_cell_without_assignment_is_not_touched():
    class Plain(nn.Cell):
        def construct(self, x):
            return x + 1
    assert not getattr(Plain.construct, "__cellkit_rewritten__", False)


def test_parameters_stay_mutable_references_under_jit():
    w = ms.Parameter(jnp.zeros(3), name="w")

    @ms.jit
    def step(v):
        w[0] = v
        w.add_(1.0)
        x = jnp.zeros(2)
        x[1] = v
        return x
    assert step(jnp.float32(4.0)).tolist() == [0.0, 4.0]
    assert w.value.tolist() == [5.0, 1.0, 1.0]


def test_containers_and_numpy_keep_python_semantics():
    @rewrite_function
    def f(d, lst, a, x):
        d["k"] = 1
        lst[0] = 2
        a[0] = 3
        lst[1][0] = 4.0
        return d, lst, a, x
    d, lst, a = {}, [0, jnp.zeros(2)], np.zeros(2)
    out = f(d, lst, a, None)
    assert out[0] is d and d == {"k": 1} and out[1] is lst and lst[0] == 2 and a[0] == 3
    assert lst[1].tolist() == [4.0, 0.0]


def test_targets_tuple_multiple_starred_and_attributes():
    class Holder:
        pass
    h = Holder()
    h.buf = jnp.zeros(3)

    @rewrite_function
    def f(x, y):
        x[0], y[1] = 1.0, 2.0
        x[1] = y[2] = 3.0
        first, *x[2:] = [7.0, 8.0]
        h.buf[0] = 4.0
        h.buf.add_(1.0)
        h.buf[2] += 2.0
        y[0]: float = -1.0
        v = y.sub_(1.0)
        return x, y, v
    x, y, v = f(jnp.zeros(3), jnp.zeros(3))
    assert x.tolist() == [1.0, 3.0, 8.0] and y.tolist() == [-2.0, 1.0, 2.0] and v.tolist() == y.tolist()
    assert h.buf.tolist() == [5.0, 1.0, 3.0]


def test_loop_and_with_targets_that_are_subscripts():
    """``for x[i] in ...`` and ``with ... as x[i]`` store into the Tensor, as NumPy's mutable arrays do."""
    import contextlib

    @contextlib.contextmanager
    def given(v):
        yield v

    def body(x):
        seen = []
        for x[0] in [1.0, 2.0]:
            seen.append(float(x[0]))
        for i, x[1] in enumerate([7.0, 9.0]):
            seen.append(float(x[1]) + i)
        with given(5.0) as x[2]:
            seen.append(float(x[2]) * 2)
        return x, seen
    expected = body(np.zeros(3, np.float32))
    got = rewrite_function(body)(jnp.zeros(3, jnp.float32))
    np.testing.assert_array_equal(np.asarray(got[0]), expected[0])
    assert got[1] == expected[1] == [1.0, 2.0, 7.0, 10.0, 10.0]


def test_in_place_chain_and_comprehension():
    class Holder:
        pass
    hs = [Holder(), Holder()]
    for h in hs:
        h.t = jnp.ones(2)

    @rewrite_function
    def f(x):
        x.add_(1.0).mul_(3.0)
        [h.t.zero_() for h in hs]
        return x
    assert f(jnp.ones(2)).tolist() == [6.0, 6.0]
    assert all(h.t.tolist() == [0.0, 0.0] for h in hs)


def test_traceback_points_at_the_users_line():
    @rewrite_function
    def f(x):
        y = x + 1
        y[7] = 0.0  # the failing line
        return y
    with pytest.raises(IndexError) as info:
        f(jnp.zeros(3))
    frames = [fr for fr in traceback.extract_tb(info.tb) if fr.filename == __file__]
    assert frames[-1].line.strip() == "y[7] = 0.0  # the failing line"


def test_unreached_code_says_what_to_write():
    x = jnp.zeros(3)
    with pytest.raises(TypeError, match=r"rewrite_function.*x = x\.at\[index\]\.set\(value\)"):
        x[0] = 1.0
    with pytest.raises(TypeError, match=r"in test_unreached_code_says_what_to_write\(\).*x = x\.add\(\.\.\.\)"):
        x.add_(1.0)


def test_compile_source_module_and_line_numbers():
    src = '"""doc"""\nfrom __future__ import annotations\nimport jax.numpy as jnp\nx = jnp.zeros(3)\nx[1] = 2.0\n' \
          'x.add_(1.0)\ny = [x]\ny[0][2] = 5.0\nx[9] = 1.0\n'
    ns = {}
    with pytest.raises(IndexError) as info:
        exec(compile_source(src, "<mod>"), ns)
    assert traceback.extract_tb(info.tb)[-1].lineno == 9 or any(
        fr.filename == "<mod>" and fr.lineno == 9 for fr in traceback.extract_tb(info.tb))
    assert ns["x"].tolist() == [1.0, 3.0, 1.0] and ns["y"][0].tolist() == [1.0, 3.0, 5.0]
    tree = rewrite_tree(ast.parse("from __future__ import annotations\nx[0] = 1\n"))
    assert ast.unparse(tree).splitlines()[1] == "import cellkit.rewrite.runtime as __cellkit_rw__"
    assert compile_source("y = 1\n", "<m>").co_filename == "<m>"


def _ref(x, v):
    y = x * 2.0
    y = y.at[1].set(v * 3.0)
    y = y.at[jnp.array([0, 2])].add(v)
    y = jnp.where(y > 3.0, 0.0, y)
    return (y * y).sum()


def _assigning(x, v):
    y = x * 2.0
    y[1] = v * 3.0
    y[jnp.array([0, 2])] += v
    y[y > 3.0] = 0.0
    return (y * y).sum()


def test_gradients_match_raw_jax_and_finite_differences():
    x, v = jnp.array([0.3, -0.4, 0.8, 0.1]), jnp.float32(0.7)
    f = rewrite_function(_assigning)
    want = jax.grad(_ref, (0, 1))(x, v)
    for got in (jax.grad(f, (0, 1))(x, v), ms.grad(_assigning, grad_position=(0, 1))(x, v),
                ms.jit(ms.grad(_assigning, grad_position=(0, 1)))(x, v)):
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-6)
    check_grads(f, (x, v), order=2, modes=("rev", "fwd"), atol=1e-2, rtol=1e-2)


def test_vmap_and_vjp():
    xs = jnp.arange(6.0).reshape(2, 3)
    v = jnp.float32(0.5)
    got = ms.vmap(_assigning, in_axes=(0, None))(xs, v)
    want = jax.vmap(_ref, in_axes=(0, None))(xs, v)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    out, fn = ms.ops.vjp(_assigning, xs[0], v)
    np.testing.assert_allclose(fn(jnp.float32(1.0))[0], jax.grad(_ref)(xs[0], v), rtol=1e-6)


def test_graph_mode_cell_attribute_is_not_written_back():
    class Buf(nn.Cell):
        def __init__(self):
            super().__init__()
            self.buf = jnp.zeros(2)

        def construct(self, x):
            self.buf[0] = 1.0
            return x + self.buf
    net = Buf()
    assert ms.jit(net)(jnp.zeros(2)).tolist() == [1.0, 0.0]
    assert net.buf.tolist() == [0.0, 0.0]
    assert net(jnp.zeros(2)).tolist() == [1.0, 0.0] and net.buf.tolist() == [1.0, 0.0]


def test_decorators_are_not_applied_again():
    registry = []

    def register(fn):
        registry.append(fn)
        return fn

    @register
    def g(x):
        x[0] = 1.0
        return x
    assert rewrite_function(g)(jnp.zeros(2)).tolist() == [1.0, 0.0]
    assert registry == [g]

    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*a):
            return fn(*a)
        return wrapper
    wrapped = deco(g)
    assert rewrite_function(wrapped) is wrapped  # the wrapper itself assigns nothing...
    assert wrapped(jnp.zeros(2)).tolist() == [1.0, 0.0]  # ...and now calls the rewritten function


def test_cell_method_under_a_wrapping_decorator():
    def logged(fn):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            return fn(*a, **k)
        return wrapper

    class Net(nn.Cell):
        @logged
        def construct(self, x):
            x[0] = 5.0
            return x
    assert Net()(jnp.zeros(2)).tolist() == [5.0, 0.0]
    assert ms.jit(Net())(jnp.zeros(2)).tolist() == [5.0, 0.0]


class _Private(nn.Cell):
    def __init__(self):
        super().__init__()
        self.__buf = jnp.zeros(2)

    def construct(self, x):
        self.__buf[0] = x
        return self.__buf


def test_private_names_are_mangled_as_in_the_class_body():
    assert _Private()(jnp.float32(3.0)).tolist() == [3.0, 0.0]


def test_assignment_into_an_unnamed_tensor_is_refused_clearly():
    @rewrite_function
    def f():
        jnp.zeros(2)[0] = 1.0
    with pytest.raises(TypeError, match="assign the Tensor to a name first"):
        f()


class _MaskedLoss(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(3, 2)

    def construct(self, x, y):
        out = self.dense(x)
        out[:, 0] = out[:, 0] * 2.0
        out[y < 0] = 0.0
        return (out ** 2).mean()


def test_value_and_grad_of_a_cell_and_a_training_step():
    net = _MaskedLoss()
    x = jnp.array([[0.5, -1.0, 2.0], [1.0, 0.3, -0.2]])
    y = jnp.array([[1.0, -1.0], [-1.0, 1.0]])
    w, b = net.dense.weight.value, net.dense.bias.value

    def ref(w, b):
        out = x @ w.T + b
        out = out.at[:, 0].set(out[:, 0] * 2.0)
        out = jnp.where(y < 0, 0.0, out)
        return (out ** 2).mean()
    want_loss, want = jax.value_and_grad(ref, (0, 1))(w, b)
    for fn in (ms.value_and_grad(net, None, net.trainable_params()),
               ms.jit(ms.value_and_grad(net, None, net.trainable_params()))):
        loss, grads = fn(x, y)
        np.testing.assert_allclose(loss, want_loss, rtol=1e-6)
        np.testing.assert_allclose(grads[0], want[0], rtol=1e-5)
        np.testing.assert_allclose(grads[1], want[1], rtol=1e-5)
    step = nn.TrainOneStepCell(net, nn.SGD(net.trainable_params(), learning_rate=0.1))
    ms.jit(step)(x, y)
    np.testing.assert_allclose(net.dense.weight.value, w - 0.1 * want[0], rtol=1e-5)


def test_set_to_and_delete():
    @rewrite_function
    def f(x, y):
        x.set_(y)
        x.to_("CPU")
        return x
    assert f(jnp.zeros(2), jnp.ones(3)).tolist() == [1.0, 1.0, 1.0]
    z = jnp.ones(2)
    assert z.to_() is z
    z.delete_()
    assert z.is_deleted()


H = jnp.zeros(2)


def test_declarations_of_nested_functions_stay_theirs():
    def outer():
        def inner():
            global H
            H = H + 1
        inner()
        H[0] = 7.0  # H is global here too (never assigned in outer): rebinding the global
    global H
    old = H
    try:
        rewrite_function(outer)()
        assert H.tolist() == [7.0, 1.0]
    finally:
        H = old


def test_compile_source_single_mode():
    ns = {"x": jnp.zeros(2)}
    exec(compile_source("for i in range(2):\n    x[i] += 1.0\n", "<cell>", "single"), ns)
    assert ns["x"].tolist() == [1.0, 1.0]


MODULE = '''
import jax.numpy as jnp
import cellkit as ms
from cellkit import nn

COUNTS = jnp.zeros(3)


def bump(i):
    COUNTS[i] += 1.0


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.__scale = jnp.ones(3)

    def construct(self, x):
        self.__scale[0] = 2.0
        y = x * self.__scale
        y.add_(1.0)
        return y


def run():
    bump(2)
    net = Net()
    return net(jnp.ones(3)), ms.jit(Net())(jnp.ones(3))
'''


def test_whole_module():
    ns = {"__name__": "user_module"}
    exec(compile_source(MODULE, "user_module.py"), ns)
    eager, traced = ns["run"]()
    assert eager.tolist() == traced.tolist() == [3.0, 2.0, 2.0]
    assert ns["COUNTS"].tolist() == [0.0, 0.0, 1.0]
    assert not getattr(ns["Net"].construct, "__cellkit_rewritten__", False)  # rewritten once, with the module


def test_attribute_that_is_a_fresh_container_is_not_reassigned():
    class Holder:
        def __init__(self):
            self.items = [jnp.zeros(2)]

        @property
        def copy(self):
            return list(self.items)  # a property without a setter

    h = Holder()

    @rewrite_function
    def f():
        h.copy[0] = 1  # mutates a temporary list, as in Python
        h.items[0][1] = 5.0
    f()
    assert h.items[0].tolist() == [0.0, 5.0]


def test_tensor_inside_a_tuple():
    import collections
    Pair = collections.namedtuple("Pair", "a b")

    @rewrite_function
    def f(t, p):
        t[1][0] = 3.0
        p[0][1] = 4.0
        return t, p
    t, p = f((jnp.zeros(1), jnp.zeros(2)), Pair(jnp.zeros(2), 1))
    assert t[1].tolist() == [3.0, 0.0] and p.a.tolist() == [0.0, 4.0] and type(p) is Pair
