"""benchmarks.eager's smoke mode: a program runs in fresh processes, cold then warm, and reports its compilations.

No timing is asserted (speed is measured in benchmarks/, never in tests).
"""

import json
import os
import pathlib
import subprocess
import sys

import pytest

from benchmarks import eager, eager_programs

ROOT = pathlib.Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def test_smoke_run_reports_compilations_and_a_warm_cache_serves_them(tmp_path):
    out = tmp_path / "eager.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_COMPILATION", "CELLKIT_"))}
    env["PYTHONPATH"] = str(ROOT)
    # (the transformer: LeNet's smoke run compiles nothing at all, its ops and steps all run on the host)
    done = subprocess.run([sys.executable, "-m", "benchmarks.eager", "--smoke", "--programs", "transformer_adamw",
                           "--cache", "cold,warm", "--no-mindspore", "--out", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    row = json.loads(out.read_text())["programs"]["transformer_adamw"]
    cold, warm = row["cellkit_cold"], row["cellkit_warm"]
    assert cold["compiles"] > 0 and cold["cache_hits"] <= 1
    assert warm["cache_hits"] == warm["compiles"] == cold["compiles"]
    assert cold["value"] == pytest.approx(warm["value"])
    assert "| transformer_adamw |" in done.stdout


def test_every_program_is_listed_and_the_table_has_totals():
    assert set(eager_programs.PROGRAMS) == {"lenet_momentum", "transformer_adamw", "unet_adam", "create_model_eval",
                                            "dataset_model_train", "kv_generation"}
    fake = {"programs": {"p": {"cellkit_cold": {"wall_s": 2.0, "program_s": 1.0, "compiles": 5},
                               "mindspore": {"wall_s": 4.0, "program_s": 1.0}}}}
    fake["totals"] = eager.totals(fake["programs"])
    assert fake["totals"]["cellkit_cold"]["wall_vs_mindspore"] == 0.5
    assert "| **total** | 2.0 s (5 compiles), 0.50x | 4.0 s, 1.00x |" in eager.markdown_table(fake)


def test_repeated_runs_keep_the_median_run_or_a_failure():
    runs = [{"wall_s": 3.0, "program_s": 2.5}, {"wall_s": 1.0, "program_s": 0.5}, {"wall_s": 2.0, "program_s": 1.5}]
    assert eager._median(runs) == {"wall_s": 2.0, "program_s": 1.5, "walls_s": [3.0, 1.0, 2.0]}
    assert eager._median(runs[:2])["wall_s"] == 1.0   # (an even count: the lower of the middle two)
    assert eager._median([runs[0]]) == runs[0]
    assert "error" in eager._median(runs + [{"error": "boom", "wall_s": 0.1}])
