"""Read the fixtures that ``tests/fixtures/record/*.py`` recorded under MindSpore 2.10.

``load("dataset")["vision/resize_pair"]["output"]`` is the NumPy array MindSpore returned for
that case; ``["inputs"]`` its inputs, ``["error"]`` the exception type where it refused them.
"""

import json
import pathlib

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent / "fixtures" / "mindspore"


def _decode(value, arrays):
    if isinstance(value, list):
        return [_decode(v, arrays) for v in value]
    if isinstance(value, dict):
        if "__array__" in value:
            return arrays[value["__array__"]]
        if "__tuple__" in value:
            return tuple(_decode(v, arrays) for v in value["__tuple__"])
        if "__dict__" in value:
            return {k: _decode(v, arrays) for k, v in value["__dict__"].items()}
        if "__repr__" in value:
            return value["__repr__"]
        return {k: _decode(v, arrays) for k, v in value.items()}
    return value


def load(family):
    """``{case name: {"inputs": [...], "kwargs": {...}, "output": ... or "error": "TypeError"}}``."""
    cases = json.loads((ROOT / f"{family}.json").read_text())
    npz = ROOT / f"{family}.npz"
    arrays = dict(np.load(npz)) if npz.exists() else {}
    return {name: _decode(case, arrays) for name, case in cases.items()}
