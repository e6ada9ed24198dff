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
from ..engine import JitConfig, jit, mutable
from ..random import (Generator, get_rng_state, get_seed, initial_seed, manual_seed, seed, set_rng_state,
                      set_seed)
from ..tensor import from_numpy

__all__ = ["dtype", "initializer", "parameter", "tensor", "Tensor", "Parameter", "ParameterTuple", "jit",
           "JitConfig", "mutable", "from_numpy", "set_seed", "get_seed", "manual_seed", "seed", "initial_seed",
           "Generator", "get_rng_state", "set_rng_state", *dtype.__all__]
