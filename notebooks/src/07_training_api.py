# %% [markdown]
# # MindSpore's training API: datasets, `Model.fit`, callbacks, metrics, mixed precision
#
# MindSpore's quick start trains with a `mindspore.dataset` pipeline and `Model`: the
# same program runs here with `import cellkit as ms`. This notebook builds a data
# pipeline on scikit-learn's digits, trains a small CNN with `Model.fit` and its
# callbacks (a progress bar, a loss monitor, checkpoints, `History`), evaluates metrics,
# turns on mixed precision, and resumes training from a saved checkpoint.

# %%
import glob
import tempfile

import numpy as np
from sklearn.datasets import load_digits

import cellkit as ms
import cellkit.dataset as ds
from cellkit import nn
from cellkit.dataset import transforms, vision
from cellkit.train import Model
from cellkit.train.callback import CheckpointConfig, History, LossMonitor, ModelCheckpoint

ms.set_seed(0)
ds.config.set_seed(0)

# %% [markdown]
# ## A data pipeline
#
# `NumpySlicesDataset` slices arrays into rows (shuffled by default, as MindSpore's);
# `map` applies transforms to a column (as in MindSpore, the mapped column moves to the
# front: map the label first and the image last to get `(image, label)` rows), `batch`
# stacks rows. The pipeline runs on grain,
# deterministically under `ds.config.set_seed`, with a fresh order each epoch.

# %%
digits = load_digits()
images = digits.images.astype(np.float32)[..., None]        # (N, 8, 8, 1): HWC, as images come
labels = digits.target.astype(np.int32)
n_test = len(images) // 5


def pipeline(x, y, shuffle, batch_size=64):
    data = ds.NumpySlicesDataset({"image": x, "label": y}, shuffle=shuffle)
    data = data.map(transforms.TypeCast(ms.int32), input_columns="label")
    data = data.map([vision.Rescale(1.0 / 16.0, 0.0), vision.HWC2CHW()], input_columns="image")
    return data.batch(batch_size, drop_remainder=shuffle)


train_data = pipeline(images[n_test:], labels[n_test:], shuffle=True)
test_data = pipeline(images[:n_test], labels[:n_test], shuffle=False)
print("columns:", train_data.get_col_names(), "| batches per epoch:", train_data.get_dataset_size())
first = next(train_data.create_dict_iterator())
print({k: (v.shape, v.dtype) for k, v in first.items()})

# %% [markdown]
# ## The network, loss, optimizer and `Model`
#
# `Model` wraps the network with the loss (`WithLossCell`) and the optimizer
# (`TrainOneStepCell`); every training step is one compiled `ms.jit` call.

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
        return self.fc2(self.relu(self.fc1(self.flatten(x))))


net = LeNet()
loss_fn = nn.CrossEntropyLoss()
optimizer = nn.Adam(net.trainable_params(), learning_rate=3e-3)
model = Model(net, loss_fn, optimizer, metrics={"accuracy", "loss"})

# %% [markdown]
# ## `Model.fit` with callbacks
#
# `fit` trains and evaluates on the validation data after each epoch. `LossMonitor`
# prints MindSpore's loss lines, `ModelCheckpoint` writes `lenet-<epoch>_<step>.ckpt`
# files atomically (keeping the last three), `History` records the loss and metrics.
# In a notebook or on a terminal a tqdm progress bar is shown by default.

# %%
ckpt_dir = tempfile.mkdtemp()
config = CheckpointConfig(save_checkpoint_steps=train_data.get_dataset_size(), keep_checkpoint_max=3)
checkpoints = ModelCheckpoint(prefix="lenet", directory=ckpt_dir, config=config)
history = History()
model.fit(3, train_data, test_data, callbacks=[LossMonitor(per_print_times=10), checkpoints, history])

# %%
print("saved:", sorted(p.split("/")[-1] for p in glob.glob(f"{ckpt_dir}/*.ckpt")))
print("metrics per epoch:", {k: [round(float(v), 4) for v in vs] for k, vs in history.history.items()})
history.plot()

# %% [markdown]
# ## Metrics
#
# `Model.eval` runs the metrics over a dataset; metrics also work on their own
# (`clear`, `update`, `eval`) on NumPy arrays or Tensors.

# %%
print(model.eval(test_data))
confusion = nn.ConfusionMatrix(num_classes=10)
for batch in test_data.create_tuple_iterator():
    confusion.update(net(batch[0]), batch[1])
print(np.asarray(confusion.eval()).astype(int)[:4, :4])

# %% [markdown]
# ## Resuming from a checkpoint
#
# A fresh network loads the last checkpoint and continues from the third epoch
# (`initial_epoch`), with the optimizer's state (Adam's moments, the step) restored too:
# it is in the checkpoint because the optimizer's state is Parameters.

# %%
last = checkpoints.latest_ckpt_file_name
resumed = LeNet()
resumed_opt = nn.Adam(resumed.trainable_params(), learning_rate=3e-3)
params = ms.load_checkpoint(last)
ms.load_param_into_net(resumed, params)
ms.load_param_into_net(resumed_opt, params)
resumed_model = Model(resumed, loss_fn, resumed_opt, metrics={"accuracy"})
print("restored accuracy:", resumed_model.eval(test_data)["accuracy"])
resumed_model.train(4, train_data, callbacks=[LossMonitor(per_print_times=100)], initial_epoch=3)
print("after one more epoch:", resumed_model.eval(test_data)["accuracy"])

# %% [markdown]
# ## Mixed precision
#
# `amp_level="O2"` casts the network to float16 (bfloat16 with `dtype=ms.bfloat16`)
# while batch normalisation and the loss stay float32, and wraps the step with dynamic
# loss scaling; the Parameters themselves stay float32.

# %%
amp_net = LeNet()
amp_model = Model(amp_net, loss_fn, nn.Adam(amp_net.trainable_params(), learning_rate=3e-3),
                  metrics={"accuracy"}, amp_level="O2")
amp_model.train(2, train_data)
print("O2 accuracy:", amp_model.eval(test_data)["accuracy"])
print("weights stay", amp_net.fc1.weight.dtype)
