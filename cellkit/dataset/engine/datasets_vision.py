"""Image datasets read from local files in their standard formats: MNIST, CIFAR-10 and CIFAR-100.

Nothing is downloaded: point ``dataset_dir`` at the files. MNIST is the four
IDX files (``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
``t10k-images-idx3-ubyte``, ``t10k-labels-idx1-ubyte``); CIFAR-10 the binary
version (``data_batch_1.bin`` ... ``data_batch_5.bin``, ``test_batch.bin``); CIFAR-100
its binary version (``train.bin``, ``test.bin``). Columns as MindSpore's: ``image``
(HWC, uint8) and ``label`` (uint32); CIFAR-100 ``image``, ``coarse_label``, ``fine_label``.
"""

from __future__ import annotations

import os

import numpy as np

from .datasets import VisionBaseDataset
from .sources import MappableDataset, _Slices

__all__ = ["MnistDataset", "Cifar10Dataset", "Cifar100Dataset"]

_USAGES = ("train", "test", "all")


def _usage(usage, what):
    """The parts to read, in MindSpore's order ("all" reads the test files first)."""
    usage = "all" if usage is None else usage
    if usage not in _USAGES:
        raise ValueError(f"{what}: usage must be one of {_USAGES} or None, got {usage!r}")
    return ("test", "train") if usage == "all" else (usage,)


def _read_idx(path, magic, what):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8 or int.from_bytes(data[:4], "big") != magic:
        raise ValueError(f"{what}: {path} is not an IDX file (magic number {magic} expected)")
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    body = np.frombuffer(data, np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(dims)):
        raise ValueError(f"{what}: {path} holds {body.size} bytes of data, its header says {dims}")
    return body.reshape(dims)


class _ImageFolderFiles(MappableDataset, VisionBaseDataset):
    def __init__(self, images, labels, num_samples, shuffle, num_shards, shard_id, sampler=None,
                 num_parallel_workers=None, names=("image", "label")):
        self._slices = _Slices([images, *labels] if isinstance(labels, tuple) else [images, labels])
        super().__init__(list(names), num_samples, shuffle, num_shards, shard_id, random_access=True,
                         num_parallel_workers=num_parallel_workers or 1, sampler=sampler)

    def _source(self):
        return self._slices

    def _len(self):
        return len(self._slices)


def _check_dir(dataset_dir, what):
    if not isinstance(dataset_dir, (str, os.PathLike)) or not os.path.isdir(dataset_dir):
        raise ValueError(f"{what}: dataset_dir {dataset_dir!r} is not a directory")


class MnistDataset(_ImageFolderFiles):
    """MNIST from its IDX files: ``image`` (28, 28, 1) uint8 and ``label`` uint32."""

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None, cache=None):
        _check_dir(dataset_dir, "MnistDataset")
        images, labels = [], []
        for part in _usage(usage, "MnistDataset"):
            prefix = "train" if part == "train" else "t10k"
            img = os.path.join(dataset_dir, f"{prefix}-images-idx3-ubyte")
            lab = os.path.join(dataset_dir, f"{prefix}-labels-idx1-ubyte")
            if not (os.path.exists(img) and os.path.exists(lab)):
                raise ValueError(f"MnistDataset: {img} and {lab} must both exist for usage {part!r}")
            x, y = _read_idx(img, 2051, "MnistDataset"), _read_idx(lab, 2049, "MnistDataset")
            if len(x) != len(y):
                raise ValueError(f"MnistDataset: {len(x)} images but {len(y)} labels in {dataset_dir}")
            images.append(x[..., None])
            labels.append(y.astype(np.uint32))
        super().__init__(np.concatenate(images), np.concatenate(labels), num_samples, shuffle, num_shards, shard_id,
                         sampler, num_parallel_workers)


class Cifar10Dataset(_ImageFolderFiles):
    """CIFAR-10 from its binary batches: ``image`` (32, 32, 3) uint8 and ``label`` uint32."""

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None, cache=None):
        _check_dir(dataset_dir, "Cifar10Dataset")
        images, labels = [], []
        for part in _usage(usage, "Cifar10Dataset"):
            names = [f"data_batch_{i}.bin" for i in range(1, 6)] if part == "train" else ["test_batch.bin"]
            paths = [os.path.join(dataset_dir, n) for n in names if os.path.exists(os.path.join(dataset_dir, n))]
            if not paths:
                raise ValueError(f"Cifar10Dataset: no {' or '.join(names)} in {dataset_dir} for usage {part!r}")
            for path in paths:
                raw = _cifar_records(path, 3073, "Cifar10Dataset")
                labels.append(raw[:, 0].astype(np.uint32))
                images.append(raw[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
        super().__init__(np.concatenate(images), np.concatenate(labels), num_samples, shuffle, num_shards, shard_id,
                         sampler, num_parallel_workers)


def _cifar_records(path, size, what):
    raw = np.fromfile(path, np.uint8)
    if raw.size % size:
        raise ValueError(f"{what}: {path} is not a binary batch of records of {size} bytes")
    return raw.reshape(-1, size)


class Cifar100Dataset(_ImageFolderFiles):
    """CIFAR-100 from ``train.bin``/``test.bin``: ``image`` (32, 32, 3) uint8, ``coarse_label`` and ``fine_label`` uint32."""

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None, cache=None):
        _check_dir(dataset_dir, "Cifar100Dataset")
        records = []
        for part in _usage(usage, "Cifar100Dataset"):
            path = os.path.join(dataset_dir, f"{part}.bin")
            if not os.path.exists(path):
                raise ValueError(f"Cifar100Dataset: no {part}.bin in {dataset_dir} for usage {part!r}")
            records.append(_cifar_records(path, 3074, "Cifar100Dataset"))
        raw = np.concatenate(records)
        images = raw[:, 2:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        super().__init__(images, (raw[:, 0].astype(np.uint32), raw[:, 1].astype(np.uint32)), num_samples, shuffle,
                         num_shards, shard_id, sampler, num_parallel_workers,
                         names=("image", "coarse_label", "fine_label"))
