"""Atomic file writing: a temporary file next to the target, ``fsync``, ``os.replace``.

If anything fails (a full disk, an interrupt, a bad value) the previous file is
left as it was and the temporary file is removed.
"""

from __future__ import annotations

import errno
import os
import secrets
import zlib

__all__ = ["atomic_write"]

# The most bytes handed to one os.write call (some systems cap a write at 2 GiB).
_WRITE_CHUNK = 1 << 26


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


def atomic_write(path: str, body) -> None:
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
