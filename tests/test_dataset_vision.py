"""Image datasets and vision transforms against MindSpore 2.10 (tests/fixtures/record/record_dataset_vision.py)."""

import builtins

import numpy as np
import pytest

import cellkit.dataset as ds
import cellkit.dataset.vision as V
from ms_fixtures import ROOT, load

CASES = load("dataset_vision")
FOLDER = str(ROOT / "dataset_files" / "image_folder")

FOLDER_CASES = {
    "raw": dict(extensions=[".png", ".bmp", ".jpg", ".PNG", ".txt"]),
    "png_only": dict(extensions=[".png"]),
    "upper_and_jpg": dict(extensions=[".PNG", ".jpg"]),
    "decode": dict(decode=True, extensions=[".png", ".bmp", ".PNG"]),
    "decode_jpeg": dict(decode=True, extensions=[".jpg"]),
    "class_indexing": dict(class_indexing={"dog": 5, "cat": 0}, extensions=[".png", ".bmp"]),
    "class_indexing_all": dict(class_indexing={"dog": 5, "cat": 0, "ant": 2, "bee": 1}, extensions=[".png", ".txt"]),
    "num_samples": dict(num_samples=2, extensions=[".png", ".bmp", ".txt"]),
    "shard": dict(num_shards=2, shard_id=1, extensions=[".png", ".bmp", ".jpg", ".PNG", ".txt"]),
    "sampler": dict(sampler=ds.SubsetSampler([3, 0]), extensions=[".png", ".bmp", ".txt"]),
}


def rows(d):
    return [tuple(r) for r in d.create_tuple_iterator(output_numpy=True)]


@pytest.mark.parametrize("name", sorted(FOLDER_CASES))
def test_image_folder_reads_mindspores_rows(name):
    want = CASES[f"folder/{name}"]
    kw = dict(FOLDER_CASES[name])
    if "sampler" not in kw:
        kw["shuffle"] = False
    d = ds.ImageFolderDataset(FOLDER, **kw)
    assert d.get_col_names() == want["columns"] and d.get_dataset_size() == want["size"]
    assert d.get_class_indexing() == want["class_indexing"]
    got = rows(d)
    assert len(got) == len(want["output"])
    for (img, label), (wimg, wlabel) in zip(got, want["output"]):
        assert img.dtype == wimg.dtype and img.shape == wimg.shape and label.dtype == wlabel.dtype
        assert label == wlabel
        np.testing.assert_array_equal(img, wimg)


@pytest.mark.parametrize("name", ["extensions_str", "missing_dir", "decode_int"])
def test_image_folder_refuses_as_mindspore(name):
    args = {"extensions_str": dict(extensions=".png"), "missing_dir": dict(), "decode_int": dict(decode=1)}[name]
    path = FOLDER + "/nope" if name == "missing_dir" else FOLDER
    with pytest.raises(getattr(builtins, CASES[f"folder/{name}"]["error"])):
        ds.ImageFolderDataset(path, **args)


def test_image_folder_raw_bytes_decode_in_a_map_and_shuffle_is_seeded():
    d = ds.ImageFolderDataset(FOLDER, extensions=[".png"], shuffle=False).map(V.Decode(), input_columns="image")
    assert [r[0].shape for r in rows(d)] == [(3, 4, 3), (3, 4, 3)]
    with pytest.raises(RuntimeError, match="not an image"):
        rows(ds.ImageFolderDataset(FOLDER, extensions=[".txt"]).map(V.Decode(), input_columns="image"))

    def order(seed):
        ds.config.set_seed(seed)
        return [r[0].tobytes() for r in rows(ds.ImageFolderDataset(FOLDER, extensions=[".png", ".bmp", ".jpg"]))]
    assert order(4) == order(4) and sorted(order(4)) == sorted(order(5))
    with pytest.raises(ValueError, match="class_indexing names 'owl'"):
        ds.ImageFolderDataset(FOLDER, class_indexing={"owl": 0})


def test_class_hierarchy_of_image_datasets():
    for cls in ("ImageFolderDataset", "Cifar100Dataset"):
        want = CASES[f"{'folder' if cls == 'ImageFolderDataset' else 'cifar100'}/mro"]["output"]
        got = [getattr(ds, b) for b in want]
        assert all(issubclass(getattr(ds, cls), b) for b in got)


def test_cifar100_reads_the_binary_record_layout(tmp_path):
    # MindSpore 2.10 reads the columns image, coarse_label, fine_label (uint32) from records of
    # coarse label, fine label and the CHW image; its files hold 50,000 / 10,000 records, too large
    # to record here, so the file is built from known arrays in that layout.
    rng = np.random.default_rng(2)
    images = rng.integers(0, 256, (3, 32, 32, 3), dtype=np.uint8)
    coarse, fine = np.array([3, 0, 19], np.uint8), np.array([70, 1, 99], np.uint8)
    records = np.concatenate([coarse[:, None], fine[:, None], images.transpose(0, 3, 1, 2).reshape(3, -1)], 1)
    (tmp_path / "test.bin").write_bytes(records.tobytes())
    d = ds.Cifar100Dataset(str(tmp_path), usage="test", shuffle=False)
    assert d.get_col_names() == ["image", "coarse_label", "fine_label"] and d.get_dataset_size() == 3
    for (img, c, f), wimg, wc, wf in zip(rows(d), images, coarse, fine):
        np.testing.assert_array_equal(img, wimg)
        assert c.dtype == f.dtype == np.uint32 and (c, f) == (wc, wf)
    with pytest.raises(ValueError, match="no train.bin"):
        ds.Cifar100Dataset(str(tmp_path), usage="train")
    (tmp_path / "bad" ).mkdir()
    (tmp_path / "bad" / "test.bin").write_bytes(b"\0" * 3073)
    with pytest.raises(ValueError, match="3074 bytes"):
        ds.Cifar100Dataset(str(tmp_path / "bad"), usage="test")


def test_mind_dataset_names_the_alternative():
    with pytest.raises(NotImplementedError, match="MindRecord.*NumpySlicesDataset"):
        ds.MindDataset(["train.mindrecord"])
