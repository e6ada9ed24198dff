"""mindcv 0.3.0, unchanged, on cellkit: every model family against MindSpore 2.10.

``tests/fixtures/record/record_mindcv.py`` recorded, per architecture, MindSpore's Parameter
names, eval output, training loss, per-Parameter gradient norms and the eval output after one
SGD step, with every weight set to ``mindcv_common.weight(name, shape)``. Here the same model
is built from mindcv's own source through ``cellkit.compat``, given the same weights by name,
and compared. ``SUBSET`` runs in the normal pass; the whole sweep (minutes a model on a 2-core
machine) runs with ``CELLKIT_MINDCV_SWEEP=1``.
"""

import importlib.util
import os
import pathlib
import sys

import numpy as np
import pytest

import cellkit
from cellkit import compat
from ms_fixtures import load

pytestmark = pytest.mark.skipif(importlib.util.find_spec("mindcv") is None,
                                reason="mindcv is not installed (pip install mindcv==0.3.0; the test extra)")

sys.path.insert(0, str(pathlib.Path(__file__).parent / "fixtures" / "record"))
import mindcv_common as C  # noqa: E402

# A fast, representative subset: plain, depthwise, grouped and squeeze-excite convolutions,
# BatchNorm in training mode, attention and LayerNorm.
SUBSET = ["resnet18", "mobilenet_v2_035_96", "shufflenet_v1_g3_05", "regnet_y_200mf"]
RTOL, ATOL = 2e-4, 2e-5
RTOL_GRAD = 1e-3


@pytest.fixture(scope="module")
def create_model():
    if not compat.installed():
        compat.install()
        request_uninstall = True
    else:
        request_uninstall = False
    from mindcv.models import create_model as create
    yield create
    if request_uninstall:
        compat.uninstall()


@pytest.fixture(scope="module")
def recorded():
    return load("mindcv")


def _build(create_model, arch, case):
    net = create_model(arch, num_classes=C.NUM_CLASSES, **case["kwargs"])
    names = [p.name for p in net.get_parameters()]
    if names != case["names"]:
        missing = [n for n in case["names"] if n not in names][:5]
        extra = [n for n in names if n not in case["names"]][:5]
        pytest.fail(f"{arch}: Parameter names differ from MindSpore's ({len(names)} vs {len(case['names'])}); "
                    f"MindSpore's not here: {missing}; here, not MindSpore's: {extra}")
    C.set_weights(cellkit, net)
    return net


def check(create_model, recorded, arch):
    case = recorded.get(arch)
    if case is None:
        pytest.skip(f"{arch} has no MindSpore recording yet: run tests/fixtures/record/record_mindcv.py {arch}")
    if "error" in case:
        pytest.skip(f"MindSpore itself fails on {arch}: {case['error']}")
    net = _build(create_model, arch, case)
    expected = case["output"]
    x, labels = C.inputs(arch, case["side"])
    net.set_train(False)
    np.testing.assert_allclose(np.asarray(net(cellkit.Tensor(x))), expected["eval"], rtol=RTOL, atol=ATOL,
                               err_msg=f"{arch}: eval output")
    C.train_mode(net)
    loss, norms = C.step(cellkit, net, x, labels)
    np.testing.assert_allclose(loss, expected["loss"], rtol=RTOL, err_msg=f"{arch}: training loss")
    _rounding(arch, "gradients")
    got = np.array([norms[n] for n in case["trainable"]])
    # A gradient that is zero in exact arithmetic (the shift of a BatchNorm whose output feeds
    # another BatchNorm) is rounding noise in both frameworks: compared to a floor of 1e-5 of
    # the largest norm.
    floor = 1e-5 * float(np.max(expected["grad_norms"]))
    np.testing.assert_allclose(got, expected["grad_norms"], rtol=RTOL_GRAD, atol=floor,
                               err_msg=f"{arch}: gradient norms")
    _rounding(arch, "after_step")
    net.set_train(False)
    np.testing.assert_allclose(np.asarray(net(cellkit.Tensor(x))), expected["after_step"], rtol=RTOL, atol=ATOL,
                               err_msg=f"{arch}: eval output after one SGD step")


