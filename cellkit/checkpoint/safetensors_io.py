"""safetensors files: cellkit's layout (see ``cellkit.checkpoint``) written, any safetensors file read and verified."""

from __future__ import annotations

import json
import math
import struct
import warnings
import zlib

import numpy as np

from .atomic import _Sink
from .common import (_BY_NP, _BY_ST, _CRC_KEY, _CRC_PLACEHOLDER, _MAX_HEADER_BYTES, _UNSUPPORTED,
                     FORMAT_VERSION, _raw)
from .source import _Source

__all__ = ["write_safetensors", "read_safetensors"]

def _canonical(header: dict) -> bytes:
    """The header as canonical JSON without the CRC (what the CRC covers first)."""
    meta = {k: v for k, v in header.get("__metadata__", {}).items() if k != _CRC_KEY}
    body = {k: v for k, v in header.items() if k != "__metadata__"}
    body["__metadata__"] = meta
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode("ascii")


def write_safetensors(sink: _Sink, entries) -> None:
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


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"the key '{k}' appears twice")
        out[k] = v
    return out


def _is_index(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def read_safetensors(src: _Source, head: bytes, crc_check: bool) -> list:
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
