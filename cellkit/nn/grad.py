"""``nn.Jvp`` and ``nn.Vjp`` (MindSpore's ``nn/grad/cell_grad.py``): forward- and reverse-mode products as Cells.

They wrap ``fn`` (a Cell or a function, kept as ``self.fn``) and run ``ops.jvp`` / ``ops.vjp``
of :mod:`cellkit.engine.transforms`.

>>> import cellkit as ms
>>> from cellkit import nn
>>> nn.Jvp(lambda x: x * x)(ms.Tensor([1., 2.]), ms.Tensor([1., 1.]))
(Array([1., 4.], dtype=float32), Array([2., 4.], dtype=float32))
"""

from __future__ import annotations

from ..cell import Cell
from ..engine.transforms import jvp, vjp

__all__ = ["Jvp", "Vjp"]


class Jvp(Cell):
    """``(fn(*inputs), J v)``: ``Jvp(fn)(*inputs, v)`` (MindSpore 2.10's ``nn.Jvp``).

    ``v`` is one Tensor for one input, a tuple of Tensors (one per input) otherwise; the second
    result has the structure of ``fn``'s output.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> out, tangent = nn.Jvp(lambda x, y: x * y)(ms.Tensor([2.]), ms.Tensor([3.]),
    ...                                          (ms.Tensor([1.]), ms.Tensor([1.])))
    >>> tangent
    Array([5.], dtype=float32)
    """

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def construct(self, *args):
        if len(args) < 2:
            raise TypeError("For 'Jvp', the inputs must be the inputs of 'fn' followed by the vector 'v'.")
        inputs, v = args[:-1], args[-1]
        if len(inputs) == 1:
            return jvp(self.fn, inputs[0], v)
        if not isinstance(v, (tuple, list)):
            raise TypeError(f"For 'Jvp', 'v' must be a tuple of {len(inputs)} Tensors (one per input of 'fn'), but "
                            f"got {type(v).__name__}.")
        return jvp(self.fn, tuple(inputs), tuple(v))


class Vjp(Cell):
    """``(fn(*inputs), v^T J)``: ``Vjp(fn)(*inputs, v)`` (MindSpore 2.10's ``nn.Vjp``).

    ``v`` has the structure of ``fn``'s output; the second result is the gradient for the one
    input, or a tuple with one gradient per input.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.Vjp(lambda x: x ** 3)(ms.Tensor([1., 2.]), ms.Tensor([1., 1.]))
    (Array([1., 8.], dtype=float32), Array([ 3., 12.], dtype=float32))
    """

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def construct(self, *args):
        if len(args) < 2:
            raise TypeError("For 'Vjp', the inputs must be the inputs of 'fn' followed by the vector 'v'.")
        inputs, v = args[:-1], args[-1]
        out, fn = vjp(self.fn, *inputs)
        grads = fn(v)
        return out, (grads[0] if len(inputs) == 1 else grads)