def _rounding(arch, stage):
    """From ``stage`` on, a family of ``ROUNDING`` is an expected failure (what came before was asserted)."""
    if arch in ROUNDING and ROUNDING[arch][0] == stage:
        pytest.xfail(f"{arch}: float32 rounding decides {stage}: {ROUNDING[arch][1]}")


@pytest.mark.parametrize("arch", SUBSET)
def test_mindcv_subset(create_model, recorded, arch):
    check(create_model, recorded, arch)


# Families whose whole check is an expected failure, each with its measured cause.
KNOWN = {}
KNOWN["repvgg_a0"] = ("float32 rounding decides one ReLU: a pre-activation of stage3.9 is 1.6e-6 in float64, "
                      "-7.1e-6 in MindSpore and +1.6e-5 here, so every gradient before it differs by ~0.4% "
                      "(cellkit's are within 1.5e-5 of float64's) and the eval output after the step by ~0.2%")
KNOWN["mobilevit_xx_small"] = ("MindSpore's gradient is wrong: once PyNative has differentiated a softmax over an "
                               "axis of length 1 (layer_5's attention over 1 patch), later softmax gradients skip "
                               "the sum over the axis (y*dy - y*(dy*y)), so layer_4's and earlier attention "
                               "gradients differ; cellkit's match float64 (docs/differences.md)")
KNOWN["hrnet_w32"] = ("float32 rounding dominates at 64 pixels: against float64, the eval output (up to 497) "
                      "is off by 0.016 here and 0.011 in MindSpore, the training loss by 1.2e-4 and 6e-5, and "
                      "gradients by up to 9% and 13%, so the two float32 results differ as much as each "
                      "differs from the exact one")
KNOWN["inception_v4"] = ("float32 rounding dominates the training step: against float64 (loss 2.452281) the "
                         "loss is 2.452398 here and 2.452677 in MindSpore, and the median Parameter gradient "
                         "is off by 12% here and 11.5% in MindSpore (13.7% between the two); eval matches")


# Float32 rounding, from a stage on ("gradients": eval output and training loss are asserted and
# match; "after_step": gradient norms too). Mostly a ReLU gate that rounding decides: a
# pre-activation within ~1e-4 of zero after training-mode BatchNorm falls on one side in
# MindSpore and on the other in cellkit, so gradients upstream of it differ. Against a float64
# run of the same model, one framework or the other is the one off, depending on the input side
# (64, 128, 224 pixels tried).
ROUNDING = {
    "shufflenet_v2_x0_5": ("gradients", "a ReLU gate: at 64 px conv_last.1's output [0, 179, 0, 0] is +3.3e-5 in "
                           "float64, +1.9e-5 here, -3.6e-5 in MindSpore (gradient norms up to 0.8% apart)"),
    "mnasnet_050": ("gradients", "a ReLU gate: at 64 px features.23.layers.4's output [0, 569, 0, 0] is -5.1e-6 "
                    "in float64, +2.6e-5 here, -2.9e-5 in MindSpore (gradient norms up to 1.8% apart)"),
    "pnasnet": ("gradients", "a ReLU gate: at 64 px cell_7's output [1, 750, 1, 1] (a ReLU input in cell_8) is "
                "+1.05e-4 in float64, +1.34e-4 here, -5.1e-5 in MindSpore (gradient norms of cell_7.comb_iter_3 "
                "and of the Parameters before it up to 2.1% apart)"),
    "mobilenet_v2_035_96": ("gradients", "float32 rounding: the norm of features.3.layers.4.gamma's gradient is "
                            "19.39907 in float64, 19.39857 here (forward values computed on the host), 19.35944 "
                            "in MindSpore (0.2% apart; all gradient norms here are within 8e-5 of float64's, "
                            "MindSpore's within 2e-3)"),
    "vgg11": ("after_step", "the output after one SGD step is 6.3e-5 from MindSpore's (2.5e-5 in float64, "
              "within the tolerance; cellkit's float32 and float64 runs differ by 4.8e-5)"),
}

