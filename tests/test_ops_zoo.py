"""The model-zoo Primitives and the rest of ops.composite against MindSpore 2.10's recorded outputs
(tests/fixtures/record/record_ops_zoo.py), and, where MindSpore's CPU build has no kernel, against NumPy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit.ops import composite as C
from cellkit.ops import operations as P
from ops_replay import assert_same, cases, replay, to_cellkit

DATA, NAMES = cases("ops_zoo")
COMPOSITE, COMPOSITE_NAMES = cases("ops_composite_rest")

# cellkit computes what MindSpore 2.10 refuses here (None), or refuses it differently (the type).
DIFFERENT_ERRORS = {
    "GatherV2__axis0": None,  # fails inside MindSpore ("inputs number should be 4"): Gather's meaning
    "Pack__axis0": None,  # fails inside MindSpore ("Infer type failed"): Stack's meaning
}
# Stateful Primitives: their outputs, then the Parameters' values after the call.
STATEFUL = {"ApplyMomentum": 2, "SGD": 1, "AdamWeightDecay": 3}
# Checked below on their own (no CPU kernel in MindSpore 2.10, random, or CPU-kernel quirks).
OWN_CHECKS = {"ExtractImagePatches", "Randperm", "AdamWeightDecay", "ApplyMomentum", "BatchNorm__train",
              "BatchNorm__train_params"}
REPLAYED = [n for n in NAMES if n.split("__")[0] not in OWN_CHECKS and n not in OWN_CHECKS]


def _primitive(name, case):
    """``GatherV2__as_gather_*``/``Pack__as_stack_*`` were recorded through Gather/Stack (the old names
    fail inside MindSpore) and are replayed through the old names."""
    op = name.split("__")[0]
    return op, getattr(P, op)(*to_cellkit(case["ctor"]))


@pytest.mark.parametrize("name", REPLAYED)
def test_matches_mindspore(name):
    case = DATA[name]
    op, prim = _primitive(name, case)
    inputs = [to_cellkit(v) for v in case["inputs"]]
    if op == "Pack":
        inputs = [tuple(inputs)] if len(inputs) > 1 else inputs
    if op in STATEFUL:
        n = STATEFUL[op]
        params = [ms.Parameter(x, name=f"p{i}") for i, x in enumerate(inputs[:n])]
        out = prim(*params, *inputs[n:])
        want_out, want_params = case["output"]
        assert_same(out, want_out, name, rtol=1e-5, atol=1e-6)
        assert_same(tuple(p.value for p in params), want_params, name, rtol=1e-5, atol=1e-6)
        return
    if "error" in case:
        replay(prim, {**case, "inputs": case["inputs"] if op != "Pack" else [tuple(case["inputs"])]}, name,
               DIFFERENT_ERRORS)
        return
    assert_same(prim(*inputs, **{k: to_cellkit(v) for k, v in case["kwargs"].items()}), case["output"], name,
                rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", COMPOSITE_NAMES)
def test_composite_matches_mindspore(name):
    case = COMPOSITE[name]
    fn = getattr(C, name.split("__")[0])
    if name in ("augassign_div__tensor", "augassign_floordiv__tensor"):
        # MindSpore 2.10's PyNative call fails on Tensors ("only one element"): cellkit divides.
        x, y = (np.asarray(a) for a in case["inputs"])
        want = x / y if "floordiv" not in name else np.floor_divide(x, y)
        np.testing.assert_allclose(fn(ms.Tensor(x), ms.Tensor(y)), want, rtol=1e-6)
        return
    if isinstance(case.get("output"), str):
        assert fn(*case["inputs"]) == case["output"]
        return
    replay(fn, case, name, {})


def _case(name):
    case = DATA[name]
    return case, [to_cellkit(v) for v in case["inputs"]]


def test_batch_norm_training_updates_parameter_statistics():
    case, (x, scale, bias, mean, var) = _case("BatchNorm__train_params")
    m, v = ms.Parameter(mean, name="m"), ms.Parameter(var, name="v")
    out = P.BatchNorm(*case["ctor"])(x, scale, bias, m, v)
    want_out, (want_m, want_v) = case["output"]
    assert_same(out, want_out, "BatchNorm__train_params", rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m.value, want_m, rtol=1e-5)
    np.testing.assert_allclose(v.value, want_v, rtol=1e-5)
    # with plain Tensors as statistics nothing is written (the "train" case)
    case, inputs = _case("BatchNorm__train")
    assert_same(P.BatchNorm(*case["ctor"])(*inputs), case["output"][0], "BatchNorm__train", rtol=1e-5, atol=1e-6)


def _momentum_step(var, acc, lr, grad, mom, nesterov=False, scale=1.0):
    g = grad * scale
    acc = mom * acc + g
    return var - lr * (g + mom * acc if nesterov else acc), acc


@pytest.mark.parametrize("name", ["ApplyMomentum__plain", "ApplyMomentum__nesterov", "ApplyMomentum__scale"])
def test_apply_momentum(name):
    case, (var, acc, lr, grad, mom) = _case(name)
    params = [ms.Parameter(var, name="var"), ms.Parameter(acc, name="acc")]
    out = P.ApplyMomentum(*case["ctor"])(*params, lr, grad, mom)
    if name == "ApplyMomentum__plain":
        want_out, want = case["output"]
    else:  # MindSpore's CPU kernel ignores use_nesterov and gradient_scale: the documented update
        ctor = dict(zip(("use_nesterov", "use_locking", "gradient_scale"), case["ctor"]))
        want = _momentum_step(*(np.asarray(a, np.float64) for a in case["inputs"]),
                              nesterov=ctor.get("use_nesterov", False), scale=ctor.get("gradient_scale", 1.0))
        want_out = want[0]
    np.testing.assert_allclose(out, want_out, rtol=1e-5, atol=1e-6)
    for p, w in zip(params, want):
        np.testing.assert_allclose(p.value, w, rtol=1e-5, atol=1e-6)


def test_adam_weight_decay_updates_parameters_as_mindspore():
    case, inputs = _case("AdamWeightDecay__plain")
    params = [ms.Parameter(x, name=n) for x, n in zip(inputs[:3], ("var", "m", "v"))]
    out = P.AdamWeightDecay()(*params, *inputs[3:])
    # MindSpore's CPU kernel returns uninitialised outputs; the Parameters it updates are the reference
    for p, want in zip(params, case["output"][1]):
        np.testing.assert_allclose(p.value, want, rtol=1e-5, atol=1e-6)
    for o, p in zip(out, params):
        np.testing.assert_array_equal(o, p.value)
    with pytest.raises(TypeError, match="Parameter"):
        P.AdamWeightDecay()(*inputs)


def _tf_patches(x, k, s, r, padding):
    """TensorFlow's extract_image_patches in NumPy, NCHW in and out, depth ordered (kh, kw, C)."""
    n, c, h, w = x.shape
    eff = [(k[i] - 1) * r[i] + 1 for i in range(2)]
    if padding == "SAME":
        out = [-(-size // st) for size, st in zip((h, w), s)]
        pad = [max((o - 1) * st + e - size, 0) for o, st, e, size in zip(out, s, eff, (h, w))]
        x = np.pad(x, ((0, 0), (0, 0), (pad[0] // 2, pad[0] - pad[0] // 2), (pad[1] // 2, pad[1] - pad[1] // 2)))
    else:
        out = [(size - e) // st + 1 for size, e, st in zip((h, w), eff, s)]
    res = np.zeros((n, k[0] * k[1] * c, out[0], out[1]), x.dtype)
    for i in range(out[0]):
        for j in range(out[1]):
            for a in range(k[0]):
                for b in range(k[1]):
                    res[:, (a * k[1] + b) * c:(a * k[1] + b + 1) * c, i, j] = \
                        x[:, :, i * s[0] + a * r[0], j * s[1] + b * r[1]]
    return res


@pytest.mark.parametrize("name", ["ExtractImagePatches__valid", "ExtractImagePatches__same",
                                  "ExtractImagePatches__rates"])
def test_extract_image_patches_matches_tensorflow_semantics(name):
    """MindSpore 2.10's CPU build has no kernel (RuntimeError): checked against TensorFlow's definition."""
    case = DATA[name]
    assert case["error"] == "RuntimeError"
    k, s, r, padding = case["ctor"]
    x = case["inputs"][0]
    got = P.ExtractImagePatches(k, s, r, padding)(ms.Tensor(x))
    np.testing.assert_array_equal(got, _tf_patches(x, k[2:], s[2:], r[2:], padding))


def test_randperm():
    """No CPU kernel in MindSpore 2.10: a permutation of 0..n-1, then the padding."""
    ms.set_seed(3)
    out = P.Randperm(6, -1)(ms.Tensor([4], ms.int32))
    assert out.dtype == jnp.int32 and out.shape == (6,)
    assert sorted(np.asarray(out[:4]).tolist()) == [0, 1, 2, 3] and np.asarray(out[4:]).tolist() == [-1, -1]
    with pytest.raises(ValueError, match="max_length"):
        P.Randperm(3)(ms.Tensor([4], ms.int32))


def test_composite_sequence_helpers_have_their_graph_meaning():
    assert C.tail((1, 2, 3)) == (2, 3)
    assert C.zip_operation((1, 2), (3, 4, 5)) == ((1, 3), (2, 4))
    assert C.ms_hasnext((1,)) and not C.ms_hasnext(())
    assert C.ms_next([1, 2, 3]) == (1, (2, 3))
    assert len(C.iter_converter(ms.ops.ones((3, 2)))) == 3
    with pytest.raises(NotImplementedError, match="ms.grad"):
        C.env_get(None, None)
    x = ms.Tensor([1., 2.])
    block = C.recompute_block(lambda v: ms.ops.sin(v) * v)
    np.testing.assert_allclose(ms.grad(lambda v: block(v).sum())(x), jax.grad(lambda v: (jnp.sin(v) * v).sum())(x),
                               rtol=1e-6)


def test_primitives_compose_with_jit_and_grad():
    x = ms.Tensor(np.random.default_rng(0).normal(size=(1, 2, 4, 4, 4)).astype(np.float32))
    w = ms.Tensor(np.random.default_rng(1).normal(size=(3, 2, 2, 2, 2)).astype(np.float32))
    conv = P.Conv3D(3, 2)
    pool = P.AvgPool3D(2, 2)
    f = lambda x: pool(conv(x, w)).sum()  # noqa: E731
    np.testing.assert_allclose(ms.jit(f)(x), f(x), rtol=1e-5)
    ref = jax.grad(lambda x: jax.lax.reduce_window(
        jax.lax.conv_general_dilated(x, w, (1, 1, 1), "VALID"), 0., jax.lax.add, (1, 1, 2, 2, 2), (1, 1, 2, 2, 2),
        "VALID").sum() / 8)(x)
    np.testing.assert_allclose(ms.grad(f)(x), ref, rtol=1e-5, atol=1e-6)
