"""Collective communication (MindSpore's ``ops/function/comm_func.py``): ``all_reduce``,
``all_gather_into_tensor``, ``reduce_scatter_tensor``, ``broadcast``, ``all_to_all`` and the rest.

A collective runs over a *group*, and a group is one of two things here:

- the name of a mapped axis bound by ``jax.shard_map``, ``jax.vmap`` or ``jax.pmap``
  (``axis_name=...``): the op is the matching ``jax.lax`` collective over that axis
  (``psum``, ``pmax``, ``pmin``, ``pmean``, ``all_gather``, ``psum_scatter``,
  ``all_to_all``), one member per index of the axis;
- a communication group of ``cellkit.communication`` (``None`` is the world group): a group
  of one process is the only size these ops run on, where every collective has its
  one-member meaning (a reduction or a broadcast returns the input, a gather
  concatenates one copy). Across several processes XLA inserts the collectives itself
  from the shardings (docs/distributed.md), and these ops raise.

As in MindSpore, the functional ops write their result into their destination argument by
default (``set_comm_ops_inplace(False)`` makes them return ``(result, handle)``). A
destination can only be written when it is a Parameter; a ``jax.Array`` cannot change,
so an in-place op whose result differs from it raises and names the fix.

>>> import jax, jax.numpy as jnp
>>> import cellkit as ms
>>> from cellkit import ops
>>> ops.set_comm_ops_inplace(False)
>>> ops.all_reduce(ms.Tensor([1., 2.]))
(Array([1., 2.], dtype=float32), None)
>>> jax.vmap(lambda x: ops.all_reduce(x, group="dp")[0], axis_name="dp")(jnp.arange(3, dtype=jnp.float32))
Array([3., 3., 3.], dtype=float32)
>>> ops.set_comm_ops_inplace(True)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ... import communication as _comm
from ...parameter import Parameter
from ._utils import _v, exporter

# Stateful, host-side or transform ops: eager calls run op by op (see cellkit.eager_jit).
EAGER_JIT = False
__all__ = []
_public = exporter(__all__)


@_public
class ReduceOp:
    """The reductions of a collective, as MindSpore's strings."""
    SUM = "sum"
    MAX = "max"
    MIN = "min"
    PROD = "prod"
    AVG = "avg"


_REDUCE_OPS = ("sum", "prod", "min", "max", "avg")
_COMM_FUNCS = ["all_reduce", "all_gather_into_tensor", "all_gather_into_tensor_uneven", "all_to_all",
               "all_to_all_single", "reduce_scatter_tensor", "reduce_scatter_tensor_uneven", "isend", "irecv",
               "send", "recv", "gather", "scatter", "all_gather", "reduce_scatter", "barrier", "broadcast",
               "reduce", "batch_isend_irecv", "all_gather_object", "broadcast_object_list", "gather_object",
               "scatter_object_list", "send_object_list", "recv_object_list", "gather_into_tensor",
               "scatter_tensor", "all_to_all_v_c"]
_INPLACE = {name: True for name in _COMM_FUNCS}


@_public
def set_comm_ops_inplace(is_enable, func_list=None):
    """Whether the functional collectives write into their destination (``True``, the default) or
    return ``(result, handle)``; ``func_list`` limits the switch to those functions.

    >>> from cellkit import ops
    >>> ops.set_comm_ops_inplace(False, ["all_reduce"])
    >>> ops.set_comm_ops_inplace(True)
    """
    if not isinstance(is_enable, bool):
        raise TypeError("For 'set_comm_ops_inplace', the argument 'is_enable' must be type of bool, "
                        f"but got 'is_enable' type : {type(is_enable)}.")
    if func_list is None:
        for name in _INPLACE:
            _INPLACE[name] = is_enable
        return
    if not isinstance(func_list, (list, tuple)):
        raise TypeError(f"set_comm_ops_inplace: func_list must be a list or tuple, got {type(func_list).__name__}")
    for name in func_list:
        if name not in _INPLACE:
            raise ValueError(f"set_comm_ops_inplace: {name!r} is not a communication function; "
                             f"the names are {sorted(_INPLACE)}")
        _INPLACE[name] = is_enable


@_public
class CommHandle:
    """The handle of an ``async_op=True`` collective; ``wait()`` returns at once (JAX orders the
    computation itself)."""

    def wait(self):
        return None


