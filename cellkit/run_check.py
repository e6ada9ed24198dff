"""``run_check()``: check the installation by running one small computation, as MindSpore's does."""

from __future__ import annotations

import jax
import numpy as np

from .device_manager import get_current_device
from .ops import mul
from .tensor import Tensor
from .version import __version__

__all__ = ["run_check"]


def run_check() -> None:
    """Print the version and whether a multiplication on the default device gives the right result.

    >>> import cellkit as ms
    >>> ms.run_check()  # doctest: +ELLIPSIS
    cellkit version: ...
    The result of multiplication calculation is correct, cellkit has been installed on platform [CPU] successfully!
    """
    try:
        print(f"cellkit version: {__version__} (jax {jax.__version__})")
        a = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
        got = np.asarray(mul(Tensor(a), Tensor(a)))
        if not np.allclose(got, a * a):
            raise ValueError(f"the result of multiplication is {got}, expected {a * a}")
        print("The result of multiplication calculation is correct, cellkit has been installed on platform "
              f"[{get_current_device()[0]}] successfully!")
    except Exception as e:  # noqa: BLE001 (reported, as MindSpore's run_check does)
        print("cellkit running check failed.")
        print(str(e))
