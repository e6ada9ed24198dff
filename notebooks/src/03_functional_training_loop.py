# %% [markdown]
# # A functional training loop
#
# Train a small convolutional network on scikit-learn's handwritten digits (8×8 images,
# shipped with scikit-learn) in MindSpore 2.x's functional style:
#
# 1. a forward function that returns the loss,
# 2. `ms.value_and_grad` over the optimizer's Parameters,
# 3. a train step compiled with `ms.jit`, in which the optimizer updates the weights in place.
#
# Then plot the loss and accuracy, save a checkpoint and load it into a fresh model.

# %%
import os
import tempfile

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from tqdm.auto import tqdm

import cellkit as ms
from cellkit import nn, ops

ms.set_seed(0)

# %% [markdown]
# ## Data
#
# 1797 grey-scale images with values 0..16, scaled to [0, 1] and shaped `(N, 1, 8, 8)`
# (NCHW); a fifth is held out for testing.

# %%
digits = load_digits()
images = (digits.images / 16.0).astype(np.float32)[:, None]
labels = digits.target.astype(np.int32)
order = np.random.default_rng(0).permutation(len(images))
n_test = len(images) // 5
x_test, y_test = images[order[:n_test]], labels[order[:n_test]]
x_train, y_train = images[order[n_test:]], labels[order[n_test:]]
print("train:", x_train.shape, "test:", x_test.shape)

fig, axes = plt.subplots(2, 8, figsize=(8, 2.4))
for ax, img, label in zip(axes.flat, x_train, y_train):
    ax.imshow(img[0], cmap="gray_r")
    ax.set_title(str(label))
    ax.axis("off")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Model
#
# Two convolution blocks and two dense layers. Displayed in a notebook, a Cell shows its
# tree of sub-Cells with each Parameter's shape, dtype and size.

# %%
class LeNet(nn.Cell):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, pad_mode="same", has_bias=True)
        self.conv2 = nn.Conv2d(16, 32, 3, pad_mode="same", has_bias=True)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(32 * 2 * 2, 64)
        self.fc2 = nn.Dense(64, num_classes)

    def construct(self, x):
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        x = self.relu(self.fc1(self.flatten(x)))
        return self.fc2(x)

model = LeNet()
model

# %% [markdown]
# ## Loss, gradients and the train step
#
# `ms.value_and_grad(forward_fn, None, weights, has_aux=True)` differentiates with respect
# to the optimizer's Parameters only (`None`: not the inputs) and also returns the logits.
# Inside the `ms.jit` step, `optimizer(grads)` assigns the new weights and Adam's moments;
# `ms.jit` writes them back after each call.

# %%
loss_fn = nn.CrossEntropyLoss()
optimizer = nn.Adam(model.trainable_params(), learning_rate=3e-3)

def forward_fn(data, label):
    logits = model(data)
    return loss_fn(logits, label), logits

grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)

@ms.jit
def train_step(data, label):
    (loss, _), grads = grad_fn(data, label)
    optimizer(grads)
    return loss

@ms.jit
def predict(net, data):
    return net(data).argmax(-1)

def accuracy(net, x, y):
    return float((np.asarray(predict(net, ms.Tensor(x))) == y).mean())

print(f"test accuracy before training: {accuracy(model, x_test, y_test):.1%}")

# %% [markdown]
# ## Training
#
# Five epochs of mini-batches of 32, with a progress bar per epoch (`tqdm.auto` shows a
# notebook widget in Jupyter and a text bar in a terminal).

# %%
epochs, batch_size = 5, 32
steps = len(x_train) // batch_size
history = {"step_loss": [], "train_accuracy": [], "test_accuracy": []}
rng = np.random.default_rng(0)
for epoch in range(1, epochs + 1):
    model.set_train(True)
    perm = rng.permutation(len(x_train))
    bar = tqdm(range(steps), desc=f"epoch {epoch}/{epochs}")
    for step in bar:
        idx = perm[step * batch_size:(step + 1) * batch_size]
        loss = float(train_step(ms.Tensor(x_train[idx]), ms.Tensor(y_train[idx])))
        history["step_loss"].append(loss)
        bar.set_postfix(loss=f"{np.mean(history['step_loss'][-10:]):.3f}", refresh=False)
    model.set_train(False)
    history["train_accuracy"].append(accuracy(model, x_train, y_train))
    history["test_accuracy"].append(accuracy(model, x_test, y_test))
    print(f"epoch {epoch}: loss {np.mean(history['step_loss'][-steps:]):.4f}, "
          f"train accuracy {history['train_accuracy'][-1]:.1%}, test accuracy {history['test_accuracy'][-1]:.1%}")
print("train_step compiled", train_step.trace_count, "time(s)")

# %% [markdown]
# The step was compiled once: every later call passes the current Parameter values into
# the same compiled computation.
#
# ## Loss and accuracy

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.2))
ax1.plot(history["step_loss"], alpha=0.4, label="per step")
window = 10
smooth = np.convolve(history["step_loss"], np.ones(window) / window, mode="valid")
ax1.plot(np.arange(window - 1, len(history["step_loss"])), smooth, label=f"mean of {window}")
ax1.set(title="training loss", xlabel="step", ylabel="cross-entropy", yscale="log")
ax1.legend()
ax2.plot(range(1, epochs + 1), history["train_accuracy"], "o-", label="train")
ax2.plot(range(1, epochs + 1), history["test_accuracy"], "o-", label="test")
ax2.set(title="accuracy", xlabel="epoch", xticks=range(1, epochs + 1))
ax2.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Saving and reloading a checkpoint
#
# `ms.save_checkpoint` writes a safetensors file; `ms.load_checkpoint` reads it into a
# dict of Parameters, and `ms.load_param_into_net` checks every name, shape and dtype
# before it assigns them to a fresh model. The file goes to a temporary directory.

# %%
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "lenet_digits.safetensors")
    ms.save_checkpoint(model, path)
    print(os.path.basename(path), f"({os.path.getsize(path) / 1024:.1f} KiB)")
    param_dict = ms.load_checkpoint(path)

for name, param in list(param_dict.items())[:4]:
    print(name, param.shape, param.dtype)
print("...", len(param_dict), "entries")

restored = LeNet()
param_not_load, ckpt_not_load = ms.load_param_into_net(restored, param_dict)
restored.set_train(False)
print("not loaded:", param_not_load, ckpt_not_load)

# %% [markdown]
# The reloaded model makes the same predictions. `predict` takes the Cell as an argument,
# and two Cells of the same structure share a compilation: `predict` was compiled once for
# the test set's shape and once for the training set's, and `restored` reuses them.

# %%
same = np.array_equal(np.asarray(predict(model, ms.Tensor(x_test))), np.asarray(predict(restored, ms.Tensor(x_test))))
print(f"identical predictions: {same}; test accuracy {accuracy(restored, x_test, y_test):.1%}")
print("predict compiled", predict.trace_count, "time(s)")
assert same
