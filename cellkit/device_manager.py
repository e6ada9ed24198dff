"""MindSpore's ``mindspore.device_manager``: which device runs the program, and determinism.

``set_device("GPU", 1)`` makes JAX's default device the second GPU
(``jax_default_device``); ``"CPU"`` the CPU. ``"Ascend"`` has no JAX backend
here and is refused with the targets that are. ``get_current_device()`` gives
the target and index in use.

>>> import cellkit as ms
>>> ms.set_device("CPU")
>>> ms.get_current_device()
('CPU', 0)
"""

from __future__ import annotations

import os
import warnings

import jax

__all__ = ["set_device", "get_current_device", "set_deterministic", "get_deterministic"]

_PLATFORMS = {"CPU": "cpu", "GPU": "gpu", "Ascend": None}
_TARGET = {"cpu": "CPU", "gpu": "GPU", "cuda": "GPU", "rocm": "GPU", "tpu": "TPU"}
_deterministic = [False]


def _backends():
    found = []
    for platform in ("cpu", "gpu", "tpu"):
        try:
            if jax.devices(platform):
                found.append(platform)
        except RuntimeError:
            pass
    return found


def set_device(device_target, device_id=None) -> None:
    """Run on ``device_target`` (``"CPU"``, ``"GPU"``), device ``device_id`` (default 0)."""
    if not isinstance(device_target, str):
        raise TypeError(f"set_device: device_target must be a str, got {type(device_target).__name__}")
    if device_id is not None and (isinstance(device_id, bool) or not isinstance(device_id, int) or device_id < 0):
        raise ValueError(f"set_device: device_id must be a non-negative int or None, got {device_id!r}")
    have = [_TARGET[p] for p in _backends()]
    platform = _PLATFORMS.get(device_target, device_target.lower() if device_target == "TPU" else None)
    if platform is None or platform not in _backends():
        raise ValueError(f"set_device: device_target {device_target!r} is not available here; this JAX "
                         f"installation has {have}")
    devices = jax.devices(platform)
    index = device_id or 0
    if index >= len(devices):
        raise ValueError(f"set_device: device_id {index} is out of range: there are {len(devices)} "
                         f"{device_target} device(s)")
    jax.config.update("jax_default_device", devices[index])


def get_current_device():
    """``(target, index)`` of the device arrays are put on by default, e.g. ``('CPU', 0)``."""
    device = jax.config.jax_default_device or jax.devices()[0]
    if isinstance(device, str):
        device = jax.devices(device)[0]
    return (_TARGET.get(device.platform, device.platform.upper()), device.id)


def set_deterministic(deterministic) -> None:
    """Ask for bit-reproducible kernels. The CPU backend always is; on GPU this sets XLA's
    ``--xla_gpu_deterministic_ops``, which only takes effect before the first computation."""
    if not isinstance(deterministic, bool):
        raise TypeError(f"set_deterministic: deterministic must be a bool, got {type(deterministic).__name__}")
    _deterministic[0] = deterministic
    flags = [f for f in os.environ.get("XLA_FLAGS", "").split() if not f.startswith("--xla_gpu_deterministic_ops")]
    if deterministic:
        flags.append("--xla_gpu_deterministic_ops=true")
    os.environ["XLA_FLAGS"] = " ".join(flags)
    if _initialized() and "gpu" in _backends():
        warnings.warn("set_deterministic: the GPU backend has already started; XLA reads "
                      "--xla_gpu_deterministic_ops when it starts, so this applies to a new process "
                      "(call set_deterministic before the first computation)", RuntimeWarning, stacklevel=2)


def _initialized() -> bool:
    try:
        from jax._src import xla_bridge
        return bool(xla_bridge.backends_are_initialized())
    except (ImportError, AttributeError):
        return True


def get_deterministic() -> bool:
    """What ``set_deterministic`` last set (False by default)."""
    return _deterministic[0]
