"""LSTM forward + backward under jit: cellkit's ``nn.LSTM`` against a raw-JAX ``lax.scan`` LSTM.

    python -m benchmarks.rnn [--repeats 20] [--sample-ms 200] [--out benchmarks/results/rnn-cpu.json]

Both variants compute the gradient of ``sum(output ** 2)`` with respect to
every weight, with the same weights and input (checked equal before timing):

* ``raw_jax``: a hand-written LSTM (input projection as one matmul, the
  recurrence in ``jax.lax.scan``, the backward direction on the reversed
  sequence) under ``jax.jit(jax.value_and_grad(...))``;
* ``cellkit_pytree``: ``jax.jit(jax.value_and_grad(loss))(net, x)`` with the
  Cell as a pytree;
* ``cellkit_stateful``: ``cellkit.jit`` around ``cellkit.value_and_grad(loss,
  None, net.trainable_params())``, MindSpore's style.

Timing is interleaved (``benchmarks.timing``); the ratios are to raw JAX's
median in the same run, and the paired ratio is the median of per-round ratios.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import platform
import statistics

import jax
import jax.numpy as jnp
import numpy as np

import cellkit as ms
from cellkit import nn

from . import timing

RESULTS = pathlib.Path(__file__).parent / "results"

CONFIGS = {
    "lstm_1x128": dict(seq=64, batch=32, input_size=64, hidden=128, num_layers=1, bidirectional=False),
    "lstm_bi_2x64": dict(seq=32, batch=16, input_size=32, hidden=64, num_layers=2, bidirectional=True),
}


def raw_lstm(weights, x, num_layers, bidirectional):
    """A plain-JAX LSTM over (T, N, I): ``weights[name]`` under MindSpore's Parameter names."""
    dirs = ("", "_reverse") if bidirectional else ("",)
    h = x
    for k in range(num_layers):
        outs = []
        for suffix in dirs:
            w_ih, w_hh = weights[f"weight_ih_l{k}{suffix}"], weights[f"weight_hh_l{k}{suffix}"]
            b = weights[f"bias_ih_l{k}{suffix}"] + weights[f"bias_hh_l{k}{suffix}"]
            inp = h[::-1] if suffix else h
            gi = inp @ w_ih.T + b

            def step(carry, g, w_hh=w_hh):
                hh, cc = carry
                i, f, gg, o = jnp.split(g + hh @ w_hh.T, 4, axis=-1)
                cc = jax.nn.sigmoid(f) * cc + jax.nn.sigmoid(i) * jnp.tanh(gg)
                hh = jax.nn.sigmoid(o) * jnp.tanh(cc)
                return (hh, cc), hh

            zeros = jnp.zeros((x.shape[1], w_hh.shape[1]), x.dtype)
            _, out = jax.lax.scan(step, (zeros, zeros), gi)
            outs.append(out[::-1] if suffix else out)
        h = jnp.concatenate(outs, axis=-1)
    return h


def variants(cfg):
    ms.set_seed(0)
    net = nn.LSTM(cfg["input_size"], cfg["hidden"], num_layers=cfg["num_layers"],
                  bidirectional=cfg["bidirectional"])
    x = jax.random.normal(jax.random.PRNGKey(1), (cfg["seq"], cfg["batch"], cfg["input_size"]))
    weights = {name: p.value for name, p in net.parameters_and_names()}

    raw = jax.jit(jax.value_and_grad(
        lambda w, x: jnp.sum(raw_lstm(w, x, cfg["num_layers"], cfg["bidirectional"]) ** 2)))
    pytree = jax.jit(jax.value_and_grad(lambda n, x: jnp.sum(n(x)[0] ** 2)))
    stateful = ms.jit(ms.value_and_grad(lambda x: jnp.sum(net(x)[0] ** 2), None, net.trainable_params()))
    runs = {"raw_jax": lambda: raw(weights, x), "cellkit_pytree": lambda: pytree(net, x),
            "cellkit_stateful": lambda: stateful(x)}
    ref = float(runs["raw_jax"]()[0])
    for name, run in runs.items():
        got = float(run()[0])
        if not np.isclose(got, ref, rtol=1e-4):
            raise AssertionError(f"{name}: loss {got} differs from raw JAX's {ref}")
    return runs


def measure(cfg, repeats, sample_ms):
    runs = variants(cfg)
    steps = timing.calibrate(runs["raw_jax"], sample_ms / 1000)
    samples = timing.interleaved(runs, repeats, steps)
    raw = samples["raw_jax"]
    out = {}
    for name, values in samples.items():
        s = timing.summarize(values)
        s["ratio"] = s["median_s"] / statistics.median(raw)
        s["paired_ratio"] = statistics.median(v / r for v, r in zip(values, raw))
        out[name] = s
    return {"config": cfg, "steps_per_sample": steps, "variants": out}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--sample-ms", type=float, default=200)
    parser.add_argument("--out", default=str(RESULTS / f"rnn-{jax.default_backend()}.json"))
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, two rounds (no meaningful timing)")
    args = parser.parse_args(argv)
    configs = CONFIGS
    if args.smoke:
        configs = {"smoke": dict(seq=3, batch=2, input_size=2, hidden=3, num_layers=2, bidirectional=True)}
        args.repeats, args.sample_ms = 2, 1
    results = {"machine": {"backend": jax.default_backend(), "devices": [str(d) for d in jax.devices()],
                           "platform": platform.platform(), "jax": jax.__version__},
               "repeats": args.repeats, "workloads": {}}
    for key, cfg in configs.items():
        res = measure(cfg, args.repeats, args.sample_ms)
        results["workloads"][key] = res
        print(f"{key}: " + ", ".join(
            f"{name} {v['median_s'] * 1e3:.3f} ms (x{v['ratio']:.3f}, paired x{v['paired_ratio']:.3f})"
            for name, v in res["variants"].items()))
    if not args.smoke:
        pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
        print(f"written to {args.out}")
    return results


if __name__ == "__main__":
    main()
