"""Fine-tune a mindcv model on scikit-learn's digits: plain MindSpore code, run on cellkit.

    cellkit run examples/mindcv_digits.py [--model resnet18] [--epochs 3]

(or ``python -m cellkit run ...``). Nothing here names cellkit: ``import mindspore`` and
mindcv's own ``import mindspore`` resolve to cellkit under ``cellkit run``. The 8x8 digit
images are scaled to 32x32 and fed as one channel (``in_channels=1``); the model, its loss
and its optimizer come from mindcv, the training step is MindSpore's functional idiom
(``value_and_grad`` under ``jit``). Prints the test accuracy after each epoch.
"""

import argparse

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import mindspore as ms
from mindspore import nn, ops
from mindcv.loss import create_loss
from mindcv.models import create_model


def data(side=32):
    digits = load_digits()
    x = digits.images.astype(np.float32) / 16.0
    x = np.kron(x, np.ones((side // 8, side // 8), np.float32))[:, None]  # N, 1, side, side
    return train_test_split(x, digits.target.astype(np.int32), test_size=0.2, random_state=0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="resnet18")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()

    ms.set_seed(0)
    x_train, x_test, y_train, y_test = data()
    net = create_model(args.model, num_classes=10, in_channels=1)
    loss_fn = create_loss(name="CE", label_smoothing=0.1)
    optimizer = nn.Adam(net.trainable_params(), learning_rate=1e-3)

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

    rng = np.random.default_rng(0)
    for epoch in range(args.epochs):
        net.set_train(True)
        order = rng.permutation(len(x_train))
        losses = []
        for i in range(0, len(order) - args.batch + 1, args.batch):
            idx = order[i:i + args.batch]
            losses.append(float(train_step(ms.Tensor(x_train[idx]), ms.Tensor(y_train[idx]))))
        net.set_train(False)
        pred = np.concatenate([predict(ms.Tensor(x_test[i:i + 120])).asnumpy() for i in range(0, len(x_test), 120)])
        accuracy = float((pred == y_test).mean())
        print(f"epoch {epoch + 1}: loss {np.mean(losses):.3f}, test accuracy {accuracy:.3f}")
    return accuracy


if __name__ == "__main__":
    main()
