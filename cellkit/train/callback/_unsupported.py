"""MindSpore callbacks that have no meaning here: constructing one raises a clear error."""

from __future__ import annotations

from ._callback import Callback

__all__ = ["SummaryLandscape", "FlopsUtilizationCollector", "TrainFaultTolerance",
           "BackupAndRestore", "OnRequestExit"]

_WHY = {
    "SummaryLandscape": "MindInsight loss landscapes are not computed",
    "FlopsUtilizationCollector": "Ascend FLOPs counters do not exist here; use jax.profiler",
    "TrainFaultTolerance": "Ascend cluster fault tolerance does not exist here",
    "BackupAndRestore": "use ModelCheckpoint and resume with load_checkpoint + Model.train(initial_epoch=...)",
    "OnRequestExit": "signal-triggered saving is not provided; use ModelCheckpoint",
}


def _make(name):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"{name} is not supported by cellkit: {_WHY[name]}.")
    return type(name, (Callback,), {"__init__": __init__, "__doc__": f"Not supported: {_WHY[name]}.",
                                    "__module__": __name__})


for _name in __all__:
    globals()[_name] = _make(_name)
