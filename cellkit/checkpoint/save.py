"""``save_checkpoint``: collect and check the entries, then write them atomically."""

from __future__ import annotations

import os
from typing import NamedTuple

import jax
import numpy as np

from ..cell import Cell
from ..parameter import Parameter
from .atomic import atomic_write
from .ckpt_io import write_ckpt
from .common import _BY_MS, _BY_NP, _check_host, _not_traced
from .safetensors_io import write_safetensors

__all__ = ["save_checkpoint"]

_MS_SAVE_KWARGS = {"incremental", "global_step_num", "remove_redundancy"}


class _Entry(NamedTuple):
    name: str
    value: object          # a jax.Array, NumPy array or str
    requires_grad: bool | None


def _check_name(name, where: str) -> str:
    if not isinstance(name, str) or not name:
        raise TypeError(f"save_checkpoint: {where}: a name must be a non-empty string, got {name!r}")
    if name == "__metadata__":
        raise ValueError(f"save_checkpoint: {where}: '__metadata__' is reserved by safetensors "
                         "and cannot name a Parameter")
    return name


def _array_of(value, where: str):
    """The array (or str) to store for ``value``, refusing anything else."""
    if isinstance(value, Parameter):
        value = value.value
    if isinstance(value, str):
        return value
    if isinstance(value, jax.core.Tracer):
        raise TypeError(f"save_checkpoint: {where} is a traced value; save outside traced functions")
    if isinstance(value, (jax.Array, np.ndarray, np.generic)):
        if jax.dtypes.issubdtype(value.dtype, jax.dtypes.prng_key):
            raise TypeError(f"save_checkpoint: {where} holds PRNG keys, which have no checkpoint "
                            "dtype; save jax.random.key_data(...) instead")
        if np.dtype(value.dtype) not in _BY_NP:
            raise TypeError(f"save_checkpoint: {where} has dtype {value.dtype}, which cellkit "
                            f"cannot store (supported: {', '.join(_BY_MS)})")
        return value
    raise TypeError(f"save_checkpoint: {where} must be a Parameter, a Tensor (jax.Array), a NumPy "
                    f"array or a str, got {type(value).__name__}")


def _collect(save_obj, choice_func, append_dict) -> list:
    """The entries to write, in order, with every name and value checked."""
    entries, names = [], {}

    def add(name, value, requires_grad, where, source=None):
        if choice_func is not None and not choice_func(name):
            return
        seen = names.get(name)
        if seen is not None:
            if source is not None and seen is source:
                return  # the same Parameter listed twice
            raise ValueError(f"save_checkpoint: two different entries are both named '{name}' "
                             f"({where}); names in a checkpoint must be unique")
        names[name] = source if source is not None else object()
        entries.append(_Entry(name, _array_of(value, where), requires_grad))

    if isinstance(save_obj, Cell):
        for name, param in save_obj.parameters_dict().items():  # raises on duplicate names
            add(name, param, param.requires_grad, f"Parameter '{name}'", param)
    elif isinstance(save_obj, (list, tuple)):
        for i, item in enumerate(save_obj):
            if isinstance(item, Parameter):
                add(_check_name(item.name, f"save_obj[{i}]"), item, item.requires_grad,
                    f"save_obj[{i}] (Parameter '{item.name}')", item)
            elif isinstance(item, dict) and set(item) >= {"name", "data"}:
                name = _check_name(item["name"], f"save_obj[{i}]['name']")
                data = item["data"]
                rg = data.requires_grad if isinstance(data, Parameter) else None
                add(name, data, rg, f"save_obj[{i}] ('{name}')", data if isinstance(data, Parameter) else None)
            else:
                raise TypeError(f"save_checkpoint: save_obj[{i}] must be a Parameter or a dict "
                                f"{{'name': str, 'data': Tensor}}, got {type(item).__name__}")
    elif isinstance(save_obj, dict):
        for key, value in save_obj.items():
            name = _check_name(key, f"save_obj key {key!r}")
            rg = value.requires_grad if isinstance(value, Parameter) else None
            add(name, value, rg, f"save_obj['{name}']", value if isinstance(value, Parameter) else None)
    else:
        raise TypeError("save_checkpoint: save_obj must be a Cell, a list of Parameters or of "
                        "{'name': ..., 'data': ...} dicts, or a dict of name -> Tensor/Parameter, "
                        f"got {type(save_obj).__name__}")

    if append_dict:
        if not isinstance(append_dict, dict):
            raise TypeError(f"save_checkpoint: append_dict must be a dict, got {type(append_dict).__name__}")
        for key, value in append_dict.items():
            name = _check_name(key, f"append_dict key {key!r}")
            where = f"append_dict['{name}']"
            # MindSpore's types for plain Python values: Bool, Int64, Float32 scalars.
            if isinstance(value, bool):
                value = np.bool_(value)
            elif isinstance(value, int):
                if not -2**63 <= value < 2**63:
                    raise OverflowError(f"save_checkpoint: {where} = {value} does not fit Int64")
                value = np.int64(value)
            elif isinstance(value, float):
                value = np.float32(value)
            if name in names:
                raise ValueError(f"save_checkpoint: {where} has the name of a saved Parameter")
            names[name] = object()
            entries.append(_Entry(name, _array_of(value, where), None))
    return entries


