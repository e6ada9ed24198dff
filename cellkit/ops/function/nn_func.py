"""Neural-network functions (MindSpore's ``ops/function/nn_func.py``).

The activations live in ``activation_func.py`` and the losses in ``loss_func.py``.
"""

from __future__ import annotations

from ._utils import exporter, install_renames

__all__ = []
_public = exporter(__all__)

# name: (JAX function, MindSpore signature) — the op is that function, with Parameters accepted.
RENAMES = {}
install_renames(globals(), __all__, RENAMES)
