"""What ``import cellkit`` itself does to the process."""

import os
import subprocess
import sys

CODE = ("import gc; before = gc.get_freeze_count(); import cellkit; "
        "print(before, gc.get_freeze_count(), gc.isenabled())")


def _run(**env):
    full = {k: v for k, v in os.environ.items() if k != "CELLKIT_GC_FREEZE"}
    full.update(env)
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=full, check=True)
    return out.stdout.split()


def test_import_freezes_the_objects_it_made_and_the_collector_stays_on():
    before, after, enabled = _run()
    assert before == "0" and int(after) > 10_000 and enabled == "True"


def test_gc_freeze_can_be_turned_off():
    assert _run(CELLKIT_GC_FREEZE="0") == ["0", "0", "True"]


def test_import_runs_no_collection_and_leaves_a_paused_collector_paused():
    code = ("import gc; runs = []; gc.callbacks.append(lambda phase, info: phase == 'start' and "
            "runs.append(info['generation'])); import cellkit; print(max(runs, default=0), len(runs), gc.isenabled())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={k: v for k, v in os.environ.items() if k != "CELLKIT_GC_FREEZE"})
    oldest, runs, enabled = out.stdout.split()
    assert enabled == "True" and oldest == "0" and int(runs) <= 2   # (a young collection at most, once resumed)
    out = subprocess.run([sys.executable, "-c", "import gc; gc.disable(); import cellkit; print(gc.isenabled())"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]
