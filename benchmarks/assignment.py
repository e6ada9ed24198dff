"""Assignment into Tensors (``cellkit.rewrite``): what it costs, against raw JAX.

    python -m benchmarks.assignment [--repeats 15] [--sample-ms 20]

* eager ``x[i] = v`` / ``x.add_(y)`` in a rewritten function against the same function
  written with ``x.at[i].set(v)`` / ``x = x + y`` (the helper's Python in front of JAX's
  dispatch);
* the same function under ``cellkit.jit`` against ``jax.jit`` of the raw one (the same XLA
  computation; the difference is ``cellkit.jit``'s own call path). A function with no
  assignment is not touched at all: ``rewrite_function`` returns the same object;
* the one-off cost of rewriting a function (read its source, parse, rewrite, compile) and
  of the bytecode check that skips a function with nothing to rewrite.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax
import jax.numpy as jnp

import cellkit  # noqa: F401 - installs the Tensor methods
from cellkit.rewrite import functions, needs_rewrite, rewrite_function

from . import timing

X = jnp.arange(64 * 64, dtype=jnp.float32).reshape(64, 64) / 100
MASK = X > 10


def assign(x):
    x[0, 1:] = 2.0
    x[MASK] = 0.0
    x.add_(1.0)
    return x


def raw(x):
    x = x.at[0, 1:].set(2.0)
    x = jnp.where(MASK, jnp.float32(0), x)
    x = x + 1.0
    return x


def plain(x):
    return x * 2.0 + 1.0


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--sample-ms", type=float, default=20.0)
    args = parser.parse_args(argv)
    rows = {}
    rewritten = rewrite_function(assign)
    compiled, raw_compiled = cellkit.jit(assign), jax.jit(raw)
    pairs = {"eager x[i] = v, x[mask] = 0, x.add_(1)": (lambda: rewritten(X), lambda: raw(X)),
             "the same under cellkit.jit / jax.jit": (lambda: compiled(X), lambda: raw_compiled(X))}
    print("| call | cellkit µs | raw JAX µs | paired ratio |\n|---|---|---|---|")
    for name, (ck, ref) in pairs.items():
        jax.block_until_ready((ck(), ref()))
        steps = timing.calibrate(ref, args.sample_ms / 1000)
        samples = timing.interleaved({"ck": ck, "raw": ref}, args.repeats, steps)
        ratio = statistics.median(m / r for m, r in zip(samples["ck"], samples["raw"]))
        rows[name] = {"cellkit_us": statistics.median(samples["ck"]) * 1e6,
                      "raw_us": statistics.median(samples["raw"]) * 1e6, "paired_ratio": ratio}
        print(f"| {name} | {rows[name]['cellkit_us']:.1f} | {rows[name]['raw_us']:.1f} | {ratio:.2f} |")
    n = 200
    start = time.perf_counter()
    for _ in range(n):
        functions._CODES.pop(assign.__code__, None)
        functions._FUNCTIONS.pop(assign, None)
        rewrite_function(assign)
    rows["rewrite one function (ms)"] = (time.perf_counter() - start) / n * 1e3
    start = time.perf_counter()
    for _ in range(n * 50):
        needs_rewrite(plain.__code__)
    rows["bytecode check (us)"] = (time.perf_counter() - start) / (n * 50) * 1e6
    print(f"rewriting one function: {rows['rewrite one function (ms)']:.2f} ms; "
          f"the bytecode check of one with nothing to rewrite: {rows['bytecode check (us)']:.2f} µs")
    return rows


if __name__ == "__main__":
    main()
