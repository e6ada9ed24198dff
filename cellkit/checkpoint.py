"""Checkpoints: ``save_checkpoint``, ``load_checkpoint``, ``load_param_into_net``.

MindSpore's three functions, with MindSpore's arguments and return values.

**Writing.** ``save_checkpoint`` writes a safetensors file (no pickle, nothing
executable) by default, or MindSpore's protobuf ``.ckpt`` with
``format="ckpt"`` (to hand weights back to MindSpore). Every write is atomic:
the bytes go to a temporary file in the target's directory, which is flushed
to disk (``fsync``) and then renamed over the target with ``os.replace``. If
anything fails — a full disk, an interrupt, a bad value — the previous file is
left as it was and the temporary file is removed.

File names: a name with an extension is used as given (``net.ckpt`` holds
safetensors bytes if that is the format written; readers here look at the
bytes, not the name). A name without one gets ``.safetensors`` (or ``.ckpt``
with ``format="ckpt"``), as MindSpore adds ``.ckpt``.

**Reading.** ``load_checkpoint`` finds the format from the file's first bytes:
safetensors (cellkit's or anyone's, MindSpore's included) or MindSpore's
protobuf ``.ckpt``, whose wire format is parsed here directly (it is three
small messages; there is no protobuf dependency). Every checksum a file
carries is verified: cellkit's own (always written), MindSpore's ``.ckpt``
CRC trailer and MindSpore's safetensors ``crc_num``. Corrupt, truncated or
unknown files raise :class:`CheckpointError` (a ``ValueError``) naming the
file and what is wrong, before anything is returned or loaded into a net.

**cellkit's safetensors layout** (format version 1). A standard safetensors
file (8-byte little-endian header length, JSON header, raw little-endian
C-order data, tensors stored largest item size first so each is aligned) whose
``__metadata__`` holds:

* ``"format": "cellkit"`` and ``"cellkit.version": "1"``;
* ``"cellkit.entries"``: a JSON list ``[[name, requires_grad, kind], ...]`` in
  the order saved (``requires_grad`` is null for plain arrays; ``kind`` is
  ``""``, ``"str"`` for a string entry stored as UTF-8 bytes (``U8``), or
  ``"Complex128"`` for complex128 data stored as ``F64`` with a trailing axis
  of 2, which safetensors has no type for);
* ``"cellkit.crc32"``: 8 hex digits, the CRC-32 of the header as canonical
  JSON (sorted keys, no spaces, this key left out) followed by the data.

**64-bit data.** With JAX's ``jax_enable_x64`` off (its default) JAX has no
64-bit arrays, so Int64, UInt64, Float64 and Complex128 entries are loaded as
Int32, UInt32, Float32 and Complex64 (as ``Tensor`` converts NumPy data); an
integer that does not fit raises ``OverflowError``. Files are always written
with the dtypes the arrays have.

>>> import os, tempfile
>>> import numpy as np
>>> import cellkit as ms
>>> from cellkit import nn
>>> net = nn.Dense(3, 2)
>>> with tempfile.TemporaryDirectory() as d:
...     path = os.path.join(d, "dense.safetensors")
...     ms.save_checkpoint(net, path)
...     params = ms.load_checkpoint(path)
>>> params
{'weight': Parameter (name=weight, shape=(2, 3), dtype=Float32, requires_grad=True),
 'bias': Parameter (name=bias, shape=(2,), dtype=Float32, requires_grad=True)}
>>> other = nn.Dense(3, 2)
>>> ms.load_param_into_net(other, params)
([], [])
>>> bool((other.weight.asnumpy() == net.weight.asnumpy()).all())
True
"""

from __future__ import annotations

import errno
import json
import math
import os
import secrets
import struct
import sys
import warnings
import zlib
from typing import NamedTuple

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

from .cell import Cell
from .parameter import Parameter, local
from .tensor import x64_enabled

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net", "CheckpointError",
           "FORMAT_VERSION"]

FORMAT_VERSION = 1

# MindSpore splits a .ckpt entry larger than this into consecutive records with
# the same tag (SLICE_SIZE in mindspore/train/serialization.py).
_CKPT_SLICE_BYTES = 512 * 1024 * 1024
# The largest header the safetensors reference implementation accepts.
_MAX_HEADER_BYTES = 100_000_000
# The most bytes handed to one os.write call (some systems cap a write at 2 GiB).
_WRITE_CHUNK = 1 << 26
_CRC_KEY = "cellkit.crc32"
_CRC_PLACEHOLDER = "00000000"


class CheckpointError(ValueError):
    """A checkpoint file is corrupt, truncated, of an unknown format or unsupported."""


class _DT(NamedTuple):
    ms: str          # MindSpore's tensor_type string in .ckpt files (str(dtype))
    np: np.dtype
    st: str | None   # the safetensors dtype code (None: none exists)


