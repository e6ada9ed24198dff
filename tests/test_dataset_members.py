"""The dataset members of ``dataset_members.py``, ``operations_rows.py`` and the iterators, against
MindSpore 2.10's recorded behaviour (``tests/fixtures/record/record_dataset_members.py``)."""

import builtins

import numpy as np
import pytest

import cellkit.dataset as ds
from ms_fixtures import load

REC = load("dataset_members")


def rows(dataset):
    return [[np.asarray(c) for c in r] for r in dataset.create_tuple_iterator(output_numpy=True, num_epochs=1)]


def slices():
    return ds.NumpySlicesDataset({"x": np.arange(6, dtype=np.int32), "y": np.arange(6, dtype=np.float32) * 2},
                                 shuffle=False)


def ragged():
    def gen():
        for n in (1, 3, 2, 5, 4, 2, 1):
            yield (np.arange(n, dtype=np.int32) + 1,)
    return ds.GeneratorDataset(gen, ["seq"], shuffle=False)


def assert_rows(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert len(g) == len(w)
        for gc, wc in zip(g, w):
            assert gc.dtype == wc.dtype
            np.testing.assert_array_equal(gc, wc)


CASES = {
    "flat_map": lambda: rows(ds.NumpySlicesDataset({"x": np.array([[1, 2], [3, 4]], np.int32)}, shuffle=False)
                             .flat_map(lambda x: ds.NumpySlicesDataset({"x": x}, shuffle=False))),
    "padded_batch/pad_info": lambda: rows(ragged().padded_batch(3, drop_remainder=True, pad_info={"seq": ([6], -1)})),
    "bucket_batch_by_length/default": lambda: rows(ragged().bucket_batch_by_length(["seq"], [2, 4], [2, 2, 2])),
    "bucket_batch_by_length/boundary": lambda: rows(ragged().bucket_batch_by_length(
        ["seq"], [2, 4], [2, 2, 2], pad_info={"seq": (None, 9)}, pad_to_bucket_boundary=True, drop_remainder=True)),
    "bucket_batch_by_length/length_fn": lambda: rows(ragged().bucket_batch_by_length(
        ["seq"], [3], [3, 1], element_length_function=lambda s: int(s.sum()) % 5)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_regrouping_steps_as_mindspore(case):
    assert_rows(CASES[case](), REC[case]["output"])


def test_padded_batch_without_pad_info_is_batch():
    with pytest.raises(Exception):  # MindSpore: RuntimeError, rows of different shapes cannot be stacked
        rows(ragged().padded_batch(3))
    assert REC["padded_batch/default"]["error"] == "RuntimeError"


def test_apply_as_mindspore():
    want = REC["apply"]["output"]
    assert_rows(rows(slices().apply(lambda d: d.batch(4))), want["rows"])
    assert slices().apply(lambda d: d.project(["y"])).get_col_names() == want["cols"]
    with pytest.raises(getattr(builtins, REC["apply/not_dataset"]["error"]), match="must return a dataset"):
        slices().apply(lambda d: 3)


def test_set_init_step_as_mindspore():
    want = REC["set_init_step"]["output"]
    d = slices()
    d.set_init_step(2)
    assert d.get_init_step() == want["get"]
    assert_rows(rows(d), want["rows"])
    assert len(rows(d)) == 6  # only the next epoch starts further in
    batched = slices().batch(2)
    batched.set_init_step(1)
    assert [r[0].tolist() for r in rows(batched)] == [[2, 3], [4, 5]]


def test_queries_as_mindspore():
    want = REC["queries/slices"]["output"]
    got = {
        "get_class_indexing": slices().get_class_indexing(), "num_classes": slices().num_classes(),
        "is_sharded": slices().is_sharded(), "is_shuffled": slices().is_shuffled(),
        "is_shuffled_default": ds.NumpySlicesDataset({"x": np.arange(4)}).is_shuffled(),
        "is_sharded_shards": ds.NumpySlicesDataset({"x": np.arange(4)}, num_shards=2, shard_id=0).is_sharded(),
        "is_sync": slices().is_sync(), "get_sync_notifiers": slices().get_sync_notifiers(),
        "column_names": slices().column_names, "num_parallel_workers": slices().num_parallel_workers,
        "batch_size": slices().batch(2).batch_size, "drop_remainder": slices().batch(2, True).drop_remainder,
        "map_input_columns": slices().map(lambda x: x, input_columns=["x"]).input_columns,
        "get_init_step": slices().get_init_step(), "output_shapes_estimate": slices().output_shapes(estimate=True)}
    assert got == want
    assert slices().batch(2).is_shuffled() is False and slices().shuffle(4).children[0].is_shuffled() is False


def test_samplers_as_mindspore():
    want = REC["samplers"]["output"]
    d = ds.NumpySlicesDataset({"x": np.arange(6, dtype=np.int32)}, shuffle=False)
    d.use_sampler(ds.SequentialSampler(start_index=2))
    assert_rows(rows(d), want["use_sampler"])
    d = ds.NumpySlicesDataset({"x": np.arange(6, dtype=np.int32)}, sampler=ds.SequentialSampler(start_index=1))
    d.add_sampler(ds.SequentialSampler(num_samples=2))
    assert_rows(rows(d), want["add_sampler"])
    with pytest.raises(TypeError, match="random-access"):
        ds.GeneratorDataset(lambda: iter([(1,)]), ["x"]).use_sampler(ds.SequentialSampler())


def test_iterator_members():
    want = REC["iterator"]["output"]
    d = slices()
    it = d.create_tuple_iterator(num_epochs=1, output_numpy=True)
    assert it.get_col_names() == want["get_col_names"] and it.dataset is d  # MindSpore's holds a copy
    assert next(it)[0] == want["first"]
    it.release()
    with pytest.raises(RuntimeError, match="num_epochs"):
        next(it)
    assert d.create_tuple_iterator(columns=["y"]).get_col_names() == ["y"]
    assert d.create_dict_iterator().get_col_names() == ["x", "y"]


def test_reset_starts_from_the_first_epoch_again():
    d = ds.NumpySlicesDataset({"x": np.arange(8, dtype=np.int32)}, shuffle=True)
    first = [r[0].tolist() for r in rows(d)]
    second = [r[0].tolist() for r in rows(d)]
    d.reset()
    assert [r[0].tolist() for r in rows(d)] == first and second != first


@pytest.mark.parametrize("name, args", [
    ("save", ("f.mindrecord",)), ("to_json", ()), ("device_que", ()), ("sync_wait", ("c",)), ("sync_update", ("c",)),
    ("send", ()), ("recv", ()), ("build_vocab", (["x"], None, None, None, True)),
    ("build_sentencepiece_vocab", (["x"], 10, 1.0, None, {})),
])
def test_runtime_only_members_say_what_to_use(name, args):
    with pytest.raises(NotImplementedError, match=f"Dataset.{name}: "):
        getattr(slices(), name)(*args)


def test_class_indexing_reaches_through_the_pipeline(tmp_path):
    for name in ("cat", "dog"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.bin").write_bytes(b"x")
    data = ds.ImageFolderDataset(str(tmp_path), shuffle=False).batch(1)
    assert data.get_class_indexing() == {"cat": 0, "dog": 1} and data.num_classes() == 2
