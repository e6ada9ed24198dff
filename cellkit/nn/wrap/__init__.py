"""``cellkit.nn.wrap``: training wrappers around a network (as ``mindspore.nn.wrap``)."""

from . import cell_wrapper, grad_reducer, loss_scale, pipeline, unsupported
from .cell_wrapper import *  # noqa: F401,F403
from .grad_reducer import *  # noqa: F401,F403
from .loss_scale import *  # noqa: F401,F403
from .pipeline import *  # noqa: F401,F403
from .unsupported import GraphCell, GetNextSingleOp  # noqa: F401

__all__ = [*cell_wrapper.__all__, *grad_reducer.__all__, *loss_scale.__all__, *pipeline.__all__, "GraphCell", "GetNextSingleOp"]
