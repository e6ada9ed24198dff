"""Summary statistics of timings, with nothing but the standard library (MindSpore's process imports it too)."""

from __future__ import annotations

import statistics

__all__ = ["summarize", "linear_fit"]


def summarize(values) -> dict:
    """Median, quartiles, min and count of a list of seconds."""
    values = sorted(values)
    if len(values) >= 2:
        q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    else:
        q1 = q3 = values[0]
    return {"median_s": statistics.median(values), "q1_s": q1, "q3_s": q3, "min_s": values[0],
            "n": len(values)}


def linear_fit(xs, ys) -> dict:
    """Least-squares ``y = slope * x + intercept`` and its R²."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    slope = sxy / sxx if sxx else 0.0
    intercept = my - slope * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - slope * x - intercept) ** 2 for x, y in zip(xs, ys))
    return {"slope": slope, "intercept": intercept, "r2": 1 - ss_res / ss_tot if ss_tot else 1.0}
