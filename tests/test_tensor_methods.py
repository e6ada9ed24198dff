"""MindSpore's Tensor methods on jax.Array, against values recorded under MindSpore 2.10.

One parametrised test replays every recorded case (``tests/fixtures/record/tensor_cases.py``)
eagerly; a representative subset per family also runs inside ``cellkit.jit`` and under
``jax.grad`` (checked with ``jax.test_util.check_grads``).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import cellkit as ms
from cellkit import tensor_methods
from ms_fixtures import load

FAMILIES = ["tensor_conversion", "tensor_shape", "tensor_math", "tensor_reduction",
            "tensor_indexing", "tensor_inplace"]
PROPERTIES = {"data", "H", "has_init"}
FIXTURES = {family: load(family) for family in FAMILIES}
CASES = [(family, name) for family in FAMILIES for name in FIXTURES[family]]

# Run inside cellkit.jit too (representative, not every method).
JIT = {"view:0", "flatten:1", "expand:1", "split:1", "transpose:0", "squeeze:1", "add:0", "clamp:1",
       "sum:0", "mean:0", "max:2", "std:1", "sort:1", "gather:0", "masked_fill:0", "topk:1", "type:1"}
# Differentiated with jax.grad and checked against finite differences.
GRAD = {"view:0", "expand:1", "narrow:0", "add:0", "div:0", "softmax:0", "addmm:0", "sum:0", "norm:2",
        "max:2", "gather:0", "masked_fill:0"}


def to_cellkit(v):
    if isinstance(v, np.ndarray):
        return jnp.asarray(v)
    if isinstance(v, str) and v.startswith("dtype:"):
        return getattr(ms, v[6:])
    if isinstance(v, tuple) and any(isinstance(e, np.ndarray) for e in v):
        return tuple(to_cellkit(e) for e in v)
    return v


def method_of(name):
    return name.split(":")[0]


def call(method, x, args, kwargs):
    if method in PROPERTIES:
        return getattr(x, method)
    return getattr(x, method)(*args, **kwargs)


def assert_same(got, want, where):
    if isinstance(want, np.ndarray):
        got_np = np.asarray(got)
        assert got_np.shape == want.shape, f"{where}: shape {got_np.shape} != MindSpore's {want.shape}"
        if want.dtype.kind in "iu":
            assert got_np.dtype.kind in "iu", f"{where}: dtype {got_np.dtype}, MindSpore {want.dtype}"
        else:
            assert got_np.dtype == jax.dtypes.canonicalize_dtype(want.dtype), \
                f"{where}: dtype {got_np.dtype}, MindSpore {want.dtype}"
        np.testing.assert_allclose(got_np.astype(np.float64) if want.dtype.kind == "f" else got_np,
                                   want, rtol=3e-5, atol=3e-6, err_msg=where)
    elif isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)), f"{where}: got {type(got).__name__}, MindSpore a sequence"
        assert len(got) == len(want), f"{where}: {len(got)} results, MindSpore {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{where}[{i}]")
    elif isinstance(want, bool):
        assert got is want or (np.ndim(got) == 0 and bool(got) is want), f"{where}: {got!r} != {want!r}"
    elif isinstance(want, (int, float)):
        assert isinstance(got, (int, float)), f"{where}: got {type(got).__name__}, MindSpore a Python number"
        assert got == pytest.approx(want, rel=1e-6), f"{where}: {got!r} != {want!r}"
    else:
        assert str(got) == str(want), f"{where}: {got!r} != {want!r}"


def inputs(family, name):
    case = FIXTURES[family][name]
    x, *args = [to_cellkit(v) for v in case["inputs"]]
    kwargs = {k: to_cellkit(v) for k, v in case["kwargs"].items()}
    return case, x, args, kwargs


@pytest.mark.parametrize("family,name", CASES, ids=[f"{f[7:]}-{n}" for f, n in CASES])
def test_method_matches_mindspore(family, name):
    case, x, args, kwargs = inputs(family, name)
    method = method_of(name)
    assert "error" not in case, f"{name}: MindSpore refused the recorded call: {case.get('message')}"
    if family == "tensor_inplace":
        with pytest.raises(TypeError, match=f"Tensor.{method}.*immutable jax.Array"):
            call(method, x, args, kwargs)
        p = ms.Parameter(x, name="p")
        assert call(method, p, args, kwargs) is p
        assert_same(p.value, case["output"], name)
        # what a rewritten ``x.<method>(...)`` rebinds x to (cellkit.rewrite)
        assert_same(tensor_methods.inplace.apply(x, method, *args, **kwargs), case["output"], f"{name} rewritten")
        return
    assert_same(call(method, x, args, kwargs), case["output"], name)
    if name in JIT:
        traced = ms.jit(lambda t: call(method, t, args, kwargs))(x)
        assert_same(traced, case["output"], f"{name} under cellkit.jit")


def _float_sum(out):
    leaves = [jnp.sum(o) for o in jax.tree.leaves(out) if jnp.issubdtype(o.dtype, jnp.floating)]
    return sum(leaves)


@pytest.mark.parametrize("family,name", [c for c in CASES if c[1] in GRAD], ids=lambda v: v)
def test_method_gradients(family, name):
    _, x, args, kwargs = inputs(family, name)
    x = x.astype(jnp.float32)
    method = method_of(name)
    check_grads(lambda t: _float_sum(call(method, jnp.asarray(t), args, kwargs)), (x,), order=1, modes=("rev",),
                eps=1e-3, atol=2e-2, rtol=2e-2)


def test_subsets_name_recorded_cases():
    names = {n for _, n in CASES}
    assert JIT <= names and GRAD <= names, (JIT | GRAD) - names


def test_every_used_tensor_name_is_available():
    import pathlib
    usage = pathlib.Path("/work/shared/mindspore-api/usage.tsv")
    x = jnp.ones((2, 2))
    names = set(tensor_methods.METHODS) | set(tensor_methods.PROPERTIES) | set(tensor_methods.INPLACE) \
        | set(tensor_methods.UNSUPPORTED) | {n for n in dir(x)}
    if usage.exists():
        used = {row.split("\t")[2] for row in usage.read_text().splitlines()[1:]
                if row.split("\t")[1] == "tensor" and int(row.split("\t")[0]) >= 1}
        # Parameter-only in MindSpore; from_numpy is Tensor's static constructor.
        missing = used - names - {"param_info", "from_numpy"}
        assert not missing, sorted(missing)
    assert hasattr(ms.Tensor, "from_numpy")


def test_methods_work_on_tracers_of_every_transform():
    x = jnp.arange(6.0).reshape(2, 3)
    f = lambda t: t.unsqueeze(0).permute(1, 2, 0).flatten(1).sum(dim=1)  # noqa: E731
    want = f(x)
    np.testing.assert_allclose(jax.jit(f)(x), want)
    np.testing.assert_allclose(jax.vmap(lambda r: r.unsqueeze(0).expand(2, 3).sum(dim=0))(x), 2 * x)
    np.testing.assert_allclose(jax.grad(lambda t: f(t).sum())(x), np.ones((2, 3)))


def test_jax_calls_keep_jax_meaning():
    x = jnp.arange(6.0).reshape(2, 3)
    assert x.view(jnp.int32).dtype == jnp.int32                         # JAX's bit view
    np.testing.assert_array_equal(x.max(0), [3.0, 4.0, 5.0])            # values, not (values, indices)
    np.testing.assert_array_equal(x.sort(), x)                           # values only
    assert isinstance(x.nonzero(), tuple)                                # JAX's tuple of index arrays
    np.testing.assert_array_equal(x.repeat(2), np.repeat(np.asarray(x), 2))  # NumPy's repeat
    assert x.flatten(order="F").tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    assert x.transpose(1, 0).shape == (3, 2)
    np.testing.assert_array_equal(x.std(1), np.std(np.asarray(x), 1))
    assert x.sum(axis=1, keepdims=True).shape == (2, 1)


def test_parameters_read_through_methods_and_update_in_place_under_jit():
    p = ms.Parameter(ms.Tensor([[1.0, -2.0], [3.0, 4.0]]), name="w")
    assert p.numel() == 4 and p.asnumpy().shape == (2, 2) and p.view(-1).shape == (4,)

    @ms.jit
    def step(delta):
        p.add_(delta).clamp_(-1.0, 3.0)
        return p.sum(dim=0)

    out = step(jnp.ones((2, 2)))
    np.testing.assert_array_equal(p.value, [[2.0, -1.0], [3.0, 3.0]])
    np.testing.assert_array_equal(out, [5.0, 2.0])
    step(jnp.ones((2, 2)))
    np.testing.assert_array_equal(p.value, [[3.0, 0.0], [3.0, 3.0]])


def test_random_in_place_methods_draw_from_the_seeded_stream():
    p = ms.Parameter(ms.Tensor(np.zeros((200,), np.float32)), name="r")
    ms.set_seed(1)
    p.uniform_(2.0, 3.0)
    first = np.asarray(p.value)
    assert first.min() >= 2.0 and first.max() < 3.0 and first.std() > 0.1
    ms.set_seed(1)
    np.testing.assert_array_equal(p.uniform_(2.0, 3.0).value, first)
    p.normal_(5.0, 0.5)
    assert abs(float(p.value.mean()) - 5.0) < 0.2 and p.dtype == ms.float32
    draws = ms.Tensor([[0.0, 1.0, 0.0]]).multinomial(4)
    np.testing.assert_array_equal(draws, [[1, 1, 1, 1]])
    assert set(np.asarray(ms.Tensor(np.full(50, 0.5, np.float32)).bernoulli()).tolist()) == {0.0, 1.0}


def test_refusals_are_clear():
    x = jnp.ones(3)
    with pytest.raises(TypeError, match=r"Tensor.register_hook\(\) is not available.*custom_vjp"):
        x.register_hook(lambda g: g)
    with pytest.raises(TypeError, match="or write x = ops.zeros_like"):
        x.zero_()
    with pytest.raises(TypeError, match="masked_select: the size of its result depends on the data"):
        jax.jit(lambda t: t.masked_select(t > 0))(x)
    with pytest.raises(ValueError, match="clamp: give min, max or both"):
        x.clamp()
    with pytest.raises(ValueError, match="rounding_mode"):
        x.div(2, rounding_mode="up")


def test_install_is_idempotent_and_additive():
    from jax._src.array import ArrayImpl
    before = ArrayImpl.sum
    tensor_methods.install()
    assert ArrayImpl.sum is before
    for name in tensor_methods.METHODS:
        assert getattr(ArrayImpl, name).__name__ == name
