"""Eager Tensor methods against the raw ``jax.numpy`` calls they stand for, per call.

    python -m benchmarks.tensor_methods [--repeats 15] [--sample-ms 20]

Each MindSpore method cellkit installs on ``jax.Array`` is one Python call in
front of JAX's own operation; JAX's own methods that take MindSpore spellings
too (``sum``, ``max``, ``view``, ...) are one call in front of JAX's method.
This prints, per pair, the median per call of both and their paired ratio
(timed interleaved, see ``timing``). Ratios near 1.0 mean the method adds
nothing measurable to the dispatch of the operation itself.
"""

from __future__ import annotations

import argparse
import statistics

import jax
import jax.numpy as jnp

import cellkit  # noqa: F401 - installs the Tensor methods

from . import timing

X = jnp.arange(64 * 64, dtype=jnp.float32).reshape(64, 64) / 100
MASK = X > 10
PAIRS = {
    # name: (the Tensor method, the raw JAX call it stands for)
    "x.sum() (JAX's, wrapped)": (lambda: X.sum(), lambda: jnp.sum(X)),
    "x.sum(axis=1) (JAX's, wrapped)": (lambda: X.sum(axis=1), lambda: jnp.sum(X, axis=1)),
    "x.sum(dim=1, keepdim=True)": (lambda: X.sum(dim=1, keepdim=True), lambda: jnp.sum(X, axis=1, keepdims=True)),
    "x.view(-1)": (lambda: X.view(-1), lambda: X.reshape(-1)),
    "x.unsqueeze(0)": (lambda: X.unsqueeze(0), lambda: jnp.expand_dims(X, 0)),
    "x.add(y, alpha=2)": (lambda: X.add(X, alpha=2), lambda: jnp.add(X, X * 2)),
    "x.masked_fill(m, 0.)": (lambda: X.masked_fill(MASK, 0.0), lambda: jnp.where(MASK, jnp.float32(0), X)),
    "x.max(dim=1)": (lambda: X.max(dim=1), lambda: (jnp.max(X, 1), jnp.argmax(X, 1))),
}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--sample-ms", type=float, default=20.0)
    args = parser.parse_args(argv)
    rows = {}
    print("| call | method µs | raw jnp µs | paired ratio |\n|---|---|---|---|")
    for name, (method, raw) in PAIRS.items():
        jax.block_until_ready((method(), raw()))
        steps = timing.calibrate(raw, args.sample_ms / 1000)
        samples = timing.interleaved({"method": method, "raw": raw}, args.repeats, steps)
        ratio = statistics.median(m / r for m, r in zip(samples["method"], samples["raw"]))
        rows[name] = {"method_us": statistics.median(samples["method"]) * 1e6,
                      "raw_us": statistics.median(samples["raw"]) * 1e6, "paired_ratio": ratio}
        print(f"| `{name}` | {rows[name]['method_us']:.1f} | {rows[name]['raw_us']:.1f} | {ratio:.2f} |")
    return rows


if __name__ == "__main__":
    main()
