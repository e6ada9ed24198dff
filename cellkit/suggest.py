"""Close-match hints for error messages about unknown names.

>>> from cellkit.suggest import did_you_mean
>>> did_you_mean("xavier_unifrom", ["xavier_uniform", "normal", "zeros"])
"; did you mean 'xavier_uniform'?"
>>> did_you_mean("qqq", ["normal"])
''
"""

from __future__ import annotations

import difflib

__all__ = ["did_you_mean"]


def did_you_mean(name, names, n: int = 3) -> str:
    """``"; did you mean 'a', 'b'?"`` for the entries of ``names`` closest to ``name``, else ``''``."""
    close = difflib.get_close_matches(str(name), list(names), n=n)
    return f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