# -- groups ------------------------------------------------------------------------------------

def bound_axis(group):
    """``group`` when it names a mapped axis bound around this call, else None."""
    if not isinstance(group, str):
        return None
    try:
        jax.lax.axis_index(group)
    except NameError:
        return None
    return group


def group_size(group, who):
    """``(axis name or None, members)`` of ``group``; a process group must have one member."""
    name = bound_axis(group)
    if name is not None:
        return name, jax.lax.axis_size(name)
    try:
        size = _comm.get_group_size(_comm.GlobalComm.WORLD_COMM_GROUP if group is None else group)
    except ValueError as e:
        raise ValueError(f"{who}: {e}; or call it inside jax.shard_map/jax.vmap with axis_name={group!r}") from None
    if size != 1:
        raise NotImplementedError(
            f"{who}: group {group!r} has {size} processes; collectives across processes are inserted by XLA from "
            "the shardings (jit a step with sharded inputs), or run the op inside jax.shard_map with the group "
            "name as the axis name (docs/distributed.md)")
    return None, 1


# -- the collectives over an axis (or a group of one) --------------------------------------------

def reduce_over(x, op, name):
    """``x`` reduced with ``op`` over the members (one member: ``x`` itself)."""
    if name is None:
        return x
    if op == "sum":
        return jax.lax.psum(x, name)
    if op == "max":
        return jax.lax.pmax(x, name)
    if op == "min":
        return jax.lax.pmin(x, name)
    if op == "avg":
        return jax.lax.pmean(x, name)
    return jnp.prod(jax.lax.all_gather(x, name), axis=0).astype(x.dtype)


def gather_over(x, name, axis=0):
    """The members' ``x`` concatenated along ``axis``."""
    return x if name is None else jax.lax.all_gather(x, name, axis=axis, tiled=True)


def scatter_reduce_over(x, op, name, size, who):
    """``x`` reduced over the members, and this member's block of dimension 0."""
    if x.ndim == 0 or x.shape[0] % size:
        raise ValueError(f"{who}: dimension 0 of the input ({x.shape}) must be divisible by the group size {size}")
    if name is None:
        return x
    if op == "sum":
        return jax.lax.psum_scatter(x, name, scatter_dimension=0, tiled=True)
    full = reduce_over(x, op, name)
    block = x.shape[0] // size
    return jax.lax.dynamic_slice_in_dim(full, jax.lax.axis_index(name) * block, block, axis=0)


def broadcast_over(x, src, name):
    """Member ``src``'s ``x`` on every member."""
    return x if name is None else jax.lax.all_gather(x, name)[src]


def all_to_all_over(x, name, split_dim, concat_dim):
    """Block ``j`` of ``split_dim`` goes to member ``j``; the blocks received are concatenated along
    ``concat_dim``."""
    return x if name is None else jax.lax.all_to_all(x, name, split_dim, concat_dim, tiled=True)


# -- the functional forms --------------------------------------------------------------------

def _tensor(x, who, what="input tensor"):
    if isinstance(x, Parameter):
        return x.value
    if not isinstance(x, (jax.Array, jax.core.Tracer)):
        raise TypeError(f"For {who}, the {what} must be tensor, got {type(x).__name__}")
    return x


def _common(who, group, async_op, op=None):
    if op is not None and (not isinstance(op, str) or op not in _REDUCE_OPS):
        raise TypeError(f"For {who}, the input op value must be one of sum, prod, min, max, avg, got {op!r}")
    if group is not None and not isinstance(group, str):
        raise TypeError(f"The argument 'group' must be type of string, but got 'group' type : {type(group)}.")
    if not isinstance(async_op, bool):
        raise TypeError(f"The argument 'async_op' must be a bool, but got {type(async_op)}.")


def _finish(who, dest, current, result, async_op, what="tensor"):
    """Write ``result`` into ``dest`` (in-place mode) or return ``(result, handle)``."""
    handle = CommHandle() if async_op else None
    if not _INPLACE[who]:
        return result, handle
    if isinstance(dest, Parameter):
        if tuple(dest.shape) != tuple(result.shape):
            raise TypeError(f"For {who}, the output shape should be {tuple(result.shape)}, but got {tuple(dest.shape)}.")
        dest.assign_value(result.astype(dest.dtype))
    elif result is not current:
        raise TypeError(f"{who}: the {what} is a jax.Array, which cannot be written in place; pass a Parameter, or "
                        "call ops.set_comm_ops_inplace(False) to have the result returned")
    return handle


