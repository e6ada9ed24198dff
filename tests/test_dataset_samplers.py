"""Samplers and the dataset class hierarchy against MindSpore 2.10
(tests/fixtures/record/record_dataset_samplers.py)."""

import builtins

import numpy as np
import pytest

import cellkit.dataset as ds
from ms_fixtures import load

CASES = load("dataset_samplers")


def ids(sampler, n=10, **kw):
    d = ds.NumpySlicesDataset(np.arange(n), sampler=sampler, **kw)
    return [int(r[0]) for r in d.create_tuple_iterator(output_numpy=True)], d.get_dataset_size()


def child(parent, kid):
    parent.add_child(kid)
    return parent


ORDERED = {
    "sequential": lambda: ds.SequentialSampler(),
    "sequential_start": lambda: ds.SequentialSampler(start_index=3),
    "sequential_start_num": lambda: ds.SequentialSampler(start_index=3, num_samples=4),
    "sequential_past_end": lambda: ds.SequentialSampler(start_index=8, num_samples=4),
    "sequential_num0": lambda: ds.SequentialSampler(num_samples=0),
    **{f"distributed_{s}_{i}": (lambda s=s, i=i: ds.DistributedSampler(s, i, shuffle=False))
       for s, i in ((3, 0), (3, 1), (3, 2), (4, 3), (1, 0), (12, 11))},
    "distributed_num": lambda: ds.DistributedSampler(3, 1, shuffle=False, num_samples=2),
    **{f"distributed_offset_{s}_{i}_{o}": (lambda s=s, i=i, o=o: ds.DistributedSampler(s, i, shuffle=False, offset=o))
       for s, i, o in ((3, 1, 1), (3, 0, 2), (3, 2, 2), (4, 0, 1), (4, 1, 1), (4, 2, 1), (4, 3, 1), (3, 0, 0), (3, 0, 3))},
    "subset": lambda: ds.SubsetSampler([3, 1, 7, 1]),
    "subset_num": lambda: ds.SubsetSampler([3, 1, 7], num_samples=2),
    "subset_int": lambda: ds.SubsetSampler(4),
    "list": lambda: [5, 2],
    "ndarray": lambda: np.array([5, 2, 9]),
    "child_sequential": lambda: child(ds.SequentialSampler(1, 5), ds.SequentialSampler(start_index=2)),
    "child_subset_of_distributed": lambda: child(ds.SubsetSampler([0, 2]), ds.DistributedSampler(3, 1, shuffle=False)),
}


@pytest.mark.parametrize("name", sorted(ORDERED))
def test_ordered_samplers_pick_mindspores_rows(name):
    want_ids, want_size = CASES[f"ordered/{name}"]["output"]
    assert ids(ORDERED[name]()) == (want_ids, want_size)


SIZED = {
    "random": (lambda: ds.RandomSampler(), range(10), False),
    "random_num": (lambda: ds.RandomSampler(num_samples=4), range(10), False),
    "random_num_over": (lambda: ds.RandomSampler(num_samples=15), range(10), False),
    "random_replacement_over": (lambda: ds.RandomSampler(replacement=True, num_samples=15), range(10), True),
    "random_replacement": (lambda: ds.RandomSampler(replacement=True), range(10), True),
    "subset_random": (lambda: ds.SubsetRandomSampler([3, 1, 7]), [1, 3, 7], False),
    "subset_random_num": (lambda: ds.SubsetRandomSampler([3, 1, 7, 8], num_samples=2), [1, 3, 7, 8], False),
    "weighted": (lambda: ds.WeightedRandomSampler([0, 0, 1, 1, 0, 0, 0, 0, 0, 0], 6), [2, 3], True),
    "weighted_norep": (lambda: ds.WeightedRandomSampler([0, 0, 1, 1, 0, 0, 0, 0, 0, 0], 2, replacement=False),
                       [2, 3], False),
    "weighted_num0": (lambda: ds.WeightedRandomSampler([1, 1], 0), [0, 1], True),
    "weighted_over": (lambda: ds.WeightedRandomSampler([1, 1, 1], 30), [0, 1, 2], True),
    "weighted_short": (lambda: ds.WeightedRandomSampler([1, 1, 1], 5), [0, 1, 2], True),
}


