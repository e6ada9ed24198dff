"""BatchNorm1d/2d/3d, SyncBatchNorm, LayerNorm, GroupNorm, InstanceNorm and the functional norms:
parameters, reprs, formulas, running statistics, MindSpore-recorded values."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit import nn, ops, parallel
from cellkit.ops import operations as P
from ms_fixtures import load
from nn_helpers import FLOAT, close, grads_ok, params_of, rand, set_params


def np_bn(x, mean, var, gamma, beta, eps, axis=1):
    shape = [1] * x.ndim
    shape[axis] = -1
    r = lambda v: np.asarray(v, np.float64).reshape(shape)   # noqa: E731
    return (np.asarray(x, np.float64) - r(mean)) / np.sqrt(r(var) + eps) * r(gamma) + r(beta)


def batch_stats(x, axis=1):
    x = np.asarray(x, np.float64)
    axes = tuple(i for i in range(x.ndim) if i != axis)
    return x.mean(axes), x.var(axes), x.var(axes, ddof=1)


class Net(nn.Cell):
    def __init__(self, dtype=ms.float32):
        super().__init__()
        self.bn = nn.BatchNorm2d(3, dtype=dtype)

    def construct(self, x):
        return self.bn(x)


# ----- BatchNorm: parameters and repr ---------------------------------------------------

def test_batchnorm_parameters_standalone_and_in_a_parent():
    bn = nn.BatchNorm2d(3)
    assert params_of(bn) == {
        "moving_mean": ("mean", (3,), "Float32", False),
        "moving_variance": ("variance", (3,), "Float32", False),
        "gamma": ("gamma", (3,), "Float32", True),
        "beta": ("beta", (3,), "Float32", True)}
    assert list(params_of(bn)) == ["moving_mean", "moving_variance", "gamma", "beta"]
    assert list(params_of(Net()).values()) == [
        ("bn.moving_mean", (3,), "Float32", False), ("bn.moving_variance", (3,), "Float32", False),
        ("bn.gamma", (3,), "Float32", True), ("bn.beta", (3,), "Float32", True)]
    np.testing.assert_array_equal(bn.moving_mean, np.zeros(3))
    np.testing.assert_array_equal(bn.moving_variance, np.ones(3))
    np.testing.assert_array_equal(bn.gamma, np.ones(3))
    np.testing.assert_array_equal(bn.beta, np.zeros(3))
    frozen = nn.BatchNorm1d(2, affine=False)
    assert [p.requires_grad for p in frozen.get_parameters()] == [False] * 4
    assert frozen.trainable_params() == []


def test_batchnorm_repr():
    assert repr(nn.BatchNorm2d(3)) == (
        "BatchNorm2d(num_features=3, eps=1e-05, momentum=0.9, "
        "gamma=Parameter (name=gamma, shape=(3,), dtype=Float32, requires_grad=True), "
        "beta=Parameter (name=beta, shape=(3,), dtype=Float32, requires_grad=True), "
        "moving_mean=Parameter (name=mean, shape=(3,), dtype=Float32, requires_grad=False), "
        "moving_variance=Parameter (name=variance, shape=(3,), dtype=Float32, requires_grad=False))")
    r = repr(Net())
    assert "(bn): BatchNorm2d(num_features=3" in r and "name=bn.moving_variance" in r
    for m in (0.99, 0.997):
        assert f"momentum={m}," in repr(nn.BatchNorm1d(2, momentum=m))


# ----- BatchNorm: numerics ---------------------------------------------------------------

def test_batchnorm_predict_mode_uses_and_keeps_the_moving_statistics():
    bn = nn.BatchNorm2d(3, eps=1e-3)
    stats = dict(moving_mean=[0.5, -1.0, 2.0], moving_variance=[4.0, 0.25, 1.0], gamma=[1.5, 2.0, -1.0],
                 beta=[0.1, 0.2, 0.3])
    set_params(bn, stats)
    x = rand(4, 3, 2, 5, seed=20)
    assert not bn.training
    want = np_bn(x, stats["moving_mean"], stats["moving_variance"], stats["gamma"], stats["beta"], 1e-3)
    close(bn(x), want)
    close(bn(x), want)
    close(bn.moving_mean, stats["moving_mean"])
    close(bn.moving_variance, stats["moving_variance"])


@pytest.mark.parametrize("shape, cls", [((6, 3), nn.BatchNorm1d), ((4, 3, 5), nn.BatchNorm1d),
                                        ((2, 3, 4, 2), nn.BatchNorm2d)])
def test_batchnorm_training_normalises_with_biased_and_tracks_unbiased_variance(shape, cls):
    bn = cls(3, momentum=0.8).set_train()
    set_params(bn, dict(moving_mean=[1.0, 2.0, 3.0], moving_variance=[2.0, 3.0, 4.0], gamma=[1.0, 2.0, 0.5],
                        beta=[0.0, -1.0, 1.0]))
    x = rand(*shape, seed=21, scale=2.0)
    mean, var_b, var_u = batch_stats(x)
    close(bn(x), np_bn(x, mean, var_b, [1.0, 2.0, 0.5], [0.0, -1.0, 1.0], 1e-5))
    close(bn.moving_mean, 0.8 * np.array([1.0, 2.0, 3.0]) + 0.2 * mean)
    close(bn.moving_variance, 0.8 * np.array([2.0, 3.0, 4.0]) + 0.2 * var_u)


def test_batchnorm_use_batch_statistics():
    x = rand(5, 3, seed=22)
    mean, var_b, var_u = batch_stats(x)
    always = nn.BatchNorm1d(3, use_batch_statistics=True)       # predict mode, still batch stats + update
    close(always(x), np_bn(x, mean, var_b, np.ones(3), np.zeros(3), 1e-5))
    close(always.moving_mean, 0.1 * mean)
    close(always.moving_variance, 0.9 + 0.1 * var_u)
    never = nn.BatchNorm1d(3, use_batch_statistics=False).set_train()
    close(never(x), np_bn(x, np.zeros(3), np.ones(3), np.ones(3), np.zeros(3), 1e-5))
    close(never.moving_mean, np.zeros(3))
    with pytest.raises(ValueError, match="use_batch_statistics"):
        nn.BatchNorm1d(3, use_batch_statistics=1)


def test_batchnorm_running_statistics_in_a_jitted_train_step():
    net = Net(dtype=FLOAT).set_train()
    params = net.trainable_params()
    assert [p.name for p in params] == ["bn.gamma", "bn.beta"]
    xs = [rand(4, 3, 2, 2, seed=30 + i) for i in range(3)]
    target = rand(4, 3, 2, 2, seed=40)

    def loss_fn(x):
        return (net(x) * target).sum()
    grad_fn = ms.value_and_grad(loss_fn, None, params)

    @ms.jit
    def step(x):
        loss, grads = grad_fn(x)
        for p, g in zip(params, grads):
            ops.assign(p, p - 0.1 * g)
        return loss

    # the same step by hand: dL/dgamma = sum(xhat * t), dL/dbeta = sum(t) over N, H, W
    gamma, beta = np.ones(3), np.zeros(3)
    mm, mv = np.zeros(3), np.ones(3)
    t = np.asarray(target, np.float64)
    for x in xs:
        mean, var_b, var_u = batch_stats(x)
        xhat = np_bn(x, mean, var_b, np.ones(3), np.zeros(3), 1e-5)
        want_loss = (np_bn(x, mean, var_b, gamma, beta, 1e-5) * t).sum()
        close(step(x), want_loss, 1e-4)
        gamma = gamma - 0.1 * (xhat * t).sum(axis=(0, 2, 3))
        beta = beta - 0.1 * t.sum(axis=(0, 2, 3))
        mm, mv = 0.9 * mm + 0.1 * mean, 0.9 * mv + 0.1 * var_u
        close(net.bn.gamma, gamma, 1e-4)
        close(net.bn.beta, beta, 1e-4)
        close(net.bn.moving_mean, mm, 1e-5)
        close(net.bn.moving_variance, mv, 1e-5)
    assert step.trace_count == 1          # the statistics are inputs, not baked-in constants

    net.set_train(False)

    @ms.jit
    def predict(x):
        return net(x)
    y1 = predict(xs[0])
    close(net.bn.moving_mean, mm, 1e-5)
    close(net.bn.moving_variance, mv, 1e-5)
    close(y1, np_bn(xs[0], mm, mv, gamma, beta, 1e-5), 1e-4)
    close(predict(xs[0]), y1)


def test_batchnorm_under_plain_jax_transforms():
    net = Net()
    set_params(net, {"bn.moving_mean": [0.5, 0.0, -0.5], "bn.moving_variance": [2.0, 1.0, 0.5]})
    x = rand(2, 3, 3, 3, seed=23).astype(jnp.float32)
    close(jax.jit(lambda n, x: n(x))(net, x), net(x))
    g = jax.grad(lambda n, x: (n(x) ** 2).sum())(net, x)
    assert type(g) is Net and g.bn.gamma.value.shape == (3,)
    net.set_train()
    mean, var_b, _ = batch_stats(x)
    y = jax.jit(lambda n, x: n(x))(net, x)    # a value copy: batch statistics, no write-back
    close(y, np_bn(x, mean, var_b, np.ones(3), np.zeros(3), 1e-5))
    close(net.bn.moving_mean, [0.5, 0.0, -0.5])


def test_batchnorm_input_checks():
    with pytest.raises(ValueError, match=r"BatchNorm2d: expected an input of shape \(N, 3, H, W\) with "
                                         r"num_features=3 channels, got \(2, 3, 4\)"):
        nn.BatchNorm2d(3)(ms.ops.ones((2, 3, 4)))
    with pytest.raises(ValueError, match=r"BatchNorm1d: expected an input of shape \(N, 4\) or \(N, 4, L\)"):
        nn.BatchNorm1d(4)(ms.ops.ones((2, 3)))
    with pytest.raises(ValueError, match="more than one value per channel"):
        nn.BatchNorm1d(3).set_train()(ms.ops.ones((1, 3)))
    with pytest.raises(ValueError, match="momentum"):
        nn.BatchNorm2d(3, momentum=1.5)
    with pytest.raises(ValueError, match="num_features"):
        nn.BatchNorm2d(0)


@pytest.mark.parametrize("train", [False, True])
def test_batchnorm_gradients(train):
    bn = nn.BatchNorm2d(2, dtype=FLOAT).set_train(train)
    set_params(bn, dict(moving_mean=[0.2, -0.3], moving_variance=[1.5, 0.7], gamma=[1.2, 0.8], beta=[0.1, -0.2]))
    grads_ok(lambda net, x: net(x), (bn, rand(3, 2, 2, 2, seed=24)))


# ----- LayerNorm ------------------------------------------------------------------------

def test_layernorm_parameters_defaults_and_repr():
    ln = nn.LayerNorm((4,))
    assert ln.epsilon == 1e-7 and ln.begin_norm_axis == -1 and ln.begin_params_axis == -1
    assert params_of(ln) == {"gamma": ("gamma", (4,), "Float32", True), "beta": ("beta", (4,), "Float32", True)}
    assert repr(ln) == ("LayerNorm(normalized_shape=(4,), begin_norm_axis=-1, begin_params_axis=-1, "
                        "gammaParameter (name=gamma, shape=(4,), dtype=Float32, requires_grad=True), "
                        "beta=Parameter (name=beta, shape=(4,), dtype=Float32, requires_grad=True))")
    with pytest.raises(TypeError, match="tuple"):
        nn.LayerNorm(4)


@pytest.mark.parametrize("norm_axis, params_axis, pshape", [(-1, -1, (5,)), (1, 1, (4, 5)), (-2, -1, (5,))])
def test_layernorm_matches_the_formula(norm_axis, params_axis, pshape):
    x = rand(3, 4, 5, seed=25, scale=3.0)
    ln = nn.LayerNorm(pshape, norm_axis, params_axis, gamma_init=ms.Tensor(np.arange(1, 1 + np.prod(pshape))
                                                                          .reshape(pshape) / 7, FLOAT),
                      beta_init=0.5, epsilon=1e-3, dtype=FLOAT)
    xn = np.asarray(x, np.float64)
    axes = tuple(range(norm_axis % 3, 3))
    mean, var = xn.mean(axes, keepdims=True), xn.var(axes, keepdims=True)
    want = (xn - mean) / np.sqrt(var + 1e-3) * np.asarray(ln.gamma, np.float64) + 0.5
    close(ln(x), want)


def test_layernorm_shape_mismatch_and_gradients():
    with pytest.raises(ValueError, match=r"gamma or beta shape must match input shape"):
        nn.LayerNorm((4, 5))(ms.ops.ones((2, 4, 5)))
    ln = nn.LayerNorm((3, 4), -2, -2, gamma_init=ms.Tensor(np.linspace(0.5, 1.5, 12).reshape(3, 4), FLOAT),
                      beta_init=ms.Tensor(np.linspace(-1, 1, 12).reshape(3, 4), FLOAT), dtype=FLOAT)
    grads_ok(lambda net, x: net(x), (ln, rand(2, 3, 4, seed=26)))


# ----- GroupNorm ------------------------------------------------------------------------

def test_groupnorm_parameters_repr_and_checks():
    gn = nn.GroupNorm(2, 4)
    assert repr(gn) == "GroupNorm(num_groups=2, num_channels=4)"
    assert params_of(gn) == {"gamma": ("gamma", (4,), "Float32", True), "beta": ("beta", (4,), "Float32", True)}
    assert [p.requires_grad for p in nn.GroupNorm(2, 4, affine=False).get_parameters()] == [False, False]
    with pytest.raises(ValueError, match="divided by 'num_groups'"):
        nn.GroupNorm(3, 4)
    with pytest.raises(TypeError, match="'eps' must be a float"):
        nn.GroupNorm(2, 4, eps=1)
    with pytest.raises(ValueError, match=r"GroupNorm: expected an input of shape \(N, 4, \.\.\.\)"):
        gn(ms.ops.ones((2, 3, 5)))


@pytest.mark.parametrize("shape, groups", [((2, 6, 3, 4), 3), ((3, 4, 5), 2), ((2, 4), 4)])
def test_groupnorm_matches_the_formula(shape, groups):
    c = shape[1]
    gamma, beta = np.linspace(0.5, 2, c), np.linspace(-1, 1, c)
    gn = nn.GroupNorm(groups, c, eps=1e-4, gamma_init=ms.Tensor(gamma, FLOAT), beta_init=ms.Tensor(beta, FLOAT),
                      dtype=FLOAT)
    x = rand(*shape, seed=27, scale=2.0)
    xn = np.asarray(x, np.float64)
    xg = xn.reshape(shape[0], groups, -1)
    norm = ((xg - xg.mean(-1, keepdims=True)) / np.sqrt(xg.var(-1, keepdims=True) + 1e-4)).reshape(shape)
    bshape = (1, c) + (1,) * (len(shape) - 2)
    close(gn(x), norm * gamma.reshape(bshape) + beta.reshape(bshape))


def test_groupnorm_gradients():
    gn = nn.GroupNorm(2, 4, gamma_init=ms.Tensor(np.linspace(0.5, 1.5, 4), FLOAT),
                      beta_init=ms.Tensor(np.linspace(-1, 1, 4), FLOAT), dtype=FLOAT)
    grads_ok(lambda net, x: net(x), (gn, rand(2, 4, 3, seed=28)))


def test_half_precision_inputs_are_normalised_in_float32():
    x = (rand(4, 3, seed=29) * 3).astype(jnp.float16)
    bn = nn.BatchNorm1d(3).set_train()
    y = bn(x)
    mean, var_b, _ = batch_stats(np.asarray(x, np.float32))
    assert y.dtype == jnp.float16 and bn.moving_mean.dtype == ms.float32
    close(y, np_bn(np.asarray(x, np.float32), mean, var_b, np.ones(3), np.zeros(3), 1e-5), 2e-3)
    assert nn.LayerNorm((3,))(x).dtype == jnp.float16


# ----- BatchNorm3d, SyncBatchNorm, InstanceNorm, functional norms (MindSpore 2.10 fixtures) -----

MS = load("nn_layers_norm")


@pytest.mark.parametrize("name, train", [("batchnorm3d_train", True), ("batchnorm3d_eval", False)])
def test_batchnorm3d_matches_mindspore(name, train):
    x, weights, _ = MS[name]["inputs"]
    net = nn.BatchNorm3d(2, momentum=0.8)
    assert ms.load_param_into_net(net, {k: ms.Parameter(v, name=k) for k, v in weights.items()}) == ([], [])
    net.set_train(train)
    y = ms.jit(lambda x: net(x))(jnp.asarray(x))
    want_y, want_mean, want_var = MS[name]["output"]
    np.testing.assert_allclose(np.asarray(y), want_y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(net.bn2d.moving_mean.asnumpy(), want_mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net.bn2d.moving_variance.asnumpy(), want_var, rtol=1e-5, atol=1e-6)


FUNCS = {
    "f_batch_norm_train": lambda x, m, v, g, b: ops.batch_norm(x, m, v, g, b, True, 0.2, 1e-3),
    "f_batch_norm_eval": lambda x, m, v, g, b: ops.batch_norm(x, m, v, g, b),
    "f_group_norm": lambda x, g, b: ops.group_norm(x, 3, g, b),
    "p_layer_norm": lambda x, g, b: P.LayerNorm(2, 2, 1e-5)(x, g, b),
    "p_l2_normalize": lambda x: P.L2Normalize(axis=-1, epsilon=1e-4)(x),
    "p_l2_normalize_axis0": lambda x: P.L2Normalize()(x),
}


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_functional_norms_match_mindspore(name):
    got = FUNCS[name](*map(jnp.asarray, MS[name]["inputs"]))
    want = MS[name]["output"]
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-5)


def test_layer_norm_function_matches_the_mindspore_primitive():
    # ops.layer_norm has no CPU kernel in MindSpore 2.10; its Primitive computes the same normalisation.
    x, g, b = map(jnp.asarray, MS["p_layer_norm"]["inputs"])
    np.testing.assert_allclose(np.asarray(ops.layer_norm(x, (2, 3), g, b)), MS["p_layer_norm"]["output"][0],
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name, make", [
    ("err_instancenorm_eps", lambda: nn.InstanceNorm2d(3, eps=1)),
    ("err_instancenorm_momentum", lambda: nn.InstanceNorm2d(3, momentum=1.5)),
    ("err_batchnorm3d_rank", lambda x: nn.BatchNorm3d(2)(jnp.asarray(x))),
])
def test_norm_refusals_match_mindspore(name, make):
    with pytest.raises({"ValueError": ValueError, "TypeError": TypeError}[MS[name]["error"]]):
        make(*MS[name]["inputs"])


@pytest.mark.parametrize("cls, shape", [(nn.InstanceNorm1d, (2, 3, 5)), (nn.InstanceNorm2d, (2, 3, 4, 2)),
                                        (nn.InstanceNorm3d, (2, 3, 2, 2, 2))])
def test_instance_norm_against_numpy(cls, shape):
    # MindSpore 2.10 has no CPU kernel for InstanceNorm: an independent NumPy formula instead.
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32) * 3 + 1
    net = cls(3, gamma_init=ms.Tensor(np.array([1.0, 2.0, 0.5], np.float32)), beta_init="ones")
    axes = tuple(range(2, len(shape)))
    xd = x.astype(np.float64)
    ref = (xd - xd.mean(axes, keepdims=True)) / np.sqrt(xd.var(axes, keepdims=True) + 1e-5)
    ref = ref * np.array([1.0, 2.0, 0.5]).reshape((1, 3) + (1,) * len(axes)) + 1
    np.testing.assert_allclose(np.asarray(net(jnp.asarray(x))), ref, rtol=1e-4, atol=1e-4)
    net.set_train()
    np.testing.assert_allclose(np.asarray(net(jnp.asarray(x))), ref, rtol=1e-4, atol=1e-4)
    assert [n for n, _ in net.parameters_and_names()] == ["moving_mean", "moving_variance", "gamma", "beta"]
    with pytest.raises(ValueError, match="dims"):
        net(jnp.ones((2, 3)))


def test_rms_norm_against_numpy():
    # MindSpore 2.10 has no CPU kernel for RmsNorm: an independent NumPy formula instead.
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    g = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    rstd = 1 / np.sqrt(np.mean(x.astype(np.float64) ** 2, axis=(1, 2), keepdims=True) + 1e-6)
    for y, r in (ops.rms_norm(x, g), P.RmsNorm()(x, g)):
        np.testing.assert_allclose(np.asarray(y), x * rstd * g, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.asarray(r), rstd, rtol=1e-5)
    with pytest.raises(ValueError, match="gamma"):
        ops.rms_norm(x, g[:2])


def test_functional_norm_gradients():
    x = jax.random.normal(jax.random.PRNGKey(0), (3, 4, 2))
    g, b = jnp.ones(4) * 1.5, jnp.zeros(4)
    from jax.test_util import check_grads
    check_grads(lambda x, g: ops.group_norm(x, 2, g, b), (x, g), order=1, modes=("rev",), atol=1e-2, rtol=1e-2)
    check_grads(lambda x: ops.batch_norm(x, b, g, g, b, training=True), (x,), order=1, modes=("rev",),
                atol=1e-2, rtol=1e-2)


@pytest.mark.skipif(jax.device_count() < 8, reason="needs 8 devices (root conftest.py)")
def test_sync_batch_norm_statistics_are_global_over_a_sharded_batch():
    from jax.sharding import NamedSharding, PartitionSpec
    mesh = parallel.make_mesh((8,), ("data",))
    x = np.random.default_rng(3).standard_normal((16, 3, 2, 2)).astype(np.float32)
    x[:8] += 5.0                                         # the devices' shards differ a lot
    sharded = jax.device_put(jnp.asarray(x), NamedSharding(mesh, PartitionSpec("data")))
    sync, ref = nn.SyncBatchNorm(3).set_train(), nn.BatchNorm2d(3).set_train()
    y = ms.jit(lambda v: sync(v))(sharded)
    y_ref = ref(jnp.asarray(x))
    assert y.sharding.is_equivalent_to(NamedSharding(mesh, PartitionSpec("data")), 4)
    np.testing.assert_allclose(np.asarray(y), np.asarray(y_ref), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(sync.moving_mean.asnumpy(), ref.moving_mean.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(sync.moving_variance.asnumpy(), ref.moving_variance.asnumpy(), rtol=1e-6)
    assert abs(float(sync.moving_mean.asnumpy()[0]) - 0.1 * float(x[:, 0].mean())) < 1e-5
    with pytest.raises(NotImplementedError, match="process_groups"):
        nn.SyncBatchNorm(3, process_groups=[[0, 1], [2, 3]])
