"""Installing and removing the ``mindspore`` alias (:class:`~cellkit.compat.finder.AliasFinder`)."""

import sys

from .finder import ALIAS, AliasFinder

__all__ = ["install", "uninstall", "installed"]

_FINDER = AliasFinder()


def installed():
    """Whether the ``mindspore`` -> ``cellkit`` alias is in effect."""
    return _FINDER in sys.meta_path


def install():
    """Make ``import mindspore[.x]`` give ``cellkit[.x]`` (idempotent).

    Raises ``RuntimeError`` when a real MindSpore is already imported in this process:
    the two cannot share the name.
    """
    if installed():
        return
    existing = sys.modules.get(ALIAS)
    if existing is not None and getattr(existing, "__name__", None) != "cellkit":
        raise RuntimeError(f"cellkit.compat.install(): a real MindSpore is already imported "
                           f"({getattr(existing, '__file__', existing)!r}); start a fresh process")
    sys.meta_path.insert(0, _FINDER)


def uninstall():
    """Undo :func:`install`: remove the finder and the ``mindspore`` entries from ``sys.modules``.

    Modules already imported through the alias keep the cellkit modules they hold.
    """
    while _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in [n for n in sys.modules if n == ALIAS or n.startswith(ALIAS + ".")]:
        if getattr(sys.modules[name], "__name__", "").partition(".")[0] == "cellkit":
            del sys.modules[name]
