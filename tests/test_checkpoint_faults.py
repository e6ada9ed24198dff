import errno
import io
import json
import os
import pickle
import struct
import zlib

import numpy as np
import pytest

import cellkit as ms
from cellkit import checkpoint as ck
from cellkit.checkpoint import CheckpointError
from conftest import x64
from checkpoint_cases import REPO_FIXTURES, FORMATS, Net, snapshot, assert_same, save_reference

# ----------------------------------------------------------------------------- atomic writes and faults


class Faults:
    """Make the n-th call of an os function raise (count the calls when n is None)."""

    def __init__(self, monkeypatch, name, n=None, exc=None):
        self.calls, self.n, self.exc = 0, n, exc
        real = getattr(os, name)

        def wrapper(*args, **kwargs):
            self.calls += 1
            if self.n is not None and self.calls == self.n:
                raise self.exc
            return real(*args, **kwargs)

        monkeypatch.setattr(os, name, wrapper)


def count_writes(monkeypatch, tmp_path, fmt):
    with monkeypatch.context() as m:
        f = Faults(m, "write")
        save_reference(tmp_path, fmt, name=f"count.{fmt}")
        os.remove(tmp_path / f"count.{fmt}")
    return f.calls


@pytest.mark.parametrize("fmt", FORMATS)
def test_interrupted_write_leaves_the_old_file(tmp_path, monkeypatch, fmt):
    _, path = save_reference(tmp_path, fmt)
    old = path.read_bytes()
    ms.set_seed(9)
    new_net = Net()
    stages = [("open", 1), ("fsync", 1), ("replace", 1), ("lseek", 1)] if fmt == "safetensors" else \
        [("open", 1), ("fsync", 1), ("replace", 1)]
    stages += [("write", n) for n in range(1, count_writes(monkeypatch, tmp_path, fmt) + 1)]
    for name, n in stages:
        for exc in (OSError(errno.EIO, "I/O error"), KeyboardInterrupt()):
            with monkeypatch.context() as m:
                Faults(m, name, n, exc)
                with pytest.raises(type(exc)) as info:
                    ms.save_checkpoint(new_net, str(path), format=fmt)
            if isinstance(exc, OSError):
                assert str(path) in str(info.value) and "unchanged" in str(info.value)
            assert path.read_bytes() == old, (name, n)
            assert os.listdir(tmp_path) == [path.name], (name, n)
    ms.save_checkpoint(new_net, str(path), format=fmt)
    assert path.read_bytes() != old


