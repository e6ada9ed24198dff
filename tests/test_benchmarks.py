"""The benchmark suite's smoke mode: every workload, nn-optimizer row and variant runs, the JSON is complete
(times, first calls, memory), losses agree.

The suite runs once, in a subprocess (it clears JAX's caches between
first-call measurements, which must not reach the other tests), with XLA's
backend optimisations off so that compiling the tiny models is quick. No
timing is asserted.
"""

import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import pytest

from benchmarks import timing, variants

ROOT = pathlib.Path(__file__).resolve().parent.parent
TRAIN = [v.name for v in variants.TRAIN]
EAGER = [v.name for v in variants.EAGER]


# End-to-end benchmark runs (smoke sizes): the 64-bit CI pass skips them.
pytestmark = pytest.mark.slow

@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "smoke.json"
    env = dict(os.environ)
    env["XLA_FLAGS"] = f"{env.get('XLA_FLAGS', '')} --xla_backend_optimization_level=0".strip()
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    done = subprocess.run([sys.executable, "-m", "benchmarks.run", "--smoke", "--out", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text()), done.stdout


def _expected(names):
    """The variants that must have run: those whose package is installed."""
    by_name = {v.name: v for v in variants.TRAIN + variants.EAGER}
    return {n for n in names if not variants.skip_note(by_name[n])}


def test_json_has_machine_workloads_compile_and_targets(smoke):
    results, _ = smoke
    assert results["smoke"] is True
    assert {"backend", "cpu_count", "versions", "date"} <= set(results["machine"])
    assert {"jax", "flax", "equinox"} <= set(results["machine"]["versions"])
    assert set(results["workloads"]) == {"1_dispatch_mlp", "2_mlp", "3_cnn", "4_transformer", "5_eager"}
    assert results["compile"]["depths"] == [1, 2]
    assert results["targets"] and all({"workload", "variant", "target", "value", "met"} <= set(t)
                                      for t in results["targets"])
    assert set(results["nn_optimizers"]) == {f"{w}:{o}" for w in ("1_dispatch_mlp", "2_mlp")
                                             for o in ("SGD", "Momentum", "Adam")}


def test_nn_optimizer_rows_compare_the_same_update(smoke):
    # cellkit's nn.SGD/Momentum/Adam in MindSpore's loop and the same update in raw JAX: same losses.
    results, _ = smoke
    for key, r in results["nn_optimizers"].items():
        assert {"raw_jax", "cellkit_closure"} <= set(r["variants"]), key
        assert r["check_max_rel_diff"] < 1e-4, key
        assert r["variants"]["raw_jax"]["ratio"] == 1.0


def test_memory_of_the_compiled_steps(smoke):
    # XLA's memory analysis of each lowered step; raw JAX and cellkit both donate what they overwrite.
    results, _ = smoke
    rows = list(results["workloads"].items()) + list(results["nn_optimizers"].items())
    for key, r in rows:
        if key == "5_eager":
            continue
        for name in ("raw_jax", "cellkit_closure"):
            mem = r["variants"][name]["memory"]
            assert mem["total_bytes"] == (mem["argument_bytes"] + mem["output_bytes"] + mem["temp_bytes"]
                                          - mem["alias_bytes"]), (key, name)
            assert mem["alias_bytes"] > 0, (key, name)
        assert r["variants"]["raw_jax"]["memory_ratio"] == 1.0
    for o in ("Momentum", "Adam"):   # the same state as raw JAX: the same bytes, up to a few scalars
        assert results["nn_optimizers"][f"1_dispatch_mlp:{o}"]["variants"]["cellkit_closure"]["memory_ratio"] < 1.01


def test_every_available_variant_ran_with_stats(smoke):
    results, _ = smoke
    for key, w in results["workloads"].items():
        names = EAGER if key == "5_eager" else TRAIN
        ran = set(w["variants"]) - {"mindspore_graph"}
        assert ran == _expected(names), key
        assert set(w["skipped"]) | ran >= set(names)
        for name, s in w["variants"].items():
            assert {"median_s", "q1_s", "q3_s", "min_s", "ratio", "first_call_s"} <= set(s)
            assert name == "mindspore_graph" or "paired_ratio" in s
            assert 0 < s["min_s"] <= s["median_s"]
        assert w["variants"]["raw_jax"]["ratio"] == 1.0
    assert set(results["compile"]["variants"]) == _expected(TRAIN)
    for v in results["compile"]["variants"].values():
        assert len(v["first_call_s"]) == 2 and all(t > 0 for t in v["first_call_s"])


def test_variants_compute_the_same_losses(smoke):
    # Same weights, same optimizer: after the same steps every framework has the same loss.
    results, _ = smoke
    for key, w in results["workloads"].items():
        checks = [s["check"] for name, s in w["variants"].items() if name != "mindspore_graph"]
        assert w["check_max_rel_diff"] < 1e-3, (key, checks)
        assert len(checks) >= 4


def test_nnx_and_equinox_variants_ran():
    pytest.importorskip("flax")
    pytest.importorskip("equinox")
    assert not any(variants.skip_note(v) for v in variants.TRAIN + variants.EAGER)


def test_mindspore_is_skipped_with_a_note_when_missing(smoke):
    if importlib.util.find_spec("mindspore") is not None:
        pytest.skip("MindSpore is installed")
    results, _ = smoke
    for key, w in results["workloads"].items():
        if key != "5_eager":
            assert "not installed" in w["skipped"]["mindspore_graph"]


def test_tables_are_printed(smoke):
    _, stdout = smoke
    for key in ("[1_dispatch_mlp]", "[2_mlp]", "[3_cnn]", "[4_transformer]", "[5_eager]", "[6_compile]"):
        assert key in stdout
    assert "ratio" in stdout and "ms/layer" in stdout
    assert "[1_dispatch_mlp:SGD]" in stdout and "step memory" in stdout


def test_markdown_table_has_every_row(smoke, tmp_path):
    from benchmarks import run
    results, _ = smoke
    table = run.markdown_table(results)
    for label in ("1 dispatch mlp |", "1 dispatch mlp, nn.SGD |", "2 mlp, nn.Adam |", "6 compile |",
                  "Compiled step's memory", "First call"):
        assert label in table


def test_linear_fit_and_summary():
    fit = timing.linear_fit([8, 16, 32], [1.0 + 0.5 * d for d in (8, 16, 32)])
    assert fit["slope"] == pytest.approx(0.5) and fit["intercept"] == pytest.approx(1.0)
    assert fit["r2"] == pytest.approx(1.0)
    s = timing.summarize([3.0, 1.0, 2.0, 4.0, 5.0])
    assert (s["median_s"], s["q1_s"], s["q3_s"], s["min_s"], s["n"]) == (3.0, 2.0, 4.0, 1.0, 5)


def test_interleaved_rotates_the_order():
    calls = []
    runs = {name: (lambda name=name: calls.append(name) or 0) for name in "abc"}
    samples = timing.interleaved(runs, repeats=3, steps=1)
    assert [len(v) for v in samples.values()] == [1 * 3] * 3
    assert calls == list("abc") + list("bca") + list("cab")


def test_rnn_benchmark_variants_agree_and_report_ratios():
    from benchmarks import rnn
    res = rnn.main(["--smoke"])["workloads"]["smoke"]["variants"]
    assert set(res) == {"raw_jax", "cellkit_pytree", "cellkit_stateful"}
    assert res["raw_jax"]["ratio"] == 1.0 and all(v["median_s"] > 0 for v in res.values())
