"""Data-parallel train step time on 1 vs 8 simulated CPU devices, as a ratio.

The same ``cellkit.jit`` SGD step (``ms.value_and_grad`` and ``ops.assign``)
runs on a 1-device mesh and on an 8-device ``data`` mesh, with the global
batch split over the ``data`` axis and the weights replicated. The devices are
simulated on this machine's CPU cores, so the ratio shows the cost of
partitioning and of the collectives XLA inserts, not a real speed-up; on real
accelerators the 8-device step runs its shards in parallel.

Run ``python -m benchmarks.data_parallel`` (``--smoke`` for tiny sizes). It
sets ``XLA_FLAGS=--xla_force_host_platform_device_count=8`` itself when JAX
has not started yet. Prints ms/step for each and the 8-to-1 ratio; absolute
times depend on the machine. No result is asserted.
"""

from __future__ import annotations

import os

_FLAG = "--xla_force_host_platform_device_count"
if _FLAG not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_FLAG}=8".strip()

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

import cellkit as ms  # noqa: E402
from cellkit import nn, ops, parallel  # noqa: E402

LR = 0.01


class MLP(nn.Cell):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.CellList([nn.Dense(a, b) for a, b in zip(sizes[:-1], sizes[1:])])

    def construct(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = ops.relu(x)
        return x


def make_run(n_devices, sizes, batch):
    """A zero-argument function running one train step on an ``n_devices`` data mesh."""
    mesh = parallel.make_mesh((n_devices,), ("data",), devices=jax.devices()[:n_devices])
    ms.set_seed(0)
    net = MLP(sizes).shard(mesh)  # replicated weights, made on the mesh
    weights = net.trainable_params()
    grad_fn = ms.value_and_grad(lambda x, y: ops.mean((net(x) - y) ** 2), None, weights)
    rows = NamedSharding(mesh, P("data"))

    @ms.jit
    def step(x, y):
        loss, grads = grad_fn(x, y)
        for p, g in zip(weights, grads):
            ops.assign(p, p - LR * g)
        return loss

    rng = np.random.default_rng(0)
    x = jax.device_put(rng.normal(size=(batch, sizes[0])).astype(np.float32), rows)
    y = jax.device_put(rng.normal(size=(batch, sizes[-1])).astype(np.float32), rows)
    return lambda: step(x, y)


def time_steps(run, steps):
    start = time.perf_counter()
    for _ in range(steps):
        loss = run()
    jax.block_until_ready(loss)
    return (time.perf_counter() - start) / steps


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, few steps (CI)")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=None, help="write results JSON here")
    args = parser.parse_args(argv)
    if jax.device_count() < 8:
        raise SystemExit(f"needs 8 devices, JAX has {jax.device_count()}: start it with "
                         f"XLA_FLAGS={_FLAG}=8")
    if args.smoke:
        sizes, batch, args.steps, args.repeats = [16, 32, 8], 16, 2, 1
    else:
        sizes, batch = [512, 1024, 1024, 10], 256
    runs = {n: make_run(n, sizes, batch) for n in (1, 8)}
    for run in runs.values():  # compile and warm up
        for _ in range(3):
            jax.block_until_ready(run())
    samples = {n: [] for n in runs}
    for _ in range(args.repeats):  # interleaved, so drift affects both alike
        for n, run in runs.items():
            samples[n].append(time_steps(run, args.steps))
    med = {n: statistics.median(v) for n, v in samples.items()}
    ratio = med[8] / med[1]
    print(f"data-parallel MLP {'x'.join(map(str, sizes))}, global batch {batch}, "
          f"{jax.device_count()} simulated {jax.default_backend()} devices on {os.cpu_count()} cores")
    for n in runs:
        print(f"{n} device{'s' if n > 1 else ' '}: {med[n] * 1e3:9.3f} ms/step")
    print(f"ratio 8/1: {ratio:.2f}")
    results = {"sizes": sizes, "batch": batch, "seconds_per_step": med, "ratio_8_to_1": ratio,
               "machine": {"backend": jax.default_backend(), "cpus": os.cpu_count(),
                           "jax": jax.__version__}}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
    return results


if __name__ == "__main__":
    main()
