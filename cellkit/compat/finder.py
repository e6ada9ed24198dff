"""The import hook: ``mindspore[.x]`` is ``cellkit[.x]``, and modules that use MindSpore
are compiled with cellkit's source rewrite.

:class:`AliasFinder` sits first on ``sys.meta_path`` while :func:`cellkit.compat.install`
is in effect. For ``mindspore`` and ``mindspore.<path>`` it imports ``cellkit.<path>``
and hands back that same module object, so ``mindspore.nn.Cell is cellkit.nn.Cell``
and ``sys.modules["mindspore.nn"] is sys.modules["cellkit.nn"]``. A path cellkit does
not have raises ``ModuleNotFoundError`` naming both. For any other module whose source
file mentions ``mindspore`` it returns the normal spec with :class:`RewritingLoader`,
which compiles the file with :func:`compile_source` (the assignment rewrite when
``cellkit.rewrite`` is present, plain ``compile`` otherwise).

This module imports nothing from cellkit at import time: the alias targets are looked
up by name when they are imported.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys

__all__ = ["ALIAS", "AliasFinder", "RewritingLoader", "compile_source", "rewrite_module", "uses_mindspore"]

ALIAS = "mindspore"
TARGET = "cellkit"
_SKIP_TOP = frozenset(getattr(sys, "stdlib_module_names", ())) | {
    TARGET, "jax", "jaxlib", "numpy", "optax", "grain", "scipy", "IPython", "ipykernel", "pytest",
    "_pytest", "matplotlib", "PIL", "sklearn", "tqdm", "yaml", "safetensors", "ml_dtypes"}


def compile_source(source, filename, mode="exec"):
    """Compile ``source`` as cellkit runs MindSpore code: through ``cellkit.rewrite`` when it exists.

    >>> code = compile_source("y = 1 + 2", "<example>")
    >>> ns = {}; exec(code, ns); ns["y"]
    3
    """
    rewrite = rewrite_module()
    if rewrite is None:
        return compile(source, filename, mode, dont_inherit=True)
    return rewrite.compile_source(source, filename, mode)


def rewrite_module():
    """``cellkit.rewrite`` (the assignment rewrite), or None where this cellkit has none.

    Looked up in cellkit's own folder only, never through other finders.
    """
    package = importlib.import_module(TARGET)
    name = TARGET + ".rewrite"
    if name not in sys.modules and importlib.machinery.PathFinder.find_spec(name, package.__path__) is None:
        return None
    return importlib.import_module(name)


def uses_mindspore(source):
    """Whether a module's source (str or bytes) mentions MindSpore, so it gets the rewrite.

    >>> uses_mindspore(b"import mindspore as ms"), uses_mindspore("import numpy")
    (True, False)
    """
    return (b"mindspore" if isinstance(source, bytes) else "mindspore") in source


class RewritingLoader(importlib.machinery.SourceFileLoader):
    """A source loader compiling through :func:`compile_source`; it neither reads nor writes
    ``__pycache__`` (a cached plain compilation must not stand in for the rewritten one)."""

    def get_code(self, fullname):
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)

    def source_to_code(self, data, path, *, _optimize=-1):
        return compile_source(importlib.util.decode_source(data), path)


class _AliasLoader(importlib.abc.Loader):
    """Hands back the already imported cellkit module under its MindSpore name."""

    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


class AliasFinder(importlib.abc.MetaPathFinder):
    """``sys.meta_path`` entry aliasing ``mindspore`` to ``cellkit`` (see the module docstring)."""

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.partition(".")[0]
        if top == ALIAS:
            return self._alias_spec(fullname)
        if top in _SKIP_TOP:
            return None
        return self._rewrite_spec(fullname, path, target)

    def _alias_spec(self, fullname):
        real = TARGET + fullname[len(ALIAS):]
        try:
            module = importlib.import_module(real)
        except ModuleNotFoundError as e:
            if e.name is None or not real.startswith(e.name):
                raise
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: cellkit, which stands in for MindSpore here, has no "
                f"module {real!r} (the MindSpore module path is not implemented)", name=fullname) from None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(module),
                                               is_package=hasattr(module, "__path__"))

    def _rewrite_spec(self, fullname, path, target):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or type(spec.loader) is not importlib.machinery.SourceFileLoader:
            return None
        try:
            with open(spec.origin, "rb") as f:
                if not uses_mindspore(f.read()):
                    return None
        except OSError:
            return None
        spec.loader = RewritingLoader(fullname, spec.origin)
        return spec
