"""``cellkit.numpy`` against ``mindspore.numpy``, recorded under MindSpore 2.10.

Every recorded case (``tests/fixtures/record/numpy_cases.py``) is replayed: where MindSpore
returned, cellkit must return the same values and dtypes (a 64-bit MindSpore dtype is its 32-bit
counterpart when ``jax_enable_x64`` is off); where MindSpore refused a call in the ``numpy_errors``
family, cellkit must raise the same exception type. Elsewhere MindSpore's refusals are its CPU
kernels' or its input checks' (an int32 ``exp``, a list where it wants a Tensor, an empty
``arange``, a nuclear norm): cellkit computes those (docs/differences.md), checked against NumPy
where NumPy has the function, or refuses them too, with the same exception type.
"""

import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import cellkit as ms
import cellkit.numpy as mnp
from ms_fixtures import load

FAMILIES = ["numpy_unary", "numpy_binary", "numpy_reduce", "numpy_creation", "numpy_shape", "numpy_math",
            "numpy_fft", "numpy_dtypes", "numpy_errors"]
FIXTURES = {family: load(family) for family in FAMILIES}
CASES = [(family, name) for family in FAMILIES for name in FIXTURES[family]]
SHAPE_ONLY = {"rand", "randn", "randint", "empty", "empty_like"}
NAMES = load("numpy_names")

# Where MindSpore 2.10's answer is wrong, cellkit gives NumPy's (docs/differences.md).
WRONG_IN_MINDSPORE = {
    "binary/add:10": "int8 + uint8 wraps by 256 (2 + 0 gives -254)",
    "binary/hypot:10": "hypot of int8 and uint8 is nan",
    "reduce/nanmean:5": "nanmean of a bool Tensor counts wrongly",
    "reduce/nanstd:5": "nanstd of a bool Tensor counts wrongly",
    "reduce/nanvar:5": "nanvar of a bool Tensor counts wrongly",
    "fft/fft.ihfftn:0": "ihfftn returns hfftn's real output, not the inverse transform",
    "dtypes/add:3": "int16 + uint8 wraps by 256",
    "dtypes/arange:4": "arange computes in float32: every integer near 2**31 comes out as 2147483648",
    "dtypes/nanmean:2": "nanmean ignores an integer dtype= (gives int32)",
    "dtypes/nanmean:3": "nanmean ignores dtype=bool_ (gives int32)",
}
# Values C leaves undefined (a negative float cast to uint8: MindSpore wraps, XLA saturates; an integer
# division by zero): dtype and shape are compared.
UNDEFINED_VALUES = {"dtypes/matmul:2", "dtypes/reciprocal:5"}


def to_cellkit(v):
    if isinstance(v, np.ndarray):
        return jnp.asarray(v)
    if isinstance(v, str) and v.startswith("dtype:"):
        return getattr(mnp, v[6:])
    if isinstance(v, str) and v.startswith("fn:"):
        return getattr(mnp, v[3:])
    if isinstance(v, str) and v.startswith("slice:"):
        return slice(*[None if p == "" else complex(p) if p.endswith("j") else int(p) for p in v[6:].split(":")])
    if isinstance(v, (list, tuple)):
        return type(v)(to_cellkit(e) for e in v)
    return v


def to_numpy(v):
    """The inputs as NumPy takes them (for the cases MindSpore refuses and cellkit computes)."""
    if isinstance(v, str) and v.startswith("dtype:"):
        return np.dtype(v[6:].rstrip("_"))
    if isinstance(v, str) and v.startswith("fn:"):
        return getattr(np, v[3:])
    if isinstance(v, (list, tuple)):
        return type(v)(to_numpy(e) for e in v)
    return v


def function(module, name):
    obj = module
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def call(module, fn, args, kwargs):
    f = function(module, fn)
    if fn in ("mgrid", "ogrid"):
        return f[args[0]]
    return f(*args, **kwargs)