@pytest.mark.parametrize("name", sorted(SIZED))
def test_shuffled_samplers_have_mindspores_sizes_and_seeded_draws(name):
    make, allowed, repeats = SIZED[name]
    want_ids, want_size = CASES[f"sized/{name}"]["output"]
    ds.config.set_seed(1)
    got, size = ids(make())
    assert size == want_size == len(got) == len(want_ids)
    assert set(got) <= set(allowed) and set(want_ids) <= set(allowed)
    if not repeats:
        assert len(set(got)) == len(got)
    if size == len(allowed) and not repeats:
        assert sorted(got) == sorted(allowed)
    ds.config.set_seed(1)
    assert ids(make())[0] == got                      # the same seed draws the same rows
    if name == "random":
        ds.config.set_seed(2)
        assert ids(make())[0] != got


def test_shuffled_shards_partition_a_common_permutation():
    ds.config.set_seed(5)
    shards = [ids(ds.DistributedSampler(3, i))[0] for i in range(3)]
    want = [CASES[f"sized/distributed_shuffled_{i}"]["output"][0] for i in range(3)]
    assert [len(s) for s in shards] == [len(w) for w in want] == [4, 4, 4]
    # Every row is in some shard; the two padding rows repeat the permutation's first rows.
    for got in (shards, want):
        flat = [i for k in range(4) for s in got for i in s[k:k + 1]]
        assert sorted(flat[:10]) == list(range(10)) and flat[10:] == flat[:2]


def test_each_epoch_draws_anew_and_a_seed_repeats_them():
    assert CASES["epochs_differ"]["output"] is True

    def epochs(seed):
        ds.config.set_seed(seed)
        it = ds.NumpySlicesDataset(np.arange(6), sampler=ds.RandomSampler()).create_tuple_iterator(
            output_numpy=True, num_epochs=2)
        return [[int(r[0]) for r in it] for _ in range(2)]
    a = epochs(3)
    assert a[0] != a[1] and sorted(a[1]) == list(range(6)) and epochs(3) == a


