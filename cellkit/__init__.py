"""cellkit: MindSpore's Cell/Parameter programming model on JAX.

Port MindSpore code by changing ``import mindspore as ms`` to
``import cellkit as ms``. Cells are JAX pytrees; ``cellkit.jit`` is ``jax.jit``
with Parameters read as inputs and written back.

>>> import cellkit as ms
>>> ms.Parameter(ms.Tensor([1., 2.]), name="w")
Parameter (name=w, shape=(2,), dtype=Float32, requires_grad=True)
"""

from . import dtype
from .dtype import (Type, bfloat16, bool_, complex64, complex128, double, dtype_to_nptype,
                    dtype_to_pytype, float16, float32, float64, float_, half, int8, int16, int32,
                    int64, int_, pytype_to_dtype, single, uint, uint8, uint16, uint32, uint64)
from .tensor import Tensor, from_numpy, is_tensor, tensor
from .parameter import Parameter, ParameterTuple
from .random import get_seed, set_seed
from . import initializer
from .cell import Cell
from .context import GRAPH_MODE, PYNATIVE_MODE, get_context, set_context
from .parallel_context import (ParallelMode, get_auto_parallel_context, reset_auto_parallel_context,
                               set_auto_parallel_context)
from .engine import grad, jacfwd, jacrev, jit, jvp, recompute, value_and_grad, vjp, vmap
from .checkpoint import load_checkpoint, load_param_into_net, save_checkpoint
from . import common, ops, parallel, random
from . import nn
from . import tensor_methods
from . import train
from . import amp
from .train import Model
from .train.loss_scale_manager import DynamicLossScaleManager, FixedLossScaleManager, LossScaleManager

tensor_methods.install()

__version__ = "0.1.0"

__all__ = [
    "Tensor", "Parameter", "ParameterTuple", "Cell", "set_seed", "get_seed", "jit", "grad",
    "value_and_grad", "vjp", "jvp", "jacfwd", "jacrev", "vmap", "recompute", "set_context", "get_context",
    "GRAPH_MODE", "PYNATIVE_MODE", "nn", "ops", "parallel",
    "dtype", "dtype_to_nptype", "pytype_to_dtype", "dtype_to_pytype", "is_tensor", "tensor", "from_numpy", "initializer",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
    "bfloat16", "float32", "float64", "bool_", "complex64", "complex128",
    "save_checkpoint", "load_checkpoint", "load_param_into_net", "common", "train", "communication",
    "ParallelMode", "set_auto_parallel_context", "get_auto_parallel_context", "reset_auto_parallel_context",
    "amp", "Model", "LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager",
]


def __getattr__(name):
    # Subpackages with heavier imports load on first use (``import cellkit.dataset`` works too).
    if name in ("dataset", "communication"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'cellkit' has no attribute {name!r}")