# Float32 rounding: the eval output and the training loss match, but at a batch of 2 the
# gradient norms of the first layers (mostly BatchNorm's gamma and beta, sums of many terms that
# nearly cancel) are decided by rounding to more than RTOL_GRAD, in MindSpore as here. Measured
# against the same model computed in float64 (cellkit under JAX_ENABLE_X64): the relative deviation
# of the gradient norms, mean / max, cellkit's then MindSpore's. "vs MindSpore": cellkit against
# MindSpore's recording (each architecture recorded alone in a fresh MindSpore process: the same
# bits as when recorded after other models), the relative difference of the gradient norms,
# mean / max, how many of them are over 1e-3, and the largest difference of the eval output after
# the SGD step, which follows from the gradients.
_GRADIENT_NORMS = {
    "skresnet18": ("7.0e-3 / 1.0e-1", "4.7e-3 / 2.9e-2", "6.6e-3 / 7.2e-2, 92 of 118; after the step 1.2e-1; "
                   "its selective-kernel attention normalises 2 values per channel (BatchNorm after a "
                   "global pooling), so the gradient through it is a small difference of large terms"),
    "resnest14": ("6.0e-5 / 1.1e-3", "2.4e-3 / 1.1e-1", "2.4e-3 / 1.1e-1, 24 of 83; after the step 2.5e-4; "
                  "split attention as skresnet18"),
    "res2net50": ("2.1e-3 / 9.9e-3", "1.6e-3 / 9.6e-3", "2.7e-3 / 1.8e-2, 182 of 257; after the step 13 "
                  "(outputs up to 370)"),
    "resnext50_32x4d": ("5.7e-4 / 3.0e-3", "1.3e-4 / 5.1e-4", "6.7e-4 / 3.4e-3, 33 of 161; after the step 2.1e-2"),
    "resnetv2_50": ("3.2e-4 / 2.8e-3", "1.7e-4 / 1.4e-3", "3.6e-4 / 4.2e-3, 13 of 161; after the step 3.1e-3"),
    "BiT_resnet50": ("1.8e-5 / 1.2e-4", "4.8e-4 / 2.6e-3", "4.8e-4 / 2.6e-3, 25 of 153; after the step 8.4e-2"),
    "densenet121": ("2.4e-4 / 2.2e-3", "2.9e-4 / 2.2e-3", "1.4e-4 / 1.4e-3, 7 of 364; after the step 4.9e-5"),
    "dpn92": ("4.7e-4 / 3.3e-3", "7.6e-4 / 6.9e-3", "8.3e-4 / 7.0e-3, 96 of 323; after the step 2.0e-2"),
    "xception": ("4.9e-5 / 7.0e-4", "2.2e-4 / 2.2e-3", "2.2e-4 / 1.7e-3, 6 of 156; after the step 9.7e-5"),
}
ROUNDING.update({a: ("gradients", f"the gradient norms: from float64, cellkit {ours}, MindSpore {ms}; "
                                  f"vs MindSpore {diff}") for a, (ours, ms, diff) in _GRADIENT_NORMS.items()})


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("CELLKIT_MINDCV_SWEEP") != "1",
                    reason="the whole mindcv sweep runs with CELLKIT_MINDCV_SWEEP=1")
@pytest.mark.parametrize("arch", [pytest.param(a, marks=pytest.mark.xfail(reason=KNOWN[a], strict=False))
                                  if a in KNOWN else a
                                  for a in C.ARCHITECTURES if a not in SUBSET])
def test_mindcv_all(create_model, recorded, arch):
    check(create_model, recorded, arch)


def test_import_mindcv_gives_cellkit_modules(create_model):
    import mindcv.models.resnet as resnet
    import mindspore
    assert resnet.nn is cellkit.nn and mindspore is cellkit
    assert issubclass(resnet.ResNet, cellkit.nn.Cell)


@pytest.mark.slow
def test_example_fine_tunes_on_the_digits():
    """examples/mindcv_digits.py through ``python -m cellkit run``: mindcv's resnet18 learns the digits."""
    import subprocess
    root = pathlib.Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    r = subprocess.run([sys.executable, "-m", "cellkit", "run", "examples/mindcv_digits.py", "--epochs", "3"],
                       cwd=root, env=env, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr[-3000:]
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("epoch 3: loss ") and float(last.rsplit(" ", 1)[1]) > 0.5, r.stdout
