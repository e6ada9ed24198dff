"""``python -m cellkit run script.py [args]``: see :mod:`cellkit.compat.runner`."""

import sys

from .compat.runner import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
