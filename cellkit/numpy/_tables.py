"""Every function line of ``cellkit.numpy`` in one dict, for the public modules to install.

>>> from cellkit.numpy._tables import ALL
>>> ALL["roll"][0]
'a, shift, axis=None'
"""

from __future__ import absolute_import

from . import _creation, _elementwise, _logic, _numeric, _reduce, _shape

__all__ = ["ALL"]

ALL = {**_elementwise.table(), **_reduce.TABLE, **_creation.TABLE, **_shape.TABLE, **_numeric.TABLE,
       **_logic.TABLE}
