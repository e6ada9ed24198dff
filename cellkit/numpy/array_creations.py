"""Array creation (``mindspore.numpy.array_creations``): the functions of ``_creation`` and ``trace``.

The functions are built from the tables in the private modules (``_registry.install``), so each
is one line: MindSpore's signature, the JAX function and MindSpore's dtype rule.

>>> from cellkit.numpy import array_creations
>>> array_creations.zeros((2,), "int32")
Array([0, 0], dtype=int32)
"""

from __future__ import absolute_import

from ._registry import install
from ._creation import MGridClass, NdGrid, OGridClass, mgrid, ogrid  # noqa: F401 - public
from ._tables import ALL

array_creations_module = [
    "array", "asarray", "asfarray", "ones", "zeros", "full", "randn", "rand", "randint", "arange", "linspace",
    "logspace", "eye", "identity", "empty", "empty_like", "ones_like", "zeros_like", "full_like", "diagonal",
    "tril", "triu", "tri", "trace", "meshgrid", "mgrid", "ogrid", "diagflat", "diag", "diag_indices", "ix_",
    "indices", "geomspace", "vander", "hamming", "hanning", "bartlett", "blackman", "triu_indices",
    "tril_indices", "triu_indices_from", "tril_indices_from", "histogram_bin_edges", "pad",
]

__all__ = array_creations_module + ['copy']

install({name: ALL[name] for name in __all__ if name in ALL}, globals())