def test_full_disk_gives_a_clear_error(tmp_path, monkeypatch):
    _, path = save_reference(tmp_path)
    old = path.read_bytes()
    Faults(monkeypatch, "write", 3, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
    with pytest.raises(OSError, match="no space left on device") as info:
        ms.save_checkpoint(Net(), str(path))
    assert info.value.errno == errno.ENOSPC and str(path) in str(info.value)
    assert path.read_bytes() == old and os.listdir(tmp_path) == [path.name]


def test_failed_first_save_leaves_nothing(tmp_path, monkeypatch):
    Faults(monkeypatch, "fsync", 1, OSError(errno.EIO, "I/O error"))
    with pytest.raises(OSError):
        ms.save_checkpoint(Net(), str(tmp_path / "new.safetensors"))
    assert os.listdir(tmp_path) == []


def test_write_goes_through_fsync_then_replace(tmp_path, monkeypatch):
    order = []
    for name in ("fsync", "replace"):
        real = getattr(os, name)
        monkeypatch.setattr(os, name, lambda *a, _r=real, _n=name: (order.append(_n), _r(*a))[1])
    ms.save_checkpoint(Net(), str(tmp_path / "m"))
    assert order[:2] == ["fsync", "replace"]


# ----------------------------------------------------------------------------- corrupt files


def small_file(tmp_path, fmt="safetensors", **kw):
    data = {"w": ms.Parameter(ms.Tensor(np.arange(6.).reshape(2, 3), ms.float32), name="w"),
            "b": ms.Parameter(ms.Tensor([1, 2], ms.int32), name="b", requires_grad=False)}
    path = tmp_path / f"small.{fmt}"
    ms.save_checkpoint(data, str(path), format=fmt, **kw)
    return path, path.read_bytes()


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.ckpt' does not exist"):
        ms.load_checkpoint(str(tmp_path / "nope.ckpt"))
    with pytest.raises(IsADirectoryError, match="is a directory"):
        ms.load_checkpoint(str(tmp_path))
    with pytest.raises(TypeError, match="ckpt_file_name"):
        ms.load_checkpoint(3)


def test_every_truncation_of_a_cellkit_file_is_detected(tmp_path):
    path, raw = small_file(tmp_path)
    for n in range(len(raw)):
        path.write_bytes(raw[:n])
        with pytest.raises(CheckpointError, match=str(path)) as info:
            ms.load_checkpoint(str(path))
        assert n == 0 or "truncated" in str(info.value) or "corrupt" in str(info.value), n


def test_every_truncation_of_a_ckpt_with_crc_is_detected(tmp_path):
    path, raw = small_file(tmp_path, "ckpt", crc_check=True)
    ends = set(record_ends(raw[:-17]))
    for n in range(len(raw)):
        path.write_bytes(raw[:n])
        if n in ends:
            # Cut between records (or just before the trailer) a .ckpt is well-formed:
            # the format cannot tell (MindSpore's CRC trailer is optional).
            assert list(ms.load_checkpoint(str(path))) == ["w", "b"][:sorted(ends).index(n) + 1]
            continue
        with pytest.raises(CheckpointError, match=str(path)):
            ms.load_checkpoint(str(path))


def record_ends(raw):
    """Byte offsets where the top-level records of a .ckpt end."""
    ends, pos = [], 0
    while pos < len(raw):
        n, p = 0, pos + 1
        shift = 0
        while True:
            b = raw[p]
            p += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        pos = p + n
        ends.append(pos)
    return ends


def test_truncated_mindspore_ckpt_is_detected_inside_records(tmp_path):
    raw = (REPO_FIXTURES / "lenetlike.ckpt").read_bytes()
    ends = set(record_ends(raw))
    assert max(ends) == len(raw)
    for n in range(1, len(raw)):
        if n in ends:
            # Without a CRC trailer a .ckpt cut between records is well-formed: nothing to detect.
            assert len(ms.load_checkpoint(io.BytesIO(raw[:n]))) < 8
            continue
        with pytest.raises(CheckpointError, match="truncated"):
            ms.load_checkpoint(io.BytesIO(raw[:n]))


def test_every_flipped_byte_of_a_cellkit_file_is_detected(tmp_path):
    path, raw = small_file(tmp_path)
    for i in range(len(raw)):
        for mask in (0x01, 0xFF):
            bad = bytearray(raw)
            bad[i] ^= mask
            path.write_bytes(bytes(bad))
            with pytest.raises(CheckpointError, match=str(path)):
                ms.load_checkpoint(str(path))


def test_every_flipped_byte_of_a_ckpt_with_crc_is_detected(tmp_path):
    for raw in (small_file(tmp_path, "ckpt", crc_check=True)[1], (REPO_FIXTURES / "dtypes.ckpt").read_bytes()):
        for i in range(len(raw)):
            bad = bytearray(raw)
            bad[i] ^= 0x01
            with pytest.raises(CheckpointError):
                ms.load_checkpoint(io.BytesIO(bytes(bad)))


def test_flipped_header_byte_names_the_problem(tmp_path):
    path, raw = small_file(tmp_path)
    i = raw.index(b'"w"') + 1  # the tensor name: still valid JSON, caught by the checksum
    bad = bytearray(raw)
    bad[i] ^= 0x02
    path.write_bytes(bytes(bad))
    with pytest.raises(CheckpointError, match="checksum does not match"):
        ms.load_checkpoint(str(path))
    bad = bytearray(raw)
    bad[raw.index(b'"shape":') + len('"shape"')] = ord(";")
    path.write_bytes(bytes(bad))
    with pytest.raises(CheckpointError, match="not valid JSON"):
        ms.load_checkpoint(str(path))
    bad = bytearray(raw)
    bad[5] = 0x40  # the header length field
    path.write_bytes(bytes(bad))
    with pytest.raises(CheckpointError, match="header length field"):
        ms.load_checkpoint(str(path))


def test_corrupt_file_loads_nothing_into_the_net(tmp_path):
    _, path = save_reference(tmp_path)
    raw = path.read_bytes()
    net = Net()
    before = snapshot(net)
    for bad in (raw[:-10], raw[:200], raw[:9] + b"\x00" + raw[10:], raw[:-1] + bytes([raw[-1] ^ 1])):
        path.write_bytes(bad)
        with pytest.raises(CheckpointError):
            ms.load_checkpoint(str(path), net=net)
        assert_same(snapshot(net), before)


def test_neither_format(tmp_path):
    cases = {"empty": (b"", "is empty"),
             "random": (bytes(range(200, 256)), "neither a safetensors file nor a MindSpore .ckpt"),
             "pickle": (pickle.dumps({"w": [1.0]}), "pickle"),
             "zip": (b"PK\x03\x04" + bytes(40), "zip archive"),
             "text": (b"hello world, not a checkpoint", "neither")}
    for name, (raw, msg) in cases.items():
        (tmp_path / name).write_bytes(raw)
        with pytest.raises(CheckpointError, match=msg) as info:
            ms.load_checkpoint(str(tmp_path / name))
        assert str(tmp_path / name) in str(info.value)


def varint(n):
    return ck._varint(n)


def ckpt_record(tag, dims, ttype, content, packed=False):
    t = ttype.encode()
    if packed:
        body = b"".join(varint(d) for d in dims)
        tensor = (b"\x0a" + varint(len(body)) + body) if dims else b""
    else:
        tensor = b"".join(b"\x08" + varint(d) for d in dims)
    tensor += b"\x12" + varint(len(t)) + t + b"\x1a" + varint(len(content)) + content
    tag = tag.encode()
    value = b"\x0a" + varint(len(tag)) + tag + b"\x12" + varint(len(tensor)) + tensor
    return b"\x0a" + varint(len(value)) + value


def test_unknown_and_unsupported_ckpt_types():
    good = ckpt_record("ok", [2], "Float32", np.ones(2, np.float32).tobytes())
    for ttype, msg in (("Float99", "tensor_type 'Float99', which cellkit does not know"),
                       ("Int4", "Int4"), ("HiFloat8", "HiFloat8")):
        with pytest.raises(CheckpointError, match=msg):
            ms.load_checkpoint(io.BytesIO(good + ckpt_record("w", [2], ttype, bytes(2))))
    # a flipped letter of a type name in MindSpore's own file (which has no CRC)
    raw = bytearray((REPO_FIXTURES / "lenetlike.ckpt").read_bytes())
    raw[raw.index(b"Float32")] ^= 0x20
    with pytest.raises(CheckpointError, match="'conv1.weight' with tensor_type 'float32'"):
        ms.load_checkpoint(io.BytesIO(bytes(raw)))
    # MapParameter records (Checkpoint.Value.maptensor)
    value = b"\x0a\x01m" + b"\x1a\x00"
    with pytest.raises(CheckpointError, match="MapParameter"):
        ms.load_checkpoint(io.BytesIO(good + b"\x0a" + varint(len(value)) + value))


def test_ckpt_structure_errors():
    def load(raw):
        return ms.load_checkpoint(io.BytesIO(raw))

    with pytest.raises(CheckpointError, match="should have 8 bytes of data but has 4"):
        load(ckpt_record("w", [2], "Float32", bytes(4)))
    with pytest.raises(CheckpointError, match="appears twice"):
        load(ckpt_record("a", [1], "Int8", b"\x01") + ckpt_record("b", [1], "Int8", b"\x01")
             + ckpt_record("a", [1], "Int8", b"\x02"))
    with pytest.raises(CheckpointError, match="slices of 'a' disagree"):
        load(ckpt_record("a", [2], "Int8", b"\x01") + ckpt_record("a", [3], "Int8", b"\x02"))
    with pytest.raises(CheckpointError, match="unexpected field 2"):
        load(ckpt_record("a", [1], "Int8", b"\x01") + b"\x12\x00")


def test_ckpt_slices_packed_dims_and_scalars(tmp_path, monkeypatch):
    raw = (ckpt_record("big", [2, 3], "Int16", np.arange(3, dtype=np.int16).tobytes())
           + ckpt_record("big", [2, 3], "Int16", np.arange(3, 6, dtype=np.int16).tobytes())
           + ckpt_record("packed", [2, 2], "Float32", np.ones(4, np.float32).tobytes(), packed=True)
           + ckpt_record("s", [0], "Float32", np.float32(3).tobytes())
           + ckpt_record("e", [0], "Float32", b""))
    got = ms.load_checkpoint(io.BytesIO(raw))
    assert got["big"].asnumpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    assert got["packed"].shape == (2, 2)
    assert got["s"].shape == () and float(got["s"]) == 3.0
    assert got["e"].shape == (0,)

    monkeypatch.setattr(ck.ckpt_io, "_CKPT_SLICE_BYTES", 7)
    data = {"w": np.arange(10, dtype=np.float32), "tiny": np.int8(1), "empty": np.zeros((0, 2), np.float32)}
    ms.save_checkpoint(data, str(tmp_path / "sliced.ckpt"), format="ckpt", crc_check=True)
    assert (tmp_path / "sliced.ckpt").read_bytes().count(b"\x0a\x01w") == 6  # 40 bytes in slices of 7
    back = ms.load_checkpoint(tmp_path / "sliced.ckpt", crc_check=True)
    np.testing.assert_array_equal(back["w"].asnumpy(), data["w"])
    assert back["empty"].shape == (0, 2)


def test_unknown_safetensors_dtype_and_bad_headers(tmp_path):
    def write(header, data=b""):
        text = json.dumps(header).encode()
        return io.BytesIO(struct.pack("<Q", len(text)) + text + data)

    with pytest.raises(CheckpointError, match="tensor 'w' of dtype 'X9', which cellkit does not know"):
        ms.load_checkpoint(write({"w": {"dtype": "X9", "shape": [1], "data_offsets": [0, 1]}}, b"\x00"))
    with pytest.raises(CheckpointError, match="do not match its size"):
        ms.load_checkpoint(write({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, bytes(4)))
    with pytest.raises(CheckpointError, match="back to back"):
        ms.load_checkpoint(write({"w": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]}}, bytes(2)))
    with pytest.raises(CheckpointError, match="unexpected bytes"):
        ms.load_checkpoint(write({"w": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}, bytes(2)))
    with pytest.raises(CheckpointError, match="malformed"):
        ms.load_checkpoint(write({"w": {"dtype": "U8", "shape": [-1], "data_offsets": [0, 1]}}, bytes(1)))
    with pytest.raises(CheckpointError, match="Int4"):
        ms.load_checkpoint(write({"__metadata__": {"w": "Int4"},
                                  "w": {"dtype": "I8", "shape": [1], "data_offsets": [0, 1]}}, bytes(1)))
    text = b'{"w": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}, "w": {}}'
    with pytest.raises(CheckpointError, match="appears twice"):
        ms.load_checkpoint(io.BytesIO(struct.pack("<Q", len(text)) + text + b"\x00"))


