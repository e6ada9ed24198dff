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


TRANSFORMS = {
    "rrc_full": V.RandomResizedCrop((3, 4), scale=(1, 1), ratio=(1.4, 1.4)),
    "rrc_full_nearest": V.RandomResizedCrop((4, 6), scale=(1, 1), ratio=(1.4, 1.4), interpolation=V.Inter.NEAREST),
    "rcdr_full": V.RandomCropDecodeResize((2, 3), scale=(1, 1), ratio=(4 / 3, 4 / 3)),
    **{f"color_{name}": V.RandomColorAdjust(**kw) for name, kw in {
        "brightness": dict(brightness=(0.5, 0.5)), "brightness_up": dict(brightness=(1.7, 1.7)),
        "contrast": dict(contrast=(0.5, 0.5)), "saturation": dict(saturation=(0.3, 0.3)),
        "hue": dict(hue=(0.2, 0.2)), "identity": dict()}.items()},
    **{f"rotate{sq}_{name}": V.RandomRotation(**kw) for sq in ("", "_sq") for name, kw in {
        "90": dict(degrees=(90, 90)), "180": dict(degrees=(180, 180)), "270": dict(degrees=(-90, -90)),
        "90_expand": dict(degrees=(90, 90), expand=True), "90_fill": dict(degrees=(90, 90), fill_value=7)}.items()},
    "erase_never": V.RandomErasing(prob=0.0),
    "grayscale_pil": lambda x: np.asarray(V.Grayscale()(V.ToPIL()(x))),
    "grayscale_pil3": lambda x: np.asarray(V.Grayscale(3)(V.ToPIL()(x))),
    "topil": lambda x: np.asarray(V.ToPIL()(x)),
}
# OpenCV's fixed-point arithmetic can round a uint8 pixel the other way (resizes, colour mixing).
ATOL = {"rrc_full": 1, "rcdr_full": 1, "color_contrast": 1, "color_saturation": 1,
        "color_hue": 2}  # OpenCV shifts hue in its 8-bit HSV (steps of 2 degrees); cellkit in float


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transform_matches_mindspore(name):
    case = CASES[f"vision/{name}"]
    got = np.asarray(TRANSFORMS[name](*case["inputs"]))
    want = case["output"]
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), atol=ATOL.get(name, 0))


def _draws(op, *args, seed=3):
    rng = np.random.default_rng(seed)
    return op.apply(rng, *args)


IMG = (np.arange(12 * 16 * 3) * 7 % 256).astype(np.uint8).reshape(12, 16, 3)


@pytest.mark.parametrize("op", [V.RandomResizedCrop((5, 6)), V.RandomColorAdjust(0.4, 0.4, 0.4, 0.1),
                                V.RandomRotation(30), V.RandomRotation(30, V.Inter.BILINEAR, expand=True)],
                         ids=["resized_crop", "color", "rotation", "rotation_bilinear_expand"])
def test_random_transforms_are_seeded(op):
    a, b, c = _draws(op, IMG), _draws(op, IMG), _draws(op, IMG, seed=4)
    assert a.dtype == np.uint8 and np.array_equal(a, b) and not np.array_equal(a, c)


def test_random_transform_properties():
    crop = _draws(V.RandomResizedCrop((5, 6), scale=(0.5, 0.5), ratio=(1, 1), interpolation=V.Inter.NEAREST), IMG)
    assert crop.shape == (5, 6, 3)
    rot = _draws(V.RandomRotation(45, expand=True), IMG)
    assert rot.shape[0] > 12 and rot.shape[1] > 16 and rot[0, 0].tolist() == [0, 0, 0]
    chw = IMG.transpose(2, 0, 1).astype(np.float32)
    erased = _draws(V.RandomErasing(prob=1.0, value=-1), chw)
    hole = (erased == -1).all(0)
    assert hole.any() and (erased[:, ~hole] == chw[:, ~hole]).all()
    rows_, cols = np.flatnonzero(hole.any(1)), np.flatnonzero(hole.any(0))
    assert hole[rows_[0]:rows_[-1] + 1, cols[0]:cols[-1] + 1].all()     # a rectangle
    gray = V.Grayscale(3)(IMG)
    assert gray.shape == (12, 16, 3) and (gray[..., 0] == gray[..., 2]).all()
    with pytest.raises(ValueError, match="num_output_channels"):
        V.Grayscale(2)
    with pytest.raises(ValueError, match="hue"):
        V.RandomColorAdjust(hue=(0, 0.7))


def test_mixup_and_cutmix_batches():
    imgs = np.stack([np.full((4, 4, 3), 10 * k, np.uint8) for k in range(4)])
    labels = np.eye(3, dtype=np.float32)[[0, 1, 2, 0]]
    for op, want in ((V.MixUpBatch(), CASES["vision/mixup"]), (V.CutMixBatch(V.ImageBatchFormat.NHWC), CASES["vision/cutmix"])):
        out_imgs, out_labels = _draws(op, imgs, labels)
        assert [out_imgs.shape, out_labels.shape] == [tuple(s) for s in want["output"]]
        assert out_imgs.dtype == np.uint8 and out_labels.dtype == np.float32
        np.testing.assert_allclose(out_labels.sum(1), 1, rtol=1e-6)
        assert np.array_equal(_draws(op, imgs, labels)[0], out_imgs)
    # MixUp: each image is lam * its own + (1 - lam) * another's, and so is its label.
    out_imgs, out_labels = _draws(V.MixUpBatch(2.0), imgs, np.eye(4, dtype=np.float32))
    np.testing.assert_allclose(out_imgs[:, 0, 0, 0], np.rint(out_labels @ np.arange(4) * 10), atol=1)
    nchw, _ = _draws(V.CutMixBatch(V.ImageBatchFormat.NCHW), imgs.transpose(0, 3, 1, 2), labels)
    assert nchw.shape == (4, 3, 4, 4)
    assert CASES["vision/mixup_labels_2d"]["error"] == "RuntimeError"
    with pytest.raises(RuntimeError, match="one-hot"):
        V.MixUpBatch()(imgs, np.array([0, 1, 2, 0]))


def test_inter_modes_match_mindspore():
    assert sorted(V.Inter.__members__) == CASES["vision/inter"]["output"]
