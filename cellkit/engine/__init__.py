"""The state engine: frames, ``jit``, ``grad``/``value_and_grad`` and custom ``bprop``.

One mechanism serves every stateful transform. A *frame* maps Parameters to
the (traced) values they have inside a transform and records which ones were
written. Parameters read through a frame never become baked-in constants:

* ``jit`` opens a frame whose values are the compiled function's inputs. The
  Parameters a function reads are those reachable from its Cell/Parameter
  arguments plus those it reaches through closures or globals, found by one
  extra (abstract) trace the first time. After the call, exactly the written
  Parameters are updated.
* ``grad``/``value_and_grad`` open a nested frame for the differentiated
  weights; writes made inside (BatchNorm statistics, the random key) come out
  as auxiliary outputs and are applied to the enclosing frame afterwards.
* A Cell with a ``bprop`` method runs as a ``jax.custom_vjp`` whose primal
  takes the Cell's Parameter values (and the random key) as explicit inputs.

Modules: ``frame`` (Frame and its helpers), ``capture`` (Cell signatures, the
globals and closures a function reaches), ``arguments`` (how ``jit`` splits a
call), ``jit_function`` (``jit``), ``grad_function`` (``grad``,
``value_and_grad``), ``bprop`` (custom ``bprop`` and GRAPH_MODE calls),
``custom_jvp`` (Cells with a forward-mode rule), ``transforms`` (``vjp``, ``jvp``,
Jacobians, Hessians, ``GradOperation``, all over one helper, ``pure``), ``taylor``
(``jet``, ``derivative``, ``linearize``; ``jet_rules`` fills in missing Taylor rules),
``int_inputs`` (MindSpore's rule for gradients of integer inputs), ``batching``
(``vmap``), ``checkpointing`` (``recompute`` on ``jax.checkpoint``), ``hooks`` (Cell
hooks, ``HookBackward``, ``InsertGradientOf``), ``control_flow`` (``ForiLoop``,
``WhileLoop``, ``Scan`` with state), ``fallback`` (Python control flow on traced
values under ``jit``).

>>> import numpy as np
>>> import cellkit as ms
>>> from cellkit import nn, ops
>>> b = ms.Parameter(ms.Tensor([1., 2., 3.]), name="b")
>>> @ms.jit
... def modify():
...     ops.assign(b, ms.Tensor([7, 8, 9]))
...     return True
>>> _ = modify()
>>> b.asnumpy()
array([7., 8., 9.], dtype=float32)
"""

from .frame import Frame, _Active, _apply_writes, _Rediscover  # noqa: F401  (cellkit.amp, tests)
from .capture import cell_signature  # noqa: F401
from .jit_function import JitFunction, compile_count, jit
from .grad_function import GradFunction, grad, value_and_grad
from .bprop import _graph_call  # noqa: F401  (installs the custom-bprop hook; tests read it)
from .transforms import GradOperation, hessian, hvp, jacfwd, jacrev, jvp, vjp
from .taylor import derivative, jet, linearize
from .batching import vmap
from .checkpointing import POLICIES, recompute
from .hooks import HookBackward, InsertGradientOf  # also installs the hook-running call path
from .control_flow import ForiLoop, Scan, WhileLoop
from .jit_config import JitConfig, mutable

__all__ = ["jit", "grad", "value_and_grad", "JitFunction", "GradFunction", "Frame", "compile_count",
           "vjp", "jvp", "jacfwd", "jacrev", "hessian", "hvp", "vmap", "GradOperation", "recompute",
           "POLICIES", "HookBackward", "InsertGradientOf", "ForiLoop", "WhileLoop", "Scan", "JitConfig",
           "mutable", "jet", "derivative", "linearize"]
