"""Converting checkpoint files between MindSpore's ``.ckpt`` and safetensors, and reading one
in the background: ``ckpt_to_safetensors``, ``safetensors_to_ckpt``, ``load_checkpoint_async``.

``file_path`` is a file or a directory (every matching file in it, ``file_name_regex``
filtering by name); the converted file keeps the name with the other extension and goes to
``save_path`` (the source's directory by default). ``name_map`` renames entries on the way.

>>> import os, tempfile
>>> import cellkit as ms
>>> from cellkit import nn
>>> folder = tempfile.mkdtemp()
>>> ms.save_checkpoint(nn.Dense(3, 2), os.path.join(folder, "net.ckpt"), format="ckpt")
>>> ms.ckpt_to_safetensors(os.path.join(folder, "net.ckpt"), name_map={"weight": "w"})
>>> sorted(ms.load_checkpoint(os.path.join(folder, "net.safetensors")))
['bias', 'w']
"""

from __future__ import annotations

import concurrent.futures
import os
import re

from .load import load_checkpoint
from .save import save_checkpoint

__all__ = ["ckpt_to_safetensors", "safetensors_to_ckpt", "load_checkpoint_async", "async_ckpt_thread_status"]

_pool = []


def _sources(file_path, suffix, file_name_regex, what):
    if not isinstance(file_path, (str, os.PathLike)):
        raise TypeError(f"{what}: file_path must be a str or path, got {type(file_path).__name__}")
    file_path = os.fspath(file_path)
    if os.path.isdir(file_path):
        pattern = re.compile(file_name_regex) if file_name_regex else None
        found = [os.path.join(file_path, f) for f in sorted(os.listdir(file_path))
                 if f.endswith(suffix) and (pattern is None or pattern.search(f))]
        if not found:
            raise FileNotFoundError(f"{what}: no '{suffix}' file in '{file_path}'"
                                    + (f" matching {file_name_regex!r}" if file_name_regex else ""))
        return found
    if not os.path.isfile(file_path):
        raise FileNotFoundError(f"{what}: '{file_path}' does not exist")
    return [file_path]


def _convert(file_path, save_path, name_map, file_name_regex, src, dst, fmt, what):
    if name_map is not None and not isinstance(name_map, dict):
        raise TypeError(f"{what}: name_map must be a dict or None, got {type(name_map).__name__}")
    for source in _sources(file_path, src, file_name_regex, what):
        params = load_checkpoint(source)
        if name_map:
            params = {name_map.get(k, k): v for k, v in params.items()}
        folder = os.fspath(save_path) if save_path is not None else os.path.dirname(source)
        os.makedirs(folder, exist_ok=True)
        base = os.path.basename(source)[:-len(src)] + dst
        save_checkpoint(params, os.path.join(folder, base), format=fmt)


def ckpt_to_safetensors(file_path, save_path=None, name_map=None, file_name_regex=None, processes_num=1):
    """Write each ``.ckpt`` under ``file_path`` as a ``.safetensors`` file."""
    _convert(file_path, save_path, name_map, file_name_regex, ".ckpt", ".safetensors", "safetensors",
             "ckpt_to_safetensors")


def safetensors_to_ckpt(file_path, save_path=None, name_map=None, file_name_regex=None, processes_num=1):
    """Write each ``.safetensors`` under ``file_path`` as a MindSpore ``.ckpt`` file."""
    _convert(file_path, save_path, name_map, file_name_regex, ".safetensors", ".ckpt", "ckpt",
             "safetensors_to_ckpt")


def load_checkpoint_async(ckpt_file_name, net=None, strict_load=False, filter_prefix=None, dec_key=None,
                          dec_mode="AES-GCM", specify_prefix=None, choice_func=None):
    """Start reading a checkpoint on a background thread; ``.result()`` of the returned future gives
    ``load_checkpoint``'s dict (and loads it into ``net`` when one is given, on the caller's thread)."""
    if not _pool:
        _pool.append(concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="cellkit-ckpt"))
    future = _pool[0].submit(load_checkpoint, ckpt_file_name, None, strict_load, filter_prefix, dec_key,
                             dec_mode, specify_prefix, choice_func)
    return _ParamDictFuture(future, net, strict_load)


class _ParamDictFuture:
    """``result()`` waits for the read and returns the dict; a ``net`` given to
    ``load_checkpoint_async`` is loaded then, on the calling thread."""

    def __init__(self, future, net, strict_load):
        self._future, self._net, self._strict = future, net, strict_load

    def done(self) -> bool:
        return self._future.done()

    def result(self, timeout=None):
        params = self._future.result(timeout)
        if self._net is not None:
            from .into_net import load_param_into_net
            load_param_into_net(self._net, params, strict_load=self._strict)
            self._net = None
        return params


def async_ckpt_thread_status() -> bool:
    """Whether a background checkpoint write is running: never (``save_checkpoint`` writes before it
    returns; ``async_save`` is accepted)."""
    return False
