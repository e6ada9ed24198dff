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

Modules: ``common`` (dtype table, :class:`CheckpointError`), ``atomic``
(atomic file writing), ``source`` (the file being read, format sniffing),
``safetensors_io`` and ``ckpt_io`` (the two formats, both directions),
``save``, ``load`` and ``into_net`` (the three functions).

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

from .common import FORMAT_VERSION, CheckpointError
from .into_net import load_param_into_net
from .load import load_checkpoint
from .save import save_checkpoint
from .convert import async_ckpt_thread_status, ckpt_to_safetensors, load_checkpoint_async, safetensors_to_ckpt
# Internals the tests check the format with.
from .common import _BY_MS  # noqa: F401
from .ckpt_io import _varint  # noqa: F401
from .safetensors_io import _canonical  # noqa: F401

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net", "CheckpointError",
           "FORMAT_VERSION", "ckpt_to_safetensors", "safetensors_to_ckpt", "load_checkpoint_async",
           "async_ckpt_thread_status"]
