"""MindSpore ``nn`` names that have no meaning in a JAX program: each raises ``NotImplementedError`` naming the
alternative (listed in docs/differences.md).

>>> from cellkit import nn
>>> nn.GraphCell("net.mindir")
Traceback (most recent call last):
...
NotImplementedError: nn.GraphCell runs a MindIR graph, which JAX cannot execute; rebuild the network as Cells and load its weights with cellkit.load_checkpoint / load_param_into_net (or serialize a jitted function with jax.export).
"""

from __future__ import annotations

from ...cell import Cell

__all__ = ["GraphCell", "GetNextSingleOp", "unsupported_cell"]


def unsupported_cell(name, message, module=__name__):
    """A Cell class ``name`` whose construction raises ``NotImplementedError(message)``."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(message)

    return type(name, (Cell,), {"__init__": __init__, "__module__": module,
                                "__doc__": f"Not available in cellkit: {message}\n\n"
                                           f">>> from cellkit import nn\n>>> nn.{name}()\n"
                                           "Traceback (most recent call last):\n...\n"
                                           "NotImplementedError: ...\n"})


GraphCell = unsupported_cell(
    "GraphCell", "nn.GraphCell runs a MindIR graph, which JAX cannot execute; rebuild the network as Cells and "
    "load its weights with cellkit.load_checkpoint / load_param_into_net (or serialize a jitted function with "
    "jax.export).")
GetNextSingleOp = unsupported_cell(
    "GetNextSingleOp", "nn.GetNextSingleOp reads a device data queue, which cellkit does not have; iterate the "
    "dataset instead (dataset.create_tuple_iterator() / create_dict_iterator()) and pass the batches to the "
    "network.")
