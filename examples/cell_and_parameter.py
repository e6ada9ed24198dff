"""The first MindSpore tutorial ("Cell and Parameter"), run on cellkit.

Only the import changed: ``import mindspore`` became ``import cellkit``.
"""
import numpy as np
import cellkit as mindspore
from cellkit import nn
from cellkit import ops
from cellkit import Tensor, Parameter

class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.random.randn(5, 3), mindspore.float32), name='w') # weight
        self.b = Parameter(Tensor(np.random.randn(3,), mindspore.float32), name='b') # bias

    def construct(self, x):
        z = ops.matmul(x, self.w) + self.b
        return z

net = Network()
print(net.b.asnumpy())
print(net.trainable_params())
print(type(net.get_parameters()))
for name, param in net.parameters_and_names():
    print(f"{name}:\n{param.asnumpy()}")
net.b[0] = 1.
print(net.b.asnumpy())
net.b.set_data(Tensor([3, 4, 5]))
print(net.b.asnumpy())
import cellkit as ms

@ms.jit
def modify_parameter():
    b_hat = ms.Tensor([7, 8, 9])
    ops.assign(net.b, b_hat)
    return True

modify_parameter()
print(net.b.asnumpy())
from cellkit.common.initializer import initializer
from cellkit import ParameterTuple
x = Parameter(default_input=ms.Tensor(np.arange(2 * 3).reshape((2, 3))), name="x")
y = Parameter(default_input=initializer('ones', [1, 2, 3], ms.float32), name='y')
z = Parameter(default_input=2.0, name='z')
params = ParameterTuple((x, y, z))
params_copy = params.clone("params_copy")
print(params)
print(params_copy)
net.set_train()
print(net.phase)
net.set_train(False)
print(net.phase)
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
print(repr(m(inputs)))
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

# Not in the tutorial: use the custom backward and check it against the mask.
def forward(x):
    out, mask = dropout_2d(x)
    return out.sum(), mask

x = ops.ones((2, 4, 3, 3))
grads, (mask,) = ms.grad(forward, 0, has_aux=True)(x)
print("mask per channel:\n", mask[:, :, 0, 0])
print("gradient per channel:\n", grads[:, :, 0, 0])
