"""Eager (PyNative) programs, first run included: wall time and XLA compilations, cellkit beside MindSpore.

    python -m benchmarks.eager [--programs a,b] [--cache cold,warm] [--mindspore-python CMD] [--smoke] [--out F]
                               [--baseline OTHER_CHECKOUT] [--repeats N]

Each program of :mod:`benchmarks.eager_programs` runs in a fresh process, as a
user's script does, with cellkit's modules byte-compiled beforehand, as an
installed package's are (MindSpore's are). Per run it reports the process's wall time (interpreter
start, ``import``, the program), the program's own seconds, and for cellkit
the number of XLA executables obtained (compiled, read from the persistent
cache, or read back whole by :mod:`cellkit.stored_executables`), the seconds
spent getting them and the cache hits (both kinds of reading); run seconds are
the program's seconds less the compile seconds.

cellkit runs under each ``--cache`` state: ``cold`` (an empty persistent
compilation cache folder of its own), ``warm`` (the same folder again, filled
by the cold run) and ``off`` (``CELLKIT_COMPILATION_CACHE=0``). MindSpore 2.x
PyNative runs the same source in its own process and interpreter
(``--mindspore-python``, default ``$MINDSPORE_PYTHON``, or ``/tmp/ms/bin/python``
with ``PYTHONPATH=/tmp/np126`` when that exists), from a temporary folder
(MindSpore writes files into the current folder).
"""

from __future__ import annotations

import time

_T0 = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import pathlib  # noqa: E402
import shlex  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
HIT_EVENT = "/jax/compilation_cache/cache_hits"
STORED_EVENT = "/cellkit/stored_executables/load_duration"   # (cellkit.stored_executables: read back whole)


# ----- the child: one program, one framework ---------------------------------------------------

def _child(name: str, framework: str, smoke: bool) -> dict:
    counts = {"compiles": 0, "compile_s": 0.0, "cache_hits": 0}
    if framework == "cellkit":
        # The script's own first line comes first: importing JAX before cellkit (as registering the
        # listeners would) skips what cellkit's import does about JAX's (cellkit.startup).
        import cellkit as ms
        from jax import monitoring

        def on_duration(event, duration, **_):
            if event in (COMPILE_EVENT, STORED_EVENT):
                counts["compiles"] += 1
                counts["compile_s"] += duration
                counts["cache_hits"] += event == STORED_EVENT

        def on_event(event, **_):
            if event == HIT_EVENT:
                counts["cache_hits"] += 1

        monitoring.register_event_duration_secs_listener(on_duration)
        monitoring.register_event_listener(on_event)
    else:
        import mindspore as ms
        ms.set_context(mode=ms.PYNATIVE_MODE)
    from .eager_programs import PROGRAMS
    imported = time.perf_counter()
    ms.set_seed(0)
    value = PROGRAMS[name](ms, smoke)
    done = time.perf_counter()
    out = {"program_s": done - imported, "import_s": imported - _T0, "value": value,
           "version": getattr(ms, "__version__", "?")}
    if framework == "cellkit":
        out.update(counts, run_s=out["program_s"] - counts["compile_s"])
    return out


# ----- the parent: fresh processes, the table ---------------------------------------------------

def mindspore_command(arg: str | None) -> list | None:
    """MindSpore's interpreter as a command list, or None when there is none."""
    command = arg or os.environ.get("MINDSPORE_PYTHON")
    if command:
        return shlex.split(command)
    if pathlib.Path("/tmp/ms/bin/python").exists():
        return ["env", "PYTHONPATH=/tmp/np126:" + str(ROOT), "/tmp/ms/bin/python"]
    return None


def run_one(python: list, name: str, framework: str, smoke: bool, env: dict, cwd) -> dict:
    """One program in a fresh process: its JSON line plus the process's wall time."""
    cmd = python + ["-m", "benchmarks.eager", "--child", name, "--framework", framework] + (["--smoke"] if smoke else [])
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env, timeout=1800)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1], "wall_s": wall}
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall_s"] = wall
    return result


