"""``cellkit.dataset.config``: the pipeline's global settings (``mindspore.dataset.config``).

The seed fixes every shuffle and random transform of every pipeline built after
it is set, epoch by epoch, so two runs under the same seed yield the same
batches in the same order.

>>> import cellkit.dataset as ds
>>> ds.config.set_seed(7)
>>> ds.config.get_seed()
7
>>> ds.config.set_seed(-1)
Traceback (most recent call last):
...
ValueError: set_seed: seed must be an int in [0, 2**32 - 1], got -1
"""

from __future__ import annotations

__all__ = ["set_seed", "get_seed", "set_num_parallel_workers", "get_num_parallel_workers",
           "set_prefetch_size", "get_prefetch_size", "set_enable_shared_mem", "get_enable_shared_mem"]

_DEFAULT_SEED = 5489  # MindSpore's default (std::mt19937's)
_settings = {"seed": _DEFAULT_SEED, "num_parallel_workers": 8, "prefetch_size": 16, "shared_mem": True}


def _check_int(what, value, lo, hi, hi_text):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    if not lo <= value <= hi:
        raise ValueError(f"{what} must be an int in [{lo}, {hi_text}], got {value}")


def set_seed(seed):
    """Seed every shuffle and random transform of the pipelines."""
    _check_int("set_seed: seed", seed, 0, 2**32 - 1, "2**32 - 1")
    _settings["seed"] = seed


def get_seed():
    return _settings["seed"]


def set_num_parallel_workers(num):
    """The default number of workers of ``map`` and ``batch`` when they do not give one."""
    _check_int("set_num_parallel_workers: num", num, 1, 1024, "1024")
    _settings["num_parallel_workers"] = num


def get_num_parallel_workers():
    return _settings["num_parallel_workers"]


def set_prefetch_size(size):
    _check_int("set_prefetch_size: size", size, 1, 2**31 - 1, "2**31 - 1")
    _settings["prefetch_size"] = size


def get_prefetch_size():
    return _settings["prefetch_size"]


def set_enable_shared_mem(enable):
    if not isinstance(enable, bool):
        raise TypeError(f"set_enable_shared_mem: enable must be a bool, got {type(enable).__name__}")
    _settings["shared_mem"] = enable


def get_enable_shared_mem():
    return _settings["shared_mem"]
