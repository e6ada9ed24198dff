"""mindspore.communication on one process: ranks, groups and their refusals."""

import pytest

from cellkit import communication as comm


def test_world_on_one_process():
    comm.init()
    assert comm.GlobalComm.INITED
    assert (comm.get_rank(), comm.get_group_size(), comm.get_local_rank(), comm.get_local_rank_size()) == (0, 1, 0, 1)
    assert comm.get_process_group_ranks() == [0]
    assert comm.get_comm_name() == comm.HCCL_WORLD_COMM_GROUP


def test_groups():
    comm.create_group("g0", [0])
    try:
        assert comm.get_group_size("g0") == 1 and comm.get_rank("g0") == 0
        assert comm.get_group_rank_from_world_rank(0, "g0") == 0 and comm.get_world_rank_from_group_rank("g0", 0) == 0
        with pytest.raises(ValueError, match="rank_ids must be distinct ranks in"):
            comm.create_group("g1", [0, 3])
    finally:
        comm.destroy_group("g0")
    with pytest.raises(ValueError, match="no group named 'g0'"):
        comm.get_group_size("g0")
    with pytest.raises(ValueError, match="backend_name"):
        comm.init("gloo")