def want_dtype(dtype):
    return jax.dtypes.canonicalize_dtype(dtype)


def assert_same(got, want, where, shape_only=False):
    if isinstance(want, np.ndarray):
        got_np = np.asarray(got)
        assert got_np.shape == want.shape, f"{where}: shape {got_np.shape} != MindSpore's {want.shape}"
        assert got_np.dtype == want_dtype(want.dtype), f"{where}: dtype {got_np.dtype}, MindSpore {want.dtype}"
        if shape_only:
            return
        if want.dtype.kind in "fc":
            tol = 2e-3 if want.dtype == np.float16 else 3e-5
            np.testing.assert_allclose(got_np, want, rtol=max(tol, 1e-4), atol=tol, equal_nan=True, err_msg=where)
        else:
            np.testing.assert_array_equal(got_np, want, err_msg=where)
    elif isinstance(want, (tuple, list)):
        assert type(got) is type(want), f"{where}: got {type(got).__name__}, MindSpore {type(want).__name__}"
        assert len(got) == len(want), f"{where}: {len(got)} results, MindSpore {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{where}[{i}]", shape_only)
    elif isinstance(want, str) and want.startswith("dtype:"):
        assert np.dtype(got) == np.dtype(want[6:]), f"{where}: {got!r} != {want}"
    elif isinstance(want, bool):
        assert got is want, f"{where}: {got!r} != {want!r}"
    elif isinstance(want, (int, float)):
        assert type(got) is type(want) and got == pytest.approx(want), f"{where}: {got!r} != {want!r}"
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"


# NumPy 2's names for functions mindspore.numpy keeps under NumPy 1's.
NUMPY_RENAMES = {"trapz": "trapezoid", "in1d": "isin", "sometrue": "any"}


def assert_like_numpy(got, fn, args, kwargs, where):
    ref = getattr(np, NUMPY_RENAMES.get(fn, fn), None) if "." not in fn else None
    if ref is None or fn in SHAPE_ONLY:
        return
    try:
        want = ref(*to_numpy(list(args)), **{k: to_numpy(v) for k, v in kwargs.items()})
    except Exception:  # noqa: BLE001 - NumPy refuses it too: cellkit's answer is its own
        return
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, f"{where}: shape {g.shape}, NumPy {w.shape}"
        if w.dtype.kind in "fc" or g.dtype.kind in "fc":
            np.testing.assert_allclose(g.astype(np.complex128), w.astype(np.complex128), rtol=2e-3, atol=2e-3,
                                       equal_nan=True, err_msg=where)
        else:
            np.testing.assert_array_equal(g, w.astype(g.dtype), err_msg=where)


@pytest.mark.parametrize("family,name", CASES, ids=[f"{f[6:]}-{n}" for f, n in CASES])
def test_matches_mindspore(family, name):
    case = FIXTURES[family][name]
    fn = name.split(":")[0]
    args = to_cellkit(case["inputs"])
    kwargs = {k: to_cellkit(v) for k, v in case["kwargs"].items()}
    if f"{family[6:]}/{name}" in WRONG_IN_MINDSPORE:
        got = call(mnp, fn, args, kwargs)
        if fn == "fft.ihfftn":
            x = case["inputs"][0]
            want = np.conj(np.fft.rfftn(x)) / x.size
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-5)
        else:
            assert_like_numpy(got, fn, case["inputs"], case["kwargs"], name)
    elif "error" not in case:
        assert_same(call(mnp, fn, args, kwargs), case["output"], name,
                    shape_only=fn in SHAPE_ONLY or f"{family[6:]}/{name}" in UNDEFINED_VALUES)
    elif family == "numpy_errors":
        with pytest.raises(getattr(__builtins__, case["error"], None) or Exception):
            call(mnp, fn, args, kwargs)
    else:
        try:
            got = call(mnp, fn, args, kwargs)
        except Exception as e:  # noqa: BLE001 - refused too: the same kind of error
            # A kernel's RuntimeError on bad shapes is a ValueError naming them here.
            allowed = {case["error"]} | ({"ValueError"} if case["error"] == "RuntimeError" else set())
            assert type(e).__name__ in allowed, f"{name}: {type(e).__name__}, MindSpore {case['error']}"
            return
        assert_like_numpy(got, fn, case["inputs"], case["kwargs"], name)


