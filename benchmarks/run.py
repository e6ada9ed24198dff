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
   8 to 128 layers, with a linear fit per variant;

and, on workloads 1 and 2, cellkit's own ``nn.SGD``, ``nn.Momentum`` and
``nn.Adam`` in MindSpore's training loop against the same update in raw JAX
(``variants.NN_OPTIMIZERS``; rows ``1 dispatch mlp, nn.SGD`` and so on).

For every train step it also records the first call (trace and compile) and
XLA's memory analysis of the compiled step (``lower(...).compile()
.memory_analysis()``: argument, output, aliased and temporary bytes; the step
holds argument + output + temporary - aliased bytes), and, where the backend
reports them, the device's memory statistics.

Workloads 1-5 are timed interleaved (``timing``): ``--repeats`` rounds, each
one sample of about ``--sample-ms`` per variant; the table gives the median
per call, the interquartile range as ± percent of it, the ratio to raw
JAX's median in the same run, and the paired ratio (the median over rounds of
the variant's time over raw JAX's in the same round, which cancels drift
between rounds). MindSpore's graph-mode step (the same MLP and optimizer,
MindSpore's own initial weights) runs in a subprocess when MindSpore is
importable or ``--mindspore-python`` names its interpreter, and is skipped
with a note otherwise. Results go to
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

# First calls here measure compilation: cellkit's persistent compilation cache would serve them from disk.
os.environ.setdefault("CELLKIT_COMPILATION_CACHE", "0")

import jax  # noqa: E402
import jax.numpy as jnp
import numpy as np

import cellkit as ms

from . import models, timing, variants

RESULTS = pathlib.Path(__file__).parent / "results"
STATEFUL = ("cellkit_closure", "cellkit_argument")
# The nn-optimizer rows' targets (paired ratio of cellkit's step to raw JAX's), by workload.
NN_TARGETS = {"1_dispatch_mlp": 1.2, "2_mlp": 1.05}


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


def memory(run) -> dict | None:
    """XLA's memory analysis of the compiled step behind ``run`` (None where it cannot be lowered)."""
    lower = getattr(run, "lower", None)
    if lower is None:
        return None
    try:
        m = lower().compile().memory_analysis()
    except Exception as e:  # noqa: BLE001 - a framework's wrapper that cannot lower: no figure
        return {"error": f"{type(e).__name__}: {e}"[:200]}
    if m is None:
        return None
    out = {"argument_bytes": m.argument_size_in_bytes, "output_bytes": m.output_size_in_bytes,
           "alias_bytes": m.alias_size_in_bytes, "temp_bytes": m.temp_size_in_bytes}
    out["total_bytes"] = out["argument_bytes"] + out["output_bytes"] + out["temp_bytes"] - out["alias_bytes"]
    return out


def device_memory() -> dict | None:
    """The device's memory statistics (peak and in use), where the backend reports them (not on CPU)."""
    stats = jax.devices()[0].memory_stats()
    if not stats:
        return None
    return {k: stats[k] for k in ("bytes_in_use", "peak_bytes_in_use", "bytes_limit") if k in stats}


def _measure(runs, skipped, args, eager=False) -> dict:
    """First calls, the check after the warm-up, interleaved timing and memory of ``runs``."""
    first, check, mem = {}, {}, {}
    calls = max(args.warmup, 2)
    for name, run in runs.items():
        first[name] = timing.first_call(run)
        for _ in range(calls - 1):
            out = run()
        # The loss after the same number of steps, or the forward's mean output, must agree.
        check[name] = float(jnp.mean(out))
        if not eager:
            mem[name] = memory(run)
    steps = args.steps or timing.calibrate(runs["raw_jax"], args.sample_ms / 1e3)
    samples = timing.interleaved(runs, args.repeats, steps)
    stats = {name: timing.summarize(s) for name, s in samples.items()}
    base = stats["raw_jax"]["median_s"]
    base_mem = (mem.get("raw_jax") or {}).get("total_bytes")
    for name, s in stats.items():
        s["ratio"] = s["median_s"] / base
        # Each round's time over raw JAX's in the same round: drift between rounds cancels.
        s["paired_ratio"] = statistics.median(a / b for a, b in zip(samples[name], samples["raw_jax"]))
        s["first_call_s"] = first[name]
        s["check"] = check[name]
        if mem.get(name):
            s["memory"] = mem[name]
            if base_mem and "total_bytes" in mem[name]:
                s["memory_ratio"] = mem[name]["total_bytes"] / base_mem
    return {"steps_per_sample": steps, "repeats": args.repeats, "checked_after_calls": calls,
            "variants": stats, "skipped": skipped, "check_max_rel_diff": _max_rel_diff(check),
            "device_memory": device_memory()}


