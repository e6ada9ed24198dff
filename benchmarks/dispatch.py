"""Per-step time of a jitted SGD train step: raw JAX vs cellkit, in one run.

(a) raw ``jax.jit`` over a flat list of arrays (the floor)
(b) ``cellkit.jit`` with the model captured from a closure
(c) ``cellkit.jit`` with the model as an argument
(d) plain ``jax.jit`` over the Cell pytree (cellkit's pure layer)

Run ``python -m benchmarks.dispatch`` (``--smoke`` for tiny sizes). Prints
µs/step and the ratio to (a); absolute times depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import cellkit as ms
from cellkit import nn, ops

LR = 0.01


class MLP(nn.Cell):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.CellList([nn.Dense(a, b) for a, b in zip(sizes[:-1], sizes[1:])])

    def construct(self, x):
        n = len(self.layers)
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < n - 1:
                x = ops.relu(x)
        return x


def mse(out, y):
    return jnp.mean((out - y) ** 2)


def raw_jax(net, x, y):
    params = [p.value for p in net.trainable_params()]

    def forward(params, x):
        for i in range(0, len(params), 2):
            x = x @ params[i].T + params[i + 1]
            if i < len(params) - 2:
                x = jax.nn.relu(x)
        return x

    @jax.jit
    def step(params, x, y):
        loss, grads = jax.value_and_grad(lambda p: mse(forward(p, x), y))(params)
        return [p - LR * g for p, g in zip(params, grads)], loss

    state = [params]

    def run():
        state[0], loss = step(state[0], x, y)
        return loss
    return run


def cellkit_closure(net, x, y):
    weights = net.trainable_params()
    grad_fn = ms.value_and_grad(lambda x, y: mse(net(x), y), None, weights)

    @ms.jit
    def step(x, y):
        loss, grads = grad_fn(x, y)
        for p, g in zip(weights, grads):
            ops.assign(p, p - LR * g)
        return loss
    return lambda: step(x, y)


def cellkit_argument(net, x, y):
    @ms.jit
    def step(net, x, y):
        weights = net.trainable_params()
        loss, grads = ms.value_and_grad(lambda x, y: mse(net(x), y), None, weights)(x, y)
        for p, g in zip(weights, grads):
            ops.assign(p, p - LR * g)
        return loss
    return lambda: step(net, x, y)


def cellkit_pure(net, x, y):
    @jax.jit
    def step(net, x, y):
        loss, grads = jax.value_and_grad(lambda n: mse(n(x), y))(net)
        return jax.tree.map(lambda p, g: p - LR * g, net, grads), loss

    state = [net]

    def run():
        state[0], loss = step(state[0], x, y)
        return loss
    return run


VARIANTS = {"a_raw_jax": raw_jax, "b_cellkit_closure": cellkit_closure,
            "c_cellkit_argument": cellkit_argument, "d_jax_jit_cell_pytree": cellkit_pure}


def time_steps(run, steps):
    start = time.perf_counter()
    for _ in range(steps):
        loss = run()
    jax.block_until_ready(loss)
    return (time.perf_counter() - start) / steps * 1e6


def bench(name, sizes, batch, steps, repeats):
    ms.set_seed(0)
    x = jnp.asarray(np.random.default_rng(0).normal(size=(batch, sizes[0])), jnp.float32)
    y = jnp.asarray(np.random.default_rng(1).normal(size=(batch, sizes[-1])), jnp.float32)
    runs = {}
    for key, make in VARIANTS.items():
        net = MLP(sizes)
        runs[key] = make(net, x, y)
        for _ in range(5):
            jax.block_until_ready(runs[key]())
    samples = {k: [] for k in runs}
    for _ in range(repeats):  # interleaved, so drift affects every variant alike
        for key, run in runs.items():
            samples[key].append(time_steps(run, steps))
    med = {k: statistics.median(v) for k, v in samples.items()}
    base = med["a_raw_jax"]
    print(f"\n{name}: sizes={sizes[0]}x...x{sizes[-1]} ({len(sizes) - 1} layers), batch {batch}")
    print(f"{'variant':26s} {'us/step':>10s} {'spread':>9s} {'ratio':>7s}")
    for key in runs:
        spread = (max(samples[key]) - min(samples[key])) / 2
        print(f"{key:26s} {med[key]:10.1f} {spread:9.1f} {med[key] / base:7.2f}")
    return {"sizes": sizes, "batch": batch, "median_us": med,
            "ratio": {k: v / base for k, v in med.items()}}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, few steps (CI)")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", default=None, help="write results JSON here")
    args = parser.parse_args(argv)
    if args.smoke:
        workloads = [("narrow", [16] * 5, 8), ("wide", [32, 16, 16, 4], 8)]
        args.steps, args.repeats = 3, 1
    else:
        workloads = [("narrow", [16] * 65, 8), ("wide", [784, 512, 512, 10], 128)]
    results = {name: bench(name, sizes, batch, args.steps, args.repeats)
               for name, sizes, batch in workloads}
    results["machine"] = {"backend": jax.default_backend(), "cpus": os.cpu_count(),
                          "jax": jax.__version__}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
    return results


if __name__ == "__main__":
    main()
