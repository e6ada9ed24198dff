"""Benchmarks: cellkit side by side with raw JAX (ratios, never timing assertions)."""