_TABLE = (
    _DT("Bool", np.dtype(np.bool_), "BOOL"),
    _DT("Int8", np.dtype(np.int8), "I8"),
    _DT("UInt8", np.dtype(np.uint8), "U8"),
    _DT("Int16", np.dtype(np.int16), "I16"),
    _DT("UInt16", np.dtype(np.uint16), "U16"),
    _DT("Int32", np.dtype(np.int32), "I32"),
    _DT("UInt32", np.dtype(np.uint32), "U32"),
    _DT("Int64", np.dtype(np.int64), "I64"),
    _DT("UInt64", np.dtype(np.uint64), "U64"),
    _DT("Float16", np.dtype(np.float16), "F16"),
    _DT("BFloat16", np.dtype(ml_dtypes.bfloat16), "BF16"),
    _DT("Float32", np.dtype(np.float32), "F32"),
    _DT("Float64", np.dtype(np.float64), "F64"),
    _DT("Complex64", np.dtype(np.complex64), "C64"),
    _DT("Complex128", np.dtype(np.complex128), None),
    _DT("Float8E4M3FN", np.dtype(ml_dtypes.float8_e4m3fn), "F8_E4M3"),
    _DT("Float8E5M2", np.dtype(ml_dtypes.float8_e5m2), "F8_E5M2"),
)
_BY_MS = {d.ms: d for d in _TABLE}
_BY_NP = {d.np: d for d in _TABLE}
_BY_ST = {d.st: d for d in _TABLE if d.st is not None}
# Types MindSpore writes that cellkit cannot represent.
_UNSUPPORTED = {"Int4": "Int4 (MindSpore's packed qint4x2)",
                "HiFloat8": "HiFloat8 (an Ascend-only 8-bit float)"}

# load_param_into_net converts within these groups unless strict_load (MindSpore's _type_convert).
_FLOATS = {np.dtype(t) for t in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64)}
_INTS = {np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64)}
# What JAX gives for 64-bit data while jax_enable_x64 is off.
_NARROW = {np.dtype(np.int64): np.dtype(np.int32), np.dtype(np.uint64): np.dtype(np.uint32),
           np.dtype(np.float64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.complex64)}

_MS_SAVE_KWARGS = {"incremental", "global_step_num", "remove_redundancy"}


def _dtype_name(dtype) -> str:
    d = _BY_NP.get(np.dtype(dtype))
    return d.ms if d is not None else str(dtype)


def _check_host() -> None:
    if sys.byteorder != "little":
        raise NotImplementedError("cellkit checkpoints are little-endian; reading and writing them "
                                  "on a big-endian host is not supported")


def _not_traced(what: str) -> None:
    if local.frame is not None:
        raise RuntimeError(f"{what} must be called outside traced functions (cellkit.jit, "
                           "GRAPH_MODE, cellkit.grad): it reads or writes files and Parameters eagerly")


# ============================================================================ saving


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


def _raw(value) -> memoryview:
    """The little-endian C-order bytes of an entry (a str as UTF-8)."""
    if isinstance(value, str):
        return memoryview(value.encode("utf-8"))
    arr = np.ascontiguousarray(np.asarray(value))
    return memoryview(arr.reshape(-1).view(np.uint8))


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


class _Sink:
    """Unbuffered writes to a file descriptor, every byte through ``os.write``."""

    def __init__(self, fd):
        self.fd = fd
        self.crc = 0

    def write(self, data, crc=True) -> None:
        view = memoryview(data).cast("B")
        if crc:
            self.crc = zlib.crc32(view, self.crc)
        while len(view):
            n = os.write(self.fd, view[:_WRITE_CHUNK])
            view = view[n:]

    def patch(self, offset: int, data: bytes) -> None:
        os.lseek(self.fd, offset, os.SEEK_SET)
        self.write(data, crc=False)
        os.lseek(self.fd, 0, os.SEEK_END)


def _canonical(header: dict) -> bytes:
    """The header as canonical JSON without the CRC (what the CRC covers first)."""
    meta = {k: v for k, v in header.get("__metadata__", {}).items() if k != _CRC_KEY}
    body = {k: v for k, v in header.items() if k != "__metadata__"}
    body["__metadata__"] = meta
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode("ascii")


