"""MindSpore's graph-mode train step for an MLP workload; run by ``benchmarks.run`` in a subprocess.

``python -m benchmarks.mindspore_step --sizes 784,512,512,10 --batch 128``
prints one JSON line: median, quartiles and min seconds per step, and the first
call's seconds (graph compilation). It imports MindSpore and NumPy only, so it
runs in MindSpore's own virtual environment (``benchmarks.run --mindspore-python``). The model
and step are MindSpore's own (``nn.Dense``, ``--optimizer`` ``nn.Adam``, ``nn.SGD`` or
``nn.Momentum`` at ``--lr``, ``value_and_grad``, ``ms.jit``); the loss is the same softmax
cross-entropy. The weights are MindSpore's own initial ones, so losses are not compared.
"""

from __future__ import annotations

import argparse
import json

import mindspore as ms
import numpy as np
from mindspore import nn

from .stats import summarize


def main(argv=None) -> None:
    """Build the MLP, time ``--repeats`` samples of ``--steps`` steps, print the summary as JSON."""
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", required=True)
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--optimizer", default="Adam", choices=("Adam", "SGD", "Momentum"))
    p.add_argument("--lr", type=float, default=1e-3)
    args = p.parse_args(argv)
    import time
    ms.set_context(mode=ms.GRAPH_MODE)
    sizes = [int(s) for s in args.sizes.split(",")]
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers += [nn.Dense(a, b)] + ([nn.ReLU()] if i < len(sizes) - 2 else [])
    net = nn.SequentialCell(layers)
    params = net.trainable_params()
    if args.optimizer == "Momentum":
        opt = nn.Momentum(params, learning_rate=args.lr, momentum=0.9)
    else:
        opt = getattr(nn, args.optimizer)(params, learning_rate=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    rng = np.random.default_rng(0)
    x = ms.Tensor(rng.normal(size=(args.batch, sizes[0])).astype(np.float32))
    y = ms.Tensor(rng.integers(0, sizes[-1], args.batch).astype(np.int32))
    def forward(x, y):   # graph mode parses the function's source: a def, not a lambda
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, opt.parameters)

    @ms.jit
    def step(x, y):
        loss, grads = grad_fn(x, y)
        opt(grads)
        return loss

    start = time.perf_counter()
    step(x, y).asnumpy()
    first_call_s = time.perf_counter() - start
    for _ in range(4):
        step(x, y).asnumpy()
    samples = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        for _ in range(args.steps):
            loss = step(x, y)
        loss.asnumpy()   # waits for the device
        samples.append((time.perf_counter() - start) / args.steps)
    print(json.dumps({**summarize(samples), "first_call_s": first_call_s, "mindspore": ms.__version__}))


if __name__ == "__main__":
    main()
