# %% [markdown]
# # Network parameters
#
# MindSpore's tutorial *网络参数* (network parameters) on cellkit: data types, `Parameter`,
# `ParameterTuple`, parameter updates and network initialisation. The code is the
# tutorial's with `mindspore` replaced by `cellkit`.
#
# Tensors are the data that flows through a network; Parameters are the network's
# state — the weights of its operators, and the buffers an optimizer keeps.

# %% [markdown]
# ## Data types (`dtype`)
#
# Tensors support `int8`, `int16`, `int32`, `int64`, `uint8`, `uint16`, `uint32`, `uint64`,
# `float16`, `float32`, `float64` and `bool_`, matching NumPy's types.
#
# > MindSpore turns a Python `int` into `int64` and a `float` into `float32`. JAX has
# > 64-bit types only with `jax_enable_x64`, and cellkit follows the flag: with the
# > default settings a Python `int` (and NumPy's int64) becomes `int32`, which is why some
# > outputs below show `Int32` where MindSpore shows `Int64`.
#
# Print the data type `int32`:

# %%
import cellkit as ms

data_type = ms.int32
print(data_type)

# %% [markdown]
# ### Converting data types
#
# * `dtype_to_nptype`: a cellkit data type to the NumPy type;
# * `dtype_to_pytype`: a cellkit data type to the Python built-in type;
# * `pytype_to_dtype`: a Python built-in type to the cellkit data type.

# %%
import cellkit as ms

np_type = ms.dtype_to_nptype(ms.int32)
ms_type = ms.pytype_to_dtype(int)
py_type = ms.dtype_to_pytype(ms.float64)

print(np_type)
print(ms_type)
print(py_type)

# %% [markdown]
# `pytype_to_dtype(int)` is `Int64`, as in MindSpore: it names a type and makes no array.
#
# ## Parameter
#
# A `Parameter` holds a value that training updates, such as the `weight` and `bias` of a
# convolution.
#
# ### Creating a Parameter
#
# * `default_input`: the data — a `Tensor`, an `Initializer`, an `int` or a `float`;
# * `name`: the name that identifies the Parameter in a network;
# * `requires_grad`: whether training computes its gradient (`False` for values that are
#   updated without gradients).
#
# From an `int` or a `float`:

# %%
import cellkit as ms

x = ms.Parameter(default_input=2.0, name='x')
y = ms.Parameter(default_input=5.0, name='y')
z = ms.Parameter(default_input=5, name='z', requires_grad=False)

print(type(x))
print(x, "value:", x.asnumpy())
print(y, "value:", y.asnumpy())
print(z, "value:", z.asnumpy())

# %% [markdown]
# From a `Tensor`:

# %%
import numpy as np
import cellkit as ms

my_tensor = ms.Tensor(np.arange(2 * 3).reshape((2, 3)))
x = ms.Parameter(default_input=my_tensor, name="tensor")

print(x)

# %% [markdown]
# From an `Initializer`:

# %%
from cellkit.common.initializer import initializer as init
import cellkit as ms

x = ms.Parameter(default_input=init('ones', [1, 2, 3], ms.float32), name='x')
print(x)

# %% [markdown]
# ### Attributes
#
# A Parameter has a `name`, a `shape`, a `dtype` and `requires_grad`. `x.data` is the
# Parameter itself:

# %%
my_tensor = ms.Tensor(np.arange(2 * 3).reshape((2, 3)))
x = ms.Parameter(default_input=my_tensor, name="x")

print("x: ", x)
print("x.data: ", x.data)

# %% [markdown]
# ### Operations
#
# 1. `clone` copies a Parameter; the copy can then be given a new name. A Parameter made
#    without a name is called `Parameter`.

# %%
x = ms.Parameter(default_input=init('ones', [1, 2, 3], ms.float32))
x_clone = x.clone()
x_clone.name = "x_clone"

print(x)
print(x_clone)

# %% [markdown]
# 2. `set_data` replaces the data; with `slice_shape=True` the new data may have another
#    shape. It returns the Parameter.

# %%
x = ms.Parameter(ms.Tensor(np.ones((1, 2)), ms.float32), name="x", requires_grad=True)
print(x, x.asnumpy())

y = x.set_data(ms.Tensor(np.zeros((1, 2)), ms.float32))
print(y, y.asnumpy())

