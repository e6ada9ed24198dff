"""MindSpore's summary Primitives (``ops/operations/debug_ops.py``): ``ScalarSummary``,
``ImageSummary``, ``TensorSummary`` and ``HistogramSummary``.

``op(name, value)`` keeps the value under ``name`` (the latest one, as MindSpore does) until
``train.SummaryRecord.record`` writes it. It also works inside ``jit`` and ``grad``: the value
leaves the computation through ``jax.debug.callback`` when the computation runs.

>>> import cellkit as ms
>>> from cellkit import ops
>>> from cellkit.ops.operations import debug_ops
>>> ops.ScalarSummary()("loss", ms.Tensor(0.25))
>>> debug_ops.take_summaries()["loss"]
('scalar', array(0.25, dtype=float32))
"""

from __future__ import annotations

import threading

import jax
import jax.numpy as jnp
import numpy as np

from ..function._utils import _v
from ..primitive import install_primitives

__all__ = []

_PENDING = {}  # name -> (plugin, value): what the summary ops kept since the last record
_LOCK = threading.Lock()


def take_summaries() -> dict:
    """The values the summary ops kept, ``{name: (plugin, NumPy value)}``; the store is emptied."""
    with _LOCK:
        out = dict(_PENDING)
        _PENDING.clear()
    return out


def _summary(plugin):
    def summary(name, value):
        if not isinstance(name, str) or not name:
            raise ValueError(f"{plugin.capitalize()}Summary: name must be a non-empty str, got {name!r}")

        def keep(v):
            with _LOCK:
                _PENDING[name] = (plugin, np.asarray(v))
        jax.debug.callback(keep, jnp.asarray(_v(value)))
    summary.__name__ = f"{plugin}_summary"
    return summary


# Name: (op, constructor arguments with MindSpore's defaults)
PRIMITIVES = {
    "ScalarSummary": (_summary("scalar"), {}),
    "ImageSummary": (_summary("image"), {}),
    "TensorSummary": (_summary("tensor"), {}),
    "HistogramSummary": (_summary("histogram"), {}),
}
install_primitives(globals(), __all__, PRIMITIVES)
