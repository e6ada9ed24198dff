"""Random ops and Primitives: shapes, dtypes and refusals against MindSpore 2.10 (fixture
``ops_array_random``); ranges, statistics and determinism under ``set_seed`` checked here,
since values come from JAX's generator, not MindSpore's."""

import builtins

import jax
import numpy as np
import pytest

import cellkit as ms
from cellkit import ops
from cellkit.ops import operations as P
from ms_fixtures import load
from ops_cases import expected_dtype, to_cellkit

CASES = load("ops_array_random")


def _call(case):
    args, kwargs = to_cellkit(case["inputs"]), to_cellkit(case.get("kwargs", {}))
    if "ctor" in case:
        return getattr(P, case["op"])(*to_cellkit(case["ctor"]))(*args)
    return getattr(ops, case["op"])(*args, **kwargs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_shape_dtype_and_refusals_match_mindspore(name):
    case = CASES[name]
    if "error" in case:
        with pytest.raises(getattr(builtins, case["error"])):
            _call(case)
        return
    out, expected = _call(case), case["output"]
    outs, metas = (out, expected) if isinstance(expected, list) else ((out,), [expected])
    assert len(outs) == len(metas)
    for o, meta in zip(outs, metas):
        o = np.asarray(o)
        assert list(o.shape) == meta["shape"] and o.dtype == expected_dtype(meta["dtype"]), name


N = 4000
PROBS = ms.Tensor([0.1, 0.6, 0.3])

# name: (draw, check of the sample); sizes modest, tolerances about 5 standard errors
STATS = {
    "rand": (lambda: ops.rand(N), lambda s: s.min() >= 0 and s.max() < 1 and abs(s.mean() - 0.5) < 0.03),
    "randn": (lambda: ops.randn(N), lambda s: abs(s.mean()) < 0.08 and abs(s.std() - 1) < 0.05),
    "uniform": (lambda: ops.uniform((N,), ms.Tensor(-1.), ms.Tensor(3.)),
                lambda s: s.min() >= -1 and s.max() < 3 and abs(s.mean() - 1) < 0.1),
    "uniform_int": (lambda: ops.uniform((N,), ms.Tensor(2), ms.Tensor(5), dtype=ms.int32),
                    lambda s: set(np.unique(s)) == {2, 3, 4}),
    "randint": (lambda: ops.randint(-2, 3, (N,)), lambda s: set(np.unique(s)) == {-2, -1, 0, 1, 2}),
    "normal": (lambda: ops.normal((N, 2), ms.Tensor([0., 10.]), ms.Tensor([1., 2.])),
               lambda s: np.allclose(s.mean(0), [0, 10], atol=0.15) and np.allclose(s.std(0), [1, 2], rtol=0.06)),
    "laplace": (lambda: ops.laplace((N,), ms.Tensor(1.), ms.Tensor(2.)),
                lambda s: abs(s.mean() - 1) < 0.25 and abs(s.var() / 8 - 1) < 0.2),
    "standard_laplace": (lambda: ops.standard_laplace((N,)), lambda s: abs(s.mean()) < 0.12),
    "gamma": (lambda: ops.gamma((N,), ms.Tensor(3.), ms.Tensor(2.)),
              lambda s: s.min() > 0 and abs(s.mean() - 1.5) < 0.08),
    "poisson": (lambda: ops.poisson((N,), ms.Tensor(4.)), lambda s: abs(s.mean() - 4) < 0.2 and (s == np.round(s)).all()),
    "random_gamma": (lambda: ops.random_gamma((N,), ms.Tensor([1., 5.])),
                     lambda s: s.shape == (N, 2) and np.allclose(s.mean(0), [1, 5], rtol=0.07)),
    "random_poisson": (lambda: ops.random_poisson((N,), ms.Tensor([2.])), lambda s: abs(s.mean() - 2) < 0.15),
    "bernoulli": (lambda: ops.bernoulli(ops.zeros(N), 0.3), lambda s: abs(s.mean() - 0.3) < 0.04),
    "multinomial": (lambda: ops.multinomial(PROBS, N), lambda s: np.allclose(np.bincount(s, minlength=3) / N,
                                                                          [0.1, 0.6, 0.3], atol=0.04)),
    "random_categorical": (lambda: ops.random_categorical(ops.log(PROBS)[None], N),
                           lambda s: np.allclose(np.bincount(s[0], minlength=3) / N, [0.1, 0.6, 0.3], atol=0.04)),
    "multinomial_no_replacement": (lambda: ops.multinomial(ms.ops.ones((50, 6)), 6, replacement=False),
                                   lambda s: all(sorted(row) == list(range(6)) for row in s.tolist())),
    "randperm": (lambda: ops.randperm(50), lambda s: sorted(s.tolist()) == list(range(50))),
    "shuffle": (lambda: ops.shuffle(ms.ops.arange(50)), lambda s: sorted(s.tolist()) == list(range(50))),
    "choice_with_mask": (lambda: ops.choice_with_mask(ms.Tensor(np.arange(60).reshape(6, 10) % 7 == 0), 12)[0],
                         lambda s: s.shape == (12, 2) and all(r * 10 + c in range(0, 60, 7) for r, c in s.tolist())),
    "truncated_normal": (lambda: P.TruncatedNormal()(ms.Tensor([N])),
                         lambda s: np.abs(s).max() <= 2 and abs(s.mean()) < 0.06),
}


@pytest.mark.parametrize("name", sorted(STATS))
def test_statistics(name):
    draw, check = STATS[name]
    sample = np.asarray(draw())
    assert check(sample), f"{name}: sample mean {sample.mean()}"


@pytest.mark.parametrize("name", sorted(STATS))
def test_set_seed_fixes_the_sequence(name):
    draw, _ = STATS[name]
    ms.set_seed(11)
    first, second = np.asarray(draw()), np.asarray(draw())
    ms.set_seed(11)
    np.testing.assert_array_equal(np.asarray(draw()), first)
    np.testing.assert_array_equal(np.asarray(draw()), second)
    assert not np.array_equal(first, second)


def test_jit_draws_afresh_each_call_and_follows_set_seed():
    @ms.jit
    def draw(x):
        return x + ops.randn(3), ops.randint(0, 100, (3,)), P.UniformReal()((2,))

    ms.set_seed(5)
    a, b = draw(ms.Tensor(0.)), draw(ms.Tensor(0.))
    assert not any(np.array_equal(x, y) for x, y in zip(a, b))
    ms.set_seed(5)
    again = draw(ms.Tensor(0.))
    for x, y in zip(a, again):
        np.testing.assert_array_equal(x, y)


def test_choice_with_mask_pads_and_compiles():
    mask = ms.Tensor([[True, False], [False, True]])
    indices, valid = ms.jit(lambda m: ops.choice_with_mask(m, 4))(mask)
    assert valid.tolist() == [True, True, False, False] and indices.dtype == np.int32
    assert sorted(map(tuple, indices[:2].tolist())) == [(0, 0), (1, 1)] and indices[2:].tolist() == [[0, 0], [0, 0]]


def test_bad_arguments():
    with pytest.raises(ValueError, match="low must be less than high"):
        ops.randint(3, 3, (2,))
    with pytest.raises(ValueError, match="int type"):
        ops.randint_like(ms.ops.ones(2), 0, 3)
    assert P.Multinomial(seed=1) == P.Multinomial(seed=1) != P.Multinomial(seed=2)


def test_eager_standard_draws_are_jax_randoms_without_a_compilation_per_shape():
    import jax
    from compile_count import compiles

    from cellkit import host_ops
    ops.randn(1)
    ops.rand(1)   # each distribution's chunk executable, once
    ms.set_seed(21)
    with compiles() as made:
        got = [ops.randn(3, 13), ops.rand(2, 17), ops.standard_normal((5, 11)), ops.randn_like(ops.zeros((19,)))]
    if jax.default_backend() == "cpu":
        assert made["n"] == 0
    ms.set_seed(21)
    keys = [ms.random.next_key() for _ in got]
    f32 = np.float32   # MindSpore's default; jax.random's follows jax_enable_x64
    want = [jax.random.normal(keys[0], (3, 13), f32), jax.random.uniform(keys[1], (2, 17), f32),
            jax.random.normal(keys[2], (5, 11), f32), jax.random.normal(keys[3], (19,), f32)]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    # A shape drawn over and over switches to jax.random's own executable: the same numbers.
    ms.set_seed(22)
    draws = [ops.randn(2, 23) for _ in range(host_ops.HOT + 2)]
    ms.set_seed(22)
    last_key = [ms.random.next_key() for _ in draws][-1]
    np.testing.assert_array_equal(np.asarray(draws[-1]), np.asarray(jax.random.normal(last_key, (2, 23), np.float32)))


@pytest.mark.parametrize("shape, keep", [((3, 7), 0.5), ((1000,), 0.9), ((70001,), 0.3), ((2, 2), 1.0)])
def test_a_dropout_mask_is_jax_random_bernoullis_without_a_compilation(shape, keep):
    from compile_count import compiles
    from cellkit.ops.function import random_func
    ms.set_seed(8)
    with compiles() as made:
        got = random_func.bernoulli_mask(keep, shape)
    ms.set_seed(8)
    want = jax.random.bernoulli(ms.random.next_key(), keep, shape)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.bool_ and made["n"] == 0


def test_dropout_inside_an_eager_grad_compiles_nothing_and_keeps_jaxs_mask():
    from compile_count import compiles
    x = ms.Tensor(np.arange(1, 13, dtype=np.float32).reshape(3, 4))
    for p in np.linspace(0.05, 0.95, 12):   # (a schedule of rates before it changes nothing)
        ops.dropout(ms.Tensor(np.ones((70001,), np.float32)), p=float(p))
    ms.set_seed(9)
    with compiles() as made:
        value, grad = ms.value_and_grad(lambda a: (ops.dropout(a, p=0.25) ** 2).sum())(x)
    ms.set_seed(9)
    mask = np.asarray(jax.random.bernoulli(ms.random.next_key(), 0.75, (3, 4)))
    kept = np.where(mask, np.asarray(x) / np.float32(0.75), 0)
    assert made["n"] == 0
    np.testing.assert_allclose(value, (kept ** 2).sum(), rtol=1e-6)
    np.testing.assert_allclose(grad, 2 * kept / np.float32(0.75), rtol=1e-6)
