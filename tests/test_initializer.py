import math

import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit.common import initializer as init
from cellkit.common.initializer import initializer

SHAPE = (400, 300)


def draw(obj, shape=SHAPE, dtype=ms.float32):
    return np.asarray(initializer(obj, shape, dtype).init_data())


def test_constant_like_initializers():
    np.testing.assert_array_equal(draw("ones", (2, 3)), np.ones((2, 3)))
    np.testing.assert_array_equal(draw("zeros", (2,)), np.zeros(2))
    np.testing.assert_array_equal(draw(init.Constant(3.5), (2,)), [3.5, 3.5])
    np.testing.assert_array_equal(draw(7, (2,), ms.int32), [7, 7])
    np.testing.assert_array_equal(draw("identity", (2, 3)), np.eye(2, 3))
    d = draw(init.Dirac(), (2, 2, 3, 3))
    assert d[0, 0, 1, 1] == 1 and d[1, 1, 1, 1] == 1 and d.sum() == 2


def test_names_are_case_insensitive_and_unknown_is_clear():
    np.testing.assert_array_equal(draw("ONES", (2,)), [1, 1])
    assert isinstance(initializer("Xavier_Uniform", (2, 2)).init, init.XavierUniform)
    with pytest.raises(ValueError, match="unknown initializer 'nope'; .*known names: .*xavier_uniform"):
        initializer("nope", (2,))
    with pytest.raises(TypeError, match="bool"):
        initializer(True, (2,))


def test_normal_and_uniform_statistics():
    ms.set_seed(1)
    n = draw(init.Normal(sigma=0.2, mean=1.0))
    assert abs(n.mean() - 1.0) < 0.01 and abs(n.std() - 0.2) < 0.01
    u = draw(init.Uniform(0.5))
    assert -0.5 <= u.min() and u.max() <= 0.5 and abs(u.std() - 0.5 / math.sqrt(3)) < 0.01
    default = draw("normal")
    assert abs(default.std() - 0.01) < 0.001


def test_truncated_normal_bounds_are_absolute():
    t = draw(init.TruncatedNormal(sigma=1.0, mean=5.0, a=4.0, b=6.0))
    assert t.min() >= 4.0 and t.max() <= 6.0


def test_fan_based_bounds():
    fan_in, fan_out = SHAPE[1], SHAPE[0]
    xu = draw(init.XavierUniform())
    assert np.abs(xu).max() <= math.sqrt(6 / (fan_in + fan_out)) + 1e-6
    xn = draw(init.XavierNormal(gain=2))
    assert abs(xn.std() - 2 * math.sqrt(2 / (fan_in + fan_out))) < 0.002
    hu = draw(init.HeUniform())  # leaky_relu with slope 0: gain sqrt(2)
    assert abs(np.abs(hu).max() - math.sqrt(6 / fan_in)) < 1e-3
    hn = draw(init.HeNormal(mode="fan_out", nonlinearity="relu"))
    assert abs(hn.std() - math.sqrt(2 / fan_out)) < 0.003
    conv = draw(init.HeUniform(math.sqrt(5)), (8, 4, 3, 3))  # MindSpore's Dense/Conv default
    assert np.abs(conv).max() <= 1 / math.sqrt(4 * 9) + 1e-6
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        draw(init.XavierUniform(), (3,))


def test_orthogonal():
    q = draw(init.Orthogonal(gain=2.0), (6, 4))
    np.testing.assert_allclose(q.T @ q, 4 * np.eye(4), atol=1e-4)


def test_seed_makes_initialisation_reproducible():
    ms.set_seed(1)
    a = draw("normal", (3, 3))
    ms.set_seed(1)
    b = draw("normal", (3, 3))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, draw("normal", (3, 3)))


def test_tensor_init_and_shape_check():
    data = ms.Tensor(np.arange(6).reshape(2, 3), ms.float32)
    np.testing.assert_array_equal(draw(data, (2, 3)), np.arange(6).reshape(2, 3))
    with pytest.raises(ValueError, match="has shape \\(2, 3\\) but shape \\(3, 2\\)"):
        initializer(data, (3, 2))
    lazy = initializer("ones", 3)
    assert lazy.shape == (3,) and lazy.dtype == ms.float32
    assert float(jnp.sum(lazy.init_data())) == 3


