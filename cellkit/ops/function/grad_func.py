"""Gradient and function transforms (MindSpore's ``ops/function/grad``): every one works on
functions and Cells that read Parameters through arguments, closures or globals, and
writes back the Parameters they assign (see ``cellkit.engine``)."""

from __future__ import annotations

import jax

from ...engine import (ForiLoop, GradOperation, HookBackward, InsertGradientOf, Scan, WhileLoop, grad, hessian, hvp, jacfwd, jacrev, jvp,
                       value_and_grad, vjp, vmap, jet, derivative, linearize)
from ._utils import _v, exporter

# Stateful, host-side or transform ops: eager calls run op by op (see cellkit.eager_jit).
EAGER_JIT = False
__all__ = ["grad", "value_and_grad", "vjp", "jvp", "jacfwd", "jacrev", "hessian", "hvp", "vmap",
           "GradOperation", "HookBackward", "InsertGradientOf", "ForiLoop", "WhileLoop", "Scan",
           "jet", "derivative", "linearize"]
_public = exporter(__all__)


@_public
def stop_gradient(value):
    """Block gradients through ``value`` (a Tensor or a tuple of them).

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> ms.grad(lambda x: (x * ops.stop_gradient(x)).sum())(ms.Tensor([2., 3.]))
    Array([2., 3.], dtype=float32)
    """
    return jax.tree_util.tree_map(lambda x: jax.lax.stop_gradient(_v(x)), value,
                                  is_leaf=lambda x: hasattr(x, "__jax_array__"))
