"""cellkit's own optimizers (``nn.SGD``, ``nn.Momentum``, ``nn.Adam``) in a MindSpore-style loop against raw JAX.

``python -m benchmarks.nn_optim [--repeats 20] [--out PATH]`` prints one line per
(workload, optimizer) with the paired ratio (median of per-round ratios
cellkit / raw JAX) and writes ``benchmarks/results/nn_optim-<backend>.json``.

The cellkit step is the loop a MindSpore user writes::

    opt = nn.SGD(net.trainable_params(), learning_rate=0.01)
    grad_fn = ms.value_and_grad(fwd, None, opt.parameters)

    @ms.jit
    def step(x, y):
        loss, grads = grad_fn(x, y)
        opt(grads)
        return loss

with the Cell and the optimizer reached through the closure. The raw JAX step
is ``jax.jit`` over a ``{name: array}`` dict (and the state the same update
needs: none for SGD, the velocity for Momentum, the two moments and the step
for Adam), written with ``jax.numpy`` only, in the same process, timed in
interleaved rounds (:mod:`benchmarks.timing`).

Workloads: ``narrow`` (64 Dense layers of width 16, batch 8: per-step
overhead dominates) and ``wide`` (784-512-512-10, batch 128: compute dominates).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics

import jax
import jax.numpy as jnp
import numpy as np

import cellkit as ms
from cellkit import nn

from . import models
from .timing import calibrate, interleaved, summarize

__all__ = ["WORKLOADS", "OPTIMIZERS", "measure", "main"]

WORKLOADS = {"narrow": ([16] * 65, 8), "wide": ([784, 512, 512, 10], 128)}
LR = 0.01


def _mindspore_sgd(p, g, s):
    return jax.tree.map(lambda w, d: w - LR * d, p, g), s


def _mindspore_momentum(p, g, s):
    v = jax.tree.map(lambda v, d: 0.9 * v + d, s, g)
    return jax.tree.map(lambda w, m: w - LR * m, p, v), v


def _mindspore_adam(p, g, s):
    m, v, t = s
    t = t + 1
    m = jax.tree.map(lambda m, d: 0.9 * m + 0.1 * d, m, g)
    v = jax.tree.map(lambda v, d: 0.999 * v + 0.001 * d * d, v, g)
    lr_t = LR * jnp.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
    return jax.tree.map(lambda w, m, v: w - lr_t * m / (jnp.sqrt(v) + 1e-8), p, m, v), (m, v, t)


# name -> (cellkit optimizer, raw update(params, grads, state) -> (params, state), raw initial state)
OPTIMIZERS = {
    "SGD": (lambda ps: nn.SGD(ps, learning_rate=LR), _mindspore_sgd, lambda p: ()),
    "Momentum": (lambda ps: nn.Momentum(ps, learning_rate=LR, momentum=0.9), _mindspore_momentum,
                 lambda p: jax.tree.map(jnp.zeros_like, p)),
    "Adam": (lambda ps: nn.Adam(ps, learning_rate=LR), _mindspore_adam,
             lambda p: (jax.tree.map(jnp.zeros_like, p), jax.tree.map(jnp.zeros_like, p),
                        jnp.zeros((), jnp.float32))),
}


def _data(sizes, batch):
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.normal(size=(batch, sizes[0])), jnp.float32)
    y = jnp.asarray(rng.integers(0, sizes[-1], batch), jnp.int32)
    return x, y


def cellkit_step(sizes, make_opt, x, y):
    """``run()`` for the MindSpore-style loop (Cell and optimizer in the closure)."""
    ms.set_seed(0)
    net = models.MLP(sizes)
    opt = make_opt(net.trainable_params())
    grad_fn = ms.value_and_grad(lambda x, y: models.cross_entropy(net(x), y), None, opt.parameters)

    @ms.jit
    def step(x, y):
        loss, grads = grad_fn(x, y)
        opt(grads)
        return loss
    return lambda: step(x, y), net, opt


def raw_step(net, update, init, x, y):
    """``run()`` for ``jax.jit`` over a dict of arrays (and the optimizer's state)."""
    forward = models.raw_forward(net)
    params = models.raw_params(net)
    state = [params, init(params)]

    @jax.jit
    def step(p, s, x, y):
        loss, g = jax.value_and_grad(lambda p: models.cross_entropy(forward(p, x), y))(p)
        p, s = update(p, g, s)
        return p, s, loss

    def run():
        state[0], state[1], loss = step(state[0], state[1], x, y)
        return loss
    return run


def measure(workload: str, optimizer: str, repeats: int = 20, sample_s: float = 0.05) -> dict:
    """Seconds per step of both variants and their paired ratio."""
    sizes, batch = WORKLOADS[workload]
    make_opt, update, init = OPTIMIZERS[optimizer]
    x, y = _data(sizes, batch)
    ck, net, _ = cellkit_step(sizes, make_opt, x, y)
    raw = raw_step(net, update, init, x, y)
    # Same start, same losses: the two steps compute the same thing.
    first = float(ck()), float(raw())
    np.testing.assert_allclose(first[0], first[1], rtol=1e-4)
    runs = {"cellkit": ck, "raw_jax": raw}
    steps = max(calibrate(r, sample_s) for r in runs.values())
    samples = interleaved(runs, repeats, steps)
    ratios = [a / b for a, b in zip(samples["cellkit"], samples["raw_jax"])]
    return {"workload": workload, "optimizer": optimizer, "sizes": sizes, "batch": batch, "steps": steps,
            "cellkit": summarize(samples["cellkit"]), "raw_jax": summarize(samples["raw_jax"]),
            "paired_ratio": statistics.median(ratios)}


def main(argv=None) -> list:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--sample-s", type=float, default=0.05)
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--optimizers", default=",".join(OPTIMIZERS))
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    rows = []
    for w in args.workloads.split(","):
        for o in args.optimizers.split(","):
            row = measure(w, o, args.repeats, args.sample_s)
            rows.append(row)
            print(f"{w:7s} {o:9s} cellkit {row['cellkit']['median_s'] * 1e6:9.1f} us  raw "
                  f"{row['raw_jax']['median_s'] * 1e6:9.1f} us  ratio {row['paired_ratio']:.3f}", flush=True)
    backend = jax.default_backend()
    out = pathlib.Path(args.out) if args.out else (pathlib.Path(__file__).parent / "results" /
                                                 f"nn_optim-{backend}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"backend": backend, "jax": jax.__version__, "rows": rows}, indent=1) + "\n")
    return rows


if __name__ == "__main__":
    main()
