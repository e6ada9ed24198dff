"""C (cellkit.ops.composite) and F's own names: MultitypeFuncGraph dispatch, HyperMap and Map,
partial, the clip composites, against MindSpore's recorded outputs (family ops_math_composite)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit import ops
from cellkit.ops import composite as C
from cellkit.ops import functional as F
from ops_replay import cases, replay

DATA, NAMES = cases("ops_math_composite")

# The same MultitypeFuncGraph as the recording script's.
update = C.MultitypeFuncGraph("update")


@update.register("Number", "Tensor", "Tensor")
def _number_tensor(lr, p, g):
    return p - lr * g


@update.register("Tensor", "Tensor", "Tensor")
def _tensor_tensor(lr, p, g):
    return p - lr * g * 2


@update.register("Number", "Tuple", "Tuple")
def _number_tuple(lr, ps, gs):
    return tuple(p - lr * g * 3 for p, g in zip(ps, gs))


CALLS = {
    "multitype": update,
    "hypermap__partial": lambda *a: C.HyperMap()(F.partial(update, 0.1), *a),
    "hypermap__ops": lambda *a: C.HyperMap(F.partial(update, 0.1))(*a),
    "hypermap__nested": lambda *a: C.HyperMap(F.partial(update, 0.1))(*a),
    "map__ops": lambda *a: C.Map(F.partial(update, 0.1))(*a),
    "hypermap__add": lambda *a: C.HyperMap(F.add)(*a),
    "partial__mul": lambda x: F.partial(F.mul, 2.0)(x),
}
# MindSpore's HyperMap and Map take only a MultitypeFuncGraph as their ops; cellkit takes any function.
DIFFERENT_ERRORS = {"hypermap__ops": None, "hypermap__nested": None, "map__ops": None, "hypermap__add": None}


@pytest.mark.parametrize("name", NAMES)
def test_matches_mindspore(name):
    fn = CALLS.get(name, CALLS.get(name.split("__")[0]))
    replay(fn, DATA[name], name, DIFFERENT_ERRORS)


def test_hypermap_nests_and_map_does_not():
    xs = (ms.Tensor([1.0]), (ms.Tensor([2.0]), [ms.Tensor([3.0])]))
    out = C.HyperMap(F.square)(xs)
    assert isinstance(out[1], tuple) and isinstance(out[1][1], tuple)  # MindSpore: tuples at every level
    np.testing.assert_array_equal(out[1][1][0], [9.0])
    flat = C.Map(lambda x: x * 2)((ms.Tensor([1.0]), ms.Tensor([2.0])))
    assert [float(t[0]) for t in flat] == [2.0, 4.0]
    with pytest.raises(ValueError, match="same length"):
        C.HyperMap(F.add)((ms.Tensor(1.0),), (ms.Tensor(1.0), ms.Tensor(2.0)))
    with pytest.raises(TypeError, match="callable"):
        C.HyperMap()(3, (1,))


def test_multitype_prefers_exact_types_and_works_under_jit():
    f = C.MultitypeFuncGraph("f")
    f.register("Number")(lambda x: "number")
    f.register("Int")(lambda x: "int")
    f.register("Function")(lambda x: "function")
    f.register("Tensor")(lambda x: x + 1)
    assert (f(1.5), f(2), f(len)) == ("number", "int", "function")
    p = ms.Parameter(ms.Tensor([1.0]), name="p")
    np.testing.assert_array_equal(f(p), [2.0])
    np.testing.assert_array_equal(jax.jit(lambda x: f(x))(jnp.ones(2)), [2.0, 2.0])


def test_optimizer_style_update_under_jit():
    apply = C.MultitypeFuncGraph("apply")

    @apply.register("Number", "Tensor", "Tensor")
    def _(lr, w, g):
        return w - lr * g

    hyper = C.HyperMap()

    @jax.jit
    def step(ws, gs):
        gs = ops.clip_by_global_norm(gs, 1.0)
        return hyper(F.partial(apply, 0.5), ws, gs)

    ws, gs = (jnp.ones(2), jnp.zeros(3)), (jnp.array([3.0, 0.0]), jnp.array([0.0, 4.0, 0.0]))
    out = step(ws, gs)
    np.testing.assert_allclose(out[0], [1 - 0.5 * 0.6, 1.0], rtol=1e-6)
    np.testing.assert_allclose(out[1], [0.0, -0.4, 0.0], rtol=1e-6)


def test_names_in_ops_f_and_c():
    assert ops.MultitypeFuncGraph is C.MultitypeFuncGraph and ops.HyperMap is C.HyperMap and ops.partial is F.partial
    assert C.clip_by_global_norm is ops.clip_by_global_norm and C.mm is ops.mm
    assert F.tensor_add is ops.tensor_add and F.Primitive is ops.Primitive
    assert C.add_flags(lambda: 1, has_effect=True)._mindspore_flags == {"has_effect": True}
    out = F.mixed_precision_cast(ms.float16, {"a": ms.Tensor([1.0]), "b": [ms.Tensor([1], ms.int32)]})
    assert out["a"].dtype == np.float16 and out["b"][0].dtype == np.int32


def test_clip_refusals():
    with pytest.raises(TypeError, match="tuple or list"):
        ops.clip_by_global_norm(ms.Tensor([1.0]))
    with pytest.raises(ValueError, match="at least one"):
        ops.clip_by_value(ms.Tensor([1.0]))
