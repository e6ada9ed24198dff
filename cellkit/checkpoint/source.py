"""Reading side: the file being read (:class:`_Source`) and which format its first bytes say it is."""

from __future__ import annotations

import errno
import os
import struct

import numpy as np

from .common import _MAX_HEADER_BYTES, CheckpointError

__all__ = ["sniff"]

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


def sniff(head: bytes) -> str | None:
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