def measure_workload(workload, args) -> dict:
    """Time every variant of one workload; losses (train) or outputs (eager) are recorded to compare."""
    x, y = workload.data()
    eager = workload.key == "5_eager"
    runs, skipped = _build(variants.EAGER if eager else variants.TRAIN, workload, (x,) if eager else (x, y))
    result = {"title": workload.title, "batch": workload.batch, **_measure(runs, skipped, args, eager)}
    if not eager:
        _add_mindspore(result, mindspore_step(workload, args), skipped)
    return result


def measure_nn_optimizer(workload, name, args) -> dict:
    """cellkit's ``nn.<name>`` in MindSpore's loop against the same update in raw JAX, on ``workload``."""
    x, y = workload.data()
    runs, skipped = _build(variants.NN_VARIANTS[name], workload, (x, y))
    result = {"title": f"{workload.title}, nn.{name} (lr {variants.OPT_LR})", "batch": workload.batch,
              "optimizer": name, **_measure(runs, skipped, args)}
    _add_mindspore(result, mindspore_step(workload, args, name, variants.OPT_LR), skipped)
    return result


def _add_mindspore(result, ms_result, skipped) -> None:
    if isinstance(ms_result, str):
        skipped["mindspore_graph"] = ms_result
    else:
        ms_result["ratio"] = ms_result["median_s"] / result["variants"]["raw_jax"]["median_s"]
        result["variants"]["mindspore_graph"] = ms_result


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


def mindspore_step(workload, args, optimizer="Adam", lr=variants.LR):
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
                    "--repeats", str(min(args.repeats, 10)), "--optimizer", optimizer, "--lr", str(lr)]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=pathlib.Path(__file__).parent.parent)
    if done.returncode != 0:
        return f"MindSpore's step failed: {done.stderr.strip().splitlines()[-1:]}"
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["note"] = f"MindSpore's own process, not interleaved; MindSpore's nn.{optimizer}"
    return result


# ----- reporting ---------------------------------------------------------------------------

def _fmt_time(s):
    return f"{s * 1e6:9.1f} us" if s < 1e-3 else f"{s * 1e3:9.2f} ms"


def print_workload(key, result) -> None:
    """One table: variant, median per call, interquartile range, ratio to raw JAX."""
    print(f"\n[{key}] {result['title']}  ({result['repeats']} rounds x {result['steps_per_sample']} calls)")
    print(f"  {'variant':18s} {'median':>12s} {'IQR':>8s} {'ratio':>7s} {'paired':>7s} {'first call':>11s}"
          f" {'step memory':>12s} {'vs raw':>7s}")
    for name, s in result["variants"].items():
        iqr = (s["q3_s"] - s["q1_s"]) / 2 / s["median_s"] * 100
        paired = f"{s['paired_ratio']:7.2f}" if "paired_ratio" in s else " " * 7
        first = f"{s['first_call_s']:10.2f}s" if "first_call_s" in s else " " * 11
        mem = s.get("memory") or {}
        total = f"{mem['total_bytes'] / 1024:9.0f} KiB" if "total_bytes" in mem else " " * 13
        ratio = f"{s['memory_ratio']:7.3f}" if "memory_ratio" in s else ""
        print(f"  {name:18s} {_fmt_time(s['median_s'])} {iqr:7.1f}% {s['ratio']:7.2f} {paired} {first}"
              f" {total} {ratio}")
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
    for key, r in results.get("nn_optimizers", {}).items():
        v = r["variants"]["cellkit_closure"]
        target = NN_TARGETS[key.split(":")[0]]
        out.append({"workload": key, "variant": "cellkit_closure", "target": f"<= {target}x raw JAX",
                    "value": round(v["ratio"], 3), "paired": round(v["paired_ratio"], 3),
                    "met": v["paired_ratio"] <= target})
    for group in ("workloads", "nn_optimizers"):
        for key, r in results.get(group, {}).items():
            for name in ("cellkit_closure", "cellkit_argument"):
                ratio = r["variants"].get(name, {}).get("memory_ratio")
                if ratio is not None:
                    out.append({"workload": key, "variant": name, "target": "step memory <= 1.05x raw JAX",
                                "value": round(ratio, 4), "met": ratio <= 1.05})
    c = results.get("compile")
    if c and "nnx_jit" in c["variants"]:
        nnx_total = sum(c["variants"]["nnx_jit"]["first_call_s"])
        for name in STATEFUL:
            ratio = sum(c["variants"][name]["first_call_s"]) / nnx_total
            out.append({"workload": "6_compile", "variant": name, "target": "faster than nnx_jit",
                        "value": round(ratio, 3), "met": ratio < 1})
    return out


def _rows(results):
    """(row label, result) for the workloads and then the nn-optimizer rows."""
    rows = [(key.replace("_", " "), r) for key, r in results["workloads"].items()]
    for key, r in results.get("nn_optimizers", {}).items():
        workload, name = key.split(":")
        rows.append((f"{workload.replace('_', ' ')}, nn.{name}", r))
    return rows


