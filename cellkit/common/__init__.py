"""``cellkit.common``: MindSpore's ``mindspore.common`` namespace (dtype, Tensor, Parameter, initializers).

>>> from cellkit.common.initializer import Normal
>>> from cellkit.common import dtype as mstype
>>> mstype.float32
Float32
"""

from . import dtype, initializer, parameter, tensor
from .dtype import *  # noqa: F401,F403
from .parameter import Parameter, ParameterTuple
from .tensor import Tensor

__all__ = ["dtype", "initializer", "parameter", "tensor", "Tensor", "Parameter", "ParameterTuple",
           *dtype.__all__]
