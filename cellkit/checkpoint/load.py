"""``load_checkpoint``: find the format from the bytes, read, verify, filter, make Parameters."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..cell import Cell
from ..parameter import Parameter
from ..tensor import x64_enabled
from .ckpt_io import read_ckpt
from .common import _NARROW, _check_host, _dtype_name
from .into_net import load_param_into_net
from .safetensors_io import read_safetensors
from .source import _neither, _Source, sniff

__all__ = ["load_checkpoint"]

def _check_prefix(prefix, what: str):
    if prefix is None:
        return None
    if isinstance(prefix, str):
        prefix = (prefix,)
    if not isinstance(prefix, (list, tuple)):
        raise TypeError(f"load_checkpoint: {what} must be a str or a list/tuple of str, "
                        f"got {type(prefix).__name__}")
    if not prefix:
        raise ValueError(f"load_checkpoint: {what} must not be empty")
    for i, p in enumerate(prefix):
        if not isinstance(p, str) or not p:
            raise ValueError(f"load_checkpoint: {what}[{i}] must be a non-empty str, got {p!r}")
    return tuple(prefix)


def _to_jax(name: str, value: np.ndarray, label: str) -> jax.Array:
    narrow = None if x64_enabled() else _NARROW.get(value.dtype)
    if narrow is not None:
        if narrow.kind in "iu" and value.size:
            info = np.iinfo(narrow)
            lo, hi = int(value.min()), int(value.max())
            if lo < info.min or hi > info.max:
                raise OverflowError(
                    f"load_checkpoint: '{label}': entry '{name}' holds {_dtype_name(value.dtype)} values "
                    f"({lo}..{hi}) that do not fit {_dtype_name(narrow)}, and JAX's 64-bit mode is off; "
                    "enable it (JAX_ENABLE_X64=1) to load them")
        value = value.astype(narrow)
    return jnp.array(value)


def load_checkpoint(ckpt_file_name, net=None, strict_load=False, filter_prefix=None, dec_key=None,
                    dec_mode="AES-GCM", specify_prefix=None, choice_func=None, crc_check=False,
                    remove_redundancy=False, format=None) -> dict:
    """Read a checkpoint: a dict name -> Parameter (or str), in the file's order.

    The format is found from the file's bytes: cellkit's safetensors, any
    other safetensors file (MindSpore's among them), or MindSpore's protobuf
    ``.ckpt``. Parameters from cellkit files get back their ``requires_grad``;
    from other files they have ``requires_grad=True``, as in MindSpore. A
    ``str`` entry (from ``append_dict``) comes back as a Python str.

    Args:
        ckpt_file_name: a path, or a binary file object.
        net: if given, the Parameters are also loaded into it with
            :func:`load_param_into_net` (``strict_load`` is passed on).
        specify_prefix: keep only names starting with one of these prefixes.
        filter_prefix: drop names starting with one of these prefixes.
        choice_func: ``choice_func(name) -> bool`` selects the names to keep;
            ignored when ``specify_prefix`` or ``filter_prefix`` is given, as
            in MindSpore.
        crc_check: warn when the file carries no checksum. Checksums a file
            does carry are always verified.
        format: accepted for compatibility and ignored (the bytes decide).
        dec_key, dec_mode: encrypted checkpoints are not supported.
        remove_redundancy: not supported (must be False).

    Raises:
        FileNotFoundError: the file does not exist.
        CheckpointError: (a ``ValueError``) the file is truncated, corrupt
            (a checksum or its structure does not match), of neither format,
            or holds a dtype cellkit does not know; also when no entry is
            left after filtering, as MindSpore does.

    >>> import os, tempfile
    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> net = nn.SequentialCell([nn.Dense(2, 3), nn.Dense(3, 1)])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "seq.ckpt")
    ...     ms.save_checkpoint(net, path, format="ckpt")       # MindSpore's format
    ...     first = ms.load_checkpoint(path, specify_prefix="0.")
    ...     rest = ms.load_checkpoint(path, choice_func=lambda name: name.endswith("bias"))
    >>> list(first), list(rest)
    (['0.weight', '0.bias'], ['0.bias', '1.bias'])
    """
    _check_host()
    specify_prefix = _check_prefix(specify_prefix, "specify_prefix")
    filter_prefix = _check_prefix(filter_prefix, "filter_prefix")
    if dec_key is not None:
        raise NotImplementedError("load_checkpoint: encrypted checkpoints (dec_key) are not supported")
    if remove_redundancy:
        raise NotImplementedError("load_checkpoint: remove_redundancy=True (checkpoints saved "
                                  "without data-parallel copies) is not supported")
    if format not in (None, "ckpt", "safetensors"):
        raise ValueError(f"load_checkpoint: format must be 'ckpt' or 'safetensors', got {format!r}")
    if choice_func is not None and not callable(choice_func):
        raise TypeError(f"load_checkpoint: choice_func must be callable, got {type(choice_func).__name__}")
    if net is not None and not isinstance(net, Cell):
        raise TypeError(f"load_checkpoint: net must be a Cell, got {type(net).__name__}")

    use_choice = choice_func is not None and specify_prefix is None and filter_prefix is None

    def keep(name: str) -> bool:
        if specify_prefix and not name.startswith(specify_prefix):
            return False
        if filter_prefix and name.startswith(filter_prefix):
            return False
        return not use_choice or bool(choice_func(name))

    with _Source(ckpt_file_name) as src:
        head = src.read(9)
        if not head:
            raise src.error("is empty (0 bytes), not a checkpoint")
        kind = sniff(head)
        if kind == "safetensors":
            records = [r for r in read_safetensors(src, head, crc_check) if keep(r[0])]
        elif kind == "ckpt":
            records = read_ckpt(src, head, crc_check, keep)
        else:
            raise _neither(src, head)
        if not records:
            filtered = specify_prefix or filter_prefix or use_choice
            raise src.error("has no entries left after specify_prefix / filter_prefix / choice_func"
                            if filtered else "holds no entries")
        out = {}
        for name, value, rg in records:
            if isinstance(value, str):
                out[name] = value
            else:
                out[name] = Parameter(_to_jax(name, value, src.label), name=name,
                                      requires_grad=True if rg is None else rg)
    if net is not None:
        load_param_into_net(net, out, strict_load)
    return out