REFUSED = {
    "sampler_and_shuffle": (lambda: ids(ds.SequentialSampler(), shuffle=True), "onflicting arguments"),
    "sampler_and_shards": (lambda: ids(ds.SequentialSampler(), num_shards=2, shard_id=0), "onflicting arguments"),
    "sampler_and_num_samples": (lambda: ids(ds.SequentialSampler(), num_samples=3), "onflicting arguments"),
    "sampler_on_generator": (lambda: ds.GeneratorDataset(lambda: iter([(np.array(1),)]), ["x"],
                                                          sampler=ds.SequentialSampler()), "__getitem__"),
    "random_num_negative": (lambda: ds.RandomSampler(num_samples=-1), "num_samples"),
    "random_replacement_str": (lambda: ds.RandomSampler(replacement="a"), "replacement"),
    "distributed_shuffle_int": (lambda: ds.DistributedSampler(2, 0, shuffle=1), "shuffle"),
    "subset_str": (lambda: ids(ds.SubsetSampler("ab")), "indices"),
    "subset_out_of_range": (lambda: ids(ds.SubsetSampler([3, 12])), r"sample ID \(12\) is out of bound"),
    "sequential_start_past_end": (lambda: ids(ds.SequentialSampler(start_index=10)), "start_index"),
    "weighted_norep_too_few": (lambda: ids(ds.WeightedRandomSampler([1, 1, 1], 5, replacement=False)),
                               "without replacement"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_as_mindspore_refuses(name):
    make, match = REFUSED[name]
    error = CASES[f"refused/{name}"]["error"]
    with pytest.raises(getattr(__builtins__, error, None) or __import__("builtins").__dict__[error], match=match):
        make()


def test_parameter_errors_cellkit_raises_at_construction():
    # MindSpore accepts these when built and fails when the pipeline runs; cellkit says so at once.
    for make, match in [(lambda: ds.DistributedSampler(0, 0), "num_shards"), (lambda: ds.DistributedSampler(2, 2), "shard_id"),
                        (lambda: ds.DistributedSampler(2, 0, offset=3), "offset"),
                        (lambda: ds.WeightedRandomSampler([], 2), "weights"),
                        (lambda: ds.WeightedRandomSampler([-1, 1], 2), "weights"),
                        (lambda: ds.SequentialSampler(-1), "start_index")]:
        with pytest.raises(ValueError, match=match):
            make()
    with pytest.raises(TypeError, match="sampler must be"):
        ds.NumpySlicesDataset(np.arange(3), sampler="first")


def test_sampler_queries_match_mindspore():
    assert [ds.RandomSampler(num_samples=3).get_num_samples(), ds.SubsetSampler([1, 2]).get_num_samples(),
            ds.WeightedRandomSampler([1, 1], 4).get_num_samples(),
            ds.SequentialSampler().get_num_samples()] == CASES["get_num_samples"]["output"]
    assert [ds.RandomSampler().is_shuffled(), ds.SequentialSampler().is_shuffled(), ds.DistributedSampler(2, 0).is_shuffled(),
            ds.DistributedSampler(2, 0, shuffle=False).is_shuffled()] == CASES["is_shuffled"]["output"]
    assert [ds.DistributedSampler(2, 0).is_sharded(), ds.RandomSampler().is_sharded()] == CASES["is_sharded"]["output"]


class Evens(ds.Sampler):
    def __iter__(self):
        return iter(range(0, self.dataset_size, 2))


def test_python_samplers_and_iterables():
    assert ids(Evens()) == ([0, 2, 4, 6, 8], 5)
    assert ids(Evens(num_samples=2)) == ([0, 2], 2)
    assert ids(iter_of([9, 1])) == ([9, 1], 2)
    src = [(np.array(i),) for i in range(6)]
    g = ds.GeneratorDataset(src, ["x"], sampler=ds.SequentialSampler(2))
    assert [int(r[0]) for r in g.create_tuple_iterator(output_numpy=True)] == [2, 3, 4, 5]


def iter_of(values):
    class It:
        def __iter__(self):
            return iter(values)
    return It()


def test_file_datasets_take_a_sampler(tmp_path):
    images = np.zeros((4, 32, 32, 3), np.uint8)
    records = np.concatenate([np.arange(4, dtype=np.uint8)[:, None], images.reshape(4, -1)], 1)
    (tmp_path / "test_batch.bin").write_bytes(records.tobytes())
    d = ds.Cifar10Dataset(str(tmp_path), usage="test", sampler=ds.SubsetSampler([3, 0]))
    assert [int(r[1]) for r in d.create_tuple_iterator(output_numpy=True)] == [3, 0]


BASES = ["Dataset", "SourceDataset", "MappableDataset", "VisionBaseDataset", "TextBaseDataset", "AudioBaseDataset",
         "UnionBaseDataset", "GeneratorDataset", "BuiltinSampler", "Sampler"]


def _table():
    return ds.NumpySlicesDataset({"a": np.arange(6), "b": np.arange(6)}, shuffle=False)


NODES = {
    "NumpySlicesDataset": lambda t: t, "GeneratorDataset": lambda t: ds.GeneratorDataset(lambda: iter([]), ["x"]),
    "MapDataset": lambda t: t.map(lambda x: x, input_columns="a"), "BatchDataset": lambda t: t.batch(2),
    "ShuffleDataset": lambda t: t.shuffle(2), "RepeatDataset": lambda t: t.repeat(2), "TakeDataset": lambda t: t.take(2),
    "SkipDataset": lambda t: t.skip(2), "FilterDataset": lambda t: t.filter(lambda a: True, ["a"]),
    "ProjectDataset": lambda t: t.project(["a"]), "RenameDataset": lambda t: t.rename(["a"], ["c"]),
    "ZipDataset": lambda t: ds.zip((t.project("a"), t.project("b"))), "ConcatDataset": lambda t: t + t,
}


@pytest.mark.parametrize("name", sorted(NODES))
def test_pipeline_steps_are_instances_of_mindspores_classes(name):
    d = NODES[name](_table())
    assert [type(d).__name__] + [b for b in BASES if isinstance(d, getattr(ds, b))] == CASES[f"class/{name}"]["output"]


@pytest.mark.parametrize("name", ["DistributedSampler", "RandomSampler", "SequentialSampler", "SubsetSampler",
                                  "SubsetRandomSampler", "WeightedRandomSampler", "Sampler", "IterSampler"])
def test_sampler_classes_match_mindspore(name):
    assert [b for b in BASES if issubclass(getattr(ds, name), getattr(ds, b))] == CASES[f"class/{name}"]["output"]


def test_file_datasets_are_mappable_vision_sources():
    for cls in (ds.MnistDataset, ds.Cifar10Dataset):
        assert issubclass(cls, ds.MappableDataset) and issubclass(cls, ds.VisionBaseDataset)
        assert not issubclass(cls, ds.TextBaseDataset)
