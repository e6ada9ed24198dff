"""Cell hooks, HookBackward and InsertGradientOf: what each hook sees and the gradients, against
MindSpore 2.10's recordings; eagerly and under cellkit.jit (which recompiles when hooks change)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ms_fixtures import load

import cellkit as ms
from cellkit import nn, ops

X = np.array([1., 2., 3.], np.float32)
Y = np.array([.5, -1., 2.], np.float32)
W = np.array([.3, -.2, .7], np.float32)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor(W), name="w")

    def construct(self, x, y):
        return ops.sin(x) * self.w + x * y * y


class HookNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.inner = Net()

    def construct(self, x, y):
        return ops.sin(self.inner(x * 2, y)).sum()


def run_hooks(x, y, which, jit=False):
    """The computation of record_autograd.py's run_hooks."""
    net = HookNet()
    seen = {}

    def bwd(cell, grad_input, grad_output):
        seen["grad_input"] = tuple(grad_input)
        seen["grad_output"] = tuple(grad_output)
        return tuple(-g for g in grad_input)

    def bwd_pre(cell, grad_output):
        seen["grad_output"] = tuple(grad_output)
        return (grad_output[0] * 0.5,)

    def fwd_pre(cell, args):
        return (args[0] + 1, args[1])

    def fwd(cell, args, output):
        seen["forward_output"] = output
        return output * 3

    register = {"backward": lambda: net.inner.register_backward_hook(bwd),
                "backward_pre": lambda: net.inner.register_backward_pre_hook(bwd_pre),
                "forward_pre": lambda: net.inner.register_forward_pre_hook(fwd_pre),
                "forward": lambda: net.inner.register_forward_hook(fwd)}
    handle = register[which]()
    grad_fn = ops.GradOperation(get_all=True, get_by_list=True)(net, net.trainable_params())
    wrap = ms.jit if jit else (lambda f: f)
    if jit:  # hooks see traced values: keep what they saw as outputs of the compiled function
        def step(x, y):
            seen.clear()
            return grad_fn(x, y), net(x, y), dict(seen)
        grads, value, seen_now = wrap(step)(x, y)
        seen = seen_now
    else:
        grads, value = grad_fn(x, y), net(x, y)
    handle.remove()
    after = wrap(ops.GradOperation(get_all=True)(net))(x, y)
    return {"grads": grads, "value": value, "seen": seen, "after_remove": after}


def assert_tree(got, want):
    if isinstance(want, dict):
        assert set(got) == set(want), (sorted(got), sorted(want))
        for k in want:
            assert_tree(got[k], want[k])
    elif isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_tree(g, w)
    else:
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


HOOKS = load("autograd_hooks")


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", sorted(HOOKS))
def test_cell_hooks_against_mindspore(name, jit):
    got = run_hooks(jnp.asarray(X), jnp.asarray(Y), name.split("/")[1], jit=jit)
    assert_tree(got, HOOKS[name]["output"])


OPS = load("autograd_ops")
OP_CASES = {
    "HookBackward/forward_one": lambda x: ops.HookBackward(lambda g: g[0] * 3)(x),
    "HookBackward/forward_two": lambda x, y: ops.HookBackward(lambda g: g[0] * 3)(x, y),
    "HookBackward/grad": lambda x: ms.grad(lambda x: (ops.HookBackward(lambda g: g[0] * 3)(x) * x).sum())(x),
    "InsertGradientOf/forward": lambda x: ops.InsertGradientOf(lambda g: -g)(x),
    "InsertGradientOf/grad": lambda x: ms.grad(lambda x: (ops.InsertGradientOf(lambda g: -g)(x) * x).sum())(x),
}


@pytest.mark.parametrize("name", sorted(OP_CASES))
def test_gradient_ops_against_mindspore(name):
    case = OPS[name]
    assert_tree(OP_CASES[name](*[jnp.asarray(a) for a in case["inputs"]]), case["output"])


def test_hooks_change_the_structure_signature_and_jit_recompiles():
    net = nn.Dense(3, 2)
    x = jnp.ones((1, 3), jnp.float32)
    step = ms.jit(lambda x: ms.grad(lambda x: net(x).sum())(x))
    plain = step(x)
    h = net.register_backward_hook(lambda cell, gin, gout: tuple(2 * g for g in gin))
    np.testing.assert_allclose(step(x), 2 * plain, rtol=1e-6)
    assert step.trace_count == 2
    h.remove()
    np.testing.assert_allclose(step(x), plain, rtol=1e-6)
    assert "_cell_hooks" not in net.__dict__ and not net._cell_special
    assert step.trace_count == 2  # back to the structure of the first compilation: its entry is reused


def test_hooks_work_under_plain_jax_grad_and_on_copies():
    net = nn.Dense(3, 1)
    net.register_backward_pre_hook(lambda cell, gout: (gout[0] * 0,))
    g = jax.grad(lambda n, x: n(x).sum())(net, jnp.ones((2, 3), jnp.float32))
    np.testing.assert_allclose(g.weight.value, 0)
    assert type(nn.Dense(3, 1))._cell_special is False  # a Cell without hooks takes the plain path


def test_with_kwargs_prepend_and_errors():
    net = nn.ReLU()
    order = []
    net.register_forward_hook(lambda c, a, o: order.append("second"))
    net.register_forward_hook(lambda c, a, o: order.append("first"), prepend=True)
    net.register_forward_pre_hook(lambda c, a, k: ((a[0] - 1,), k), with_kwargs=True)
    np.testing.assert_allclose(net(jnp.asarray([0.5, 3.0])), [0., 2.])
    assert order == ["first", "second"]
    with pytest.raises(TypeError, match="hook_fn must be a Python function"):
        net.register_backward_hook(3)
    bad = nn.ReLU()
    bad.register_backward_hook(lambda c, gin, gout: (gin[0], gin[0]))
    with pytest.raises(ValueError, match="backward hook of Cell ReLU returned 2"):
        ms.grad(lambda x: bad(x).sum())(jnp.ones(2, jnp.float32))
    fwd = nn.ReLU()
    fwd.register_backward_hook(lambda c, gin, gout: None)
    with pytest.raises(TypeError, match="Cell ReLU has backward hooks"):
        ms.jvp(fwd, jnp.ones(2, jnp.float32), jnp.ones(2, jnp.float32))


def test_registering_inside_jit_is_refused():
    net = nn.ReLU()

    @ms.jit
    def f(x):
        net.register_forward_hook(lambda c, a, o: o)
        return net(x)

    with pytest.raises(RuntimeError, match="register a forward hook"):
        f(jnp.ones(2))


def test_gradient_reversal_through_a_hook():
    """Domain-adversarial training's gradient reversal: a backward hook negating grad_input."""
    feat = nn.Dense(3, 3)
    head = nn.Dense(3, 1)
    feat_params = feat.trainable_params()
    loss = lambda x: head(feat(x)).sum()  # noqa: E731
    before = ms.grad(loss, None, feat_params)(jnp.ones((2, 3), jnp.float32))
    head.register_backward_hook(lambda cell, gin, gout: tuple(-g for g in gin))
    after = ms.grad(loss, None, feat_params)(jnp.ones((2, 3), jnp.float32))
    for a, b in zip(after, before):
        np.testing.assert_allclose(a, -b, rtol=1e-6)