def markdown_table(results) -> str:
    """Markdown tables: the time ratios to raw JAX of every row and variant (workload 6: ms per layer),
    then the compiled step's memory over raw JAX's, then the first call in seconds."""
    names = [v.name for v in variants.TRAIN]
    rows = _rows(results)
    if any("mindspore_graph" in r["variants"] for _, r in rows):
        names.append("mindspore_graph")
    eager = {"cellkit_closure": "cellkit", "nnx_jit": "nnx", "equinox": "equinox", "raw_jax": "raw_jax"}
    header = ["| workload | " + " | ".join(n.replace("_", " ") for n in names) + " |",
              "|---|" + "---:|" * len(names)]

    def table(cell, skip_eager=False):
        lines = list(header)
        for label, r in rows:
            if skip_eager and label.startswith("5 eager"):
                continue
            v = r["variants"]
            cells = []
            for n in names:
                n = eager.get(n) if label.startswith("5 eager") else n
                cells.append(cell(n, v[n]) if n in v else "")
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        return lines

    lines = table(lambda n, s: f"{s['ratio']:.2f}")
    c = results.get("compile")
    if c:
        cells = [f"{c['variants'][n]['per_layer_ms']:.0f} ms/layer" if n in c["variants"] else "" for n in names]
        lines.append("| 6 compile | " + " | ".join(cells) + " |")
    lines += ["", "Compiled step's memory (argument + output + temporary - aliased bytes) over raw JAX's "
              "(with donation); raw JAX's in KiB:", ""]
    lines += table(lambda n, s: "" if "memory_ratio" not in s else
                   f"{s['memory']['total_bytes'] / 1024:.0f} KiB" if n == "raw_jax" else f"{s['memory_ratio']:.3f}",
                   skip_eager=True)
    lines += ["", "First call (trace and compile), seconds:", ""]
    lines += table(lambda n, s: f"{s['first_call_s']:.2f}" if "first_call_s" in s else "", skip_eager=True)
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
    p.add_argument("--optimizers", default=",".join(variants.NN_OPTIMIZERS),
                   help="cellkit.nn optimizers for the rows on workloads 1 and 2 (default SGD,Momentum,Adam; "
                   "'' for none)")
    p.add_argument("--optimizer-rows-only", action="store_true",
                   help="only the nn-optimizer rows of the selected workloads (1, 2)")
    p.add_argument("--table", metavar="JSON", default=None,
                   help="print the ratio table of a results file as Markdown, and nothing else")
    args = p.parse_args(argv)
    smoke_defaults = {"repeats": 1, "steps": 2, "warmup": 2, "compile_repeats": 1}
    full_defaults = {"repeats": 40, "steps": None, "warmup": 5, "compile_repeats": 3}
    for name, value in (smoke_defaults if args.smoke else full_defaults).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    args.selected = {int(w) for w in args.workloads.split(",") if w.strip()}
    args.optimizers = [o.strip() for o in args.optimizers.split(",") if o.strip()]
    unknown = [o for o in args.optimizers if o not in variants.NN_OPTIMIZERS]
    if unknown:
        p.error(f"--optimizers: unknown {unknown}; known: {', '.join(variants.NN_OPTIMIZERS)}")
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
               "nn_optimizer_lr": variants.OPT_LR,
               "loss": "softmax cross-entropy, integer labels", "workloads": {}}
    print(f"cellkit benchmarks on {results['machine']['backend']} ({results['machine']['cpu_count']} CPUs), "
          f"jax {jax.__version__}" + ("  [smoke: no timing claims]" if args.smoke else ""))
    for key, workload in workloads(args.smoke).items():
        if int(key[0]) in args.selected and not args.optimizer_rows_only:
            results["workloads"][key] = r = measure_workload(workload, args)
            print_workload(key, r)
    if args.optimizers:
        results["nn_optimizers"] = {}
        for key, workload in workloads(args.smoke).items():
            if key in NN_TARGETS and int(key[0]) in args.selected:
                for name in args.optimizers:
                    row = f"{key}:{name}"
                    results["nn_optimizers"][row] = r = measure_nn_optimizer(workload, name, args)
                    print_workload(row, r)
    if 6 in args.selected and not args.optimizer_rows_only:
        depths = (1, 2) if args.smoke else (8, 16, 32, 64, 128)
        results["compile"] = measure_compile(depths, args.compile_repeats)
        print_compile(results["compile"])
    results["targets"] = check_targets(results)
    if not args.smoke:
        print("\ntargets (stateful cellkit, same run):")
        for t in results["targets"]:
            paired = f"  (paired {t['paired']:.3f})" if "paired" in t else ""
            print(f"  {'met   ' if t['met'] else 'MISSED'} {t['workload']:24s} {t['variant']:17s} "
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
