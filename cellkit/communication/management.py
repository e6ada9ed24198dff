"""MindSpore's ``mindspore.communication`` over ``jax.distributed`` and JAX's process indices.

A MindSpore rank is a process; so it is here: ``get_rank()`` is
``jax.process_index()`` and ``get_group_size()`` is ``jax.process_count()``.
Each process drives all of its local devices (``jax.local_devices()``), so
code that shards a dataset by rank (``num_shards=get_group_size(),
shard_id=get_rank()``) reads each process's share, and data parallelism over
the devices (``set_auto_parallel_context``) splits it further. ``init()``
starts ``jax.distributed`` when the process was started as one of several
(JAX's coordinator settings in the environment, see docs/distributed.md), and
is a no-op for a single process. There is no collective of cellkit's own: XLA
inserts them.

>>> from cellkit import communication as comm
>>> comm.init()
>>> comm.get_rank(), comm.get_group_size()
(0, 1)
"""

from __future__ import annotations

import os

import jax

__all__ = ["GlobalComm", "HCCL_WORLD_COMM_GROUP", "NCCL_WORLD_COMM_GROUP", "MCCL_WORLD_COMM_GROUP", "init",
           "release", "get_rank", "get_group_size", "get_local_rank", "get_local_rank_size", "create_group",
           "destroy_group", "get_group_rank_from_world_rank", "get_world_rank_from_group_rank",
           "get_process_group_ranks", "get_comm_name"]

HCCL_WORLD_COMM_GROUP = "hccl_world_group"
NCCL_WORLD_COMM_GROUP = "nccl_world_group"
MCCL_WORLD_COMM_GROUP = "mccl_world_group"
_BACKENDS = {"hccl": HCCL_WORLD_COMM_GROUP, "nccl": NCCL_WORLD_COMM_GROUP, "mccl": MCCL_WORLD_COMM_GROUP}


class GlobalComm:
    """The world group's name, the backend and whether ``init`` ran."""
    BACKEND = "hccl"
    WORLD_COMM_GROUP = HCCL_WORLD_COMM_GROUP
    INITED = False


_groups = {}


def _is_world(group) -> bool:
    return group in (None, GlobalComm.WORLD_COMM_GROUP, *_BACKENDS.values())


def init(backend_name=None) -> None:
    """Join the processes of a multi-process run (``jax.distributed.initialize``); one process: nothing to do."""
    if backend_name is not None and backend_name not in _BACKENDS:
        raise ValueError(f"init: backend_name must be one of {sorted(_BACKENDS)} or None, got {backend_name!r}")
    if backend_name is not None:
        GlobalComm.BACKEND, GlobalComm.WORLD_COMM_GROUP = backend_name, _BACKENDS[backend_name]
    multi = any(k in os.environ for k in ("JAX_COORDINATOR_ADDRESS", "COORDINATOR_ADDRESS"))
    if multi and not GlobalComm.INITED and jax.process_count() == 1:
        jax.distributed.initialize()
    GlobalComm.INITED = True


def release() -> None:
    """Leave the multi-process run."""
    if GlobalComm.INITED and jax.process_count() > 1:
        jax.distributed.shutdown()
    GlobalComm.INITED = False


def _ranks(group):
    if _is_world(group):
        return list(range(jax.process_count()))
    if group not in _groups:
        raise ValueError(f"communication: no group named {group!r}; create it with create_group (groups: "
                         f"{sorted(_groups) or 'none'})")
    return _groups[group]


def get_rank(group=GlobalComm.WORLD_COMM_GROUP) -> int:
    """This process's rank in ``group`` (in the world: ``jax.process_index()``)."""
    return _ranks(group).index(jax.process_index()) if not _is_world(group) else jax.process_index()


def get_group_size(group=GlobalComm.WORLD_COMM_GROUP) -> int:
    """The number of processes in ``group``."""
    return len(_ranks(group))


def get_local_rank(group=GlobalComm.WORLD_COMM_GROUP) -> int:
    """This process's rank among the processes on its host (JAX runs one per host here: 0)."""
    _ranks(group)
    return 0


def get_local_rank_size(group=GlobalComm.WORLD_COMM_GROUP) -> int:
    """The number of processes on this host in ``group`` (one)."""
    _ranks(group)
    return 1


def create_group(group, rank_ids, options=None) -> None:
    """Name a subset of the world's ranks."""
    if not isinstance(group, str) or not group or _is_world(group):
        raise ValueError(f"create_group: group must be a new, non-empty name, got {group!r}")
    ids = list(rank_ids)
    world = jax.process_count()
    if not ids or len(set(ids)) != len(ids) or any(not isinstance(r, int) or not 0 <= r < world for r in ids):
        raise ValueError(f"create_group: rank_ids must be distinct ranks in [0, {world - 1}], got {rank_ids!r}")
    _groups[group] = sorted(ids)


def destroy_group(group) -> None:
    if _is_world(group):
        raise ValueError("destroy_group: the world group cannot be destroyed")
    _ranks(group)
    del _groups[group]


def get_group_rank_from_world_rank(world_rank_id, group) -> int:
    ranks = _ranks(group)
    if world_rank_id not in ranks:
        raise ValueError(f"get_group_rank_from_world_rank: rank {world_rank_id} is not in group {group!r}")
    return ranks.index(world_rank_id)


def get_world_rank_from_group_rank(group, group_rank_id) -> int:
    ranks = _ranks(group)
    if not 0 <= group_rank_id < len(ranks):
        raise ValueError(f"get_world_rank_from_group_rank: group {group!r} has {len(ranks)} ranks, got {group_rank_id}")
    return ranks[group_rank_id]


def get_process_group_ranks(group=GlobalComm.WORLD_COMM_GROUP) -> list:
    return list(_ranks(group))


def get_comm_name(group=GlobalComm.WORLD_COMM_GROUP) -> str:
    _ranks(group)
    return GlobalComm.WORLD_COMM_GROUP if _is_world(group) else group
