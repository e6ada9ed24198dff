"""Datasets read from a folder of files: ``ImageFolderDataset`` and (not provided) ``MindDataset``.

``ImageFolderDataset`` reads ``dataset_dir/<class>/<file>``: the class folders in
sorted order are the labels 0, 1, ... (or ``class_indexing``), the files of each
folder in sorted order are its rows, read when the row is. Columns as MindSpore's:
``image`` (the file's bytes as uint8, or with ``decode=True`` an RGB HWC uint8 image
decoded with Pillow) and ``label`` (int32).

>>> import os, tempfile
>>> import cellkit.dataset as ds
>>> root = tempfile.mkdtemp()
>>> for cls, name in [("cat", "a.txt"), ("dog", "b.txt"), ("dog", "c.txt")]:
...     os.makedirs(os.path.join(root, cls), exist_ok=True)
...     _ = open(os.path.join(root, cls, name), "w").write(name)
>>> data = ds.ImageFolderDataset(root, shuffle=False)
>>> [(r[0].tobytes(), int(r[1])) for r in data.create_tuple_iterator(output_numpy=True)]
[(b'a.txt', 0), (b'b.txt', 1), (b'c.txt', 1)]
>>> data.get_class_indexing()
{'cat': 0, 'dog': 1}
"""

from __future__ import annotations

import io
import os

import numpy as np

from .datasets import VisionBaseDataset
from .sources import MappableDataset

__all__ = ["ImageFolderDataset", "MindDataset"]


def decode_image(raw, what="Decode"):
    """Encoded image bytes (JPEG, PNG, BMP, ...) as an RGB HWC uint8 array, with Pillow."""
    try:
        from PIL import Image
    except ImportError as e:  # pragma: no cover - Pillow comes with matplotlib
        raise ImportError(f"{what} needs Pillow to decode images: python -m pip install pillow") from e
    raw = raw.tobytes() if isinstance(raw, np.ndarray) else bytes(raw)
    try:
        image = Image.open(io.BytesIO(raw))
        return np.asarray(image.convert("RGB"))
    except Exception as e:  # noqa: BLE001 - Pillow raises several types
        raise RuntimeError(f"{what}: the data is not an image Pillow can read ({e})") from None


class _Files:
    """Row ``i``: the bytes of file ``i`` (decoded when asked) and its label (a picklable source)."""

    def __init__(self, paths, labels, decode):
        self.paths, self.labels, self.decode = paths, labels, decode

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with open(self.paths[i], "rb") as f:
            raw = f.read()
        image = decode_image(raw, "ImageFolderDataset") if self.decode else np.frombuffer(raw, np.uint8)
        return image, np.int32(self.labels[i])


class ImageFolderDataset(MappableDataset, VisionBaseDataset):
    """Images in class folders: ``dataset_dir/<class name>/<image file>``."""

    def __init__(self, dataset_dir, num_samples=None, num_parallel_workers=None, shuffle=None, sampler=None,
                 extensions=None, class_indexing=None, decode=False, num_shards=None, shard_id=None, cache=None,
                 decrypt=None):
        if not isinstance(dataset_dir, (str, os.PathLike)) or not os.path.isdir(dataset_dir):
            raise ValueError(f"ImageFolderDataset: the folder {dataset_dir!r} does not exist or is not a directory")
        if extensions is not None and (not isinstance(extensions, list) or not all(isinstance(e, str) for e in extensions)):
            raise TypeError(f"ImageFolderDataset: extensions must be a list of str (such as ['.png']), got {extensions!r}")
        if class_indexing is not None and (not isinstance(class_indexing, dict) or not all(
                isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in class_indexing.items())):
            raise TypeError(f"ImageFolderDataset: class_indexing must be a dict of str to int, got {class_indexing!r}")
        if not isinstance(decode, bool):
            raise TypeError(f"ImageFolderDataset: decode must be a bool, got {type(decode).__name__}")
        if decrypt is not None:
            raise NotImplementedError("ImageFolderDataset: decrypt is not supported; decrypt the files first")
        folders = sorted(e.name for e in os.scandir(dataset_dir) if e.is_dir())
        if class_indexing is None:
            self._class_indexing = {name: i for i, name in enumerate(folders)}
        else:
            missing = [c for c in class_indexing if c not in folders]
            if missing:
                raise ValueError(f"ImageFolderDataset: class_indexing names {missing[0]!r}, which is not a folder "
                                 f"of {dataset_dir}")
            self._class_indexing = dict(class_indexing)
        paths, labels = [], []
        for name in folders:
            if name not in self._class_indexing:
                continue
            folder = os.path.join(dataset_dir, name)
            for f in sorted(e.name for e in os.scandir(folder) if e.is_file()):
                if extensions is None or any(f.endswith(x) for x in extensions):
                    paths.append(os.path.join(folder, f))
                    labels.append(self._class_indexing[name])
        self._files = _Files(paths, labels, decode)
        super().__init__(["image", "label"], num_samples, shuffle, num_shards, shard_id, True,
                         num_parallel_workers or 1, sampler)

    def get_class_indexing(self):
        """The label of each class folder."""
        return dict(self._class_indexing)

    def _source(self):
        return self._files

    def _len(self):
        return len(self._files)


class MindDataset(MappableDataset):
    """MindRecord files: not readable here."""

    def __init__(self, dataset_files, columns_list=None, num_parallel_workers=None, shuffle=None, num_shards=None,
                 shard_id=None, sampler=None, padded_sample=None, num_padded=None, num_samples=None, cache=None):
        raise NotImplementedError(
            "MindDataset: the MindRecord format is not supported; convert the records to NumPy arrays or image "
            "files and read them with NumpySlicesDataset, GeneratorDataset or ImageFolderDataset (see "
            "docs/differences.md)")
