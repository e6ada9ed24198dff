"""``nn.Conv2d``/``nn.Conv1d``'s Primitive attributes (``conv2d``, ``bias_add``) against MindSpore 2.10.

Subclasses call them with a weight of their own, e.g. mindcv's weight-standardised ``StdConv2d``
(BiT); the fixtures are ``tests/fixtures/record/record_nn_conv_primitives.py``.
"""

import pathlib
import sys

import numpy as np
import pytest

import cellkit as ms
from cellkit import nn
from ms_fixtures import load

sys.path.insert(0, str(pathlib.Path(__file__).parent / "fixtures" / "record"))
from mindcv_subclasses import cells  # noqa: E402

CASES = load("nn_conv_primitives")
LAYERS = [name for name in CASES if name != "std_conv2d"]


def _fill(layer, weights):
    for p in layer.get_parameters():
        p.set_data(ms.Tensor(weights[p.name]))


@pytest.mark.parametrize("name", LAYERS)
def test_primitive_attributes_with_a_given_weight(name):
    case = CASES[name]
    layer = getattr(nn, case["kwargs"]["cls"])(**case["kwargs"]["ctor"])
    _fill(layer, case["kwargs"]["weights"])
    x, w = (ms.Tensor(a) for a in case["inputs"])
    got = layer.bias_add(layer.conv2d(x, w), layer.bias)
    np.testing.assert_allclose(np.asarray(got), case["output"], rtol=1e-5, atol=1e-5)


def test_weight_standardised_subclass_and_its_gradients():
    case = CASES["std_conv2d"]
    net = cells(ms).StdConv2d(3, 4, 3, pad_mode="pad", padding=1, has_bias=True)
    _fill(net, case["kwargs"]["weights"])
    x, ct = (ms.Tensor(a) for a in case["inputs"])
    fn = ms.value_and_grad(lambda x: (net(x) * ct).sum(), 0, net.trainable_params())
    out, (gx, gw) = fn(x)
    want_out, want_gx, want_gw = case["output"]
    np.testing.assert_allclose(float(out), float(want_out), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(gx), want_gx, rtol=1e-4, atol=1e-5)
    for got, want in zip(gw, want_gw):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-5)


def test_the_attributes_follow_the_layer():
    conv = nn.Conv2d(2, 4, 3, stride=2, pad_mode="pad", padding=(1, 0, 1, 0), dilation=1, group=2)
    prim = conv.conv2d
    assert (prim.out_channel, prim.pad_mode, prim.pad, prim.group) == (4, "pad", (1, 0, 1, 0), 2)
    x = ms.ops.ones((1, 2, 5, 5))
    np.testing.assert_array_equal(np.asarray(conv.conv2d(x, conv.weight)), np.asarray(conv(x)))