def test_newer_format_version_is_refused(tmp_path):
    path, raw = small_file(tmp_path)
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    header["__metadata__"]["cellkit.version"] = "2"
    crc = zlib.crc32(raw[8 + n:], zlib.crc32(ck._canonical(header)))
    header["__metadata__"]["cellkit.crc32"] = "%08x" % crc
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + raw[8 + n:])
    with pytest.raises(CheckpointError, match="format version 2; this cellkit reads version 1"):
        ms.load_checkpoint(str(path))


def test_load_from_a_file_object(tmp_path):
    path, raw = small_file(tmp_path)
    got = ms.load_checkpoint(io.BytesIO(raw))
    assert list(got) == ["w", "b"] and got["b"].requires_grad is False
    with pytest.raises(CheckpointError, match="truncated"):
        ms.load_checkpoint(io.BytesIO(raw[:-1]))
    with pytest.raises(CheckpointError, match="unexpected bytes"):
        ms.load_checkpoint(io.BytesIO(raw + b"\x00"))


def test_unsupported_load_arguments(tmp_path):
    path, _ = small_file(tmp_path)
    with pytest.raises(NotImplementedError, match="encrypted"):
        ms.load_checkpoint(str(path), dec_key=b"0" * 16)
    with pytest.raises(NotImplementedError, match="remove_redundancy"):
        ms.load_checkpoint(str(path), remove_redundancy=True)
    with pytest.raises(TypeError, match="net must be a Cell"):
        ms.load_checkpoint(str(path), net={})
    assert list(ms.load_checkpoint(str(path), format="ckpt")) == ["w", "b"]  # format: the bytes decide


