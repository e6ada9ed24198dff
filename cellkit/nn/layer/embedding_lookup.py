"""``EmbeddingLookup`` and ``MultiFieldEmbeddingLookup`` (MindSpore's ``nn/layer/embedding.py``).

One Parameter ``embedding_table`` (vocab_size, embedding_size). MindSpore's ``target``,
``slice_mode``, ``manual_shapes`` and ``sparse`` choose kernels and sharding on its devices;
they are checked and kept, and the lookup is one gather here (an index outside
[0, vocab_size) reads a row of zeros, as MindSpore's CPU lookup). ``Cell.shard`` or a Parameter
``sharding`` spreads the table over a mesh.

>>> import cellkit as ms
>>> from cellkit import nn
>>> net = nn.EmbeddingLookup(4, 2, param_init='ones')
>>> net(ms.Tensor([[0, 5]], ms.int32))
Array([[[1., 1.],
        [0., 0.]]], dtype=float32)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ... import dtype as mstype
from ...cell import Cell
from ...ops.function._utils import _v
from .._checks import positive_int
from .._init_util import make_param

__all__ = ["EmbeddingLookup", "MultiFieldEmbeddingLookup"]

_SLICE_MODES = ("field_slice", "table_row_slice", "table_column_slice", "batch_slice")


def _int_input(cell, x, arg):
    x = jnp.asarray(_v(x))
    if not jnp.issubdtype(x.dtype, jnp.integer):
        raise TypeError(f"For '{cell.cls_name}', '{arg}' must be an int32 or int64 Tensor, but got {x.dtype}.")
    return x


def _clip_rows(out, max_norm):
    sq = jnp.sum(jnp.square(out), axis=-1, keepdims=True)
    pos = sq > 0
    norm = jnp.where(pos, jnp.sqrt(jnp.where(pos, sq, 1)), sq)
    c = jnp.asarray(max_norm, out.dtype)
    return out * c / jnp.maximum(norm, c)


class EmbeddingLookup(Cell):
    """Rows of ``embedding_table`` for integer ``indices`` of any shape (MindSpore 2.10's ``nn.EmbeddingLookup``).

    Args:
        vocab_size, embedding_size (int): the table's shape.
        param_init: default ``'normal'``.
        target (str): ``'CPU'`` (default) or ``'DEVICE'``.
        slice_mode (str): default ``'batch_slice'``; kept (a sharding hint).
        manual_shapes: default ``None``; kept.
        max_norm (float): default ``None``; rows with a larger L2 norm are scaled down to it.
        sparse (bool): default ``True``; must be ``True`` with ``target='CPU'``.
        dtype: default ``float32``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.EmbeddingLookup(10, 3, target='DEVICE', sparse=False)(ms.Tensor([1, 2], ms.int32)).shape
    (2, 3)
    """

    def __init__(self, vocab_size, embedding_size, param_init="normal", target="CPU", slice_mode="batch_slice",
                 manual_shapes=None, max_norm=None, sparse=True, dtype=mstype.float32):
        super().__init__()
        if not isinstance(sparse, bool):
            raise TypeError(f"For '{self.cls_name}', the 'sparse' must be bool, but got {type(sparse).__name__}.")
        self.vocab_size = positive_int(vocab_size, "vocab_size", self.cls_name)
        if target not in ("CPU", "DEVICE"):
            raise ValueError(f"For '{self.cls_name}', the 'target' must be 'CPU' or 'DEVICE', but got {target!r}.")
        if not sparse and target == "CPU":
            raise ValueError(f"For '{self.cls_name}', 'sparse' must be True when 'target' is \"CPU\", but got "
                             f"'sparse': {sparse} and 'target': {target}")
        self.target, self.sparse, self.slice_mode, self.manual_shapes = target, sparse, slice_mode, manual_shapes
        self.embedding_size = positive_int(embedding_size, "embedding_size", self.cls_name)
        self.embedding_table = make_param(param_init, (self.vocab_size, self.embedding_size), dtype,
                                          "embedding_table", what=self.cls_name)
        if max_norm is not None:
            if not isinstance(max_norm, float) or max_norm <= 0:
                raise ValueError(f"For '{self.cls_name}', the 'max_norm' must be a positive float, but got "
                                 f"{max_norm!r}.")
        self.max_norm = max_norm

    def _lookup(self, indices):
        table = self.embedding_table.value
        valid = (indices >= 0) & (indices < self.vocab_size)
        out = jnp.take(table, jnp.where(valid, indices, 0), axis=0)
        out = jnp.where(valid[..., None], out, jnp.zeros((), out.dtype))
        return out if self.max_norm is None else _clip_rows(out, self.max_norm)

    def construct(self, indices):
        return self._lookup(_int_input(self, indices, "indices"))


class MultiFieldEmbeddingLookup(EmbeddingLookup):
    """Weighted embeddings merged per field (MindSpore 2.10's ``nn.MultiFieldEmbeddingLookup``).

    ``construct(input_indices, input_values, field_ids)``, each (batch, n): the rows of
    ``input_indices`` are scaled by ``input_values`` and merged per (sample, field id in
    [0, field_size)) by ``operator``: ``'SUM'`` (default), ``'MEAN'`` (divided by the sum of
    ``|input_values|``) or ``'MAX'`` (over the entries whose value is non-zero). A field with no
    entry gives zeros. The output is (batch, field_size, embedding_size). The other arguments and
    defaults are :class:`EmbeddingLookup`'s (``param_init='normal'``, ``target='CPU'``,
    ``slice_mode='batch_slice'``, ``max_norm=None``, ``sparse=True``, ``dtype=float32``), with
    ``feature_num_list=None`` in the place of ``manual_shapes``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> net = nn.MultiFieldEmbeddingLookup(4, 2, field_size=2, param_init='ones')
    >>> net(ms.Tensor([[0, 1, 2]], ms.int32), ms.Tensor([[1., 2., 3.]]), ms.Tensor([[0, 0, 1]], ms.int32))
    Array([[[3., 3.],
            [3., 3.]]], dtype=float32)
    """

    OPERATOR_SUM, OPERATOR_MAX, OPERATOR_MEAN = "SUM", "MAX", "MEAN"

    def __init__(self, vocab_size, embedding_size, field_size, param_init="normal", target="CPU",
                 slice_mode="batch_slice", feature_num_list=None, max_norm=None, sparse=True, operator="SUM",
                 dtype=mstype.float32):
        super().__init__(vocab_size, embedding_size, param_init, target, slice_mode, feature_num_list, max_norm,
                         sparse, dtype=dtype)
        self.field_size = positive_int(field_size, "field_size", self.cls_name)
        if operator not in ("SUM", "MAX", "MEAN"):
            raise ValueError(f"For '{self.cls_name}', the 'operator' must be one of ['SUM', 'MAX', 'MEAN'], but "
                             f"got {operator!r}.")
        self.operator = operator

    def construct(self, input_indices, input_values, field_ids):
        idx = _int_input(self, input_indices, "input_indices")
        values = jnp.asarray(_v(input_values))
        fields = _int_input(self, field_ids, "field_ids")
        for arg, x in (("input_indices", idx), ("input_values", values), ("field_ids", fields)):
            if x.ndim != 2:
                raise ValueError(f"For '{self.cls_name}', the dimension of '{arg}' must be 2, but got {x.ndim}.")
        if not jnp.issubdtype(values.dtype, jnp.floating):
            raise TypeError(f"For '{self.cls_name}', 'input_values' must be a float Tensor, but got {values.dtype}.")
        batch = idx.shape[0]
        segments = batch * self.field_size
        seg = (fields + (jnp.arange(batch) * self.field_size)[:, None]).reshape(-1)
        emb = values[..., None].astype(self.embedding_table.dtype) * self._lookup(idx)
        emb = emb.reshape(-1, self.embedding_size)
        if self.operator == "MAX":
            masked = jnp.where((values.reshape(-1) == 0)[:, None], jnp.finfo(emb.dtype).min, emb)
            merged = jax.ops.segment_max(masked, seg, num_segments=segments)
            count = jax.ops.segment_sum(jnp.abs(values.reshape(-1)), seg, num_segments=segments)
            merged = jnp.where((count != 0)[:, None], merged, 0)
        else:
            merged = jax.ops.segment_sum(emb, seg, num_segments=segments)
            if self.operator == "MEAN":
                count = jax.ops.segment_sum(jnp.abs(values.reshape(-1)), seg, num_segments=segments)[:, None]
                merged = jnp.where(count == 0, 0, merged / jnp.where(count == 0, 1, count).astype(merged.dtype))
        return merged.reshape(batch, self.field_size, -1)
