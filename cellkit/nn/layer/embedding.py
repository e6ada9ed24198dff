"""``Embedding``: a lookup table of ``vocab_size`` vectors.

>>> import cellkit as ms
>>> from cellkit import nn
>>> emb = nn.Embedding(10, 4)
>>> emb.embedding_table.shape, emb(ms.Tensor([[1, 2, 3]], ms.int32)).shape
((10, 4), (1, 3, 4))
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ... import dtype as mstype
from ...cell import Cell
from ...eager_jit import host_first
from ...ops.function._utils import _v
from ...tiered_jit import tiered_jit
from .._checks import check_bool, is_int
from .._init_util import make_param

__all__ = ["Embedding"]


class Embedding(Cell):
    """Map integer ids to rows of ``embedding_table`` (MindSpore 2.10's ``nn.Embedding``).

    Args:
        vocab_size (int): number of rows.
        embedding_size (int): length of each row.
        use_one_hot (bool): compute ``one_hot(ids) @ table`` instead of a
            gather (same result); default ``False``.
        embedding_table: initializer of the ``(vocab_size, embedding_size)``
            Float32 table; default ``'normal'``, i.e. ``Normal(sigma=0.01)``
            (not N(0, 1) as in PyTorch).
        dtype: dtype of the one-hot values; default ``float32``.
        padding_idx (int or None): default ``None``. As in MindSpore, that row
            is only set to zero at initialisation; its gradient is not masked,
            so training changes it (unlike PyTorch).

    The output has shape ``ids.shape + (embedding_size,)``. As in MindSpore a
    negative id counts from the end (-1 is the last row). Ids outside
    ``[-vocab_size, vocab_size)`` raise ``ValueError`` when they are concrete
    (eagerly); inside a traced function they give NaN rows.

    >>> import numpy as np
    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> table = ms.Tensor(np.arange(6.).reshape(3, 2), ms.float32)
    >>> emb = nn.Embedding(3, 2, embedding_table=table, padding_idx=0)
    >>> emb(ms.Tensor([2, 0], ms.int32))
    Array([[4., 5.],
           [0., 0.]], dtype=float32)
    >>> nn.Embedding(5, 3)
    Embedding(vocab_size=5, embedding_size=3, use_one_hot=False, embedding_table=Parameter (name=embedding_table, shape=(5, 3), dtype=Float32, requires_grad=True), dtype=Float32, padding_idx=None)
    """

    def __init__(self, vocab_size, embedding_size, use_one_hot=False, embedding_table="normal",
                 dtype=mstype.float32, padding_idx=None):
        super().__init__()
        name = self.cls_name
        for arg, value in (("vocab_size", vocab_size), ("embedding_size", embedding_size)):
            if not is_int(value):
                raise TypeError(f"For '{name}', the '{arg}' must be an int, but got "
                                f"{type(value).__name__} {value!r}.")
            if value < 1:
                raise ValueError(f"For '{name}', the '{arg}' must be a positive int, but got {value}.")
        self.vocab_size = int(vocab_size)
        self.embedding_size = int(embedding_size)
        self.use_one_hot = check_bool(use_one_hot, "use_one_hot", name)
        self.dtype = mstype.get_dtype(dtype)
        if np.dtype(self.dtype).kind not in "iuf":
            raise TypeError(f"For '{name}', 'dtype' must be a number type, but got {self.dtype}.")
        if padding_idx is not None:
            if not is_int(padding_idx) or not 0 <= padding_idx < vocab_size:
                raise ValueError(f"For '{name}', the 'padding_idx' must be an int in range [0, {vocab_size}), "
                                 f"but got {padding_idx!r}.")
            padding_idx = int(padding_idx)
        self.padding_idx = padding_idx
        table = make_param(embedding_table, (self.vocab_size, self.embedding_size), mstype.float32,
                           "embedding_table", what=name)
        if padding_idx is not None:
            table.set_data(table.value.at[padding_idx].set(0))
        self.embedding_table = table

    def construct(self, ids):
        ids = _v(ids)
        dtype = jnp.result_type(ids)
        if not jnp.issubdtype(dtype, jnp.integer):
            raise TypeError(f"{self.cls_name}: expected integer ids, got dtype {dtype}")
        if not isinstance(ids, jax.core.Tracer):
            arr = np.asarray(ids)
            if arr.size and (arr.min() < -self.vocab_size or arr.max() >= self.vocab_size):
                raise ValueError(f"{self.cls_name}: ids must be in [-{self.vocab_size}, {self.vocab_size}) "
                                 f"(vocab_size {self.vocab_size}), got values from {arr.min()} to {arr.max()}")
        return _embed(self.embedding_table.value, ids, one_hot_dtype=np.dtype(self.dtype) if self.use_one_hot else None)

    def extend_repr(self):
        return (f"vocab_size={self.vocab_size}, embedding_size={self.embedding_size}, "
                f"use_one_hot={self.use_one_hot}, embedding_table={self.embedding_table}, "
                f"dtype={self.dtype}, padding_idx={self.padding_idx}")


@host_first
@functools.partial(tiered_jit, inline=True, static_argnames=("one_hot_dtype",))
def _embed(table, ids, *, one_hot_dtype):
    """Gather (or one-hot matmul) of the rows; the output is ``ids.shape + (embedding_size,)``."""
    flat = jnp.reshape(ids, (-1,))
    if one_hot_dtype is not None:
        hot = jax.nn.one_hot(flat, table.shape[0], dtype=one_hot_dtype)
        out = jnp.matmul(hot.astype(table.dtype), table)
    else:
        out = jnp.take(table, flat, axis=0, mode="fill")
    return out.reshape(ids.shape + (table.shape[1],))