def _save_path(ckpt_file_name, fmt: str) -> str:
    if not isinstance(ckpt_file_name, (str, os.PathLike)):
        raise TypeError(f"save_checkpoint: ckpt_file_name must be a str or path, "
                        f"got {type(ckpt_file_name).__name__}")
    path = os.path.realpath(os.fspath(ckpt_file_name))
    if os.path.isdir(path):
        raise IsADirectoryError(f"save_checkpoint: '{path}' is a directory; give a file name")
    if not os.path.splitext(os.path.basename(path))[1]:
        path += "." + fmt
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        raise FileNotFoundError(f"save_checkpoint: the directory '{parent}' does not exist")
    return path


def save_checkpoint(save_obj, ckpt_file_name, integrated_save=True, async_save=False, append_dict=None,
                    enc_key=None, enc_mode="AES-GCM", choice_func=None, crc_check=False,
                    format="safetensors", **kwargs) -> None:
    """Save Parameters to ``ckpt_file_name``, atomically.

    Args:
        save_obj: a Cell (all its Parameters, keyed by ``Parameter.name``,
            ``requires_grad=False`` ones included), a list of Parameters, a
            list of ``{'name': str, 'data': Tensor/Parameter}`` dicts, or a
            dict name -> Parameter/Tensor/NumPy array/str (such as what
            :func:`load_checkpoint` returns).
        ckpt_file_name: the file to write (overwritten if it exists). Used as
            given when it has an extension; otherwise ``.safetensors`` (or
            ``.ckpt``) is added.
        append_dict: extra entries ``{name: int | float | bool | str | Tensor}``;
            Python ints, floats and bools are stored as Int64, Float32 and Bool
            scalars, as MindSpore does.
        choice_func: ``choice_func(name) -> bool`` keeps only the Parameters
            for which it returns True (``append_dict`` entries are always kept).
        crc_check: with ``format="ckpt"``, append MindSpore's CRC trailer.
            (cellkit's safetensors files always carry a CRC.)
        format: ``"safetensors"`` (cellkit's format: it records each
            Parameter's ``requires_grad``), or ``"ckpt"`` for MindSpore's
            protobuf format, which MindSpore itself can load (it has no place
            for ``requires_grad``).
        integrated_save, async_save: accepted for compatibility; the file is
            always written completely before the call returns.
        enc_key, enc_mode: encryption is not supported (``enc_key`` must be None).

    Raises:
        ValueError: two different entries share a name.
        TypeError: an entry is not an array (or its dtype cannot be stored).
        OSError: the file could not be written (the message names the file;
            the previous file is left unchanged).

    >>> import os, tempfile
    >>> import numpy as np
    >>> import cellkit as ms
    >>> w = ms.Parameter(ms.Tensor(np.ones((2, 2)), ms.bfloat16), name="w", requires_grad=False)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     ms.save_checkpoint([w], os.path.join(d, "w"), append_dict={"epoch": 3})
    ...     print(sorted(os.listdir(d)))
    ...     loaded = ms.load_checkpoint(os.path.join(d, "w.safetensors"))
    ['w.safetensors']
    >>> loaded["w"], int(loaded["epoch"])
    (Parameter (name=w, shape=(2, 2), dtype=BFloat16, requires_grad=False), 3)
    """
    _check_host()
    _not_traced("save_checkpoint")
    if format not in ("safetensors", "ckpt"):
        raise ValueError(f"save_checkpoint: format must be 'safetensors' or 'ckpt', got {format!r}")
    if enc_key is not None:
        raise NotImplementedError("save_checkpoint: encrypted checkpoints (enc_key) are not supported")
    unknown = set(kwargs) - _MS_SAVE_KWARGS
    if unknown:
        raise TypeError(f"save_checkpoint: unexpected keyword arguments {sorted(unknown)}")
    if choice_func is not None and not callable(choice_func):
        raise TypeError(f"save_checkpoint: choice_func must be callable, got {type(choice_func).__name__}")
    path = _save_path(ckpt_file_name, format)
    entries = _collect(save_obj, choice_func, append_dict)
    if format == "ckpt":
        atomic_write(path, lambda sink: write_ckpt(sink, entries, bool(crc_check)))
    else:
        atomic_write(path, lambda sink: write_safetensors(sink, entries))
