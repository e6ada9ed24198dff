"""ops.Custom (pyfunc over jax.pure_callback), printing, dumping and the data-flow helpers."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit import ops
from cellkit.ops import operations as P


def test_custom_pyfunc_runs_eagerly_and_in_jit():
    add = ops.Custom(lambda a, b: a + b, out_shape=(2,), out_dtype=ms.float32, func_type="pyfunc")
    x = ms.Tensor([1., 2.])
    np.testing.assert_array_equal(add(x, x), [2., 4.])
    np.testing.assert_array_equal(ms.jit(lambda a: add(a, a) * 2)(x), [4., 8.])
    like = ops.Custom(np.multiply, out_shape=lambda a, b: a, out_dtype=lambda a, b: a)
    np.testing.assert_array_equal(like(x, x), [1., 4.])
    two = P.Custom(lambda a: (a, a.astype(np.int32)), ((2,), (2,)), (ms.float32, ms.int32))
    out, out_int = two(ms.Tensor([1.5, 2.5]))
    assert out_int.dtype == np.int32 and out_int.tolist() == [1, 2]


def test_custom_bprop_gives_the_gradient():
    square = ops.Custom(lambda a: a * a, (3,), ms.float32, bprop=lambda a, out, dout: (2 * a * dout,))
    x = jnp.asarray([1., -2., 3.])
    np.testing.assert_allclose(jax.grad(lambda v: square(v).sum())(x), 2 * np.asarray(x))


def test_custom_refuses_kernel_languages_with_mindsporess_exception_types():
    # MindSpore 2.10: an unknown func_type is a ValueError; a kernel type given a plain function a TypeError.
    with pytest.raises(ValueError, match="func_type must be one of"):
        ops.Custom(np.add, (1,), ms.float32, func_type="foo")
    with pytest.raises(TypeError, match="func_type='pyfunc'"):
        ops.Custom(np.add, (1,), ms.float32, func_type="hybrid")
    with pytest.raises(ValueError, match="out_shape and out_dtype"):
        ops.Custom(np.add)


def test_print_and_tensordump_also_act_inside_jit(capfd, tmp_path):
    x = ms.Tensor([1., 2.])

    @ms.jit
    def step(v):
        ops.print_("value:", v)
        ops.tensordump(str(tmp_path / "dump"), v * 2)
        P.Print()("again {braces}", v)
        return v + 1

    step(x)
    jax.effects_barrier()
    out = capfd.readouterr().out
    assert "value:\n[1. 2.]" in out and "again {braces}" in out
    files = sorted(tmp_path.glob("dump_float32_*.npy"))
    assert len(files) == 1
    np.testing.assert_array_equal(np.load(files[0]), [2., 4.])
    with pytest.raises(ValueError, match="mode"):
        ops.tensordump("x", x, mode="sideways")


def test_depend_identity_and_stop_gradient():
    x = ms.Tensor([1., 2.])
    p = ms.Parameter(x, name="p")
    assert ops.depend(x, ops.assign_add(p, x)) is x
    assert isinstance(ops.identity(p), jax.Array) and P.Identity()(p).tolist() == [2., 4.]
    assert P.Depend()(x, x) is x
    g = jax.grad(lambda v: (P.StopGradient()(v) * v).sum())(jnp.asarray([3.]))
    assert g.tolist() == [3.]


def test_morph_applies_fn_with_optional_bprop():
    scale = ops.Morph(lambda x, y: x * y, lambda *s: s[0], lambda *t: t[0])
    x = jnp.asarray([1., 2.])
    np.testing.assert_array_equal(ms.jit(lambda a: scale(a, a))(x), [1., 4.])
    np.testing.assert_array_equal(jax.grad(lambda a: scale(a, a).sum())(x), [2., 4.])
    custom = ops.Morph(lambda x: x * 3, None, None, bprop_fn=lambda x, out, dout: (dout * 10,))
    np.testing.assert_array_equal(jax.grad(lambda a: custom(a).sum())(x), [10., 10.])
    with pytest.raises(TypeError, match="fn must be a function"):
        ops.Morph(3, None, None)


def test_partial_move_to_and_mixed_precision_cast():
    assert ops.partial(ops.sub, 5)(2) == 3
    x = ms.Tensor([1., 2.])
    moved = ops.move_to(x, "CPU")
    assert moved.devices() == {jax.devices("cpu")[0]} and P.MoveTo()(x, "CPU").tolist() == [1., 2.]
    with pytest.raises(ValueError, match="no Ascend device"):
        ops.move_to(x, "Ascend")
    with pytest.raises(ValueError, match="to must be"):
        ops.move_to(x, "TPU9")
    half, n, ints = ops.mixed_precision_cast(ms.float16, (x, 3, ms.Tensor([1])))
    assert half.dtype == np.float16 and n == 3 and ints.dtype == ms.Tensor([1]).dtype


def test_custom_reg_op_and_data_type_match_mindspore():
    from ms_fixtures import load
    recorded = load("ops_array_reginfo")
    info = (ops.CustomRegOp("my_add").input(0, "x1").input(1, "x2", "optional").output(0, "y")
            .attr("scale", "required", "float", value=1.0)
            .dtype_format(ops.DataType.F32_Default, ops.DataType.F32_Default, ops.DataType.F32_Default)
            .dtype_format(ops.DataType.I32_None, ops.DataType.I32_None, ops.DataType.I32_None)
            .target("CPU").get_op_info())
    expected = recorded["custom_reg_op"]["output"]
    expected["dtype_format"] = [tuple(tuple(p) for p in row) for row in expected["dtype_format"]]
    assert info == expected
    for name, pair in recorded["data_types"]["output"].items():
        assert getattr(ops.DataType, name) == tuple(pair), name
    with pytest.raises(TypeError, match="DataType pair"):
        ops.CustomRegOp().dtype_format("float32")
