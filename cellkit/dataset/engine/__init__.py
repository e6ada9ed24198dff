"""``cellkit.dataset.engine``: datasets, their operations, samplers and iterators, on grain."""

from . import (dataset_members, datasets, datasets_files, datasets_vision, iterators, operations, operations_rows,
               samplers, sources)
from .datasets import (AudioBaseDataset, BatchInfo, Dataset, TextBaseDataset, UnionBaseDataset, VisionBaseDataset,
                       zip)  # noqa: A004
from .datasets_files import ImageFolderDataset, MindDataset
from .datasets_vision import Cifar10Dataset, Cifar100Dataset, MnistDataset
from .iterators import DictIterator, TupleIterator
from .operations import (BatchDataset, ConcatDataset, FilterDataset, MapDataset, ProjectDataset, RenameDataset,
                         RepeatDataset, ShuffleDataset, SkipDataset, TakeDataset, ZipDataset)
from .samplers import (BuiltinSampler, DistributedSampler, IterSampler, RandomSampler, Sampler, SequentialSampler,
                       SubsetRandomSampler, SubsetSampler, WeightedRandomSampler)
from .sources import GeneratorDataset, MappableDataset, NumpySlicesDataset, SourceDataset

NODES = ["MapDataset", "BatchDataset", "ShuffleDataset", "RepeatDataset", "TakeDataset", "SkipDataset",
         "FilterDataset", "ProjectDataset", "RenameDataset", "ZipDataset", "ConcatDataset"]
BASES = ["Dataset", "SourceDataset", "MappableDataset", "VisionBaseDataset", "TextBaseDataset", "AudioBaseDataset",
         "UnionBaseDataset"]
SAMPLERS = ["BuiltinSampler", "Sampler", "DistributedSampler", "RandomSampler", "SequentialSampler",
            "SubsetSampler", "SubsetRandomSampler", "WeightedRandomSampler", "IterSampler"]
SOURCES = ["GeneratorDataset", "NumpySlicesDataset", "MnistDataset", "Cifar10Dataset", "Cifar100Dataset",
           "ImageFolderDataset", "MindDataset"]

__all__ = [*BASES, *NODES, *SAMPLERS, *SOURCES, "BatchInfo", "zip", "TupleIterator", "DictIterator"]
