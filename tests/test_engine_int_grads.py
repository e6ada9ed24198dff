"""Gradients with respect to integer and Python-number inputs (cellkit.engine.int_inputs): MindSpore's
rule, against MindSpore 2.10's recorded results (tests/fixtures/record/record_taylor.py, same case
names); no float0 ever reaches the user."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ms_fixtures import load

import cellkit as ms
from cellkit import nn, ops
from cellkit.engine.int_inputs import cast_back


def xn(x, n):
    return (x * n).sum()


def xxn(x, n):
    return (x * x * n).sum()


def nn_(n):
    return (n * n).sum()


def xcast(x, n):
    return (x * ops.cast(n, ms.float32)).sum()


def index(x, n):
    return x[n].sum()


def power(x, n):
    return (x ** n).sum()


def xny(x, n, y):
    return (x * n * y).sum()


def onehot(x, n):
    return (x * ops.one_hot(n, 3, ms.Tensor(1.0), ms.Tensor(0.0))).sum()


def gather(x, n):
    return ops.gather(x, n, 0).sum()


def bitand(x, n):
    return (x * ops.cast(ops.bitwise_and(n, ms.Tensor(np.array([1, 1, 1], np.int32))), ms.float32)).sum()


def int_out(x, n):
    return n * 2


def compare(x, n):
    return (x * (n > 1)).sum()


def sq(x):
    return x * x


class WNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor(np.array([1., 2., 3.], np.float32)), name="w")

    def construct(self, x, n):
        return (x * n * self.w).sum()


def wnet(f):
    n = WNet()
    return f(n, n.trainable_params())


t = ms.Tensor
CASES = {
    "grad/ones": lambda x, n: ms.grad(xn, grad_position=1)(x, n),
    "grad/trunc": lambda x, n: ms.grad(xn, grad_position=1)(x, n),
    "grad/int64": lambda x, n: ms.grad(xn, grad_position=1)(x, n),
    "grad/bool": lambda x, n: ms.grad(xn, grad_position=1)(x, n),
    "grad/uint8": lambda x, n: ms.grad(xn, grad_position=1)(x, n),
    "grad/scalar_int": lambda x, n: ms.grad(xn, grad_position=1)(x, n),
    "grad/mixed": lambda x, n: ms.grad(xxn, grad_position=(0, 1))(x, n),
    "grad/int_only": lambda n: ms.grad(nn_)(n),
    "grad/cast": lambda x, n: ms.grad(xcast, grad_position=(0, 1))(x, n),
    "grad/index": lambda x, n: ms.grad(index, grad_position=(0, 1))(x, n),
    "grad/power": lambda x, n: ms.grad(power, grad_position=(0, 1))(x, n),
    "grad/three": lambda x, n, y: ms.grad(xny, grad_position=(0, 1, 2))(x, n, y),
    "grad/order": lambda x, n, y: ms.grad(xny, grad_position=(2, 1))(x, n, y),
    "grad/float16": lambda x, n: ms.grad(xn, grad_position=(0, 1))(x, n),
    "grad/one_hot": lambda x, n: ms.grad(onehot, grad_position=(0, 1))(x, n),
    "grad/gather": lambda x, n: ms.grad(gather, grad_position=(0, 1))(x, n),
    "grad/bitwise": lambda x, n: ms.grad(bitand, grad_position=(0, 1))(x, n),
    "grad/int_out": lambda x, n: ms.grad(int_out, grad_position=(0, 1))(x, n),
    "grad/compare": lambda x, n: ms.grad(compare, grad_position=(0, 1))(x, n),
    "grad/return_ids": lambda x, n: ms.grad(xn, grad_position=(0, 1), return_ids=True)(x, n),
    "grad/weights": lambda x, n: wnet(lambda c, w: ms.grad(c, (0, 1), w)(x, n)),
    "value_and_grad/mixed": lambda x, n: ms.value_and_grad(xn, grad_position=(0, 1))(x, n),
    "value_and_grad/int_only": lambda n: ms.value_and_grad(nn_)(n),
    "gradop/get_all": lambda x, n: ops.GradOperation(get_all=True)(xn)(x, n),
    "gradop/default_int": lambda n: ops.GradOperation()(nn_)(n),
    "gradop/get_all_sens": lambda x, n, s: ops.GradOperation(get_all=True, sens_param=True)(xn)(x, n, s),
    "gradop/all_and_list": lambda x, n: wnet(lambda c, w: ops.GradOperation(get_all=True, get_by_list=True)(c, w)(x, n)),
    "vjp/mixed": lambda x, n, v: ms.vjp(xn, x, n)[1](v),
    "vjp/int": lambda n, v: (lambda o: (o[0], o[1](v)))(ms.vjp(sq, n)),
    "jvp/mixed": lambda x, n: ms.jvp(xn, (x, n), (x, n)),
    "jvp/int": lambda n, v: ms.jvp(sq, n, v),
    "python/int_alone": lambda x: ms.grad(xn, grad_position=1)(x, 3),
    "python/float_alone": lambda x: ms.grad(xn, grad_position=1)(x, 3.0),
    "python/in_tuple": lambda x: ms.grad(xn, grad_position=(0, 1))(x, 3),
    "python/float_in_tuple": lambda x: ms.grad(xn, grad_position=(0, 1))(x, 3.0),
    "python/only": lambda: ms.grad(sq)(3.0),
    "python/gradop_default": lambda: ops.GradOperation()(sq)(3.0),
    "python/gradop_get_all": lambda x: ops.GradOperation(get_all=True)(xn)(x, 3),
    "python/value_and_grad": lambda x: ms.value_and_grad(xn, grad_position=(0, 1))(x, 3),
    "python/weights": lambda x: wnet(lambda c, w: ms.grad(c, (0, 1), w)(x, 2)),
    "python/weights_alone": lambda x: wnet(lambda c, w: ms.grad(c, 1, w)(x, 2)),
}

# MindSpore sums an int32 Tensor to int64 (cellkit, as JAX, keeps int32): the value is compared, not its dtype.
VALUE_DTYPE_DIFFERS = {"value_and_grad/int_only"}


def _canonical(dtype):
    return jax.dtypes.canonicalize_dtype(dtype)


def assert_same(got, want, name, path="out", check_dtype=True):
    """Equal values, dtypes (as JAX holds them) and nesting; never a float0."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)), f"{path}: expected a tuple of {len(want)}, got {type(got).__name__}"
        assert len(got) == len(want), f"{path}: {len(got)} items, MindSpore gave {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, name, f"{path}[{i}]", check_dtype and not (i == 0 and name in VALUE_DTYPE_DIFFERS))
        return
    if isinstance(want, int) and not isinstance(got, jax.Array):  # return_ids' positions
        assert got == want
        return
    assert not isinstance(got, (tuple, list)), f"{path}: expected one array, got a {type(got).__name__}"
    got = np.asarray(got)
    assert got.dtype != jax.dtypes.float0, f"{path}: a float0 reached the user"
    if check_dtype:
        assert got.dtype == _canonical(np.asarray(want).dtype), f"{path}: dtype {got.dtype}, MindSpore {want.dtype}"
    np.testing.assert_allclose(got.astype(np.float64), np.asarray(want).astype(np.float64), rtol=1e-3, atol=1e-3)


