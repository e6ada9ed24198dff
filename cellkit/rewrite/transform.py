"""The AST rewrite: assignments into Tensors and in-place method calls rebind the name.

``x[i] = v``           ->  ``x = rw.setitem(x, i, v)``
``x[i] += v``          ->  ``x = rw.augsetitem(x, i, "iadd", v)``
``x[i][j] = v``        ->  ``x = rw.store_back(x, i, rw.setitem(x[i], j, v))``
``obj.a[i] = v``       ->  ``rw.setattr_value(obj, "a", rw.setitem(obj.a, i, v))``
``for x[i] in xs:``     ->  ``for t in xs: x = rw.setitem(x, i, t)`` (``with ... as x[i]`` too)
``x.add_(y)`` (statement)        ->  ``x = rw.inplace(x, "add_", y)``
``z = x.add_(y)`` (an expression) ->  ``z = (x := rw.inplace(x, "add_", y))``

``rw`` is the name :data:`HELPER` (the module :mod:`.runtime`). A rebound name
that is free in its function gets a ``nonlocal`` declaration, a global one a
``global`` declaration, so the assignment reaches the variable the code meant.
Which names are local, free or global is read from the code objects Python
compiles from the unrewritten tree (:func:`scopes`). Every new node takes the
line and column of the statement it replaces, so tracebacks point at the
user's lines.
"""

from __future__ import annotations

import ast
import copy
import types

from ..tensor_methods.inplace import INPLACE

__all__ = ["HELPER", "INPLACE_NAMES", "Rewriter", "scopes"]

HELPER = "__cellkit_rw__"
INPLACE_NAMES = frozenset(INPLACE)

_AUG = {ast.Add: "iadd", ast.Sub: "isub", ast.Mult: "imul", ast.Div: "itruediv", ast.FloorDiv: "ifloordiv",
        ast.Mod: "imod", ast.Pow: "ipow", ast.MatMult: "imatmul", ast.BitAnd: "iand", ast.BitOr: "ior",
        ast.BitXor: "ixor", ast.LShift: "ilshift", ast.RShift: "irshift"}
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def scopes(code) -> dict:
    """``(name, first line) -> (locals, free variables)`` of every function compiled into ``code``."""
    out = {}
    stack = [code]
    while stack:
        c = stack.pop()
        out[(c.co_name, c.co_firstlineno)] = (frozenset(c.co_varnames) | frozenset(c.co_cellvars),
                                              frozenset(c.co_freevars))
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return out


def _first_line(node) -> int:
    return min([node.lineno] + [d.lineno for d in node.decorator_list])


def _load(node):
    """A copy of an expression with every context Load (a target read as a value)."""
    node = copy.deepcopy(node)
    for sub in ast.walk(node):
        if hasattr(sub, "ctx"):
            sub.ctx = ast.Load()
    return node


def _helper(fn: str, args, loc):
    call = ast.Call(func=ast.Attribute(value=ast.Name(id=HELPER, ctx=ast.Load()), attr=fn, ctx=ast.Load()),
                    args=list(args), keywords=[])
    return ast.copy_location(call, loc)


def _is_inplace(node) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in INPLACE_NAMES)


def _has_subscript(target) -> bool:
    if isinstance(target, ast.Subscript):
        return True
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_has_subscript(t) for t in target.elts)
    if isinstance(target, ast.Starred):
        return _has_subscript(target.value)
    return False


