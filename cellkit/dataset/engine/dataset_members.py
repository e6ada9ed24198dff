"""The rest of MindSpore's dataset members (``Dataset`` inherits :class:`DatasetMembersMixin`).

``apply``, ``flat_map``, ``padded_batch`` and ``bucket_batch_by_length`` (pipeline steps built by
``operations_rows``, registered in :data:`NODES`), ``set_init_step``/``get_init_step`` (the next
epoch starts that many rows in), ``reset``, ``use_sampler``/``add_sampler``, the class-index and
shard/shuffle queries, and MindSpore's attributes with their values.

Members that need MindSpore's own runtime (MindRecord files, device queues, the pipeline's
JSON serialisation, cross-process send/recv, blocking sync points, vocabularies from
``dataset.text``) raise NotImplementedError naming what to use instead.

>>> import numpy as np
>>> import cellkit.dataset as ds
>>> data = ds.NumpySlicesDataset({"x": np.arange(4, dtype=np.int32)}, shuffle=False)
>>> [int(r[0]) for r in data.apply(lambda d: d.skip(1)).create_tuple_iterator(output_numpy=True)]
[1, 2, 3]
>>> data.set_init_step(2)
>>> [int(r[0]) for r in data.create_tuple_iterator(output_numpy=True, num_epochs=1)]
[2, 3]
"""

from __future__ import annotations

from .samplers import as_sampler

__all__ = ["DatasetMembersMixin", "NODES"]

# Filled by ``operations_rows``: the pipeline steps these members build.
NODES: dict = {}


class _default:
    """A default computed from the dataset that an instance attribute of the same name overrides."""

    def __init__(self, fget):
        self.fget = fget
        self.__doc__ = fget.__doc__

    def __get__(self, obj, objtype=None):
        return self if obj is None else self.fget(obj)


def _refuse(what, instead):
    raise NotImplementedError(f"{what}: {instead}")


