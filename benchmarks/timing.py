"""Interleaved wall-clock timing: medians and spread of per-call times, first-call times, a linear fit.

Variants are timed in rounds: each round takes one sample of every variant
(``steps`` calls, then ``jax.block_until_ready`` on the last result), in an
order rotated from round to round, so that drift on a busy machine (thermal,
other processes, XLA's thread pool) lands on every variant alike. The garbage
collector is off during a sample so that a collection triggered by one
variant's garbage is not charged to another.
"""

from __future__ import annotations

import gc
import time
from typing import Callable

import jax

# The statistics need no JAX (MindSpore's own process uses them too).
from .stats import linear_fit, summarize

__all__ = ["timed", "calibrate", "interleaved", "summarize", "first_call", "linear_fit"]


def timed(run: Callable, steps: int) -> float:
    """Seconds per call of ``run`` over ``steps`` calls, waiting for the last result."""
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(steps):
            out = run()
        jax.block_until_ready(out)
        return (time.perf_counter() - start) / steps
    finally:
        if gc_was_on:
            gc.enable()


def calibrate(run: Callable, sample_s: float, max_steps: int = 10_000) -> int:
    """How many calls of ``run`` take about ``sample_s`` seconds (at least one)."""
    per_call = min(timed(run, 3) for _ in range(3))
    return max(1, min(max_steps, round(sample_s / per_call)))


def interleaved(runs: dict, repeats: int, steps: int) -> dict:
    """``{name: [seconds per call, one per round]}`` over ``repeats`` rounds of ``steps`` calls each."""
    names = list(runs)
    samples = {name: [] for name in names}
    for r in range(repeats):
        gc.collect()
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            samples[name].append(timed(runs[name], steps))
    return samples


def first_call(run: Callable) -> float:
    """Seconds of the first call of ``run`` (tracing and compiling included), until its result is ready."""
    start = time.perf_counter()
    jax.block_until_ready(run())
    return time.perf_counter() - start