def test_seed_initialisation_examples_run():
    # The second seed's three Conv2d initialisation cells.
    ms.set_seed(1)
    input_data = ms.Tensor(np.ones([1, 3, 16, 50], dtype=np.float32))
    for weight_init in (init.Normal(0.2), "Normal", ms.Tensor(np.ones([64, 3, 3, 3]), dtype=ms.float32)):
        net = ms.nn.Conv2d(3, 64, 3, weight_init=weight_init)
        output = net(input_data)
        assert output.shape == (1, 64, 16, 50)
    np.testing.assert_allclose(output[0, :, 5, 5], 27.0)  # all-ones kernel on all-ones input


HOST_DRAWN = [init.Normal(0.5, 1.0), init.Uniform(0.3), init.TruncatedNormal(0.02), init.XavierUniform(),
              init.XavierNormal(), init.HeUniform(), init.HeNormal(mode="fan_out", nonlinearity="relu")]


def _compilations(fn):
    from compile_count import compiles
    with compiles() as made:
        fn()
    return made["n"]


def test_eager_random_initializers_compile_nothing_per_shape():
    """One executable per distribution (cellkit.draws), none per weight shape."""
    for obj in HOST_DRAWN:   # the stream's split and each distribution's executable, once
        draw(obj, (2, 2))

    def build():
        for i, obj in enumerate(HOST_DRAWN):
            for shape in ((7 + i, 5), (3, 4 + i, 3, 3)):
                assert initializer(obj, shape).init_data().shape == shape
    assert _compilations(build) == 0


@pytest.mark.parametrize("obj", HOST_DRAWN, ids=lambda o: type(o).__name__)
def test_eager_draws_keep_dtype_and_seed(obj):
    for dtype in (ms.float16, ms.bfloat16, ms.float32):   # half precision: jax.random itself
        ms.set_seed(7)
        a = initializer(obj, (64, 32), dtype).init_data()
        ms.set_seed(7)
        b = initializer(obj, (64, 32), dtype).init_data()
        assert a.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(np.asarray(a, np.float32), np.asarray(b, np.float32))
        assert np.isfinite(np.asarray(a, np.float32)).all() and float(jnp.std(a.astype(jnp.float32))) > 0


def test_truncated_normal_on_the_host_respects_its_bounds_and_moments():
    ms.set_seed(3)
    t = draw(init.TruncatedNormal(sigma=1.0, mean=0.0, a=-1.0, b=1.5), (500, 400))
    assert -1.0 <= t.min() and t.max() <= 1.5
    # the mean of N(0, 1) truncated to [-1, 1.5]: (pdf(-1) - pdf(1.5)) / (cdf(1.5) - cdf(-1))
    pdf = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))  # noqa: E731
    assert abs(t.mean() - (pdf(-1) - pdf(1.5)) / (cdf(1.5) - cdf(-1))) < 0.01


@pytest.mark.parametrize("obj", HOST_DRAWN, ids=lambda o: type(o).__name__)
def test_eager_draws_are_the_traced_draws(obj):
    """Eagerly, inside jit or sharded by parallel.initialize: the same numbers for the same key."""
    import jax
    key = jax.random.key(11)
    for shape in ((5, 7), (300, 260)):   # one chunk, several
        traced = jax.jit(lambda k, o=obj, s=shape: o.generate(k, s, np.dtype(np.float32)))(key)
        from cellkit.initializer import _HostDraw
        eager = _HostDraw(key)
        np.testing.assert_allclose(obj.generate(eager, shape, np.dtype(np.float32)), np.asarray(traced),
                                   rtol=2e-6, atol=1e-7)


def test_random_initializers_inside_jit_draw_with_jax_random():
    import jax
    key = jax.random.key(0)
    for obj in HOST_DRAWN:
        out = jax.jit(lambda k, o=obj: o.generate(k, (6, 4), np.dtype(np.float32)))(key)
        assert out.shape == (6, 4) and np.isfinite(np.asarray(out)).all()