def test_public_names_are_mindspores():
    want = set(NAMES["mindspore.numpy"]["output"])
    got = {n for n in dir(mnp) if not n.startswith("_")}
    assert got == want, (sorted(want - got), sorted(got - want))
    assert set(mnp.__all__) == want
    want_fft = set(NAMES["mindspore.numpy.fft"]["output"])
    assert {n for n in dir(mnp.fft) if not n.startswith("_")} == want_fft


def test_kinds_and_lists_are_mindspores():
    for name, kind in NAMES["mindspore.numpy"]["output"].items():
        obj = getattr(mnp, name)
        if kind == "function":
            assert callable(obj) and not isinstance(obj, type), name
        elif kind == "dtype":
            assert isinstance(obj, ms.dtype.Type), name
        elif kind == "list":
            assert isinstance(obj, list), name
        elif kind == "module":
            assert inspect.ismodule(obj), name
    for name, value in NAMES["lists"]["output"].items():
        assert getattr(mnp, name) == value, name
    for name, value in NAMES["constants"]["output"].items():
        assert str(getattr(mnp, name)) == value, name


def test_signatures_are_mindspores():
    recorded = NAMES["signatures"]["output"]
    assert len(recorded) > 250
    for name, want in recorded.items():
        got = str(inspect.signature(function(mnp, name)))
        want = want.replace("mindspore.float32", "Float32").replace("mindspore.int32", "Int32")
        assert got == want, f"{name}{got}, MindSpore {name}{want}"


def test_signatures_take_arguments_by_mindspores_names():
    assert str(inspect.signature(mnp.arange)) == "(start, stop=None, step=None, dtype=None)"
    assert str(inspect.signature(mnp.roll)) == "(a, shift, axis=None)"
    assert str(inspect.signature(mnp.arccos)) == "(input, dtype=None)"
    assert str(inspect.signature(mnp.rand)) == "(*shape, dtype=Float32)"
    assert str(inspect.signature(mnp.fft.fft2)) == "(a, s=None, axes=(-2, -1), norm=None)"
    assert mnp.arccos(input=mnp.array([1.0])).dtype == jnp.float32


def test_python_data_is_32_bit_in_both_modes():
    assert mnp.array([1, 2]).dtype == jnp.int32
    assert mnp.arange(0.0, 1.0, 0.5).dtype == jnp.float32
    assert mnp.add(mnp.array([1, 2]), 2.5).dtype == jnp.float32
    assert mnp.mean([1.0, 2.0]).dtype == jnp.float32


def test_works_under_jit_and_grad():
    x = jnp.arange(12.0, dtype=jnp.float32).reshape(3, 4)
    f = lambda t: mnp.sum(mnp.roll(t, 1, axis=1) * mnp.arange(4, dtype=mnp.float32))  # noqa: E731
    np.testing.assert_allclose(jax.jit(f)(x), f(x))
    g = jax.grad(f)(x)
    np.testing.assert_allclose(g, np.broadcast_to(np.roll(np.arange(4.0), -1), (3, 4)))
    check_grads(lambda t: mnp.std(mnp.tanh(t), axis=1).sum(), (x / 10,), order=1, modes=("rev",),
                              atol=1e-2, rtol=1e-2)


def test_random_draws_follow_set_seed():
    ms.set_seed(3)
    a = mnp.rand(2, 2)
    ms.set_seed(3)
    assert np.array_equal(np.asarray(mnp.rand(2, 2)), np.asarray(a))
    r = mnp.randint(1, 5, (100,))
    assert r.dtype == jnp.int32 and int(r.min()) >= 1 and int(r.max()) <= 4


