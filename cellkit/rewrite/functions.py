"""Rewriting whole modules and single functions.

:func:`rewrite_tree` rewrites a parsed module and adds the import of the
helpers; :func:`compile_source` parses, rewrites and compiles source text;
:func:`rewrite_function` rewrites one function and rebuilds it with the
original's globals, closure cells (so ``nonlocal`` state and zero-argument
``super()``'s ``__class__`` are shared), defaults and attributes.

A function is read from its source only when its bytecode stores into a
subscript or names an in-place method (:func:`needs_rewrite`); the answer and
the rewritten code are cached, so other code pays nothing.

>>> import cellkit as ms
>>> def f(x):
...     x[0] = 5.
...     x.mul_(2)
...     return x
>>> g = rewrite_function(f)
>>> g(ms.Tensor([1., 2.])).tolist()
[10.0, 4.0]
>>> rewrite_function(g) is g, rewrite_function(len) is len
(True, True)
"""

from __future__ import annotations

import __future__
import ast
import dis
import inspect
import re
import types
import weakref

from . import runtime
from .transform import HELPER, INPLACE_NAMES, Rewriter, scopes

__all__ = ["rewrite_tree", "compile_source", "rewrite_function", "needs_rewrite", "source_needs_rewrite"]

_STORE_SUBSCR = bytes([dis.opmap["STORE_SUBSCR"]])
_FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag
_SOURCE_HINT = re.compile(r"\]\s*(?:[-+*/%@&|^]|//|\*\*|<<|>>)?=(?!=)|\.(?:"
                          + "|".join(sorted(map(re.escape, INPLACE_NAMES))) + r")\s*\(")


def needs_rewrite(code) -> bool:
    """Does ``code`` (or a function nested in it) store into a subscript or name an in-place method?"""
    if _STORE_SUBSCR in code.co_code[::2] or not INPLACE_NAMES.isdisjoint(code.co_names):
        return True
    return any(needs_rewrite(c) for c in code.co_consts if isinstance(c, types.CodeType))


def source_needs_rewrite(source: str) -> bool:
    """A cheap look at source text: could it hold an assignment into a subscript or an in-place call?"""
    return _SOURCE_HINT.search(source) is not None


def _import_helper(tree) -> None:
    """Insert ``import cellkit.rewrite.runtime as <HELPER>`` after the docstring and __future__ imports."""
    at = 0
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        at = 1
    while at < len(body) and isinstance(body[at], ast.ImportFrom) and body[at].module == "__future__":
        at += 1
    node = ast.Import(names=[ast.alias(name="cellkit.rewrite.runtime", asname=HELPER)])
    ast.copy_location(node, body[at] if at < len(body) else body[-1])
    node.end_lineno = node.lineno
    ast.fix_missing_locations(node)
    body.insert(at, node)


def _rewrite(tree, filename="<rewrite>"):
    """Rewrite ``tree`` in place; True when anything was rewritten."""
    try:
        mode = "single" if isinstance(tree, ast.Interactive) else "exec"
        info = scopes(compile(tree, filename, mode, ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True))
    except (SyntaxError, TypeError, ValueError):
        return False  # let the real compile report it
    rewriter = Rewriter(info)
    rewriter.visit(tree)
    if rewriter.changed:
        ast.fix_missing_locations(tree)
    return rewriter.changed


def rewrite_tree(tree):
    """Rewrite a parsed module (``ast.Module`` or ``ast.Interactive``) in place and return it.

    Adds the import of the helpers when anything was rewritten.

    >>> import ast
    >>> print(ast.unparse(rewrite_tree(ast.parse("x[0] = 1"))))
    import cellkit.rewrite.runtime as __cellkit_rw__
    x = __cellkit_rw__.setitem(x, 0, 1)
    """
    if _rewrite(tree) and tree.body:
        _import_helper(tree)
    return tree


def compile_source(source, filename: str, mode: str = "exec", flags: int = 0, dont_inherit: bool = True):
    """``compile(source, filename, mode)`` with the rewrite applied; line numbers are the source's.

    >>> code = compile_source("import cellkit as ms\\nx = ms.Tensor([1, 2])\\nx[1] = 7\\n", "<demo>")
    >>> ns = {}
    >>> exec(code, ns)
    >>> ns["x"].tolist()
    [1, 7]
    """
    if mode not in ("exec", "single") or (isinstance(source, str) and not source_needs_rewrite(source)):
        return compile(source, filename, mode, flags, dont_inherit)
    tree = source if isinstance(source, ast.AST) else ast.parse(source, filename, mode)
    if isinstance(tree, (ast.Module, ast.Interactive)):
        rewrite_tree(tree)
    return compile(tree, filename, mode, flags, dont_inherit)


# ----- single functions ---------------------------------------------------------

_FUNCTIONS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # function -> rewritten (or itself)
_CODES: dict = {}  # code -> rewritten code, or None when it cannot be rewritten
_REWRITTEN = "__cellkit_rewritten__"


