# %% [markdown]
# # Cell and Parameter
#
# MindSpore's tutorial *Cell与参数* (Cell and Parameter), section by section, on cellkit.
# The code is the tutorial's; only the import changes, from `mindspore` to `cellkit`.
#
# A **Cell** is the building block of a network: it wraps a computation on Tensors
# (`construct`) together with the Parameters and state it manages. A **Parameter** is
# the special Tensor that training updates.

# %% [markdown]
# ## Parameter
#
# There are two kinds of Parameter:
#
# * **trainable** — updated from gradients by back-propagation: `requires_grad=True` (the default);
# * **non-trainable** — not differentiated, but still updated, like BatchNorm's running
#   mean and variance: `requires_grad=False`.
#
# A simple fully connected layer with a weight `w` and a bias `b`:

# %%
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

# %% [markdown]
# `__init__` defines the two Parameters and names them; `construct` uses them through
# `self.w` and `self.b` like any Tensor.
#
# ## Getting Parameters
#
# ### A single Parameter
#
# A Parameter is an attribute of the Cell:

# %%
print(net.b.asnumpy())

# %% [markdown]
# ### Trainable Parameters
#
# `Cell.trainable_params()` lists the Parameters with `requires_grad=True`; this is what
# an optimizer is given.

# %%
print(net.trainable_params())

# %% [markdown]
# ### All Parameters
#
# `Cell.get_parameters()` returns an iterator over every Parameter:

# %%
print(type(net.get_parameters()))

# %% [markdown]
# `Cell.parameters_and_names()` yields each Parameter with its name:

# %%
for name, param in net.parameters_and_names():
    print(f"{name}:\n{param.asnumpy()}")

# %% [markdown]
# ## Modifying Parameters
#
# ### Index assignment
#
# A Parameter can be modified like a Tensor, by indexed assignment:

# %%
net.b[0] = 1.
print(net.b.asnumpy())

# %% [markdown]
# ### Overwriting the value
#
# `Parameter.set_data` replaces the value with a Tensor of the same shape (commonly used
# to re-initialise a network Parameter by Parameter). The int Tensor is cast to the
# Parameter's Float32:

# %%
net.b.set_data(Tensor([3, 4, 5]))
print(net.b.asnumpy())

# %% [markdown]
# ### Modifying at run time
#
# Inside a compiled function, Parameters are updated with `ops.assign`, as a custom
# optimizer does. `ms.jit` finds that `modify_parameter` reads `net.b` through a global,
# passes its value into the compiled computation, and writes the assigned value back:

# %%
import cellkit as ms

@ms.jit
def modify_parameter():
    b_hat = ms.Tensor([7, 8, 9])
    ops.assign(net.b, b_hat)
    return True

modify_parameter()
print(net.b.asnumpy())

# %% [markdown]
# ## Parameter Tuple
#
# `ParameterTuple` is a `tuple` of Parameters that can clone itself under a new name prefix.
#
# Python ints become Int64 in MindSpore. JAX has 64-bit types only when
# `jax_enable_x64` is on, and cellkit follows that flag, so with the default settings `x`
# below is Int32.

# %%
from cellkit.common.initializer import initializer
from cellkit import ParameterTuple
# create
x = Parameter(default_input=ms.Tensor(np.arange(2 * 3).reshape((2, 3))), name="x")
y = Parameter(default_input=initializer('ones', [1, 2, 3], ms.float32), name='y')
z = Parameter(default_input=2.0, name='z')
params = ParameterTuple((x, y, z))

# clone from params, prefixing the names with "params_copy"
params_copy = params.clone("params_copy")

print(params)
print(params_copy)

# %% [markdown]
# ## Training and inference phase
#
# Some layers behave differently while training: `nn.Dropout` drops values only in
# training, `nn.BatchNorm` updates its running mean and variance only in training.
# `Cell.set_train` switches the phase; its argument defaults to `True`:

# %%
net.set_train()
print(net.phase)

# %% [markdown]
# `set_train(False)` switches to the `predict` phase:

# %%
net.set_train(False)
print(net.phase)

# %% [markdown]
# ## Custom layers
#
# When no built-in layer fits, a layer can be written from functional ops, and its
# backward pass can be defined with `Cell.bprop`.
#
# ### A layer from functional ops
#
# `Threshold` keeps the values above a threshold and replaces the others:
#
# $$y = \begin{cases} x, & \text{if } x > \text{threshold} \\ \text{value}, & \text{otherwise} \end{cases}$$
#
# `ops.gt` tests the condition, `ops.fill` builds the replacement and `ops.select` picks:

# %%
class Threshold(nn.Cell):
    def __init__(self, threshold, value):
        super().__init__()
        self.threshold = threshold
        self.value = value

    def construct(self, inputs):
        cond = ops.gt(inputs, self.threshold)
        value = ops.fill(inputs.dtype, inputs.shape, self.value)
        return ops.select(cond, inputs, value)

# %% [markdown]
# Run it. cellkit's Tensors are `jax.Array`s, so the result prints as JAX prints arrays
# (MindSpore shows `Tensor(shape=[3], dtype=Float32, value= [...])`):

# %%
m = Threshold(0.1, 20)
inputs = mindspore.Tensor([0.1, 0.2, 0.3], mindspore.float32)
m(inputs)

# %% [markdown]
# `inputs[0]` equals the threshold, so it is replaced by 20.
#
# ### A custom backward pass
#
# `Cell.bprop` defines the gradient of a Cell by hand: for new kinds of layers, or to make
# the backward pass cheaper. The tutorial's example is `Dropout2d`, which zeroes whole
# channels:

# %%
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

# %% [markdown]
# `bprop` receives:
#
# * `x` — the forward inputs (one argument per input of `construct`);
# * `out` — the forward output, here `(output, mask)`;
# * `dout` — the gradient flowing back into this Cell's output.
#
# It returns one gradient per input. For Dropout2d the incoming gradient is masked with
# the forward pass's mask and scaled by `1 / keep_prob`.
#
# Not in the tutorial: differentiate through the Cell with `ms.grad` and check that the
# gradient is the mask divided by `keep_prob`, channel by channel (in cellkit a `bprop`
# becomes a `jax.custom_vjp`; `bprop_debug` is accepted and changes nothing).

# %%
ms.set_seed(1)

def forward(x):
    out, mask = dropout_2d(x)
    return out.sum(), mask

x = ops.ones((3, 6, 2, 2))
grads, (mask,) = ms.grad(forward, 0, has_aux=True)(x)
print("mask per channel:\n", mask[:, :, 0, 0])
print("gradient per channel:\n", grads[:, :, 0, 0])
np.testing.assert_allclose(grads, np.asarray(mask, np.float32) / 0.8)
