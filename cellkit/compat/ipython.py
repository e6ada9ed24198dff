"""``%load_ext cellkit``: the ``mindspore`` alias and the assignment rewrite in IPython/Jupyter.

Loading the extension installs the alias (:func:`cellkit.compat.install`) and, when
``cellkit.rewrite`` is present, adds an AST transformer that rewrites each cell as
``cellkit run`` rewrites a script. ``%unload_ext cellkit`` removes both.
"""

import ast
from .finder import rewrite_module
from .hook import install, uninstall

__all__ = ["CellRewriter", "load_ipython_extension", "unload_ipython_extension"]


class CellRewriter(ast.NodeTransformer):
    """IPython AST transformer: each cell's module goes through ``cellkit.rewrite.rewrite_tree``."""

    def __init__(self, rewrite_tree):
        self.rewrite_tree = rewrite_tree

    def visit(self, node):
        return ast.fix_missing_locations(self.rewrite_tree(node))


def _rewrite_tree():
    rewrite = rewrite_module()
    return None if rewrite is None else rewrite.rewrite_tree


def load_ipython_extension(ipython):
    """Install the alias and the cell rewrite in ``ipython`` (an ``InteractiveShell``)."""
    install()
    if any(isinstance(t, CellRewriter) for t in ipython.ast_transformers):
        return
    rewrite_tree = _rewrite_tree()
    if rewrite_tree is not None:
        ipython.ast_transformers.append(CellRewriter(rewrite_tree))


def unload_ipython_extension(ipython):
    """Remove the cell rewrite and the alias."""
    ipython.ast_transformers[:] = [t for t in ipython.ast_transformers if not isinstance(t, CellRewriter)]
    uninstall()
