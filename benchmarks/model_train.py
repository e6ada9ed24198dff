"""``Model.train`` per step against a hand-written ``cellkit.jit`` loop on the same network and data.

    PYTHONPATH=. python benchmarks/model_train.py [--rounds 15] [--out benchmarks/results/model_train.json]

Both run one epoch of the same batches (device arrays, made once) through the same
``TrainOneStepCell(WithLossCell(net, loss), optimizer)``: the loop calls the compiled
step itself; ``Model.train`` adds its callback and bookkeeping around each call (no
callbacks passed, no progress bar: stdout is not read interactively here). Rounds
alternate the order; the ratio is the median of per-round ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

import jax
import numpy as np

os.environ.setdefault("CELLKIT_PROGRESS_BAR", "0")

import cellkit as ms  # noqa: E402
from cellkit import nn, train  # noqa: E402


def build(seed=0):
    ms.set_seed(seed)
    net = nn.SequentialCell([nn.Dense(64, 256), nn.ReLU(), nn.Dense(256, 256), nn.ReLU(), nn.Dense(256, 10)])
    opt = nn.Momentum(net.trainable_params(), 0.01, 0.9)
    return net, opt


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--out", default="benchmarks/results/model_train.json")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    data = [(jax.device_put(rng.standard_normal((128, 64)).astype(np.float32)),
             jax.device_put(rng.integers(0, 10, 128).astype(np.int32))) for _ in range(args.steps)]
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")

    net_a, opt_a = build()
    step_net = nn.TrainOneStepCell(nn.WithLossCell(net_a, loss), opt_a)
    step_net.set_train()
    step = ms.jit(lambda n, x, y: n(x, y))

    def hand_loop():
        out = None
        for x, y in data:
            out = step(step_net, x, y)
        jax.block_until_ready(out)

    net_b, opt_b = build()
    model = train.Model(net_b, loss, opt_b)

    def model_epoch():
        model.train(1, data)
        jax.block_until_ready(net_b.trainable_params()[0].value)

    hand_loop()
    model_epoch()  # compile both
    times = {"loop": [], "model": []}
    ratios = []
    for r in range(args.rounds):
        order = [("loop", hand_loop), ("model", model_epoch)]
        if r % 2:
            order.reverse()
        sample = {}
        for name, fn in order:
            t0 = time.perf_counter()
            fn()
            sample[name] = (time.perf_counter() - t0) / args.steps
            times[name].append(sample[name])
        ratios.append(sample["model"] / sample["loop"])
    result = {
        "benchmark": "Model.train per step vs a cellkit.jit loop (MLP 64-256-256-10, batch 128, Momentum)",
        "machine": f"{platform.machine()} {os.cpu_count()} cpu, jax {jax.__version__}, {jax.default_backend()}",
        "steps_per_epoch": args.steps, "rounds": args.rounds,
        "loop_ms_per_step_median": statistics.median(times["loop"]) * 1e3,
        "model_ms_per_step_median": statistics.median(times["model"]) * 1e3,
        "ratio_median_of_rounds": statistics.median(ratios),
        "ratio_of_medians": statistics.median(times["model"]) / statistics.median(times["loop"]),
        "target": "ratio <= 1.05",
    }
    print(f"loop  {result['loop_ms_per_step_median']:.3f} ms/step")
    print(f"Model {result['model_ms_per_step_median']:.3f} ms/step")
    print(f"ratio Model/loop: {result['ratio_median_of_rounds']:.3f} (median of rounds), "
          f"{result['ratio_of_medians']:.3f} (of medians)")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    return result


if __name__ == "__main__":
    main()
