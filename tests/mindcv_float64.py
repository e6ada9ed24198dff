"""How far float32 rounding moves a mindcv model's recorded quantities: cellkit against float64.

    JAX_ENABLE_X64=1 python tests/mindcv_float64.py ARCH [ARCH ...]

Runs ``tests/test_compat_mindcv.py``'s comparison for each architecture twice on cellkit, once
in float32 and once with every Parameter and the input in float64, and prints, next to
MindSpore's recording, how far each float32 result (cellkit's and MindSpore's) is from the
float64 one: the eval output and the output after the step (largest difference over the
largest value), the loss, and the gradient norms (relative, over a floor of 1e-5 of the
largest norm, as the test). The figures in ``test_compat_mindcv._ROUNDING`` come from here.
"""

import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE), str(HERE / "fixtures" / "record")]

import jax  # noqa: E402

import cellkit  # noqa: E402
from cellkit import compat  # noqa: E402
from cellkit.parameter import bump_structure, commit  # noqa: E402
import mindcv_common as C  # noqa: E402
from ms_fixtures import load  # noqa: E402


def run(create_model, arch, case, dtype):
    """(eval output, loss, gradient norms, output after the step) with everything in ``dtype``."""
    net = create_model(arch, num_classes=C.NUM_CLASSES, **case["kwargs"])
    for p in net.get_parameters():  # set_data would cast back to the Parameter's float32
        commit(p, jax.numpy.asarray(C.weight(p.name, tuple(p.shape)).astype(dtype)))
    bump_structure()
    x, labels = C.inputs(arch, case["side"])
    x = x.astype(dtype)
    net.set_train(False)
    ev = np.asarray(net(cellkit.Tensor(x)))
    C.train_mode(net)
    loss, norms = C.step(cellkit, net, x, labels)
    net.set_train(False)
    after = np.asarray(net(cellkit.Tensor(x)))
    return ev, loss, np.array([norms[n] for n in case["trainable"]]), after


def main(archs):
    if not jax.config.jax_enable_x64:
        sys.exit("run with JAX_ENABLE_X64=1")
    compat.install()
    from mindcv.models import create_model
    recorded = load("mindcv")
    for arch in archs:
        case = recorded[arch]
        exp = case["output"]
        e32, l32, g32, a32 = run(create_model, arch, case, np.float32)
        e64, l64, g64, a64 = run(create_model, arch, case, np.float64)
        gms = np.asarray(exp["grad_norms"])
        floor = 1e-5 * gms.max()

        def dev(a, b):
            return np.abs(a - b) / (np.abs(b) + floor)

        def out(a, b):
            return np.abs(np.asarray(a) - b).max() / np.abs(b).max()

        print(f"{arch}\n  eval:  cellkit {out(e32, e64):.1e}  MindSpore {out(exp['eval'], e64):.1e}"
              f"\n  loss:  cellkit {l32:.7f}  MindSpore {exp['loss']:.7f}  float64 {l64:.7f}"
              f"\n  grads: cellkit {dev(g32, g64).mean():.1e} / {dev(g32, g64).max():.1e}"
              f"  MindSpore {dev(gms, g64).mean():.1e} / {dev(gms, g64).max():.1e} (mean / max)"
              f"  cellkit vs MindSpore max {dev(g32, gms).max():.1e}"
              f"\n  after: cellkit {out(a32, a64):.1e}  MindSpore {out(exp['after_step'], a64):.1e}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["resnet18"])