def test_reached_from_the_top_level():
    import importlib
    assert ms.numpy is mnp is importlib.import_module("cellkit.numpy")


# Functions whose output shape depends on the input's values (as in NumPy): eager only.
VALUE_SHAPED = {"unique", "argwhere", "intersect1d", "setdiff1d", "bincount", "array_str", "size", "isscalar",
                "histogram", "histogram2d", "histogramdd", "histogram_bin_edges", "array_equal", "array_equiv",
                "gradient", "mgrid", "ogrid", "result_type", "promote_types", "in1d", "piecewise", "apply_over_axes",
                "apply_along_axis", "rand", "randn", "randint"}


def _first_cases():
    seen = {}
    for family in FAMILIES[:-1]:
        for name, case in FIXTURES[family].items():
            fn = name.split(":")[0]
            if "error" not in case and fn not in seen and f"{family[6:]}/{name}" not in WRONG_IN_MINDSPORE:
                seen[fn] = (family, name)
    return sorted(seen.values())


JIT_CASES = [c for c in _first_cases() if c[1].split(":")[0] not in VALUE_SHAPED]


@pytest.mark.slow  # about 45 s on one core: one compilation per function
@pytest.mark.parametrize("family,name", JIT_CASES, ids=[n for _, n in JIT_CASES])
def test_under_jit(family, name):
    case = FIXTURES[family][name]
    fn = name.split(":")[0]
    args = to_cellkit(case["inputs"])
    kwargs = {k: to_cellkit(v) for k, v in case["kwargs"].items()}
    leaves, tree = jax.tree.flatten((args, kwargs), is_leaf=lambda v: not isinstance(v, (list, tuple, dict)))
    traced = [i for i, v in enumerate(leaves) if isinstance(v, jax.Array)]

    def run(*arrays):
        filled = list(leaves)
        for i, a in zip(traced, arrays):
            filled[i] = a
        a, k = jax.tree.unflatten(tree, filled)
        return call(mnp, fn, a, k)

    got = jax.jit(run)(*[leaves[i] for i in traced])
    assert_same(got, case["output"], f"{name} under jit")


def test_parameters_are_read_as_their_values():
    p = ms.Parameter(ms.Tensor([[1.0, -2.0], [3.0, 4.0]]), name="w")
    np.testing.assert_allclose(mnp.sum(p), 6.0)
    np.testing.assert_allclose(mnp.roll(p, 1, axis=1), [[-2.0, 1.0], [4.0, 3.0]])

    @ms.jit
    def step():
        return mnp.mean(mnp.abs(p))
    np.testing.assert_allclose(step(), 2.5)


@pytest.mark.parametrize("call,kind,words", [
    (lambda: mnp.zeros((2, -1)), ValueError, ["zeros", "no less than 0"]),
    (lambda: mnp.ones((2,), "cheese"), TypeError, ["ones", "cheese"]),
    (lambda: mnp.reshape(mnp.ones((2, 3)), (4, 4)), ValueError, ["reshape", "(4, 4)", "6"]),
    (lambda: mnp.add(mnp.ones((2, 3)), mnp.ones(2)), ValueError, ["(2, 3)", "(2,)"]),
    (lambda: mnp.matmul(mnp.ones((2, 3)), mnp.ones(2)), ValueError, ["matmul", "(2, 3)", "(2,)"]),
    (lambda: mnp.mean(mnp.ones((2, 3)), axis=2), ValueError, ["mean", "axis 2"]),
    (lambda: mnp.where(mnp.ones(2) > 0), TypeError, ["where", "argwhere"]),
    (lambda: mnp.array("text"), TypeError, ["array", "str"]),
    (lambda: mnp.identity(2.5), TypeError, ["identity", "2.5"]),
    (lambda: mnp.eye(2, 2.5), TypeError, ["eye", "2.5"]),
])
def test_errors_name_the_function_and_the_argument(call, kind, words):
    with pytest.raises(kind) as info:
        call()
    for word in words:
        assert word in str(info.value), (word, str(info.value))


