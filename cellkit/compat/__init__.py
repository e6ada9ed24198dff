"""Run MindSpore programs unchanged: ``import mindspore`` resolves to cellkit, on request.

Nothing here happens on ``import cellkit``. It happens when asked:

- ``cellkit run script.py [args]`` (or ``python -m cellkit run ...``) runs a script as
  ``python script.py`` would, with the alias installed;
- :func:`install` / :func:`uninstall` from Python;
- ``%load_ext cellkit`` in IPython or Jupyter (the alias, and the rewrite on every cell).

While installed, ``import mindspore.<path>`` gives the module ``cellkit.<path>`` itself
(the same object), and modules whose source mentions ``mindspore`` are compiled with
cellkit's assignment rewrite (``cellkit.rewrite``, when present).

>>> import sys
>>> from cellkit import compat
>>> compat.install()
>>> import mindspore.nn
>>> import cellkit.nn
>>> mindspore.nn is cellkit.nn, mindspore.nn.Cell is cellkit.Cell
(True, True)
>>> compat.uninstall()
>>> "mindspore" in sys.modules, compat.installed()
(False, False)
"""

from .finder import AliasFinder, RewritingLoader, compile_source, uses_mindspore
from .hook import install, installed, uninstall
from .ipython import load_ipython_extension, unload_ipython_extension
from .runner import main, run_module, run_script

__all__ = ["install", "uninstall", "installed", "run_script", "run_module", "main", "compile_source",
           "uses_mindspore", "AliasFinder", "RewritingLoader", "load_ipython_extension",
           "unload_ipython_extension"]
