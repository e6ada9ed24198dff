"""cellkit's benchmark suite: train-step, eager and compile times against raw JAX, Flax NNX and Equinox.

Run ``python -m pip install -e ".[bench]" && python -m benchmarks.run``
(``--smoke`` for tiny sizes and a couple of calls, as CI does; no timing is
meaningful then). In one process, with the same model, the same weights and
the same optimizer (``optax.adam``) in every variant (see ``variants``), it
measures:

1. a dispatch-bound step: 64-layer width-16 MLP, batch 8;
2. MLP 784-512-512-10, batch 128;
3. the demo's CNN (``cellkit.demo.LeNet``), batch 64;
4. a 4-layer transformer encoder (d=128, 4 heads, feed-forward 512, seq 64), batch 16;
5. an eager (PyNative) forward of a small Cell, per call;
6. the first call (trace and compile) of the train step of width-16 MLPs of
   8 to 128 layers, with a linear fit per variant.

Workloads 1-5 are timed interleaved (``timing``): ``--repeats`` rounds, each
one sample of about ``--sample-ms`` per variant; the table gives the median
per call, the interquartile range as ± percent of it, the ratio to raw
JAX's median in the same run, and the paired ratio (the median over rounds of
the variant's time over raw JAX's in the same round, which cancels drift
between rounds). MindSpore's graph-mode step runs in a subprocess when
MindSpore is importable, and is skipped with a note otherwise. Results go to
``--out`` as JSON with the machine's description. Absolute times depend on
the machine and its load; compare ratios within one run.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import importlib.metadata
import importlib.util
import json
import os
import pathlib
import platform
import shlex
import statistics
import subprocess
import sys
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

import cellkit as ms

from . import models, timing, variants

RESULTS = pathlib.Path(__file__).parent / "results"
STATEFUL = ("cellkit_closure", "cellkit_argument")


@dataclasses.dataclass(frozen=True)
class Workload:
    """A model (a cellkit Cell factory), its per-example input shape, classes and batch size."""

    key: str
    title: str
    make_cell: Callable
    input_shape: tuple
    classes: int
    batch: int
    target: float | None = None   # ratio to raw JAX the stateful cellkit variants should stay under

    def data(self, seed=0):
        """A batch of standard-normal inputs and integer labels."""
        rng = np.random.default_rng(seed)
        x = rng.normal(size=(self.batch,) + self.input_shape).astype(np.float32)
        return jnp.asarray(x), jnp.asarray(rng.integers(0, self.classes, self.batch), jnp.int32)

    def cells(self, n):
        """``n`` fresh Cells with the same weights."""
        src = self.make_cell()
        out = [src]
        for _ in range(n - 1):
            cell = self.make_cell()
            models.copy_weights(src, cell)
            out.append(cell)
        return out


def workloads(smoke: bool) -> dict:
    """The timed workloads (1-5) at full or smoke size, by key."""
    mlp = lambda sizes: (lambda: models.MLP(sizes))  # noqa: E731
    if smoke:
        ws = [Workload("1_dispatch_mlp", "MLP 5x8 (smoke)", mlp([8] * 6), (8,), 8, 4, 1.5),
              Workload("2_mlp", "MLP 32-16-10 (smoke)", mlp([32, 16, 10]), (32,), 10, 4, 1.05),
              Workload("3_cnn", "demo CNN (smoke)", models.LeNet, (1, 8, 8), 10, 4, 1.05),
              Workload("4_transformer", "encoder 1x16 (smoke)", lambda: models.Encoder(1, 16, 2, 32, 10),
                       (8, 16), 10, 2, 1.05)]
    else:
        ws = [Workload("1_dispatch_mlp", "dispatch-bound MLP 64 layers x 16, batch 8", mlp([16] * 65),
                       (16,), 16, 8, 1.5),
              Workload("2_mlp", "MLP 784-512-512-10, batch 128", mlp([784, 512, 512, 10]), (784,), 10, 128, 1.05),
              Workload("3_cnn", "demo CNN (LeNet, 8x8 digits), batch 64", models.LeNet, (1, 8, 8), 10, 64, 1.05),
              Workload("4_transformer", "transformer encoder 4 layers, d=128, 4 heads, seq 64, batch 16",
                       lambda: models.Encoder(4, 128, 4, 512, 10), (64, 128), 10, 16, 1.05)]
    ws.append(Workload("5_eager", "eager forward of MLP 16-32-32-4, batch 8, per call",
                       mlp([16, 32, 32, 4]), (16,), 4, 8))
    return {w.key: w for w in ws}


# ----- measuring ---------------------------------------------------------------------------

def _build(variant_list, workload, build_args):
    """(runs, skipped): a ``run()`` per available variant, a note per unavailable one."""
    avail, skipped = variants.available(variant_list)
    runs = {v.name: v.build(cell, *build_args) for v, cell in zip(avail, workload.cells(len(avail)))}
    return runs, skipped


def measure_workload(workload, args) -> dict:
    """Time every variant of one workload; losses (train) or outputs (eager) are recorded to compare."""
    x, y = workload.data()
    eager = workload.key == "5_eager"
    runs, skipped = _build(variants.EAGER if eager else variants.TRAIN, workload, (x,) if eager else (x, y))
    first, check = {}, {}
    calls = max(args.warmup, 2)
    for name, run in runs.items():
        first[name] = timing.first_call(run)
        for _ in range(calls - 1):
            out = run()
        # The loss after the same number of steps, or the forward's mean output, must agree.
        check[name] = float(jnp.mean(out))
    steps = args.steps or timing.calibrate(runs["raw_jax"], args.sample_ms / 1e3)
    samples = timing.interleaved(runs, args.repeats, steps)
    stats = {name: timing.summarize(s) for name, s in samples.items()}
    base = stats["raw_jax"]["median_s"]
    for name, s in stats.items():
        s["ratio"] = s["median_s"] / base
        # Each round's time over raw JAX's in the same round: drift between rounds cancels.
        s["paired_ratio"] = statistics.median(a / b for a, b in zip(samples[name], samples["raw_jax"]))
        s["first_call_s"] = first[name]
        s["check"] = check[name]
    if not eager:
        ms_result = mindspore_step(workload, args)
        if isinstance(ms_result, str):
            skipped["mindspore_graph"] = ms_result
        else:
            ms_result["ratio"] = ms_result["median_s"] / base
            stats["mindspore_graph"] = ms_result
    return {"title": workload.title, "batch": workload.batch, "steps_per_sample": steps,
            "repeats": args.repeats, "checked_after_calls": calls, "variants": stats,
            "skipped": skipped, "check_max_rel_diff": _max_rel_diff(check)}


def _max_rel_diff(check):
    ref = check["raw_jax"]
    return max(abs(v - ref) / max(abs(ref), 1e-12) for v in check.values())


def measure_compile(depths, repeats) -> dict:
    """First-call (trace + compile) seconds of each train variant per MLP depth, and a linear fit."""
    ws = [Workload(f"depth_{d}", "", (lambda d=d: models.MLP([16] * (d + 1))), (16,), 16, 8) for d in depths]
    avail, skipped = variants.available(variants.TRAIN)
    times = {v.name: {d: [] for d in depths} for v in avail}
    for r in range(repeats):
        for w, d in zip(ws, depths):
            x, y = w.data()
            order = avail[r % len(avail):] + avail[:r % len(avail)]
            runs = [(v.name, v.build(cell, x, y)) for v, cell in zip(order, w.cells(len(order)))]
            for name, run in runs:
                jax.clear_caches()   # nothing compiled before may be reused
                times[name][d].append(timing.first_call(run))
    out = {"depths": list(depths), "repeats": repeats, "variants": {}, "skipped": skipped}
    for name, by_depth in times.items():
        medians = [timing.summarize(by_depth[d])["median_s"] for d in depths]
        fit = timing.linear_fit(list(depths), medians)
        out["variants"][name] = {"first_call_s": medians, "per_layer_ms": fit["slope"] * 1e3,
                                 "intercept_ms": fit["intercept"] * 1e3, "r2": fit["r2"]}
    return out


def mindspore_step(workload, args):
    """MindSpore's graph-mode train step in its own process (MLP workloads), or a note why not.

    The process is ``--mindspore-python`` (a command, e.g. ``"env PYTHONPATH=... /venv/bin/python"``,
    default ``$MINDSPORE_PYTHON``), or this interpreter when it can import MindSpore.
    """
    command = args.mindspore_python or os.environ.get("MINDSPORE_PYTHON")
    if command:
        python = shlex.split(command)
    elif importlib.util.find_spec("mindspore") is not None:
        python = [sys.executable]
    else:
        return ("MindSpore is not installed here: its graph-mode step was skipped (give MindSpore's own "
                "interpreter with --mindspore-python)")
    cell = workload.make_cell()
    if not isinstance(cell, models.MLP):
        return "MindSpore's step is only written for the MLP workloads"
    sizes = [cell.layers[0].in_channels] + [layer.out_channels for layer in cell.layers]
    cmd = python + ["-m", "benchmarks.mindspore_step", "--sizes", ",".join(map(str, sizes)),
                    "--batch", str(workload.batch), "--steps", str(args.steps or 20),
                    "--repeats", str(min(args.repeats, 10))]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=pathlib.Path(__file__).parent.parent)
    if done.returncode != 0:
        return f"MindSpore's step failed: {done.stderr.strip().splitlines()[-1:]}"
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["note"] = "MindSpore's own process, not interleaved; MindSpore's nn.Adam"
    return result


# ----- reporting ---------------------------------------------------------------------------

def _fmt_time(s):
    return f"{s * 1e6:9.1f} us" if s < 1e-3 else f"{s * 1e3:9.2f} ms"


def print_workload(key, result) -> None:
    """One table: variant, median per call, interquartile range, ratio to raw JAX."""
    print(f"\n[{key}] {result['title']}  ({result['repeats']} rounds x {result['steps_per_sample']} calls)")
    print(f"  {'variant':18s} {'median':>12s} {'IQR':>8s} {'ratio':>7s} {'paired':>7s}")
    for name, s in result["variants"].items():
        iqr = (s["q3_s"] - s["q1_s"]) / 2 / s["median_s"] * 100
        paired = f"{s['paired_ratio']:7.2f}" if "paired_ratio" in s else ""
        print(f"  {name:18s} {_fmt_time(s['median_s'])} {iqr:7.1f}% {s['ratio']:7.2f} {paired}")
    for name, note in result["skipped"].items():
        print(f"  {name:18s} skipped: {note}")


def print_compile(result) -> None:
    """First-call seconds per depth and the per-layer cost of each variant."""
    depths = result["depths"]
    print("\n[6_compile] first call (trace + compile) of the train step, width-16 MLP, seconds")
    print(f"  {'variant':18s} " + " ".join(f"{d:>7d}" for d in depths) + "   ms/layer   R^2")
    for name, v in result["variants"].items():
        print(f"  {name:18s} " + " ".join(f"{t:7.2f}" for t in v["first_call_s"])
              + f"   {v['per_layer_ms']:8.1f}  {v['r2']:.3f}")
    for name, note in result["skipped"].items():
        print(f"  {name:18s} skipped: {note}")


def check_targets(results) -> list:
    """The targets: stateful cellkit vs raw JAX (workloads 1-4) and vs nnx.jit (every workload)."""
    out = []
    ws = workloads(False)
    for key, r in results["workloads"].items():
        v = r["variants"]
        mine = ["cellkit"] if key == "5_eager" else list(STATEFUL)
        nnx_name = "nnx" if key == "5_eager" else "nnx_jit"
        for name in mine:
            if ws[key].target is not None:
                out.append({"workload": key, "variant": name, "target": f"<= {ws[key].target}x raw JAX",
                            "value": round(v[name]["ratio"], 3), "paired": round(v[name]["paired_ratio"], 3),
                            "met": v[name]["ratio"] <= ws[key].target})
            if nnx_name in v:
                ratio = v[name]["median_s"] / v[nnx_name]["median_s"]
                out.append({"workload": key, "variant": name, "target": f"faster than {nnx_name}",
                            "value": round(ratio, 3), "met": ratio < 1})
    c = results.get("compile")
    if c and "nnx_jit" in c["variants"]:
        nnx_total = sum(c["variants"]["nnx_jit"]["first_call_s"])
        for name in STATEFUL:
            ratio = sum(c["variants"][name]["first_call_s"]) / nnx_total
            out.append({"workload": "6_compile", "variant": name, "target": "faster than nnx_jit",
                        "value": round(ratio, 3), "met": ratio < 1})
    return out


def markdown_table(results) -> str:
    """The ratios to raw JAX of every workload and variant as a Markdown table (workload 6: ms per layer)."""
    names = [v.name for v in variants.TRAIN]
    if any("mindspore_graph" in r["variants"] for r in results["workloads"].values()):
        names.append("mindspore_graph")
    eager = {"cellkit_closure": "cellkit", "nnx_jit": "nnx", "equinox": "equinox", "raw_jax": "raw_jax"}
    lines = ["| workload | " + " | ".join(n.replace("_", " ") for n in names) + " |",
             "|---|" + "---:|" * len(names)]
    for key, r in results["workloads"].items():
        v = r["variants"]
        cells = []
        for n in names:
            n = eager.get(n) if key == "5_eager" else n
            cells.append(f"{v[n]['ratio']:.2f}" if n in v else "")
        lines.append(f"| {key.replace('_', ' ')} | " + " | ".join(cells) + " |")
    c = results.get("compile")
    if c:
        cells = [f"{c['variants'][n]['per_layer_ms']:.0f} ms/layer" if n in c["variants"] else "" for n in names]
        lines.append("| 6 compile | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def machine() -> dict:
    """Where the numbers come from."""
    def version(pkg):
        try:
            return importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            return None
    return {"backend": jax.default_backend(), "device": jax.devices()[0].device_kind,
            "cpu_count": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
            "processor": platform.processor() or platform.machine(),
            "versions": {p: version(p) for p in ("jax", "jaxlib", "optax", "flax", "equinox", "mindspore")},
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def parse_args(argv=None):
    """The command line (see the module docstring)."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.splitlines()[0])
    p.add_argument("--smoke", action="store_true", help="tiny sizes and 2 calls per variant (CI); no timing claims")
    p.add_argument("--workloads", default="1,2,3,4,5,6", help="comma-separated workload numbers (1-6)")
    p.add_argument("--out", default=None, help="JSON file for the results (default: benchmarks/results/"
                   "<backend>-<cpus>cpu.json; none with --smoke)")
    p.add_argument("--repeats", type=int, default=None, help="interleaved rounds per workload (default 40)")
    p.add_argument("--sample-ms", type=float, default=40.0, help="length of one sample (default 40 ms)")
    p.add_argument("--steps", type=int, default=None, help="calls per sample (default: from --sample-ms)")
    p.add_argument("--warmup", type=int, default=None, help="calls before timing (default 5)")
    p.add_argument("--compile-repeats", type=int, default=None, help="first calls per depth (default 3)")
    p.add_argument("--mindspore-python", default=None,
                   help="command of MindSpore's interpreter for its graph-mode column (default $MINDSPORE_PYTHON)")
    p.add_argument("--table", metavar="JSON", default=None,
                   help="print the ratio table of a results file as Markdown, and nothing else")
    args = p.parse_args(argv)
    smoke_defaults = {"repeats": 1, "steps": 2, "warmup": 2, "compile_repeats": 1}
    full_defaults = {"repeats": 40, "steps": None, "warmup": 5, "compile_repeats": 3}
    for name, value in (smoke_defaults if args.smoke else full_defaults).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    args.selected = {int(w) for w in args.workloads.split(",") if w.strip()}
    return args


