"""Array Primitives (MindSpore's ``ops/operations/array_ops.py``): one table line each.

A line is ``"Name": (op, {constructor argument: MindSpore's default}[, check])``; the
generated class calls ``op(*inputs, **configuration)``. Where MindSpore's call
differs from the functional op's, ``op`` is a small adapter defined here.

>>> import cellkit as ms
>>> from cellkit.ops import operations as P
>>> P.Gather()(ms.Tensor([[1, 2], [3, 4]]), ms.Tensor([1]), 0).tolist()
[[3, 4]]
>>> [t.shape for t in P.Split(axis=1, output_num=2)(ms.ops.ones((2, 4)))]
[(2, 2), (2, 2)]
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ... import dtype as mstype
from .. import function as F
from ..function._utils import _v
from ..function.array_func import canonical
from ..primitive import install_primitives

__all__ = []


def _concat(tensors, *, axis):
    return F.concat(tensors, axis)


def _squeeze(x, *, axis):
    return F.squeeze(x, axis if axis != () else None)


def _unstack(x, *, axis, num):
    return F.unstack(x, axis)


def _split(x, *, axis, output_num):
    n = jnp.shape(_v(x))[axis]
    if output_num <= 0 or n % output_num:
        raise ValueError(f"Split: axis {axis} of size {n} does not split into output_num={output_num} equal parts")
    return F.split(x, n // output_num, axis)


def _split_v(x, *, size_splits, split_dim, num_split):
    sizes = list(size_splits)
    if len(sizes) != num_split:
        raise ValueError(f"SplitV: size_splits {sizes} must have num_split={num_split} entries")
    n = jnp.shape(_v(x))[split_dim]
    if -1 in sizes:
        sizes[sizes.index(-1)] = n - (sum(sizes) + 1)
    return F.split(x, sizes, split_dim)


def _tensor_shape(x):
    return jnp.asarray(jnp.shape(_v(x)), canonical(mstype.int64))


def _top_k(x, k, *, sorted):  # noqa: A002 - MindSpore's argument name
    return F.top_k(x, k, sorted=sorted)


def _search_sorted(sequence, values, *, dtype, right):
    return F.searchsorted(sequence, values, right=right).astype(canonical(dtype))


def _log_space(start, end, *, steps, base, dtype):
    return F.logspace(start, end, steps, base, dtype=dtype)


def _diag_part(x):
    x = jnp.asarray(_v(x))
    half = x.shape[: x.ndim // 2]
    n = int(np.prod(half))
    return jnp.diagonal(x.reshape(n, n)).reshape(half)


def _scalar_to_tensor(x, dtype=mstype.float32):
    return F.scalar_to_tensor(x, dtype)


# Name: (op, constructor arguments with MindSpore's defaults[, check])
PRIMITIVES = {
    "Cast": (F.cast, {}),
    "Reshape": (F.reshape, {}),
    "Transpose": (F.transpose, {}),
    "Concat": (_concat, {"axis": 0}),
    "Shape": (F.shape, {}),
    "TensorShape": (_tensor_shape, {}),
    "Rank": (F.rank, {}),
    "Size": (F.size, {}),
    "DType": (F.dtype, {}),
    "Squeeze": (_squeeze, {"axis": ()}),
    "ExpandDims": (F.expand_dims, {}),
    "Gather": (F.gather, {"batch_dims": 0}),
    "GatherD": (F.gather_d, {}),
    "GatherNd": (F.gather_nd, {}),
    "StridedSlice": (F.strided_slice, {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0,
                                       "new_axis_mask": 0, "shrink_axis_mask": 0}),
    "Slice": (F.slice, {}),
    "Tile": (F.tile, {}),
    "Unstack": (_unstack, {"axis": 0, "num": None}),
    "Stack": (F.stack, {"axis": 0}),
    "Split": (_split, {"axis": 0, "output_num": 1}),
    "SplitV": (_split_v, {"size_splits": None, "split_dim": None, "num_split": None}),
    "OneHot": (F.one_hot, {"axis": -1}),
    "Fill": (F.fill, {}),
    "Fills": (F.fills, {}),
    "Zeros": (F.zeros, {}),
    "Ones": (F.ones, {}),
    "ZerosLike": (F.zeros_like, {}),
    "OnesLike": (F.ones_like, {}),
    "Eye": (F.eye, {}),
    "Range": (F.range, {"maxlen": 1000000}),
    "LinSpace": (F.linspace, {}),
    "LogSpace": (_log_space, {"steps": 10, "base": 10, "dtype": mstype.float32}),
    "ScalarToTensor": (_scalar_to_tensor, {}),
    "TupleToArray": (F.tuple_to_array, {}),
    "Select": (F.select, {}),
    "MaskedFill": (F.masked_fill, {}),
    "MaskedSelect": (F.masked_select, {}),
    "MaskedScatter": (F.masked_scatter, {}),
    "NonZero": (F.nonzero, {}),
    "TopK": (_top_k, {"sorted": True}),
    "Sort": (F.sort, {"axis": -1, "descending": False}),
    "Unique": (F.unique, {}),
    "UniqueWithPad": (F.unique_with_pad, {}),
    "UniqueConsecutive": (F.unique_consecutive, {"return_inverse": False, "return_counts": False, "dim": None}),
    "SearchSorted": (_search_sorted, {"dtype": mstype.int64, "right": False}),
    "ScatterNd": (F.scatter_nd, {}),
    "TensorScatterUpdate": (F.tensor_scatter_update, {}),
    "TensorScatterAdd": (F.tensor_scatter_add, {}),
    "TensorScatterSub": (F.tensor_scatter_sub, {}),
    "TensorScatterMul": (F.tensor_scatter_mul, {}),
    "TensorScatterDiv": (F.tensor_scatter_div, {}),
    "TensorScatterMax": (F.tensor_scatter_max, {}),
    "TensorScatterMin": (F.tensor_scatter_min, {}),
    "TensorScatterElements": (F.tensor_scatter_elements, {"axis": 0, "reduction": "none"}),
    "IndexFill": (F.index_fill, {}),
    "BroadcastTo": (F.broadcast_to, {"shape": None}),
    "Expand": (F.expand, {}),
    "Roll": (F.roll, {"shifts": None, "dims": None}),
    "ReverseV2": (F.reverse, {"axis": None}),
    "ReverseSequence": (F.reverse_sequence, {"seq_dim": None, "batch_dim": 0}),
    "Tril": (F.tril, {"diagonal": 0}),
    "Triu": (F.triu, {"diagonal": 0}),
    "Diag": (F.diag, {}),
    "DiagPart": (_diag_part, {}),
    "MatrixBandPart": (F.matrix_band_part, {}),
    "Meshgrid": (F.meshgrid, {"indexing": "xy"}),
    "UnsortedSegmentSum": (F.unsorted_segment_sum, {}),
    "UnsortedSegmentMax": (F.unsorted_segment_max, {}),
    "UnsortedSegmentMin": (F.unsorted_segment_min, {}),
    "UnsortedSegmentProd": (F.unsorted_segment_prod, {}),
}
install_primitives(globals(), __all__, PRIMITIVES)
