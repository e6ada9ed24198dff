"""MindSpore's protobuf ``.ckpt`` files, written and parsed directly.

The wire format is three small messages (``Checkpoint`` of ``Checkpoint.Value``
records, each a name and a ``TensorProto``), with an optional CRC trailer;
there is no protobuf dependency.
"""

from __future__ import annotations

import math
import warnings
import zlib

import numpy as np

from .atomic import _Sink
from .common import _BY_MS, _BY_NP, _UNSUPPORTED, _raw
from .source import _Source

__all__ = ["write_ckpt", "read_ckpt"]

# MindSpore splits a .ckpt entry larger than this into consecutive records with
# the same tag (SLICE_SIZE in mindspore/train/serialization.py).
_CKPT_SLICE_BYTES = 512 * 1024 * 1024


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


def write_ckpt(sink: _Sink, entries, crc_check: bool) -> None:
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


def read_ckpt(src: _Source, head: bytes, crc_check: bool, keep) -> list:
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