GRAD_FUNCTIONS = {
    "roll": lambda t: mnp.roll(t, (1, -1), (0, 1)),
    "mean": lambda t: mnp.mean(t, axis=1),
    "var": lambda t: mnp.var(t, axis=0, ddof=1),
    "matmul": lambda t: mnp.matmul(t, mnp.transpose(t)),
    "tensordot": lambda t: mnp.tensordot(t, t, axes=([1], [1])),
    "cumprod": lambda t: mnp.cumprod(t, axis=1),
    "clip": lambda t: mnp.clip(t, -0.5, 0.5),
    "where": lambda t: mnp.where(t > 0, mnp.exp(t), mnp.square(t)),
    "pad": lambda t: mnp.pad(t, 1, mode="reflect"),
    "norm": lambda t: mnp.norm(t, axis=1),
    "logaddexp": lambda t: mnp.logaddexp(t, mnp.flip(t)),
    "arctan2": lambda t: mnp.arctan2(t, 1.5 + t * t),
    "polyval": lambda t: mnp.polyval(t[0], t[1]),
    "interp": lambda t: mnp.interp(t, mnp.array([-2.0, 0.0, 2.0]), mnp.array([1.0, -1.0, 3.0])),
}


@pytest.mark.parametrize("name", sorted(GRAD_FUNCTIONS))
def test_gradients_match_finite_differences(name):
    x = jnp.asarray([[0.3, -0.7, 1.1], [-1.3, 0.45, 0.8]], jnp.float32)
    f = GRAD_FUNCTIONS[name]
    check_grads(lambda t: jnp.sum(f(t) * jnp.arange(1, f(t).size + 1, dtype=t.dtype).reshape(f(t).shape)),
                (x,), order=1, modes=("rev",), eps=1e-3, atol=2e-2, rtol=2e-2)


CREATED = [
    ("zeros", lambda n: mnp.zeros((n, 3)), lambda n: jnp.zeros((n, 3), jnp.float32)),
    ("ones int8", lambda n: mnp.ones(n, "int8"), lambda n: jnp.ones(n, jnp.int8)),
    ("zeros_like", lambda n: mnp.zeros_like(np.ones((n, 2), np.int32)), lambda n: jnp.zeros((n, 2), jnp.int32)),
    ("arange", lambda n: mnp.arange(0, n, 0.5), lambda n: jnp.arange(0, n, 0.5, dtype=jnp.float32)),
    ("eye", lambda n: mnp.eye(n, n + 1, 1), lambda n: jnp.eye(n, n + 1, 1, dtype=jnp.float32)),
    ("identity", lambda n: mnp.identity(n, "int32"), lambda n: jnp.identity(n, jnp.int32)),
    ("tri", lambda n: mnp.tri(n, 4, -1), lambda n: jnp.tri(n, 4, -1, dtype=jnp.float32)),
    ("asarray of NumPy", lambda n: mnp.asarray(np.linspace(0, 1, n)), lambda n: jnp.asarray(np.linspace(0, 1, n))),
    ("array of a list", lambda n: mnp.array([[1.5, -2.0]] * n), lambda n: jnp.array([[1.5, -2.0]] * n, jnp.float32)),
]


@pytest.mark.parametrize("name, make, ref", CREATED, ids=[c[0] for c in CREATED])
def test_created_arrays_compile_nothing_per_shape(name, make, ref):
    from compile_count import compiles
    make(2)
    with compiles() as made:
        outs = [make(n) for n in (3, 5)]
    assert made["n"] == 0
    for n, out in zip((3, 5), outs):
        expected = ref(n)
        assert out.dtype == expected.dtype and out.shape == expected.shape
        np.testing.assert_array_equal(out, expected)