@_public
def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """``tensor`` reduced with ``op`` over ``group`` (see the module's notes on groups).

    >>> import cellkit as ms
    >>> p = ms.Parameter(ms.Tensor([1., 2.]), name="p")
    >>> ms.ops.all_reduce(p) is None
    True
    """
    _common("all_reduce", group, async_op, op)
    x = _tensor(tensor, "all_reduce")
    name, _ = group_size(group, "all_reduce")
    return _finish("all_reduce", tensor, x, reduce_over(x, op, name), async_op)


@_public
def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """The group's ``input_tensor``\\ s concatenated along dimension 0."""
    x = _tensor(input_tensor, "all_gather_into_tensor")
    if _INPLACE["all_gather_into_tensor"]:
        _tensor(output_tensor, "all_gather_into_tensor", "output tensor")
    _common("all_gather_into_tensor", group, async_op)
    name, _ = group_size(group, "all_gather_into_tensor")
    return _finish("all_gather_into_tensor", output_tensor, _v(output_tensor), gather_over(x, name), async_op,
                   "output tensor")


@_public
def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):  # noqa: A002
    """``input`` reduced over the group; each member keeps its block of dimension 0."""
    x = _tensor(input, "reduce_scatter_tensor")
    if _INPLACE["reduce_scatter_tensor"]:
        _tensor(output, "reduce_scatter_tensor", "output tensor")
    _common("reduce_scatter_tensor", group, async_op, op)
    name, size = group_size(group, "reduce_scatter_tensor")
    result = scatter_reduce_over(x, op, name, size, "reduce_scatter_tensor")
    return _finish("reduce_scatter_tensor", output, _v(output), result, async_op, "output")


@_public
def broadcast(tensor, src, group=None, async_op=False):
    """Member ``src``'s ``tensor`` written into every member's ``tensor`` (in-place only, as MindSpore)."""
    x = _tensor(tensor, "broadcast")
    _common("broadcast", group, async_op)
    if not isinstance(src, int):
        raise TypeError(f"For broadcast, src must be an int rank, got {type(src).__name__}")
    if not _INPLACE["broadcast"]:
        raise ValueError("Non-inplace mode is currently not supported.")
    name, size = group_size(group, "broadcast")
    if not 0 <= src < size:
        raise ValueError(f"broadcast: src must be a rank of the group, in [0, {size}), got {src}")
    return _finish("broadcast", tensor, x, broadcast_over(x, src, name), async_op)


@_public
def barrier(group=None, async_op=False, device_ids=None):
    """Wait for every member of ``group``: nothing to wait for in one process, and JAX orders the
    computation inside a mapped axis."""
    _common("barrier", group, async_op)
    group_size(group, "barrier")
    return CommHandle() if async_op else None


