"""``cellkit run``: run a MindSpore script or module as ``python`` would, on cellkit.

``cellkit run script.py a b`` sets ``sys.argv = ["script.py", "a", "b"]``, puts the
script's folder first on ``sys.path``, installs the ``mindspore`` alias and runs the
file as ``__main__`` (compiled through :func:`~cellkit.compat.finder.compile_source`).
``cellkit run -m pkg.mod a b`` runs a module as ``python -m`` does. An uncaught
exception prints a traceback that starts at the user's code (the runner's own frames
are left out) and exits with status 1, as Python does.
"""

import importlib.util
import os
import runpy
import sys
import traceback
import types

from .finder import compile_source
from .hook import install

__all__ = ["run_script", "run_module", "main", "cli"]

USAGE = """usage: cellkit run SCRIPT.py [ARGS ...]
       cellkit run -m MODULE [ARGS ...]

Run a MindSpore script unchanged on cellkit: `import mindspore` gives cellkit."""


def run_script(path, argv=()):
    """Run the file ``path`` as ``__main__`` with ``sys.argv = [path, *argv]``; return its globals."""
    install()
    with open(path, "rb") as f:
        source = importlib.util.decode_source(f.read())
    code = compile_source(source, path)
    sys.argv = [path, *argv]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    main_mod = types.ModuleType("__main__")
    main_mod.__file__ = path
    main_mod.__builtins__ = __builtins__
    main_mod.__spec__ = None
    main_mod.__loader__ = None
    main_mod.__cached__ = None
    sys.modules["__main__"] = main_mod
    exec(code, main_mod.__dict__)
    return main_mod.__dict__


def run_module(name, argv=()):
    """Run module ``name`` as ``python -m name`` would, with the alias installed."""
    install()
    sys.argv = [name, *argv]
    sys.path.insert(0, os.getcwd())
    return runpy.run_module(name, run_name="__main__", alter_sys=True)


def _print_user_traceback(exc):
    tb = exc.__traceback__
    own = os.path.dirname(os.path.abspath(__file__))
    while tb is not None and os.path.dirname(os.path.abspath(tb.tb_frame.f_code.co_filename)) == own:
        tb = tb.tb_next
    if tb is not None and os.path.basename(tb.tb_frame.f_code.co_filename) == "runpy.py":
        while tb is not None and os.path.basename(tb.tb_frame.f_code.co_filename) == "runpy.py":
            tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb, file=sys.stderr)


def main(argv=None):
    """The ``cellkit`` command (``python -m cellkit``); returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if args else 2
    if args[0] != "run" or len(args) < 2 or (args[1] == "-m" and len(args) < 3):
        print(USAGE, file=sys.stderr)
        return 2
    try:
        if args[1] == "-m":
            run_module(args[2], args[3:])
        else:
            run_script(args[1], args[2:])
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - shown as Python shows it, from the user's frame
        _print_user_traceback(exc)
        return 1
    return 0


def cli():
    """Entry point of the ``cellkit`` console command: exits with :func:`main`'s status."""
    sys.exit(main())
