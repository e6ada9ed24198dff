"""Memory saved by recompute: XLA's memory analysis of one jitted train step of a deep MLP.

    PYTHONPATH=. python benchmarks/recompute.py [--depth 16] [--width 1024] [--batch 512]
                                                [--out benchmarks/results/recompute.json]

The network is ``depth`` blocks of (Dense, tanh, Dense, tanh); the train step is
``value_and_grad`` of a mean-squared loss with respect to every weight plus an SGD
update, compiled once per variant with ``jax.jit`` over the Cell (a pytree). Variants:
no recompute, ``Cell.recompute()`` on every block (nothing saved inside a block), and
``Cell.recompute(policy="dots_saveable")`` (matmul outputs kept, tanh recomputed).
Printed per variant: XLA's temp bytes (the activations and scratch the step needs at
once) and their ratio to no recompute; the bytes of the residuals the forward pass saves
for the backward pass (the leaves of ``jax.vjp``'s backward function, found abstractly
with ``jax.eval_shape``) and their ratio; and the loss of one executed step (equal
across variants: recompute changes memory, not values).

The residuals are what recompute reduces on every backend. XLA's temp bytes show it
where the compiler schedules each recomputation next to its use (GPU, TPU); XLA's CPU
scheduler places the recomputations early, so on CPU temp bytes do not drop (see
benchmarks/results/recompute.json for this machine's figures).
"""

from __future__ import annotations

import argparse
import json
import platform

import jax
import jax.numpy as jnp
import numpy as np

import cellkit as ms
from cellkit import nn


class Block(nn.Cell):
    def __init__(self, width):
        super().__init__()
        self.a = nn.Dense(width, width)
        self.b = nn.Dense(width, width)

    def construct(self, x):
        return jnp.tanh(self.b(jnp.tanh(self.a(x))))


def build(depth, width, policy):
    ms.set_seed(0)
    net = nn.SequentialCell([Block(width) for _ in range(depth)])
    if policy != "off":
        for block in net:
            block.recompute(policy=None if policy == "all" else policy)
    return net


def train_step(net, x, y):
    params = net.trainable_params()
    loss, grads = ms.value_and_grad(lambda x, y: ((net(x) - y) ** 2).mean(), None, params)(x, y)
    return loss, [p.value - 0.01 * g for p, g in zip(params, grads)]


def residual_bytes(net, x, y):
    """Bytes the forward pass keeps for the backward pass (``jax.vjp``'s residuals), abstractly."""
    def residuals(net):
        _, back = jax.vjp(lambda n: ((n(x) - y) ** 2).mean(), net)
        return jax.tree_util.tree_leaves(back)

    return sum(int(np.prod(s.shape)) * s.dtype.itemsize for s in jax.eval_shape(residuals, net))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--depth", type=int, default=16)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--out", default="benchmarks/results/recompute.json")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((args.batch, args.width)), jnp.float32)
    y = jnp.asarray(rng.standard_normal((args.batch, args.width)), jnp.float32)
    rows = []
    for policy in ("off", "all", "dots_saveable"):
        net = build(args.depth, args.width, policy)
        compiled = jax.jit(train_step).lower(net, x, y).compile()
        mem = compiled.memory_analysis()
        loss = float(compiled(net, x, y)[0])
        rows.append({"recompute": policy, "temp_bytes": int(mem.temp_size_in_bytes),
                     "residual_bytes": residual_bytes(net, x, y),
                     "argument_bytes": int(mem.argument_size_in_bytes),
                     "output_bytes": int(mem.output_size_in_bytes), "loss": loss})
    base, base_res = rows[0]["temp_bytes"], rows[0]["residual_bytes"]
    print(f"{'recompute':<15}{'temp MiB':>10}{'ratio':>8}{'residual MiB':>14}{'ratio':>8}{'loss':>12}")
    for row in rows:
        row["ratio"] = row["temp_bytes"] / base
        row["residual_ratio"] = row["residual_bytes"] / base_res
        print(f"{row['recompute']:<15}{row['temp_bytes'] / 2**20:>10.1f}{row['ratio']:>8.2f}"
              f"{row['residual_bytes'] / 2**20:>14.1f}{row['residual_ratio']:>8.2f}{row['loss']:>12.6f}")
    result = {"benchmark": "recompute", "depth": args.depth, "width": args.width, "batch": args.batch,
              "backend": jax.default_backend(), "jax": jax.__version__, "machine": platform.machine(),
              "rows": rows}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    return result


if __name__ == "__main__":
    main()