def _own_nodes(func):
    """The nodes of a function's own scope (not those of functions or classes nested in it)."""
    stack = list(func.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


class _Scope:
    """A function being rewritten: its locals and free variables, and the declarations to add."""

    def __init__(self, node, info):
        self.node = node
        self.locals, self.frees = info if info is not None else (None, frozenset())
        self.declared = {n for stmt in _own_nodes(node) if isinstance(stmt, (ast.Global, ast.Nonlocal))
                         for n in stmt.names}
        self.nonlocals: set = set()
        self.globals: set = set()


class Rewriter(ast.NodeTransformer):
    """Rewrites one tree; ``changed`` says whether it found anything to rewrite."""

    def __init__(self, scope_info: dict):
        self.scope_info = scope_info
        self.stack: list = [None]  # None: module or class body (a plain rebinding is right there)
        self.comprehension = 0  # inside a lambda or comprehension: a name cannot be rebound there
        self.changed = False
        self.temps = 0
        self.classes: list = []  # enclosing class names: attribute names given as strings are mangled

    # ----- scopes ---------------------------------------------------------------

    def _bind(self, name: str) -> None:
        """Note that ``name`` is rebound in the current scope; declare it if it is not a local there."""
        scope = self.stack[-1]
        if scope is None or scope.locals is None or name in scope.declared or name in scope.locals:
            return
        (scope.nonlocals if name in scope.frees else scope.globals).add(name)

    def _function(self, node):
        info = self.scope_info.get((node.name, _first_line(node)))
        scope = _Scope(node, info)
        self.stack.append(scope)
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.body = self._body(node.body)
        self.stack.pop()
        decls = []
        if scope.nonlocals:
            decls.append(ast.Nonlocal(names=sorted(scope.nonlocals)))
        if scope.globals:
            decls.append(ast.Global(names=sorted(scope.globals)))
        if decls:
            first = node.body[0]
            at = 1 if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                       and isinstance(first.value.value, str)) else 0
            for d in decls:
                ast.copy_location(d, node.body[at] if at < len(node.body) else first)
            node.body[at:at] = decls
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_ClassDef(self, node):
        self.stack.append(None)
        self.classes.append(node.name)
        self.generic_visit(node)
        self.classes.pop()
        self.stack.pop()
        return node

    def _attr(self, name: str):
        """The attribute name as a string constant, mangled as the compiler mangles ``obj.__name``."""
        cls = self.classes[-1].lstrip("_") if self.classes else ""
        if cls and name.startswith("__") and not name.endswith("__"):
            name = f"_{cls}{name}"
        return ast.Constant(name)

    def _nested_expr(self, node):
        self.comprehension += 1
        self.generic_visit(node)
        self.comprehension -= 1
        return node

    visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _nested_expr

    def _body(self, stmts):
        out = []
        for stmt in stmts:
            new = self.visit(stmt)
            if isinstance(new, list):
                out.extend(new)
            elif new is not None:
                out.append(new)
        return out

    # ----- rebinding -------------------------------------------------------------

    def _rebind(self, target, new, loc):
        """Statements making the place ``target`` (an expression) hold the value ``new``, or None."""
        if isinstance(target, ast.Name):
            self._bind(target.id)
            return [ast.copy_location(ast.Assign(targets=[ast.Name(id=target.id, ctx=ast.Store())],
                                                 value=new), loc)]
        if isinstance(target, ast.Attribute):
            call = _helper("setattr_value", [_load(target.value), self._attr(target.attr), new], loc)
            return [ast.copy_location(ast.Expr(value=call), loc)]
        if isinstance(target, ast.Subscript):
            return self._rebind(target.value, _helper("store_back", [_load(target.value), _load(target.slice),
                                                                     new], loc), loc)
        return None

    def _store(self, target, value, loc):
        """Statements for ``target[...] = value`` (``target`` a Subscript)."""
        self.changed = True
        new = _helper("setitem", [_load(target.value), _load(target.slice), value], loc)
        stmts = self._rebind(target.value, new, loc)
        if stmts is None:  # f()[i] = v: no name to rebind
            call = _helper("unbound", [_load(target.value), _load(target.slice), value], loc)
            stmts = [ast.copy_location(ast.Expr(value=call), loc)]
        return stmts

    def _temp(self, loc):
        self.temps += 1
        return ast.copy_location(ast.Name(id=f"__cellkit_t{self.temps}", ctx=ast.Store()), loc)

    def _split_target(self, target, after, loc):
        """``target`` with its Subscript parts replaced by temporaries whose stores go to ``after``."""
        if isinstance(target, ast.Subscript):
            tmp = self._temp(loc)
            after.extend(self._store(target, ast.Name(id=tmp.id, ctx=ast.Load()), loc))
            return tmp
        if isinstance(target, (ast.Tuple, ast.List)):
            target.elts = [self._split_target(t, after, loc) for t in target.elts]
        elif isinstance(target, ast.Starred):
            target.value = self._split_target(target.value, after, loc)
        return target

    def visit_Assign(self, node):
        self.generic_visit(node)
        if not any(_has_subscript(t) for t in node.targets):
            return node
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
            return self._store(node.targets[0], node.value, node)
        value = node.value
        stmts, temps = [], []
        if len(node.targets) > 1:
            tmp = self._temp(node)
            temps.append(tmp.id)
            stmts.append(ast.copy_location(ast.Assign(targets=[tmp], value=value), node))
            value = ast.Name(id=tmp.id, ctx=ast.Load())
        for target in node.targets:
            if isinstance(target, ast.Subscript):
                stmts.extend(self._store(target, _load(value) if temps else value, node))
                continue
            after = []
            start = self.temps
            target = self._split_target(target, after, node)
            temps.extend(f"__cellkit_t{i}" for i in range(start + 1, self.temps + 1))
            stmts.append(ast.copy_location(ast.Assign(targets=[target], value=_load(value)), node))
            stmts.extend(after)
        if self.stack[-1] is None and temps:  # keep module and class namespaces clean
            stmts.append(ast.copy_location(ast.Delete(targets=[ast.Name(id=t, ctx=ast.Del()) for t in temps]),
                                           node))
        return stmts

    def _bound_targets(self, node, holders):
        """``for x[i] in ...`` / ``with ... as x[i]``: bind a temporary, store it at the loop body's start."""
        self.generic_visit(node)
        after = []
        for holder, field in holders:
            target = getattr(holder, field)
            if target is not None and _has_subscript(target):
                setattr(holder, field, self._split_target(target, after, node))
        node.body[:0] = after
        return node

    def visit_For(self, node):
        return self._bound_targets(node, [(node, "target")])

    def visit_With(self, node):
        return self._bound_targets(node, [(item, "optional_vars") for item in node.items])

    visit_AsyncFor, visit_AsyncWith = visit_For, visit_With

    def visit_AnnAssign(self, node):
        self.generic_visit(node)
        if not isinstance(node.target, ast.Subscript) or node.value is None:
            return node
        return self._store(node.target, node.value, node)

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if not isinstance(node.target, ast.Subscript):
            return node
        self.changed = True
        target = node.target
        new = _helper("augsetitem", [_load(target.value), _load(target.slice),
                                     ast.Constant(_AUG[type(node.op)]), node.value], node)
        stmts = self._rebind(target.value, new, node)
        return node if stmts is None else stmts

    # ----- in-place methods ----------------------------------------------------------

    def _inplace_value(self, call):
        """``(root, value)``: the place an in-place call chain changes, and the expression for its new value."""
        receiver = call.func.value
        if _is_inplace(receiver):
            root, current = self._inplace_value(receiver)
        else:
            root, current = receiver, self.visit(_load(receiver))
        args = [self.visit(a) for a in call.args]
        keywords = [self.visit(k) for k in call.keywords]
        new = _helper("inplace", [current, ast.Constant(call.func.attr)] + args, call)
        new.keywords = keywords
        return root, new

    def visit_Expr(self, node):
        if not _is_inplace(node.value):
            self.generic_visit(node)
            return node
        self.changed = True
        root, new = self._inplace_value(node.value)
        if self.comprehension == 0:
            stmts = self._rebind(root, new, node)
            if stmts is not None:
                return stmts
        node.value = new
        return node

    def visit_Call(self, node):
        if not _is_inplace(node):
            self.generic_visit(node)
            return node
        self.changed = True
        root, new = self._inplace_value(node)
        if isinstance(root, ast.Name) and self.comprehension == 0:
            self._bind(root.id)
            return ast.copy_location(ast.NamedExpr(target=ast.Name(id=root.id, ctx=ast.Store()), value=new), node)
        if isinstance(root, ast.Attribute):
            return _helper("setattr_value", [_load(root.value), self._attr(root.attr), new], node)
        return new
