# %% [markdown]
# # A mindcv model on the digits, unchanged MindSpore code
#
# `%load_ext cellkit` makes `import mindspore` give cellkit in this notebook (and in the
# libraries it imports), so MindSpore's model zoo mindcv runs as it is. Here a mindcv
# ResNet-18 is trained on scikit-learn's 8x8 digits (scaled to 32x32, one channel) with
# MindSpore's functional training step. The same code is `examples/mindcv_digits.py`, which
# runs with `cellkit run examples/mindcv_digits.py`.

# %%
%load_ext cellkit

# %%
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import mindspore as ms
from mindspore import nn, ops
from mindcv.loss import create_loss
from mindcv.models import create_model

print(ms.__name__, nn.Cell is ms.Cell)

# %% [markdown]
# The data: pixel values in [0, 1], each pixel repeated 4x4 times.

# %%
digits = load_digits()
x = digits.images.astype(np.float32) / 16.0
x = np.kron(x, np.ones((4, 4), np.float32))[:, None]
x_train, x_test, y_train, y_test = train_test_split(x, digits.target.astype(np.int32), test_size=0.2,
                                                    random_state=0)
x_train.shape, x_test.shape

# %% [markdown]
# The model, loss and optimizer: `create_model` and `create_loss` are mindcv's.

# %%
ms.set_seed(0)
net = create_model("resnet18", num_classes=10, in_channels=1)
loss_fn = create_loss(name="CE", label_smoothing=0.1)
optimizer = nn.Adam(net.trainable_params(), learning_rate=1e-3)
print(type(net).__module__, sum(p.size for p in net.trainable_params()), "trainable values")

# %%
def forward(x, y):
    return loss_fn(net(x), y)

grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)

@ms.jit
def train_step(x, y):
    loss, grads = grad_fn(x, y)
    optimizer(grads)
    return loss

@ms.jit
def predict(x):
    return ops.argmax(net(x), 1)

# %% [markdown]
# Two epochs of mini-batches of 64, then the accuracy on the held-out fifth.

# %%
rng = np.random.default_rng(0)
for epoch in range(2):
    net.set_train(True)
    order = rng.permutation(len(x_train))
    losses = [float(train_step(ms.Tensor(x_train[order[i:i + 64]]), ms.Tensor(y_train[order[i:i + 64]])))
              for i in range(0, len(order) - 63, 64)]
    net.set_train(False)
    pred = np.concatenate([predict(ms.Tensor(x_test[i:i + 120])).asnumpy() for i in range(0, len(x_test), 120)])
    print(f"epoch {epoch + 1}: loss {np.mean(losses):.3f}, test accuracy {(pred == y_test).mean():.3f}")
