"""``cellkit.dataset.engine``: datasets, their operations and iterators, on grain."""

from . import datasets, datasets_vision, iterators, operations, sources
from .datasets import BatchInfo, Dataset, zip  # noqa: A004
from .datasets_vision import Cifar10Dataset, MnistDataset
from .iterators import DictIterator, TupleIterator
from .sources import GeneratorDataset, NumpySlicesDataset, SourceDataset

__all__ = ["Dataset", "BatchInfo", "zip", "GeneratorDataset", "NumpySlicesDataset", "SourceDataset",
           "MnistDataset", "Cifar10Dataset", "TupleIterator", "DictIterator"]