def _write_safetensors(sink: _Sink, entries) -> None:
    specs = []
    for e in entries:
        if isinstance(e.value, str):
            code, shape, kind, align = "U8", [len(e.value.encode("utf-8"))], "str", 1
        else:
            d = _BY_NP[np.dtype(e.value.dtype)]
            shape, kind, align = [int(s) for s in np.shape(e.value)], "", d.np.itemsize
            code = d.st
            if d.st is None:  # Complex128: its float64 (real, imag) pairs
                code, shape, kind, align = "F64", shape + [2], d.ms, 8
        nbytes = math.prod(shape) * (1 if kind == "str" else np.dtype(_BY_ST[code].np).itemsize)
        specs.append((e, code, shape, kind, align, nbytes))
    # Largest item size first: with an 8-aligned header every tensor starts aligned.
    order = sorted(range(len(specs)), key=lambda i: (-specs[i][4], i))
    meta = {_CRC_KEY: _CRC_PLACEHOLDER, "format": "cellkit", "cellkit.version": str(FORMAT_VERSION),
            "cellkit.entries": json.dumps([[e.name, e.requires_grad, kind] for e, _, _, kind, _, _ in specs],
                                          separators=(",", ":"))}
    header, offset = {"__metadata__": meta}, 0
    for i in order:
        e, code, shape, _, _, nbytes = specs[i]
        header[e.name] = {"dtype": code, "shape": shape, "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    text = json.dumps(header, separators=(",", ":")).encode("ascii")
    crc_at = text.index(f'"{_CRC_KEY}":"{_CRC_PLACEHOLDER}"'.encode()) + len(_CRC_KEY) + 4
    text += b" " * (-len(text) % 8)
    sink.write(struct.pack("<Q", len(text)), crc=False)
    sink.write(text, crc=False)
    sink.crc = zlib.crc32(_canonical(header))
    for i in order:
        sink.write(_raw(specs[i][0].value))
    sink.patch(8 + crc_at, b"%08x" % sink.crc)


def _write_ckpt(sink: _Sink, entries, crc_check: bool) -> None:
    for e in entries:
        if isinstance(e.value, str):
            dims, ttype = [0], "str"
            content = memoryview(np.array(e.value).tobytes())  # UTF-32-LE, as MindSpore writes it
        else:
            dims, ttype = [int(s) for s in np.shape(e.value)], _BY_NP[np.dtype(e.value.dtype)].ms
            content = _raw(e.value)
        tag = e.name.encode("utf-8")
        t = ttype.encode("ascii")
        head = b"".join(b"\x08" + _varint(d) for d in dims) + b"\x12" + _varint(len(t)) + t
        pieces = [content[i:i + _CKPT_SLICE_BYTES] for i in range(0, len(content), _CKPT_SLICE_BYTES)]
        for piece in pieces or [content]:
            tensor = head + b"\x1a" + _varint(len(piece))
            tensor_len = len(tensor) + len(piece)
            value = b"\x0a" + _varint(len(tag)) + tag + b"\x12" + _varint(tensor_len)
            sink.write(b"\x0a" + _varint(len(value) + tensor_len) + value + tensor)
            sink.write(piece)
    if crc_check:
        sink.write(b"crc_num" + sink.crc.to_bytes(10, "big"), crc=False)


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


def _fsync_dir(path: str) -> None:
    # Make the rename itself durable. Best effort: not every platform or file
    # system can open or fsync a directory, and the file is already in place.
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _atomic_write(path: str, body) -> None:
    """Write ``body(sink)`` to a temporary file next to ``path``, fsync it, rename it over ``path``."""
    directory, base = os.path.split(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    tmp = fd = None
    try:
        for _ in range(100):
            tmp = os.path.join(directory, f".{base}.{secrets.token_hex(6)}.tmp")
            try:
                fd = os.open(tmp, flags, 0o666)
                break
            except FileExistsError:
                continue
        else:  # pragma: no cover - 100 random collisions
            raise FileExistsError(errno.EEXIST, f"could not create a temporary file in '{directory}'")
        body(_Sink(fd))
        os.fsync(fd)
        os.close(fd)
        fd = None
        os.replace(tmp, path)
        tmp = None
    except BaseException as err:
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        if isinstance(err, OSError):
            reason = ("no space left on device" if err.errno == errno.ENOSPC
                      else err.strerror or str(err))
            raise OSError(err.errno, f"save_checkpoint: could not write '{path}': {reason}; "
                          "the previous file (if any) is unchanged") from err
        raise
    _fsync_dir(directory)


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
        _atomic_write(path, lambda sink: _write_ckpt(sink, entries, bool(crc_check)))
    else:
        _atomic_write(path, lambda sink: _write_safetensors(sink, entries))


# ============================================================================ reading


class _Source:
    """A binary file to read, with a label for messages and its size when known."""

    def __init__(self, ckpt_file_name):
        if hasattr(ckpt_file_name, "read"):
            self.f, self.close, self.label = ckpt_file_name, False, repr(ckpt_file_name)
            self.size = None
            return
        if not isinstance(ckpt_file_name, (str, os.PathLike)):
            raise TypeError(f"load_checkpoint: ckpt_file_name must be a str, path or binary file "
                            f"object, got {type(ckpt_file_name).__name__}")
        path = os.fspath(ckpt_file_name)
        self.label = path
        if not os.path.exists(path):
            hint = ""
            for ext in (".safetensors", ".ckpt"):
                if os.path.isfile(path + ext):
                    hint = f" (did you mean '{path + ext}'?)"
                    break
            raise FileNotFoundError(errno.ENOENT, f"load_checkpoint: the checkpoint file '{path}' "
                                    f"does not exist{hint}")
        if os.path.isdir(path):
            raise IsADirectoryError(errno.EISDIR, f"load_checkpoint: '{path}' is a directory, "
                                    "not a checkpoint file")
        self.f, self.close = open(path, "rb"), True
        self.size = os.fstat(self.f.fileno()).st_size

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.close:
            self.f.close()

    def error(self, what: str) -> CheckpointError:
        return CheckpointError(f"load_checkpoint: '{self.label}' {what}")

    def read(self, n: int) -> bytes:
        data = self.f.read(n)
        return data if data is not None else b""

    def read_into(self, buf: np.ndarray) -> int:
        view, got = memoryview(buf).cast("B"), 0
        while got < len(view):
            n = self.f.readinto(view[got:])
            if not n:
                break
            got += n
        return got


def _sniff(head: bytes) -> str | None:
    if len(head) >= 9 and head[8:9] == b"{":
        # A .ckpt starts with 0x0a and its ninth byte can be '{' by chance; then only a
        # plausible header length makes it safetensors.
        if head[:1] != b"\x0a" or struct.unpack("<Q", head[:8])[0] <= _MAX_HEADER_BYTES:
            return "safetensors"
    if len(head) == 8 and struct.unpack("<Q", head)[0] <= _MAX_HEADER_BYTES:
        return "safetensors"
    if head[:1] == b"\x0a":
        return "ckpt"
    return None


def _neither(src: _Source, head: bytes) -> CheckpointError:
    if head.startswith(b"PK\x03\x04"):
        hint = "it is a zip archive (a PyTorch .pt/.pth file?)"
    elif head[:1] == b"\x80":
        hint = "it looks like a Python pickle, which cellkit never loads"
    else:
        hint = "it may be corrupt, or an encrypted MindSpore checkpoint (not supported)"
    return src.error(f"is neither a safetensors file nor a MindSpore .ckpt checkpoint "
                     f"(first bytes: {head.hex(' ')}); {hint}")


# ----------------------------------------------------------------- safetensors


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"the key '{k}' appears twice")
        out[k] = v
    return out


def _is_index(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _read_safetensors(src: _Source, head: bytes, crc_check: bool) -> list:
    """[(name, array or str, requires_grad or None)] from a safetensors file, verified."""
    n = struct.unpack("<Q", head[:8])[0]
    if n > _MAX_HEADER_BYTES or n < 2:
        raise src.error(f"is corrupt: its safetensors header length field says {n} bytes "
                        f"(a header is 2 to {_MAX_HEADER_BYTES} bytes)")
    if src.size is not None and 8 + n > src.size:
        raise src.error(f"is truncated: its safetensors header needs {n} bytes but only "
                        f"{src.size - 8} follow the length field")
    text = head[8:] + src.read(n - len(head[8:]))
    if len(text) < n:
        raise src.error(f"is truncated: its safetensors header needs {n} bytes, got {len(text)}")
    try:
        header = json.loads(text.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError) as e:
        raise src.error(f"is corrupt: its safetensors header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise src.error("is corrupt: its safetensors header is not a JSON object")
    meta = header.get("__metadata__") or {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise src.error("is corrupt: its safetensors __metadata__ is not a map of strings")
    ours = meta.get("format") == "cellkit" or any(k.startswith("cellkit.") for k in meta)

    tensors = []  # (begin, end, name, dtype code, shape)
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if not (isinstance(info, dict) and isinstance(info.get("dtype"), str)
                and isinstance(info.get("shape"), list) and all(map(_is_index, info["shape"]))
                and isinstance(info.get("data_offsets"), list) and len(info["data_offsets"]) == 2
                and all(map(_is_index, info["data_offsets"]))):
            raise src.error(f"is corrupt: the header entry for tensor '{name}' is malformed: {info!r}")
        code, shape, (begin, end) = info["dtype"], tuple(info["shape"]), info["data_offsets"]
        if code not in _BY_ST:
            raise src.error(f"has tensor '{name}' of dtype '{code}', which cellkit does not know "
                            f"(known: {', '.join(_BY_ST)})")
        if end - begin != math.prod(shape) * _BY_ST[code].np.itemsize:
            raise src.error(f"is corrupt: tensor '{name}' ({code}, shape {shape}) has data offsets "
                            f"[{begin}, {end}], which do not match its size")
        tensors.append((begin, end, name, code, shape))
    tensors.sort()
    total = 0
    for begin, end, name, _, _ in tensors:
        if begin != total:
            raise src.error(f"is corrupt: tensor '{name}' starts at data offset {begin}, expected "
                            f"{total} (tensors must be stored back to back)")
        total = end
    if src.size is not None:
        have = src.size - 8 - n
        if have < total:
            raise src.error(f"is truncated: its header describes {total} bytes of tensor data but "
                            f"the file holds only {have}")
        if have > total:
            raise src.error(f"is corrupt: it has {have - total} unexpected bytes after the tensor data")

    raw = {}
    crc = zlib.crc32(_canonical(header)) if ours else None
    for begin, end, name, code, shape in tensors:
        buf = np.empty(end - begin, np.uint8)
        got = src.read_into(buf)
        if got < len(buf):
            raise src.error(f"is truncated: tensor '{name}' needs {len(buf)} bytes of data, got {got}")
        if ours:
            crc = zlib.crc32(buf, crc)
        raw[name] = buf
    if src.size is None and src.read(1):
        raise src.error("is corrupt: there are unexpected bytes after the tensor data")

    if ours:
        want = meta.get(_CRC_KEY)
        if want is None:
            raise src.error(f"is corrupt: its cellkit metadata has no '{_CRC_KEY}' checksum")
        if want != "%08x" % crc:
            raise src.error(f"is corrupt: its checksum does not match (stored {want}, computed "
                            f"{crc:08x}); a byte of the header or data has changed")
        version = meta.get("cellkit.version")
        if version != str(FORMAT_VERSION):
            raise src.error(f"was written in cellkit checkpoint format version {version}; this "
                            f"cellkit reads version {FORMAT_VERSION}")
        try:
            listed = json.loads(meta["cellkit.entries"])
            order = [(str(nm), rg, kind) for nm, rg, kind in listed]
        except (KeyError, TypeError, ValueError):
            raise src.error("is corrupt: its 'cellkit.entries' metadata is malformed") from None
        if sorted(nm for nm, _, _ in order) != sorted(raw):
            raise src.error("is corrupt: its 'cellkit.entries' metadata does not list its tensors")
    else:
        if "crc_num" in meta:  # MindSpore's: CRC-32 over name and data, names sorted
            c = 0
            for name in sorted(raw):
                c = zlib.crc32(raw[name], zlib.crc32(name.encode("utf-8"), c))
            if str(c) != meta["crc_num"]:
                raise src.error(f"is corrupt: MindSpore's CRC does not match (stored "
                                f"{meta['crc_num']}, computed {c})")
        elif crc_check:
            warnings.warn(f"load_checkpoint: '{src.label}' carries no checksum to verify", stacklevel=3)
        for name in raw:
            if meta.get(name) in _UNSUPPORTED:
                raise src.error(f"has tensor '{name}' of dtype {_UNSUPPORTED[meta[name]]}, which "
                                "cellkit cannot represent")
        order = [(name, None, "") for name in sorted(raw)]

    info = {name: (code, shape) for _, _, name, code, shape in tensors}
    out = []
    for name, rg, kind in order:
        code, shape = info[name]
        buf = raw.pop(name)
        if kind == "str":
            if code != "U8" or len(shape) != 1:
                raise src.error(f"is corrupt: string entry '{name}' is not stored as U8 bytes")
            try:
                value = buf.tobytes().decode("utf-8")
            except UnicodeDecodeError:
                raise src.error(f"is corrupt: string entry '{name}' is not UTF-8") from None
        elif kind == "Complex128":
            if code != "F64" or not shape or shape[-1] != 2:
                raise src.error(f"is corrupt: Complex128 entry '{name}' is not stored as F64 pairs")
            value = buf.view(np.complex128).reshape(shape[:-1])
        elif kind == "":
            value = buf.view(_BY_ST[code].np).reshape(shape)
        else:
            raise src.error(f"is corrupt: entry '{name}' has unknown kind {kind!r}")
        if rg is not None and not isinstance(rg, bool):
            raise src.error(f"is corrupt: entry '{name}' has requires_grad {rg!r}")
        out.append((name, value, rg))
    return out


# ----------------------------------------------------------------- MindSpore .ckpt


def _read_varint(mv, pos: int, end: int, src: _Source, what: str):
    result = shift = 0
    start = pos
    while True:
        if pos >= end:
            raise src.error(f"is truncated or corrupt: {what} at byte {start} runs past the end of "
                            "its message")
        b = mv[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise src.error(f"is corrupt: {what} at byte {start} is not a valid varint")


def _fields(mv, pos: int, end: int, src: _Source, message: str):
    """Yield (field, wire type, value, offset) of the protobuf message in mv[pos:end]."""
    while pos < end:
        start = pos
        key, pos = _read_varint(mv, pos, end, src, f"a {message} field key")
        field, wt = key >> 3, key & 7
        if wt == 0:
            value, pos = _read_varint(mv, pos, end, src, f"{message} field {field}")
        elif wt == 2:
            n, pos = _read_varint(mv, pos, end, src, f"the length of {message} field {field}")
            if pos + n > end:
                raise src.error(f"is truncated or corrupt: {message} field {field} at byte {start} "
                                f"needs {n} bytes but only {end - pos} remain")
            value = (pos, pos + n)
            pos += n
        else:
            raise src.error(f"is corrupt: unexpected protobuf wire type {wt} (field {field}) in a "
                            f"{message} at byte {start}")
        yield field, wt, value, start


def _parse_ckpt(mv, src: _Source) -> list:
    """[(tag, dims, tensor_type, [content memoryviews])] of a .ckpt, consecutive slices merged."""
    records, seen = [], set()
    for field, wt, span, at in _fields(mv, 0, len(mv), src, "Checkpoint"):
        if (field, wt) != (1, 2):
            raise src.error(f"is corrupt: unexpected field {field} at byte {at} of the Checkpoint "
                            "message (a MindSpore .ckpt holds only Checkpoint.value records)")
        tag = tensor = None
        for f2, w2, v2, at2 in _fields(mv, *span, src, "Checkpoint.Value"):
            if f2 == 1 and w2 == 2 and tag is None:
                try:
                    tag = bytes(mv[v2[0]:v2[1]]).decode("utf-8")
                except UnicodeDecodeError:
                    raise src.error(f"is corrupt: the name at byte {at2} is not UTF-8") from None
            elif f2 == 2 and w2 == 2 and tensor is None:
                tensor = v2
            elif f2 == 3 and w2 == 2:
                raise src.error(f"holds a MapParameter entry (at byte {at2}), which cellkit does "
                                "not support")
            else:
                raise src.error(f"is corrupt: unexpected or repeated field {f2} at byte {at2} of a "
                                "Checkpoint.Value")
        if not tag or tensor is None:
            raise src.error(f"is corrupt: the record at byte {at} has no "
                            f"{'name' if not tag else 'tensor'}")
        dims, ttype, content = [], None, None
        for f3, w3, v3, at3 in _fields(mv, *tensor, src, "TensorProto"):
            if f3 == 1 and w3 == 0:
                dims.append(v3)
            elif f3 == 1 and w3 == 2:  # packed dims
                p = v3[0]
                while p < v3[1]:
                    d, p = _read_varint(mv, p, v3[1], src, "a packed dim")
                    dims.append(d)
            elif f3 == 2 and w3 == 2 and ttype is None:
                try:
                    ttype = bytes(mv[v3[0]:v3[1]]).decode("ascii")
                except UnicodeDecodeError:
                    raise src.error(f"is corrupt: the tensor_type of '{tag}' is not text") from None
            elif f3 == 3 and w3 == 2 and content is None:
                content = mv[v3[0]:v3[1]]
            else:
                raise src.error(f"is corrupt: unexpected or repeated field {f3} at byte {at3} in the "
                                f"tensor of '{tag}'")
        if ttype is None:
            raise src.error(f"is corrupt: the tensor of '{tag}' (record at byte {at}) has no tensor_type")
        if any(d >= 2**63 for d in dims):
            raise src.error(f"is corrupt: '{tag}' has a negative dimension")
        content = content if content is not None else mv[0:0]
        last = records[-1] if records else None
        if last is not None and last[0] == tag:  # one slice of a large tensor
            if last[1] != dims or last[2] != ttype:
                raise src.error(f"is corrupt: the slices of '{tag}' disagree on shape or type")
            last[3].append(content)
            continue
        if tag in seen:
            raise src.error(f"is corrupt: the entry '{tag}' appears twice")
        seen.add(tag)
        records.append((tag, dims, ttype, [content]))
    return records


def _decode_ckpt(tag, dims, ttype, chunks, src: _Source):
    content = chunks[0] if len(chunks) == 1 else memoryview(b"".join(chunks))
    if ttype == "str":
        if len(content) % 4:
            raise src.error(f"is corrupt: the string entry '{tag}' has {len(content)} bytes, "
                            "not a multiple of 4 (UTF-32)")
        if not content:
            return ""
        try:
            return str(np.frombuffer(content, f"<U{len(content) // 4}")[0])
        except ValueError:
            raise src.error(f"is corrupt: the string entry '{tag}' is not valid UTF-32") from None
    d = _BY_MS.get(ttype)
    if d is None:
        if ttype in _UNSUPPORTED:
            raise src.error(f"has entry '{tag}' of type {_UNSUPPORTED[ttype]}, which cellkit cannot "
                            "represent")
        raise src.error(f"has entry '{tag}' with tensor_type '{ttype}', which cellkit does not "
                        f"know (known: {', '.join(_BY_MS)}, str)")
    shape = tuple(dims)
    size = d.np.itemsize
    if shape == (0,) and len(content) == size:
        shape = ()  # MindSpore reads dims [0] as a scalar
    if len(content) != math.prod(shape) * size:
        raise src.error(f"is corrupt: entry '{tag}' ({ttype}, shape {shape}) should have "
                        f"{math.prod(shape) * size} bytes of data but has {len(content)}")
    return np.frombuffer(content, d.np).reshape(shape)


def _read_ckpt(src: _Source, head: bytes, crc_check: bool, keep) -> list:
    data = head + src.read(-1)
    mv = memoryview(data)
    if len(data) >= 17 and data[-17:-10] == b"crc_num":
        stored = int.from_bytes(data[-10:], "big")
        mv = mv[:-17]
        computed = zlib.crc32(mv)
        if stored != computed:
            raise src.error(f"is corrupt: its CRC trailer does not match (stored {stored}, "
                            f"computed {computed})")
    elif crc_check:
        warnings.warn(f"load_checkpoint: '{src.label}' has no CRC trailer to verify", stacklevel=3)
    records = _parse_ckpt(mv, src)
    return [(tag, _decode_ckpt(tag, dims, ttype, chunks, src), None)
            for tag, dims, ttype, chunks in records if keep(tag)]


# ----------------------------------------------------------------- common


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
        kind = _sniff(head)
        if kind == "safetensors":
            records = [r for r in _read_safetensors(src, head, crc_check) if keep(r[0])]
        elif kind == "ckpt":
            records = _read_ckpt(src, head, crc_check, keep)
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


# ============================================================================ loading into a net


def _loadable(key, value):
    if isinstance(value, Parameter):
        return value.value
    if isinstance(value, (jax.Array, np.ndarray, np.generic)):
        return value
    raise TypeError(f"load_param_into_net: parameter_dict['{key}'] must be a Parameter, a Tensor "
                    f"or a NumPy array (or a str, which is skipped), got {type(value).__name__}")


def _plan(param: Parameter, key: str, value, strict: bool):
    """The array to store in ``param`` from ``value``, or the reason it cannot be stored."""
    name = param.name
    src = f"'{key}' in parameter_dict" if key != name else "parameter_dict"
    want_shape = param.shape
    try:
        want = np.dtype(param.dtype)
    except TypeError:
        return None, f"'{name}' has dtype {param.dtype}, which cannot be loaded from a checkpoint"
    shape, got = tuple(np.shape(value)), np.dtype(value.dtype)
    if shape != want_shape:
        k = len(want_shape)
        if len(shape) > k and shape[:k] == want_shape and all(s == 1 for s in shape[k:]):
            value = value.reshape(want_shape)  # MindSpore drops trailing 1-dims silently
        else:
            return None, (f"'{name}' has shape {want_shape} in the net but shape {shape} in {src}")
    xp = np if isinstance(value, (np.ndarray, np.generic)) else jnp
    if got != want:
        if strict:
            return None, (f"'{name}' has dtype {_dtype_name(want)} in the net but {_dtype_name(got)} "
                          f"in {src}; strict_load=True does not convert dtypes")
        if {got, want} <= _FLOATS:
            with np.errstate(over="ignore", invalid="ignore"):
                cast = xp.asarray(value).astype(want)
                lost = bool(xp.any(xp.isfinite(value) & ~xp.isfinite(cast)))
            if lost:
                return None, (f"'{name}': values in {src} ({_dtype_name(got)}) overflow the net's "
                              f"{_dtype_name(want)}")
            value = cast
        elif {got, want} <= _INTS:
            info = np.iinfo(want)
            if np.size(value) and (int(xp.min(value)) < info.min or int(xp.max(value)) > info.max):
                return None, (f"'{name}': values in {src} ({_dtype_name(got)}) do not fit the net's "
                              f"{_dtype_name(want)}")
            value = xp.asarray(value).astype(want)
        else:
            return None, (f"'{name}' has dtype {_dtype_name(want)} in the net but {_dtype_name(got)} "
                          f"in {src}, and MindSpore converts only float to float and int to int")
    new = jnp.array(value) if xp is np else value
    old = param._value  # None while the Parameter is lazy: never make a value only to replace it
    if isinstance(old, jax.Array) and (old.committed or len(old.sharding.device_set) > 1):
        new = jax.device_put(new, old.sharding)
    return new, None


def load_param_into_net(net, parameter_dict, strict_load=False, remove_redundancy=False):
    """Load ``parameter_dict`` into ``net``'s Parameters (by name); return what was not loaded.

    Returns ``(param_not_load, ckpt_not_load)``: the names of the net's
    Parameters that got no value, and the keys of ``parameter_dict`` that
    were not used, as MindSpore 2.10 returns them.

    Everything is checked before anything is assigned, so when this raises,
    the net is unchanged. Rules (MindSpore's unless said):

    * shapes must match (a value whose shape is the Parameter's plus
      trailing 1-dims is reshaped);
    * with ``strict_load=False`` dtypes are converted float to float and int
      to int; a conversion that overflows (a value out of the target's
      range) is refused. Any other dtype difference is refused;
    * with ``strict_load=False``, Parameters missing from the dict are also
      looked up under a common prefix (``backbone.fc.weight`` for
      ``fc.weight``); those keys still appear in ``ckpt_not_load``, and the
      Parameters still missing are warned about;
    * with ``strict_load=True`` no dtype is converted, no prefix is tried,
      and a missing Parameter is an error (MindSpore only warns);
    * ``str`` values (from ``append_dict``) are never loaded;
    * ``requires_grad`` of the net's Parameters is left as it is.

    Raises:
        RuntimeError: listing every Parameter that cannot be loaded (shape,
            dtype, or missing with ``strict_load``); the net is unchanged.
        TypeError: ``net`` is not a Cell or ``parameter_dict`` not a dict of
            str -> Parameter/Tensor/str.

    >>> import numpy as np
    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> net = nn.Dense(2, 2)
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")      # 'bias' is not in the dict: a warning
    ...     ms.load_param_into_net(net, {"weight": ms.Parameter(np.eye(2, dtype=np.float16)),
    ...                                  "step": ms.Tensor(3)})
    (['bias'], ['step'])
    >>> net.weight.dtype, net.weight.asnumpy()[0]
    (Float32, array([1., 0.], dtype=float32))
    >>> try:
    ...     ms.load_param_into_net(net, {"weight": ms.Tensor(np.ones((3, 2))), "bias": ms.Tensor(np.ones(2))})
    ... except RuntimeError as e:
    ...     print(str(e).splitlines()[1])
      'weight' has shape (2, 2) in the net but shape (3, 2) in parameter_dict
    """
    if not isinstance(net, Cell):
        raise TypeError(f"load_param_into_net: net must be a Cell, got {type(net).__name__}")
    if not isinstance(parameter_dict, dict):
        raise TypeError(f"load_param_into_net: parameter_dict must be a dict, "
                        f"got {type(parameter_dict).__name__}")
    if remove_redundancy:
        raise NotImplementedError("load_param_into_net: remove_redundancy=True is not supported")
    _not_traced("load_param_into_net")
    strict = bool(strict_load)
    values = {}
    for key, value in parameter_dict.items():
        if not isinstance(key, str):
            raise TypeError(f"load_param_into_net: parameter_dict keys must be str, got {key!r}")
        if not isinstance(value, str):
            values[key] = _loadable(key, value)

    params = net.parameters_dict()  # raises if two different Parameters share a name
    plan, problems, param_not_load, used = [], [], [], set()

    def take(param, key):
        new, problem = _plan(param, key, values[key], strict)
        if problem is not None:
            problems.append(problem)
        else:
            plan.append((param, new))

    for name, param in params.items():
        if name in values:
            take(param, name)
            used.add(name)
        else:
            param_not_load.append(name)

    if param_not_load and not strict:
        # MindSpore's fallback: a key that ends with a missing name gives a prefix;
        # every missing Parameter found under that prefix is loaded. Repeat.
        while param_not_load:
            prefix = next((key[:-len(name)] for name in param_not_load for key in values
                           if key != name and key.endswith(name)), None)
            if prefix is None:
                break
            found = [name for name in param_not_load if prefix + name in values]
            for name in found:
                take(params[name], prefix + name)
            param_not_load = [name for name in param_not_load if name not in found]

    if strict and param_not_load:
        problems.append(f"{', '.join(repr(n) for n in param_not_load)} "
                        f"{'is' if len(param_not_load) == 1 else 'are'} not in parameter_dict "
                        "(strict_load=True)")
    if problems:
        raise RuntimeError(f"load_param_into_net: cannot load into {net.cls_name}; nothing was "
                           "loaded:\n  " + "\n  ".join(problems))
    for param, new in plan:
        # Checked above, so these plain stores cannot fail half-way.
        param._value = new
        param._init = None
    if param_not_load:
        warnings.warn(f"load_param_into_net: {len(param_not_load)} Parameter(s) of {net.cls_name} "
                      f"were not in parameter_dict and keep their values: {param_not_load}",
                      stacklevel=2)
    ckpt_not_load = [key for key in parameter_dict if key not in used]
    return param_not_load, ckpt_not_load
