"""Shape and layout (``mindspore.numpy.array_ops``): the functions of ``_shape`` and ``size``.

The functions are built from the tables in the private modules (``_registry.install``), so each
is one line: MindSpore's signature, the JAX function and MindSpore's dtype rule.

>>> from cellkit.numpy import array_ops
>>> array_ops.size(array_ops.reshape([1, 2, 3, 4], (2, 2)), axis=0)
2
"""

from __future__ import absolute_import

from ._registry import install
from ._tables import ALL

array_ops_module = [
    "transpose", "expand_dims", "squeeze", "rollaxis", "swapaxes", "reshape", "ravel", "concatenate", "where",
    "atleast_1d", "atleast_2d", "atleast_3d", "column_stack", "hstack", "dstack", "vstack", "stack", "unique",
    "moveaxis", "tile", "broadcast_to", "broadcast_arrays", "append", "roll", "split", "vsplit", "flip",
    "flipud", "fliplr", "hsplit", "dsplit", "take_along_axis", "take", "repeat", "rot90", "select",
    "array_split", "choose", "size", "array_str", "apply_along_axis", "piecewise", "unravel_index",
    "apply_over_axes", "argwhere", "intersect1d",
]

__all__ = array_ops_module + []

install({name: ALL[name] for name in __all__}, globals())