def _parse_function(fn):
    """The function's definition as an AST with the file's line numbers and columns, or None."""
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    source = "".join(lines)
    indented = source[:1] in " \t"
    try:
        tree = ast.parse("if 1:\n" + source if indented else source)
    except SyntaxError:
        return None
    ast.increment_lineno(tree, start - (2 if indented else 1))
    node = tree.body[0].body[0] if indented else tree.body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != fn.__name__:
        return None
    return node


def _class_name(fn):
    """The class a method was defined in, from its qualified name (None for a plain function)."""
    parts = fn.__qualname__.split(".")
    if len(parts) < 2 or parts[-2] == "<locals>":
        return None
    return parts[-2]


def _mangle(node, cls_name) -> None:
    """Mangle ``__private`` names as compiling the method inside its class body would."""
    prefix = "_" + cls_name.lstrip("_")
    if prefix == "_":
        return

    def m(name):
        if name and name.startswith("__") and not name.endswith("__") and "." not in name:
            return prefix + name
        return name
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            sub.id = m(sub.id)
        elif isinstance(sub, ast.Attribute):
            sub.attr = m(sub.attr)
        elif isinstance(sub, ast.arg):
            sub.arg = m(sub.arg)
        elif isinstance(sub, ast.keyword) and sub.arg:
            sub.arg = m(sub.arg)
        elif isinstance(sub, (ast.Global, ast.Nonlocal)):
            sub.names = [m(n) for n in sub.names]
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and sub is not node:
            sub.name = m(sub.name)


def _find_code(code, name, line):
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            if c.co_name == name and c.co_firstlineno == line:
                return c
            found = _find_code(c, name, line)
            if found is not None:
                return found
    return None


def _rewrite_code(fn):
    code = fn.__code__
    node = _parse_function(fn)
    if node is None:
        return None
    node.decorator_list = []
    cls_name = _class_name(fn)
    if cls_name is not None:
        _mangle(node, cls_name)
    # def factory(): <free variables> = None; def fn(...): ...; return fn
    # so free variables stay free (nonlocal declarations resolve) and the helper is one more of them.
    names = tuple(code.co_freevars) + (HELPER,)
    body = [ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store())], value=ast.Constant(None)) for n in names]
    body += [node, ast.Return(value=ast.Name(id=node.name, ctx=ast.Load()))]
    for stmt in body:
        if stmt is not node:
            ast.copy_location(stmt, node)
    factory = ast.FunctionDef(name="__cellkit_factory__", args=ast.arguments(
        posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=body, decorator_list=[], returns=None, type_comment=None)
    ast.copy_location(factory, node)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    if not _rewrite(module, code.co_filename):
        return None
    # the original's __future__ features (annotations, ...), and none of this module's
    compiled = compile(module, code.co_filename, "exec", code.co_flags & _FUTURE_FLAGS, dont_inherit=True)
    return _find_code(compiled, node.name, node.lineno)


def _cell(value):
    return types.CellType(value)


def rewrite_function(fn):
    """``fn`` with its assignments into Tensors rewritten, or ``fn`` itself when it has none.

    Accepts functions, bound methods, ``staticmethod``/``classmethod`` objects; anything
    else (a builtin, a Cell, a ``functools.partial``) comes back unchanged. Usable as a
    decorator. Functions whose source cannot be read come back unchanged too (their
    assignments then raise a TypeError saying what to write).
    """
    if isinstance(fn, types.MethodType):
        new = rewrite_function(fn.__func__)
        return fn if new is fn.__func__ else types.MethodType(new, fn.__self__)
    if isinstance(fn, (staticmethod, classmethod)):
        new = rewrite_function(fn.__func__)
        return fn if new is fn.__func__ else type(fn)(new)
    if not isinstance(fn, types.FunctionType):
        return fn
    try:
        return _FUNCTIONS[fn]
    except KeyError:
        pass
    new = fn
    code = fn.__code__
    if not getattr(fn, _REWRITTEN, False) and needs_rewrite(code):
        if code not in _CODES:
            _CODES[code] = _rewrite_code(fn)
        new_code = _CODES[code]
        if new_code is not None:
            new = _rebuild(fn, new_code)
    elif isinstance(getattr(fn, "__wrapped__", None), types.FunctionType):
        _FUNCTIONS[fn] = fn  # before following the chain, which may lead back here
        _rewrite_wrapped(fn)
    _FUNCTIONS[fn] = new
    return new


def _rewrite_wrapped(wrapper) -> None:
    """A ``functools.wraps`` wrapper: rewrite the function it wraps, in the closure cell holding it."""
    inner = wrapper.__wrapped__
    new = rewrite_function(inner)
    if new is inner:
        return
    for cell in wrapper.__closure__ or ():
        try:
            if cell.cell_contents is inner:
                cell.cell_contents = new
        except ValueError:  # an empty cell
            continue


def _rebuild(fn, new_code):
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    cells[HELPER] = _cell(runtime)
    closure = tuple(cells[n] for n in new_code.co_freevars) or None
    new = types.FunctionType(new_code, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__dict__.update(fn.__dict__)
    new.__doc__, new.__qualname__, new.__module__ = fn.__doc__, fn.__qualname__, fn.__module__
    new.__annotations__ = fn.__annotations__
    setattr(new, _REWRITTEN, True)
    return new