def test_empty_checkpoint(tmp_path):
    ms.save_checkpoint([], str(tmp_path / "none"))
    with pytest.raises(CheckpointError, match="holds no entries"):
        ms.load_checkpoint(str(tmp_path / "none.safetensors"))


@pytest.mark.skipif(x64(), reason="with x64 on, Int64 entries load as Int64")
def test_int64_out_of_int32_range_without_x64(tmp_path):
    ms.save_checkpoint({"big": np.array([1, 2**40], np.int64), "ok": np.array([1, -2], np.int64)},
                       str(tmp_path / "i64"))
    with pytest.raises(OverflowError, match="'big'.*do not fit Int32.*JAX_ENABLE_X64"):
        ms.load_checkpoint(str(tmp_path / "i64.safetensors"))
    got = ms.load_checkpoint(str(tmp_path / "i64.safetensors"), specify_prefix="ok")
    assert got["ok"].dtype == ms.int32 and got["ok"].asnumpy().tolist() == [1, -2]


@pytest.mark.skipif(not x64(), reason="needs JAX's 64-bit mode")
def test_int64_round_trips_with_x64(tmp_path):
    p = ms.Parameter(ms.Tensor(np.array([1, 2**40], np.int64)), name="big")
    ms.save_checkpoint([p], str(tmp_path / "i64"), format="ckpt")
    got = ms.load_checkpoint(str(tmp_path / "i64.ckpt"))["big"]
    assert got.dtype == ms.int64 and got.asnumpy().tolist() == [1, 2**40]