def main(argv=None) -> dict:
    """Run the selected workloads, print their tables and the targets, write the JSON; returns the results."""
    args = parse_args(argv)
    if args.table:
        results = json.loads(pathlib.Path(args.table).read_text())
        print(markdown_table(results))
        return results
    ms.set_seed(0)
    results = {"machine": machine(), "smoke": args.smoke, "optimizer": f"optax.adam({variants.LR})",
               "loss": "softmax cross-entropy, integer labels", "workloads": {}}
    print(f"cellkit benchmarks on {results['machine']['backend']} ({results['machine']['cpu_count']} CPUs), "
          f"jax {jax.__version__}" + ("  [smoke: no timing claims]" if args.smoke else ""))
    for key, workload in workloads(args.smoke).items():
        if int(key[0]) in args.selected:
            results["workloads"][key] = r = measure_workload(workload, args)
            print_workload(key, r)
    if 6 in args.selected:
        depths = (1, 2) if args.smoke else (8, 16, 32, 64, 128)
        results["compile"] = measure_compile(depths, args.compile_repeats)
        print_compile(results["compile"])
    results["targets"] = check_targets(results)
    if not args.smoke:
        print("\ntargets (stateful cellkit, same run):")
        for t in results["targets"]:
            paired = f"  (paired {t['paired']:.3f})" if "paired" in t else ""
            print(f"  {'met   ' if t['met'] else 'MISSED'} {t['workload']:15s} {t['variant']:17s} "
                  f"{t['target']:26s} {t['value']:.3f}{paired}")
    out = args.out or (None if args.smoke else RESULTS / f"{jax.default_backend()}-{os.cpu_count()}cpu.json")
    if out:
        out = pathlib.Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(results, indent=1) + "\n")
        tmp.replace(out)
        print(f"\nwrote {out}")
    return results


if __name__ == "__main__":
    main()
