"""Collective Primitives (MindSpore's ``ops/operations/comm_ops.py``): ``AllReduce``, ``AllGather``,
``ReduceScatter``, ``Broadcast``, ``AlltoAll`` and the rest.

A Primitive's ``group`` is either a mapped axis bound by ``jax.shard_map``/``jax.vmap`` (the op is
the ``jax.lax`` collective over it) or a communication group of one process, where each op has its
one-member meaning (see ``cellkit.ops.function.comm_func`` and docs/distributed.md). Unlike the
functional forms, a Primitive returns its result.

>>> import jax, jax.numpy as jnp
>>> import cellkit as ms
>>> from cellkit.ops import operations as P
>>> P.AllGather()(ms.Tensor([[1., 2.]]))
Array([[1., 2.]], dtype=float32)
>>> jax.vmap(lambda x: P.AllReduce(group="dp")(x), axis_name="dp")(jnp.arange(3, dtype=jnp.float32))
Array([3., 3., 3.], dtype=float32)
"""

from __future__ import annotations

import jax.numpy as jnp

from ..function import comm_func as C
from ..function._utils import _v
from ..primitive import REQUIRED, install_primitives

__all__ = []
WORLD = "hccl_world_group"


def _check_op(op, group, **_):
    if not isinstance(op, str):
        raise TypeError(f"For 'AllReduce', the 'op' must be str, but got {type(op).__name__}.")
    if op not in C._REDUCE_OPS:
        raise ValueError(f"op must be one of {list(C._REDUCE_OPS)} (ReduceOp), got {op!r}")
    _check_group(group)


def _check_group(group, **_):
    if not isinstance(group, str):
        raise TypeError(f"group must be a str, got {type(group).__name__}")


def _check_int(*names):
    def check(**config):
        for n in names:
            if not isinstance(config[n], int) or isinstance(config[n], bool):
                raise TypeError(f"the type of '{n}' should be 'int', but got type '{type(config[n]).__name__}'.")
        _check_group(config["group"])
    return check


def _all_reduce(x, *, op, group):
    name, _ = C.group_size(group, "AllReduce")
    return C.reduce_over(_v(x), op, name)


def _all_gather(x, *, group):
    name, _ = C.group_size(group, "AllGather")
    return C.gather_over(_v(x), name)


def _reduce_scatter(x, *, op, group):
    name, size = C.group_size(group, "ReduceScatter")
    return C.scatter_reduce_over(_v(x), op, name, size, "ReduceScatter")


def _root(who, rank, size):
    if not 0 <= rank < size:
        raise ValueError(f"{who}: the rank must be in [0, {size}) for a group of {size}, got {rank}")


def _broadcast(input_x, *, root_rank, group):
    if not isinstance(input_x, (tuple, list)):
        raise TypeError(f"Broadcast: input_x must be a tuple of tensors, got {type(input_x).__name__}")
    name, size = C.group_size(group, "Broadcast")
    _root("Broadcast", root_rank, size)
    return tuple(C.broadcast_over(_v(x), root_rank, name) for x in input_x)


def _all_to_all(x, *, split_count, split_dim, concat_dim, group):
    name, size = C.group_size(group, "AlltoAll")
    if split_count != size:
        raise ValueError(f"For 'AlltoAll, the 'split_count' must be equal to 'rank_size', but got 'split_count': "
                         f"{split_count}, 'rank_size': {size}")
    x = _v(x)
    if x.shape[split_dim] % split_count:
        raise ValueError(f"AlltoAll: dimension {split_dim} of the input ({x.shape}) must be divisible by "
                         f"split_count {split_count}")
    return C.all_to_all_over(x, name, split_dim, concat_dim)


def _all_to_all_v(input_x, send_numel_list, recv_numel_list, *, group, block_size):
    name, size = C.group_size(group, "AlltoAllV")
    x = jnp.ravel(_v(input_x))
    if name is not None:
        raise NotImplementedError("AlltoAllV over a mapped axis: uneven exchanges have no jax.lax collective; "
                                  "use AlltoAll with equal blocks")
    if len(send_numel_list) != 1 or len(recv_numel_list) != 1 or \
            send_numel_list[0] * block_size != x.size or recv_numel_list[0] != send_numel_list[0]:
        raise ValueError(f"AlltoAllV: a group of one sends its whole input to itself: send_numel_list and "
                         f"recv_numel_list must both be [{x.size // block_size}], got {send_numel_list}, "
                         f"{recv_numel_list}")
    return x


def _all_to_all_vc(input_x, send_count_matrix, *, group, block_size, transpose):
    name, size = C.group_size(group, "AlltoAllVC")
    x = jnp.ravel(_v(input_x))
    if name is not None:
        raise NotImplementedError("AlltoAllVC over a mapped axis: uneven exchanges have no jax.lax collective")
    counts = list(jnp.ravel(jnp.asarray(_v(send_count_matrix))).tolist())
    if counts != [x.size // block_size]:
        raise ValueError(f"AlltoAllVC: a group of one sends its whole input to itself: send_count_matrix must be "
                         f"[{x.size // block_size}], got {counts}")
    return x


def _barrier(*, group):
    C.group_size(group, "Barrier")


def _reduce(x, *, dest_rank, op, group):
    name, size = C.group_size(group, "Reduce")
    _root("Reduce", dest_rank, size)
    return C.reduce_over(_v(x), op, name)


def _collective_gather(x, *, dest_rank, group):
    name, size = C.group_size(group, "CollectiveGather")
    _root("CollectiveGather", dest_rank, size)
    return C.gather_over(_v(x), name)


def _collective_scatter(x, *, src_rank, group):
    name, size = C.group_size(group, "CollectiveScatter")
    _root("CollectiveScatter", src_rank, size)
    x = C.broadcast_over(_v(x), src_rank, name)
    return C.scatter_reduce_over(x, "max", name, size, "CollectiveScatter") if name is not None else x


# Name: (op, constructor arguments with MindSpore's defaults[, check])
PRIMITIVES = {
    "AllReduce": (_all_reduce, {"op": "sum", "group": WORLD}, _check_op),
    "AllGather": (_all_gather, {"group": WORLD}, _check_group),
    "ReduceScatter": (_reduce_scatter, {"op": "sum", "group": WORLD}, _check_op),
    "Broadcast": (_broadcast, {"root_rank": REQUIRED, "group": WORLD},
                  _check_int("root_rank")),
    "AlltoAll": (_all_to_all, {"split_count": REQUIRED, "split_dim": REQUIRED, "concat_dim": REQUIRED, "group": WORLD},
                 _check_int("split_count", "split_dim", "concat_dim")),
    "AlltoAllV": (_all_to_all_v, {"group": WORLD, "block_size": 1}, _check_group),
    "AlltoAllVC": (_all_to_all_vc, {"group": WORLD, "block_size": 1, "transpose": False}, _check_group),
    "Barrier": (_barrier, {"group": WORLD}, _check_group),
    "Reduce": (_reduce, {"dest_rank": REQUIRED, "op": "sum", "group": WORLD},
               lambda **c: (_check_int("dest_rank")(**c), _check_op(**c))),
    "CollectiveGather": (_collective_gather, {"dest_rank": REQUIRED, "group": WORLD}, _check_int("dest_rank")),
    "CollectiveScatter": (_collective_scatter, {"src_rank": 0, "group": WORLD}, _check_int("src_rank")),
}
install_primitives(globals(), __all__, PRIMITIVES)