class DatasetMembersMixin:
    """MindSpore's Dataset members beyond the pipeline operations and iterators (see the module docstring)."""

    # MindSpore's attributes, with the values they have on a pipeline built without those options.
    cache = None
    collate_fn = None
    dataset_size = None
    estimated_output_shapes = None
    saved_output_shapes = None
    saved_output_types = None
    has_batch_sampler = False
    prepared_source = None
    runtime_context = None
    sample_fn = None
    schema = None
    process_pool = None
    offload = None
    batch_size_func = None

    @_default
    def column_names(self) -> list:
        return self.get_col_names()

    @_default
    def column_types(self) -> list:
        return list(self.__dict__.get("_column_types") or [])

    @_default
    def num_parallel_workers(self):
        return self.__dict__.get("workers")

    @_default
    def python_multiprocessing(self) -> bool:
        return bool(self.__dict__.get("multiprocessing", False))

    @_default
    def parent(self) -> list:
        """The datasets built on this one (MindSpore's back links): not tracked here, empty."""
        return []

    @_default
    def callbacks(self) -> list:
        return list(self.__dict__.get("_callbacks") or [])

    @_default
    def operations(self) -> list:
        ops = self.__dict__.get("ops")
        if ops is None:
            raise AttributeError(f"{type(self).__name__} has no operations (only a map step has)")
        return list(ops) if isinstance(ops, (list, tuple)) else [ops]

    @property
    def input_indexs(self):
        """Which columns a network takes as inputs (kept for MindSpore's sink mode)."""
        return self.__dict__.get("_input_indexs", ())

    @input_indexs.setter
    def input_indexs(self, value):
        self.__dict__["_input_indexs"] = value

    # ----- pipeline steps ---------------------------------------------------------------

    def apply(self, apply_func):
        """``apply_func(self)``, which must return a dataset."""
        out = apply_func(self)
        if not isinstance(out, DatasetMembersMixin):
            raise TypeError("apply_func must return a dataset.")
        return out

    def flat_map(self, func):
        """The rows of the datasets ``func(column)`` returns for each row, one after another (the
        dataset has one column)."""
        if not callable(func):
            raise TypeError(f"flat_map: func must be callable, got {type(func).__name__}")
        return NODES["FlatMapDataset"](self, func)

    def padded_batch(self, batch_size, drop_remainder=False, num_parallel_workers=None, pad_info=None):
        """``batch``, padding the columns named in ``pad_info`` (``{column: (shape or None, value)}``) to
        ``shape`` (None: the batch's longest), with ``value``."""
        if pad_info is None:
            return self.batch(batch_size, drop_remainder, num_parallel_workers)
        return NODES["PaddedBatchDataset"](self, batch_size, drop_remainder, pad_info)

    def bucket_batch_by_length(self, column_names, bucket_boundaries, bucket_batch_sizes, element_length_function=None,
                               pad_info=None, pad_to_bucket_boundary=False, drop_remainder=False):
        """Batch rows of similar length: a row of length ``L`` (``element_length_function(*columns)``,
        by default the first dimension of ``column_names[0]``) goes to the bucket ``i`` with
        ``bucket_boundaries[i-1] <= L < bucket_boundaries[i]``; a bucket is emitted, padded, when it
        holds ``bucket_batch_sizes[i]`` rows, and the partial ones at the end of the epoch."""
        return NODES["BucketBatchByLengthDataset"](self, column_names, bucket_boundaries, bucket_batch_sizes,
                                                   element_length_function, pad_info, pad_to_bucket_boundary,
                                                   drop_remainder)

    # ----- position -------------------------------------------------------------------------

    def set_init_step(self, init_step):
        """Start the next epoch ``init_step`` rows (batches after ``batch``) in, as MindSpore does when
        training resumes."""
        if isinstance(init_step, bool) or not isinstance(init_step, int) or init_step < 0:
            raise ValueError(f"set_init_step: init_step must be a non-negative int, got {init_step!r}")
        self.__dict__["_init_step"] = init_step

    def get_init_step(self) -> int:
        return self.__dict__.get("_init_step", 0)

    def reset(self):
        """Start again from the first epoch (its shuffle order) on the next iterator."""
        self.__dict__["_epochs_started"] = 0

    # ----- samplers and queries -------------------------------------------------------------

    def use_sampler(self, new_sampler):
        """Read the rows through ``new_sampler`` instead (a random-access source)."""
        self._own_sampler("use_sampler")
        self.__dict__["sampler"] = as_sampler(new_sampler, type(self).__name__)

    def add_sampler(self, new_sampler):
        """Make the current sampler the child of ``new_sampler`` (which then samples its indices)."""
        current = self._own_sampler("add_sampler")
        if current is not None:
            new_sampler.add_child(current)
        self.use_sampler(new_sampler)

    def _own_sampler(self, what):
        if not self.__dict__.get("random_access", False):
            raise TypeError(f"{what}: {type(self).__name__} reads its rows in order; only a random-access "
                            "source dataset takes a sampler")
        return self.__dict__.get("sampler")

    def get_class_indexing(self) -> dict:
        """``{class name: index}`` of the folder dataset under this pipeline; {} for the others."""
        return self.children[0].get_class_indexing() if self.children else {}

    def num_classes(self):
        """The number of classes of the folder dataset under this pipeline; None for the others."""
        indexing = self.get_class_indexing()
        return len(indexing) if indexing else None

    def is_sharded(self) -> bool:
        if "num_shards" in self.__dict__ or "sampler" in self.__dict__:
            sampler = self.__dict__.get("sampler")
            return self.__dict__.get("num_shards") is not None or type(sampler).__name__ == "DistributedSampler"
        return any(c.is_sharded() for c in self.children)

    def is_shuffled(self) -> bool:
        if "shuffle_rows" in self.__dict__:
            sampler = self.__dict__.get("sampler")
            if sampler is not None:
                return type(sampler).__name__ in ("RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler")
            return bool(self.shuffle_rows)
        return any(c.is_shuffled() for c in self.children)

    def is_sync(self) -> bool:
        return False

    def disable_sync(self):
        """There are no sync points (``sync_wait``) to release."""

    def get_sync_notifiers(self) -> dict:
        return {}

    # ----- MindSpore's runtime only -----------------------------------------------------------

    def save(self, file_name, num_files=1, file_type="mindrecord"):
        _refuse("Dataset.save", "MindRecord files need MindSpore's writer; write the rows yourself, e.g. "
                "np.savez(file_name, *columns) over create_tuple_iterator(output_numpy=True)")

    def to_json(self, filename=""):
        _refuse("Dataset.to_json", "MindSpore serialises its C++ pipeline; a cellkit pipeline is Python "
                "objects (rebuild it in code, or pickle the source data)")

    def device_que(self, send_epoch_end=True, create_data_info_queue=False, queue_name=""):
        _refuse("Dataset.device_que", "there are no device data queues on JAX; iterate with "
                "create_tuple_iterator() (Model.train does)")

    def sync_wait(self, condition_name, num_batch=1, callback=None):
        _refuse("Dataset.sync_wait", "blocking sync points are not provided; drive the pipeline from the "
                "training loop (take a batch when the step wants it)")

    def sync_update(self, condition_name, num_batch=None, data=None):
        _refuse("Dataset.sync_update", "blocking sync points (sync_wait) are not provided")

    def send(self, tensor=None, dst=0, group=None):
        _refuse("Dataset.send", "sending rows between processes is not provided; shard the source "
                "(num_shards/shard_id) so each process reads its own rows")

    def recv(self, src=0, group=None):
        _refuse("Dataset.recv", "receiving rows between processes is not provided; shard the source "
                "(num_shards/shard_id) so each process reads its own rows")

    def build_vocab(self, columns, freq_range, top_k, special_tokens, special_first):
        _refuse("Dataset.build_vocab", "build the vocabulary with cellkit.dataset.text.Vocab.from_dataset "
                "where that module exists, or Vocab.from_list over the words")

    def build_sentencepiece_vocab(self, columns, vocab_size, character_coverage, model_type, params):
        _refuse("Dataset.build_sentencepiece_vocab", "train the model with the sentencepiece package "
                "(SentencePieceTrainer) over the column's text")
