"""A minimal ``GradOperation`` for the wrappers: ``grad(network, weights)(*inputs[, sens])``, on cellkit's ``grad``.

MindSpore's training cells hold ``self.grad = ops.GradOperation(get_by_list=True,
sens_param=True)`` and their subclasses call it as
``self.grad(self.network, self.weights)(*inputs, sens)``; this is that callable.

* ``get_all=False, get_by_list=False``: the gradient of the first input;
* ``get_all=True``: a tuple with the gradient of every input;
* ``get_by_list=True``: a tuple with the gradient of every weight;
* both: ``(input gradients, weight gradients)``;
* ``sens_param=True``: the last input is the sensitivity (the output's
  cotangent, broadcast to the output); otherwise it is all ones.

>>> import cellkit as ms
>>> from cellkit import nn
>>> from cellkit.nn.wrap._grad import GradOperation
>>> net = nn.Dense(2, 1, weight_init="ones", bias_init="zeros")
>>> grad = GradOperation(get_by_list=True, sens_param=True)
>>> gw, gb = grad(net, net.trainable_params())(ms.Tensor([[1.0, 2.0]]), ms.Tensor([[3.0]]))
>>> gw, gb
(Array([[3., 6.]], dtype=float32), Array([3.], dtype=float32))
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...engine import value_and_grad
from ...parameter import Parameter

__all__ = ["GradOperation"]


def _weighted(out, sens):
    """``sum(out * sens)`` over the leaves of ``out``: its vector-Jacobian product with ``sens`` is the gradient."""
    outs = jax.tree_util.tree_leaves(out)
    sense = jax.tree_util.tree_leaves(sens)
    if len(outs) != len(sense):
        raise ValueError(f"GradOperation: the sensitivity has {len(sense)} Tensors but the network returns "
                         f"{len(outs)}; pass one per output")
    total = 0.0
    for o, s in zip(outs, sense):
        s = jax.lax.stop_gradient(jnp.asarray(s.value if isinstance(s, Parameter) else s))
        total = total + jnp.sum(o * s.astype(jnp.result_type(o)))
    return total


class GradOperation:
    """``GradOperation(get_all=False, get_by_list=False, sens_param=False)``: see the module docstring."""

    def __init__(self, get_all=False, get_by_list=False, sens_param=False):
        for name, value in (("get_all", get_all), ("get_by_list", get_by_list), ("sens_param", sens_param)):
            if not isinstance(value, bool):
                raise TypeError(f"For 'GradOperation', the '{name}' must be a bool, but got "
                                f"{type(value).__name__}.")
        self.get_all = get_all
        self.get_by_list = get_by_list
        self.sens_param = sens_param

    def value_and_grad(self, fn, weights=None):
        """``f(*inputs[, sens]) -> (fn's output, gradients)``, in one forward pass."""
        if self.get_by_list and weights is None:
            raise TypeError("For 'GradOperation', when 'get_by_list' is True the weights must be given: "
                            "grad(network, weights)")
        weights = tuple(weights) if self.get_by_list else None
        get_all, sens_param = self.get_all, self.sens_param

        def grad_fn(*inputs):
            if sens_param:
                if not inputs:
                    raise TypeError("GradOperation(sens_param=True): the last input must be the sensitivity")
                *inputs, sens = inputs
            if get_all:
                positions = tuple(range(len(inputs)))
            else:
                positions = None if weights is not None else 0
            if positions == () and weights is None:
                raise ValueError("GradOperation(get_all=True): the function has no inputs to differentiate")

            def target(*args):
                out = fn(*args)
                return (_weighted(out, sens) if sens_param else out), out

            (_, out), grads = value_and_grad(target, positions if positions != () else None, weights,
                                             has_aux=True)(*inputs)
            if get_all and weights is not None:
                gx, gw = grads if positions else ((), grads)
                return out, ((gx,) if len(positions) == 1 else tuple(gx), tuple(gw))
            if get_all:
                return out, ((grads,) if len(positions) == 1 else tuple(grads))
            if weights is not None:
                return out, tuple(grads)
            return out, grads

        return grad_fn

    def __call__(self, fn, weights=None):
        """``f(*inputs[, sens]) -> gradients``."""
        both = self.value_and_grad(fn, weights)

        def grad_fn(*inputs):
            return both(*inputs)[1]
        return grad_fn