@_public
def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Member ``i`` sends ``input_tensor_list[j]`` to member ``j`` and receives member ``j``'s
    ``input_tensor_list[i]`` as ``output_tensor_list[j]``."""
    if not isinstance(input_tensor_list, (list, tuple)) or not input_tensor_list:
        raise TypeError(f"For all_to_all, input_tensor_list must be a non-empty list of tensors, "
                        f"got {type(input_tensor_list).__name__}")
    xs = [_tensor(t, "all_to_all", "input_tensor_list element") for t in input_tensor_list]
    _common("all_to_all", group, async_op)
    name, size = group_size(group, "all_to_all")
    if name is None:
        if len(xs) != 1:
            raise ValueError(f"all_to_all: the group has 1 member, so input_tensor_list needs 1 tensor, got {len(xs)}")
        received = xs
    else:
        received = list(jax.lax.all_to_all(jnp.stack(xs), name, 0, 0))
    if not isinstance(output_tensor_list, (list, tuple)) or len(output_tensor_list) != len(received):
        raise TypeError(f"For all_to_all, output_tensor_list must be a list of {len(received)} tensors (or shapes)")
    handle = CommHandle() if async_op else None
    outs = []
    for dest, got in zip(output_tensor_list, received):
        if not isinstance(dest, (list, tuple, Parameter, jax.Array)):
            raise TypeError(f"For all_to_all, each of output_tensor_list must be a tensor or a shape tuple, "
                            f"got {type(dest).__name__}")
        shape = tuple(dest) if isinstance(dest, (list, tuple)) else tuple(dest.shape)
        outs.append(got.reshape(shape))
    if not _INPLACE["all_to_all"]:
        return tuple(outs), handle
    for i, (dest, got) in enumerate(zip(output_tensor_list, outs)):
        if not isinstance(dest, Parameter):
            raise TypeError(f"all_to_all: output_tensor_list[{i}] is not a Parameter and cannot be written in place; "
                            "call ops.set_comm_ops_inplace(False) to have the results returned")
        dest.assign_value(got.astype(dest.dtype))
    return handle


@_public
def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,  # noqa: A002
                      group=None, async_op=False):
    """``input`` split in equal blocks along dimension 0, block ``j`` to member ``j``; the received
    blocks are concatenated."""
    x = _tensor(input, "all_to_all_single")
    _common("all_to_all_single", group, async_op)
    name, size = group_size(group, "all_to_all_single")
    for label, sizes in (("output_split_sizes", output_split_sizes), ("input_split_sizes", input_split_sizes)):
        if sizes and (len(sizes) != (1 if name is None else len(sizes)) or sum(sizes) != x.shape[0]):
            raise ValueError(f"all_to_all_single: {label} must have one size per member summing to {x.shape[0]}, "
                             f"got {sizes}")
        if sizes and name is not None and len(set(sizes)) != 1:
            raise NotImplementedError("all_to_all_single: uneven splits over a mapped axis are not supported")
    result = all_to_all_over(x, name, 0, 0)
    if output is not None and not isinstance(output, Parameter) and not _INPLACE["all_to_all_single"]:
        result = result.reshape(output.shape)
    return _finish("all_to_all_single", output, _v(output), result, async_op, "output")


def _fused_checks(who, x, x2, world_size, size, **restrictions):
    if not isinstance(world_size, int) or world_size != size:
        raise ValueError(f"{who}: world_size must be the group's size, {size}, got {world_size!r}")
    for label, (value, allowed) in restrictions.items():
        if value != allowed:
            raise ValueError(f"{who}: {label} supports only {allowed!r} (as MindSpore), got {value!r}")
    if x.ndim != 2 or x2.ndim != 2:
        raise ValueError(f"{who}: input and x2 must be 2-D, got {tuple(x.shape)} and {tuple(x2.shape)}")


@_public
def all_gather_matmul(input, x2, group, world_size, *, bias=None, gather_index=0, gather_output=True,  # noqa: A002
                      comm_turn=0, trans_input=False, trans_x2=False):
    """``(all_gather(input) @ x2, all_gather(input))``: the group's ``input``\\ s concatenated along
    dimension 0, times ``x2`` (its transpose with ``trans_x2``); the second output is empty when
    ``gather_output`` is False."""
    x, w = _tensor(input, "all_gather_matmul"), _tensor(x2, "all_gather_matmul", "x2")
    name, size = group_size(group, "all_gather_matmul")
    _fused_checks("all_gather_matmul", x, w, world_size, size, bias=(bias, None), gather_index=(gather_index, 0),
                  comm_turn=(comm_turn, 0), trans_input=(trans_input, False))
    gathered = gather_over(x, name)
    out = gathered @ (w.T if trans_x2 else w)
    return out, gathered if gather_output else jnp.zeros((0,), x.dtype)


@_public
def matmul_reduce_scatter(input, x2, group, world_size, *, reduce_op=ReduceOp.SUM, bias=None,  # noqa: A002
                          comm_turn=0, trans_input=False, trans_x2=False):
    """``reduce_scatter(input @ x2)``: the members' products summed, each member keeping its block of rows."""
    x, w = _tensor(input, "matmul_reduce_scatter"), _tensor(x2, "matmul_reduce_scatter", "x2")
    name, size = group_size(group, "matmul_reduce_scatter")
    _fused_checks("matmul_reduce_scatter", x, w, world_size, size, reduce_op=(reduce_op, "sum"), bias=(bias, None),
                  comm_turn=(comm_turn, 0), trans_input=(trans_input, False))
    return scatter_reduce_over(x @ (w.T if trans_x2 else w), "sum", name, size, "matmul_reduce_scatter")