FIX = load("autograd_int")


@pytest.mark.parametrize("name", sorted(FIX))
def test_against_mindspore(name):
    case = FIX[name]
    assert name in CASES, f"no cellkit counterpart for recorded case {name}"
    got = CASES[name](*[ms.Tensor(a) for a in case["inputs"]])
    assert "error" not in case, case
    assert_same(got, case["output"], name)


def test_cast_back_is_mindspore_c_cast():
    g = jnp.array([.5, 1.7, -2.2, -.9, jnp.nan, 3e9, -jnp.inf], jnp.float32)
    np.testing.assert_array_equal(cast_back(g, jnp.int32), [0, 1, -2, 0, -2**31, -2**31, -2**31])
    np.testing.assert_array_equal(cast_back(g[:4], jnp.uint8), [0, 1, 254, 0])
    np.testing.assert_array_equal(cast_back(g[:4], jnp.bool_), [True, True, True, True])
    np.testing.assert_array_equal(cast_back(jnp.array([300.], jnp.float32), jnp.int8), [44])


def test_integer_gradient_is_the_real_gradient_truncated():
    """d/dn of sum(x * n) is x, whatever the integer values: checked against JAX on a float copy."""
    x = jnp.array([.25, 3.5, -1.75], jnp.float32)
    n = jnp.array([4, -2, 7], jnp.int32)
    ref = jax.grad(lambda x, n: (jnp.sin(x) * n * n).sum(), (0, 1))(x, n.astype(jnp.float32))
    gx, gn = ms.grad(lambda x, n: (ops.sin(x) * n * n).sum(), (0, 1))(x, n)
    np.testing.assert_allclose(gx, ref[0], rtol=1e-6)
    assert gn.dtype == jnp.int32
    np.testing.assert_array_equal(gn, np.trunc(np.asarray(ref[1])).astype(np.int32))


def test_integer_inputs_under_jit_and_with_weights():
    net = WNet()
    x, n = t(np.array([.5, 1.7, -2.2], np.float32)), t(np.array([1, 2, 0], np.int32))
    step = ms.jit(lambda x, n: ms.grad(net, (0, 1), net.trainable_params())(x, n))
    (gx, gn), (gw,) = step(x, n)
    np.testing.assert_allclose(gx, [1., 4., 0.])
    np.testing.assert_array_equal(gn, [0, 3, -6])
    assert gn.dtype == jnp.int32
    np.testing.assert_allclose(gw, [.5, 3.4, 0.], rtol=1e-6)


def test_integer_input_the_function_needs_as_integer_gets_zeros_and_keeps_its_dtype():
    """Bitwise ops refuse floats: the function runs with the integers as they are."""
    def shift(x, n):
        return (x * ops.cast(n << 1, ms.float32)).sum()

    gx, gn = ms.grad(shift, (0, 1))(t(np.array([1., 2.], np.float32)), t(np.array([1, 3], np.int32)))
    np.testing.assert_allclose(gx, [2., 6.])
    np.testing.assert_array_equal(gn, [0, 0])
    assert gn.dtype == jnp.int32


def test_a_real_error_still_surfaces():
    def broken(x, n):
        raise ValueError("broken on purpose")

    with pytest.raises(ValueError, match="broken on purpose"):
        ms.grad(broken, (0, 1))(t(np.ones(2, np.float32)), t(np.ones(2, np.int32)))


def test_float_inputs_unchanged():
    x = t(np.array([1., 2.], np.float32))
    np.testing.assert_allclose(ms.grad(lambda x: (x ** 3).sum())(x), [3., 12.])
    assert ms.grad(lambda x: (x ** 3).sum())(x).dtype == jnp.float32


def test_vjp_of_a_python_int_input_is_zero_not_float0():
    out, vjp_fn = ms.vjp(lambda x, n: x * n, t(np.array([1., 2.], np.float32)), 3)
    gx, gn = vjp_fn(t(np.ones(2, np.float32)))
    np.testing.assert_allclose(gx, [3., 3.])
    assert np.asarray(gn).dtype != jax.dtypes.float0 and int(gn) == 0
