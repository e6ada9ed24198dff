"""Activation Cells against MindSpore 2.10 (fixture ``act_layer``): outputs, constructor refusals,
PReLU's Parameter, reprs and ``get_activation``'s table."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import cellkit as ms
from cellkit import nn

from ms_fixtures import load

LAYER = load("act_layer")
SKIP = {
    "ELU|1": "the CPU Elu kernel only accepts alpha=1.0",
    "LogSoftmaxExt|0": "no CPU kernel", "LogSoftmaxExt|1": "no CPU kernel", "LogSoftmaxExt|2": "no CPU kernel",
}
CASES = [pytest.param(n, marks=pytest.mark.skip(reason=SKIP[n])) if n in SKIP else n
         for n in LAYER if "|" in n and not n.startswith("get_activation|")]


def _arg(a):
    return ms.Tensor(a) if isinstance(a, np.ndarray) else a


@pytest.mark.parametrize("name", CASES)
def test_layer_matches_mindspore(name):
    case = LAYER[name]
    cls = getattr(nn, name.split("|")[0])
    kwargs = {k: _arg(v) for k, v in case["kwargs"].items()}

    def call():
        return np.asarray(cls(**kwargs)(*[_arg(a) for a in case["inputs"]]))

    if "error" in case:
        with pytest.raises(Exception) as info:
            call()
        assert type(info.value).__name__ == case["error"], info.value
        return
    out, want = call(), case["output"]
    if name.startswith("RReLU"):
        return
    assert out.shape == want.shape and out.dtype == want.dtype
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(LAYER["get_activation.names"]["output"]))
def test_get_activation_table_is_mindspores(name):
    case = LAYER[f"get_activation|{name}"]
    if "error" in case:
        with pytest.raises(Exception) as info:
            nn.get_activation(name)
        assert type(info.value).__name__ == case["error"]
    else:
        assert type(nn.get_activation(name)).__name__ == case["output"]


def test_get_activation_refuses_names_mindspore_refuses():
    assert sorted(nn.layer.activation._activation) == sorted(LAYER["get_activation.names"]["output"])
    for bad in ("GELU", "swish", "nope"):
        assert LAYER[f"get_activation|{bad}"]["error"] == "KeyError"
        with pytest.raises(KeyError, match=f"unknown activation '{bad}'"):
            nn.get_activation(bad)
    assert nn.get_activation(None) is None
    with pytest.raises(KeyError, match="For 'Dense', unknown activation 'nope'"):
        nn.get_activation("nope", prim_name="Dense")


def test_prelu_parameter_name_shape_and_init():
    (attr, name, shape, value), = LAYER["PReLU.parameters"]["output"]
    p = nn.PReLU(channel=3, w=0.1)
    [(got_attr, param)] = list(p.parameters_and_names())
    assert (got_attr, param.name, tuple(param.shape)) == (attr, name, tuple(shape))
    np.testing.assert_array_equal(np.asarray(param.value), value)
    assert param.dtype == ms.float32
    seq = nn.SequentialCell([nn.PReLU()])
    assert [[n, q.name] for n, q in seq.parameters_and_names()] == LAYER["PReLU.in_sequential"]["output"]
    (attr, name, shape, value), = LAYER["PReLUExt.parameters"]["output"]
    [(got_attr, param)] = list(nn.PReLUExt(num_parameters=2).parameters_and_names())
    assert (got_attr, param.name, tuple(param.shape)) == (attr, name, tuple(shape))
    np.testing.assert_array_equal(np.asarray(param.value), value)


def test_reprs_are_mindspores():
    cells = (nn.ReLU(), nn.GELU(), nn.Softmax(1), nn.ELU(0.5), nn.PReLU(), nn.Hardtanh(), nn.LeakyReLU(0.1),
             nn.Threshold(1.0, 2.0), nn.HShrink(), nn.GLU())
    assert [repr(c) for c in cells] == LAYER["repr"]["output"]


def test_prelu_gradient_reaches_its_parameter_and_input():
    p = nn.PReLU(channel=2, w=[0.1, 0.7])
    x = jnp.asarray([[[-2.0, 0.5], [-1.0, 3.0]]])
    grads = ms.grad(lambda x: p(x).sum(), grad_position=None, weights=p.trainable_params())(x)
    np.testing.assert_allclose(grads[0], [-2.0, -1.0])
    dtype = jnp.float64 if jax.config.jax_enable_x64 else jnp.float32
    tol = 1e-5 if dtype == jnp.float64 else 2e-2
    check_grads(lambda x: p(x), (x.astype(dtype),), order=1, modes=["rev"], eps=1e-3, atol=tol, rtol=tol)


def test_layers_work_under_jit():
    net = nn.SequentialCell([nn.PReLU(), nn.Hardtanh(-0.5, 0.5), nn.Softmin()])
    x = jnp.asarray([[-2.0, 0.3, 1.0]])
    np.testing.assert_allclose(ms.jit(lambda x: net(x))(x), net(x), rtol=1e-6)
