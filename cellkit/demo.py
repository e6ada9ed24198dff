"""Train a small LeNet-style CNN on scikit-learn's handwritten digits: ``python -m cellkit.demo``.

The data set ships inside scikit-learn (no download). The training loop is
MindSpore 2.x's functional style — ``value_and_grad`` over the optimizer's
Parameters and a ``jit``-compiled step — running on cellkit and JAX (CPU by
default). It shows a progress bar per epoch, prints the test accuracy, saves a
checkpoint, reloads it into a fresh model to check it, and writes a plot of the
loss and accuracy.

Needs the ``demo`` extra: ``python -m pip install -e ".[demo]"``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import numpy as np
import optax

import cellkit as ms
from cellkit import nn, ops

__all__ = ["LeNet", "load_digits", "accuracy", "plot", "main"]


class LeNet(nn.Cell):
    """Two convolution blocks (32 and 64 channels) and two dense layers for 1×8×8 digit images."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, pad_mode="same", has_bias=True)
        self.conv2 = nn.Conv2d(32, 64, 3, pad_mode="same", has_bias=True)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(64 * 2 * 2, 128)
        self.fc2 = nn.Dense(128, num_classes)

    def construct(self, x):
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        x = self.relu(self.fc1(self.flatten(x)))
        return self.fc2(x)


def load_digits(seed: int, test_fraction: float = 0.2):
    """(x_train, y_train, x_test, y_test): images scaled to [0, 1], shape (N, 1, 8, 8)."""
    from sklearn.datasets import load_digits as sk_load_digits

    digits = sk_load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    y = digits.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = int(len(x) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def accuracy(predict, x, y) -> float:
    return float((np.asarray(predict(ms.Tensor(x))).argmax(-1) == y).mean())


def plot(history: dict, path: pathlib.Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
    ax1.plot(history["step_loss"], color="tab:blue", alpha=0.35, label="per step")
    steps_per_epoch = len(history["step_loss"]) // max(len(history["epoch_loss"]), 1)
    ax1.plot([steps_per_epoch * (i + 1) - 1 for i in range(len(history["epoch_loss"]))],
             history["epoch_loss"], "o-", color="tab:blue", label="epoch mean")
    ax1.set(title="training loss", xlabel="step", ylabel="cross-entropy")
    ax1.legend()
    epochs = range(1, len(history["test_accuracy"]) + 1)
    ax2.plot(epochs, history["train_accuracy"], "o-", label="train")
    ax2.plot(epochs, history["test_accuracy"], "o-", label="test")
    low = min(history["train_accuracy"] + history["test_accuracy"])
    ax2.set(title="accuracy", xlabel="epoch", ylim=(max(0.0, low - 0.05), 1.005))
    ax2.xaxis.get_major_locator().set_params(integer=True)
    ax2.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m cellkit.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3, help="Adam's initial learning rate (cosine decay)")
    parser.add_argument("--out", default="demo-output", help="folder for the checkpoint, plot and metrics")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-steps", type=int, default=None, help="stop each epoch after this many steps")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)

    from tqdm.auto import tqdm

    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ms.set_seed(args.seed)
    x_train, y_train, x_test, y_test = load_digits(args.seed)

    model = LeNet()
    loss_fn = nn.CrossEntropyLoss()
    steps = len(x_train) // args.batch_size
    if args.max_steps is not None:
        steps = min(steps, args.max_steps)
    # Learning rates may be optax schedules of the step: here a cosine decay over the run.
    schedule = optax.cosine_decay_schedule(args.lr, decay_steps=max(steps * args.epochs, 1), alpha=0.05)
    optimizer = nn.Adam(model.trainable_params(), learning_rate=schedule)

    def forward_fn(data, label):
        logits = model(data)
        return loss_fn(logits, label), logits

    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)

    @ms.jit
    def train_step(data, label):
        (loss, _), grads = grad_fn(data, label)
        optimizer(grads)
        return loss

    predict = ms.jit(lambda data: model(data))

    history = {"step_loss": [], "epoch_loss": [], "train_accuracy": [], "test_accuracy": []}
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        model.set_train(True)
        order = rng.permutation(len(x_train))
        losses = []
        bar = tqdm(range(steps), desc=f"epoch {epoch:2d}/{args.epochs}", disable=args.quiet,
                   leave=True, file=sys.stdout, dynamic_ncols=True)
        for step in bar:
            idx = order[step * args.batch_size:(step + 1) * args.batch_size]
            loss = float(train_step(ms.Tensor(x_train[idx]), ms.Tensor(y_train[idx])))
            losses.append(loss)
            if step % 5 == 0 or step == steps - 1:
                bar.set_postfix(loss=f"{np.mean(losses[-10:]):.4f}")
        model.set_train(False)
        history["step_loss"] += losses
        history["epoch_loss"].append(float(np.mean(losses)))
        history["train_accuracy"].append(accuracy(predict, x_train, y_train))
        history["test_accuracy"].append(accuracy(predict, x_test, y_test))
        print(f"epoch {epoch:2d}: loss {history['epoch_loss'][-1]:.4f}  "
              f"train accuracy {history['train_accuracy'][-1]:.2%}  "
              f"test accuracy {history['test_accuracy'][-1]:.2%}", flush=True)
    seconds = time.perf_counter() - start

    ckpt = out / "lenet_digits.safetensors"
    ms.save_checkpoint(model, str(ckpt))
    restored = LeNet()
    not_loaded, _ = ms.load_param_into_net(restored, ms.load_checkpoint(str(ckpt)))
    restored.set_train(False)
    restored_acc = accuracy(ms.jit(lambda data: restored(data)), x_test, y_test)
    if not_loaded or abs(restored_acc - history["test_accuracy"][-1]) > 1e-9:
        raise RuntimeError(f"the reloaded checkpoint does not reproduce the model (missing {not_loaded})")

    plot(history, out / "training.png")
    result = {"test_accuracy": history["test_accuracy"][-1], "train_seconds": round(seconds, 2),
              "epochs": args.epochs, "batch_size": args.batch_size, "steps_per_epoch": steps,
              "compilations": train_step.trace_count, "checkpoint": str(ckpt),
              "plot": str(out / "training.png"), "history": history}
    with open(out / "metrics.json", "w") as f:
        json.dump(result, f, indent=1)
    print(f"test accuracy {result['test_accuracy']:.2%} after {args.epochs} epochs "
          f"({seconds:.1f} s, {train_step.trace_count} compilation of the train step)")
    print(f"checkpoint: {ckpt} (reloaded: test accuracy {restored_acc:.2%})")
    print(f"plot: {out / 'training.png'}")
    return result


if __name__ == "__main__":
    main()
