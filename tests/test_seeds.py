"""Every code block of the two MindSpore tutorials in tests/seeds/, run on cellkit.

The only change to the tutorials' code is ``mindspore`` → ``cellkit``. Printed
output must match the tutorials', except random values, the class name of a
Parameter, and Int64 → Int32 when JAX's 64-bit mode is off (cellkit follows
``jax_enable_x64``; see README).
"""

import contextlib
import io
import json
import pathlib
import re

import numpy as np
import pytest

from conftest import x64

SEEDS = pathlib.Path(__file__).parent / "seeds"
NOTEBOOK = SEEDS / "002_4bc8d0327119c005.txt"
TUTORIAL = SEEDS / "000_6306786a78dfbce9.txt"


def port(code: str) -> str:
    return code.replace("mindspore", "cellkit")


def normalise(text: str) -> str:
    text = text.replace("<class 'mindspore.common.parameter.ParameterTensor'>",
                        "<class 'cellkit.parameter.Parameter'>")
    if not x64():
        text = text.replace("Int64", "Int32")
    return " ".join(text.split())


def run(code: str, namespace: dict) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(port(code), "<seed>", "exec"), namespace)
    return out.getvalue()


NUMBER = re.compile(r"-?\d+\.\d*(?:e[-+]?\d+)?")


def notebook_cells():
    nb = json.loads(NOTEBOOK.read_text())
    return [("".join(c["source"]), "".join("".join(o.get("text", "")) for o in c["outputs"]))
            for c in nb["cells"] if c["cell_type"] == "code"]


def test_network_parameters_notebook_runs_and_prints_the_same():
    namespace: dict = {}
    cells = notebook_cells()
    assert len(cells) == 14
    for source, expected in cells:
        got = run(source, namespace)
        if "nn.ParameterUpdate" in source:
            # The first matrix is a random initialisation: compare its shape, then the update.
            head, tail = expected.split("Parameter update:")
            got_head, got_tail = got.split("Parameter update:")
            assert len(NUMBER.findall(got_head)) == len(NUMBER.findall(head)) == 12
            assert normalise(got_tail) == normalise(tail)
        else:
            assert normalise(got) == normalise(expected), source
    # The Initializer, string and Tensor cells produce outputs without printing them.
    assert namespace["output"].shape == (1, 64, 16, 50)


def test_cell_and_parameter_tutorial(capsys):
    text = TUTORIAL.read_text()
    ns: dict = {}

    def block(code, expected=None):
        got = run(code, ns)
        if expected is not None:
            assert normalise(got) == normalise(expected), code
        return got

    block('''
import numpy as np
import mindspore
from mindspore import nn
from mindspore import ops
from mindspore import Tensor, Parameter

class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.random.randn(5, 3), mindspore.float32), name='w') # weight
        self.b = Parameter(Tensor(np.random.randn(3,), mindspore.float32), name='b') # bias

    def construct(self, x):
        z = ops.matmul(x, self.w) + self.b
        return z

net = Network()
''')
    assert "class Network(nn.Cell):" in text  # the block above is the tutorial's
    b = block("print(net.b.asnumpy())")
    assert len(NUMBER.findall(b)) == 3
    block("print(net.trainable_params())",
          "[Parameter (name=w, shape=(5, 3), dtype=Float32, requires_grad=True), "
          "Parameter (name=b, shape=(3,), dtype=Float32, requires_grad=True)]")
    block("print(type(net.get_parameters()))", "<class 'generator'>")
    listing = block('''
for name, param in net.parameters_and_names():
    print(f"{name}:\\n{param.asnumpy()}")
''')
    assert listing.startswith("w:\n[[") and "\nb:\n[" in listing and len(NUMBER.findall(listing)) == 18
    old = ns["net"].b.asnumpy()
    got = block('''
net.b[0] = 1.
print(net.b.asnumpy())
''')
    np.testing.assert_allclose(np.array(NUMBER.findall(got)[0:1], dtype=float), [1.0])
    np.testing.assert_allclose(ns["net"].b.asnumpy()[1:], old[1:])
    block('''
net.b.set_data(Tensor([3, 4, 5]))
print(net.b.asnumpy())
''', "[3. 4. 5.]")
    block('''
import mindspore as ms

@ms.jit
def modify_parameter():
    b_hat = ms.Tensor([7, 8, 9])
    ops.assign(net.b, b_hat)
    return True

modify_parameter()
print(net.b.asnumpy())
''', "[7. 8. 9.]")
    block('''
from mindspore.common.initializer import initializer
from mindspore import ParameterTuple
# 创建
x = Parameter(default_input=ms.Tensor(np.arange(2 * 3).reshape((2, 3))), name="x")
y = Parameter(default_input=initializer('ones', [1, 2, 3], ms.float32), name='y')
z = Parameter(default_input=2.0, name='z')
params = ParameterTuple((x, y, z))

# 从params克隆并修改名称为"params_copy"
params_copy = params.clone("params_copy")

print(params)
print(params_copy)
''', "(Parameter (name=x, shape=(2, 3), dtype=Int64, requires_grad=True), Parameter (name=y, shape=(1, 2, 3), "
     "dtype=Float32, requires_grad=True), Parameter (name=z, shape=(), dtype=Float32, requires_grad=True))\n"
     "(Parameter (name=params_copy.x, shape=(2, 3), dtype=Int64, requires_grad=True), Parameter "
     "(name=params_copy.y, shape=(1, 2, 3), dtype=Float32, requires_grad=True), Parameter "
     "(name=params_copy.z, shape=(), dtype=Float32, requires_grad=True))")
    block('''
net.set_train()
print(net.phase)
''', "train")
    block('''
net.set_train(False)
print(net.phase)
''', "predict")
    block('''
class Threshold(nn.Cell):
    def __init__(self, threshold, value):
        super().__init__()
        self.threshold = threshold
        self.value = value

    def construct(self, inputs):
        cond = ops.gt(inputs, self.threshold)
        value = ops.fill(inputs.dtype, inputs.shape, self.value)
        return ops.select(cond, inputs, value)

m = Threshold(0.1, 20)
inputs = mindspore.Tensor([0.1, 0.2, 0.3], mindspore.float32)
result = m(inputs)
''')
    # The tutorial shows Tensor(shape=[3], dtype=Float32, value= [ 2.00000000e+01, 2.00000003e-01, 3.00000012e-01])
    result = ns["result"]
    assert result.shape == (3,) and result.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(result), np.array([20.0, 0.2, 0.3], np.float32))
    block('''
class Dropout2d(nn.Cell):
    def __init__(self, keep_prob):
        super().__init__()
        self.keep_prob = keep_prob
        self.dropout2d = ops.Dropout2D(keep_prob)

    def construct(self, x):
        return self.dropout2d(x)

    def bprop(self, x, out, dout):
        _, mask = out
        dy, _ = dout
        if self.keep_prob != 0:
            dy = dy * (1 / self.keep_prob)
        dy = mask.astype(mindspore.float32) * dy
        return (dy.astype(x.dtype), )

dropout_2d = Dropout2d(0.8)
dropout_2d.bprop_debug = True
''')
    assert ns["dropout_2d"].bprop_debug is True


@pytest.mark.parametrize("path", [NOTEBOOK, TUTORIAL])
def test_seed_files_are_present(path):
    assert path.stat().st_size > 1000