def run(programs, caches, ms_python, smoke, baseline=None, repeats=1) -> dict:
    """Every program under every cache state (cellkit), once on a baseline checkout of cellkit, once on
    MindSpore; ``repeats`` times over, interleaved, each variant's run of median wall time kept (with
    every wall time in ``walls_s``). Each repeat's cold run starts from an empty cache folder of its own,
    which its warm run then reads."""
    from .eager_programs import PROGRAMS
    results = {"smoke": smoke, "repeats": repeats, "programs": {}}
    base = dict(os.environ)
    base["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([base["PYTHONPATH"]] if base.get("PYTHONPATH") else []))
    base.pop("JAX_COMPILATION_CACHE_DIR", None)
    with tempfile.TemporaryDirectory() as tmp:
        # Byte-compiled modules, as an installed package has them (pip compiles at install; MindSpore's
        # and every other installed package's are there): cellkit's are compiled into its checkout's
        # __pycache__ folders before timing. (Not PYTHONPYCACHEPREFIX: under it Python ignores the
        # installed packages' own byte code, and a first run would compile grain's or jax's sources.)
        base.pop("PYTHONDONTWRITEBYTECODE", None)
        base.pop("PYTHONPYCACHEPREFIX", None)
        for checkout in [ROOT] + ([pathlib.Path(baseline)] if baseline else []):
            subprocess.run([sys.executable, "-m", "compileall", "-q", "cellkit", "benchmarks"], cwd=checkout,
                           check=True, env=dict(base, PYTHONPATH=str(checkout)), capture_output=True)
        for name in programs or list(PROGRAMS):
            runs = {}
            for i in range(repeats):
                cache_dir = pathlib.Path(tmp) / f"cache-{name}-{i}"
                if baseline:
                    env = dict(base, PYTHONPATH=str(baseline), CELLKIT_COMPILATION_CACHE="0")
                    _record(runs, name, "cellkit_baseline", run_one([sys.executable], name, "cellkit", smoke, env,
                                                                    baseline))
                for state in caches:
                    env = dict(base)
                    if state == "off":
                        env["CELLKIT_COMPILATION_CACHE"] = "0"
                    else:
                        env["JAX_COMPILATION_CACHE_DIR"] = str(cache_dir)
                    _record(runs, name, f"cellkit_{state}", run_one([sys.executable], name, "cellkit", smoke, env,
                                                                    ROOT))
                if ms_python:
                    env = {k: v for k, v in os.environ.items()
                           if not k.startswith(("JAX_", "XLA_")) and k not in ("PYTHONDONTWRITEBYTECODE",
                                                                              "PYTHONPYCACHEPREFIX")}
                    _record(runs, name, "mindspore", run_one(ms_python, name, "mindspore", smoke, env, tmp))
            results["programs"][name] = {variant: _median(rs) for variant, rs in runs.items()}
    results["totals"] = totals(results["programs"])
    return results


def _record(runs, name, variant, result) -> None:
    runs.setdefault(variant, []).append(result)
    _print_run(name, variant, result)


def _median(rs: list) -> dict:
    """The run of median wall time (a failed run, if any failed), with every run's wall time beside it."""
    failed = [r for r in rs if "error" in r]
    if failed:
        return failed[0]
    chosen = dict(sorted(rs, key=lambda r: r["wall_s"])[(len(rs) - 1) // 2])
    if len(rs) > 1:
        chosen["walls_s"] = [round(r["wall_s"], 4) for r in rs]
    return chosen


def totals(programs: dict) -> dict:
    """Per variant: summed wall and program seconds, compilations, programs that failed."""
    out = {}
    for row in programs.values():
        for variant, r in row.items():
            t = out.setdefault(variant, {"wall_s": 0.0, "program_s": 0.0, "compiles": 0, "errors": 0})
            t["wall_s"] += r["wall_s"]
            t["program_s"] += r.get("program_s", 0.0)
            t["compiles"] += r.get("compiles", 0)
            t["errors"] += "error" in r
    ms = out.get("mindspore")
    if ms and not ms["errors"]:
        for t in out.values():
            t["wall_vs_mindspore"] = t["wall_s"] / ms["wall_s"]
    return out


def _print_run(name, variant, r) -> None:
    if "error" in r:
        print(f"  {name:22s} {variant:15s} FAILED after {r['wall_s']:.1f} s: {r['error']}", flush=True)
        return
    extra = ""
    if "compiles" in r:
        extra = (f" compiles {r['compiles']:4d} ({r['compile_s']:6.2f} s, {r['cache_hits']} cache hits)"
                 f" run {r['run_s']:6.2f} s")
    print(f"  {name:22s} {variant:15s} wall {r['wall_s']:6.2f} s  import {r['import_s']:5.2f} s"
          f"  program {r['program_s']:6.2f} s{extra}", flush=True)


def markdown_table(results: dict) -> str:
    """The README's table: wall seconds per program and variant, compilations for cellkit."""
    variants = list(next(iter(results["programs"].values())))
    head = "| program | " + " | ".join(variants) + " |"
    lines = [head, "|" + "---|" * (len(variants) + 1)]
    for name, row in results["programs"].items():
        cells = []
        for v in variants:
            r = row.get(v, {})
            if "error" in r or not r:
                cells.append("failed")
            elif "compiles" in r:
                cells.append(f"{r['wall_s']:.1f} s ({r['compiles']} compiles)")
            else:
                cells.append(f"{r['wall_s']:.1f} s")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    t = results["totals"]
    cells = []
    for v in variants:
        ratio = f", {t[v]['wall_vs_mindspore']:.2f}x" if "wall_vs_mindspore" in t[v] else ""
        comp = f" ({t[v]['compiles']} compiles)" if t[v]["compiles"] else ""
        cells.append(f"{t[v]['wall_s']:.1f} s{comp}{ratio}")
    lines.append("| **total** | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> dict | None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    p.add_argument("--framework", default="cellkit", choices=("cellkit", "mindspore"))
    p.add_argument("--programs", default=None, help="comma-separated names (default: all)")
    p.add_argument("--cache", default="cold,warm", help="cellkit's cache states: cold, warm, off")
    p.add_argument("--mindspore-python", default=None)
    p.add_argument("--no-mindspore", action="store_true")
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--baseline", default=None,
                   help="another checkout of cellkit (its root folder, with this benchmarks/ copied in) to run beside")
    p.add_argument("--repeats", type=int, default=1,
                   help="runs per program and variant, interleaved; the median wall time's run is reported")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child, args.framework, args.smoke)))
        return None
    ms_python = None if args.no_mindspore else mindspore_command(args.mindspore_python)
    caches = [c for c in args.cache.split(",") if c]
    results = run(args.programs.split(",") if args.programs else None, caches, ms_python, args.smoke,
                  args.baseline, max(1, args.repeats))
    print()
    print(markdown_table(results))
    if args.out:
        pathlib.Path(args.out).write_text(json.dumps(results, indent=1))
    return results


if __name__ == "__main__":
    main()