z = x.set_data(ms.Tensor(np.ones((1, 4)), ms.float32), slice_shape=True)
print(z, z.asnumpy())

# %% [markdown]
# Without `slice_shape=True`, a different shape is an error in cellkit (MindSpore accepts
# it silently), and the old value is kept:

# %%
try:
    x.set_data(ms.Tensor(np.ones((2, 2)), ms.float32))
except ValueError as err:
    print("ValueError:", err)
print(x.shape)

# %% [markdown]
# 3. `init_data` makes the value of a Parameter that was created lazily from an
#    Initializer (in parallel training the shape of a Parameter may change before it is
#    initialised), and returns the Parameter.

# %%
x = ms.Parameter(ms.Tensor(np.ones((1, 2)), ms.float32), name="x", requires_grad=True)

print(x.init_data(), x.init_data().asnumpy())

# %% [markdown]
# ### Updating a network's Parameters
#
# `nn.ParameterUpdate` assigns a Tensor of the same shape to a network's Parameter:

# %%
import numpy as np
import cellkit as ms
from cellkit import nn

# build the network
network = nn.Dense(3, 4)

# get the weight Parameter
param = network.parameters_dict()['weight']
print("Parameter:\n", param.asnumpy())

# update the weight
update = nn.ParameterUpdate(param)
weight = ms.Tensor(np.arange(12).reshape((4, 3)), ms.float32)
output = update(weight)
print("Parameter update:\n", output)

# %% [markdown]
# The Dense layer now uses the new weight:

# %%
print(network.weight.asnumpy())

# %% [markdown]
# ## Parameter Tuple
#
# `ParameterTuple` is a `tuple` of Parameters with a `clone` method:

# %%
import numpy as np
import cellkit as ms
from cellkit.common.initializer import initializer

# create
x = ms.Parameter(default_input=ms.Tensor(np.arange(2 * 3).reshape((2, 3))), name="x")
y = ms.Parameter(default_input=initializer('ones', [1, 2, 3], ms.float32), name='y')
z = ms.Parameter(default_input=2.0, name='z')
params = ms.ParameterTuple((x, y, z))

# clone from params, prefixing the names with "params_copy"
params_copy = params.clone("params_copy")

print(params)
print(params_copy)

# %% [markdown]
# ## Initialising a network's Parameters
#
# Layers take their Parameters' initial values as an `Initializer` object, an
# initializer's name, or a Tensor. The examples use `Conv2d`.
#
# ### With an `Initializer`

# %%
import numpy as np
import cellkit.nn as nn
import cellkit as ms
from cellkit.common import initializer as init

ms.set_seed(1)

input_data = ms.Tensor(np.ones([1, 3, 16, 50], dtype=np.float32))
# convolution with 3 input channels, 64 output channels and a 3x3 kernel; weights drawn from N(0, 0.2²)
net = nn.Conv2d(3, 64, 3, weight_init=init.Normal(0.2))
# network output
output = net(input_data)

# %% [markdown]
# Not in the tutorial: the output's shape and the weights' spread.

# %%
print(output.shape, float(net.weight.asnumpy().std()))

# %% [markdown]
# ### With a name
#
# A string names an `Initializer` (case-insensitive) with its default arguments:
# `'Normal'` is `Normal()`, i.e. N(0, 0.01²).

# %%
import numpy as np
import cellkit.nn as nn
import cellkit as ms

ms.set_seed(1)

input_data = ms.Tensor(np.ones([1, 3, 16, 50], dtype=np.float32))
net = nn.Conv2d(3, 64, 3, weight_init='Normal')
output = net(input_data)

# %%
print(output.shape, float(net.weight.asnumpy().std()))

# %% [markdown]
# ### With a Tensor
#
# A Tensor of the Parameter's shape gives its initial value:

# %%
import numpy as np
import cellkit.nn as nn
import cellkit as ms

init_data = ms.Tensor(np.ones([64, 3, 3, 3]), dtype=ms.float32)
input_data = ms.Tensor(np.ones([1, 3, 16, 50], dtype=np.float32))

net = nn.Conv2d(3, 64, 3, weight_init=init_data)
output = net(input_data)

# %% [markdown]
# With all-ones weights and input, each output away from the border sums 3 × 3 × 3 ones
# (`pad_mode='same'` pads the border with zeros):

# %%
print(output.shape, output[0, 0, 1:3, 1:5])
