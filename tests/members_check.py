"""Check a cellkit object's public members against MindSpore 2.10's, as ``members.json`` records them.

``tests/fixtures/record/record_members.py`` listed, for each object, every public name ``dir()``
gives under MindSpore 2.10 with its kind (``method``, ``property`` or ``attribute``), the class
that defines it and a method's signature. :func:`check_members` checks cellkit's same object:

- every recorded name is there, with a compatible kind (a method is callable; a property or an
  attribute reads without error and is not a bound method);
- a method accepts MindSpore's parameter names (at MindSpore's positions, with ``*args`` and
  ``**kwargs`` where MindSpore has them) and needs no argument MindSpore does not have;
- or the name is in the object's ``refused`` table, ``{name: reason}`` (a MindSpore internal no
  program uses, or a member with no meaning on JAX; each one also has a line in
  docs/differences.md). ``signatures`` lists methods whose parameters knowingly differ;
- optionally (``types``), an attribute holding a plain Python value holds one of MindSpore's type.

The tables common to every Cell (:data:`CELL_REFUSED`, :data:`CELL_SIGNATURES`) live here, so the
test of any Cell (a layer, a wrapper, an optimizer) starts from them::

    check_members("nn.Adam", nn.Adam(net.trainable_params()), refused={**CELL_REFUSED, ...})
"""

import ast
import inspect
import json
import pathlib

__all__ = ["CELL_REFUSED", "CELL_SIGNATURES", "MEMBERS", "check_members", "missing_members", "recorded"]

MEMBERS = json.loads((pathlib.Path(__file__).resolve().parent / "fixtures" / "mindspore" / "members.json")
                     .read_text())

# Members of every MindSpore Cell that cellkit's Cells do not have, and why.
CELL_REFUSED = {
    "get_func_graph_proto": "the compiled MindIR graph's protobuf; XLA has its own IR "
                            "(cellkit.jit(f).lower(...).as_text()); raises NotImplementedError saying so",
    "register_parameter_forward_hook": "a graph-mode hook on Parameter reads; raises NotImplementedError "
                                       "(transform the Parameter in construct, or use a forward pre-hook)",
    "register_saved_tensors_hooks": "JAX keeps backward residuals inside the compiled computation; raises "
                                    "NotImplementedError pointing to Cell.recompute",
}

# Methods of every Cell whose parameters knowingly differ from MindSpore's, and why.
CELL_SIGNATURES = {
    "shard": "cellkit's Cell.shard(mesh, rules) places Parameters on a jax.sharding Mesh by name rules; "
             "MindSpore's in_strategy/out_strategy describe operator-level strategies",
}


def recorded(key):
    """MindSpore's record for ``key``: ``{"class", "mro", "members": {name: {kind, owner, ...}}}``."""
    return MEMBERS[key]


def _recorded_params(signature):
    """``(positional names, keyword-only names, has *args, has **kwargs)`` of a recorded signature."""
    fn = ast.parse(f"def f{signature}: pass").body[0].args
    positional = [a.arg for a in fn.posonlyargs + fn.args]
    return positional, [a.arg for a in fn.kwonlyargs], fn.vararg is not None, fn.kwarg is not None


def _signature_problem(value, signature):
    """Why ``value`` (a callable) does not accept MindSpore's ``signature``, or None."""
    try:
        ours = inspect.signature(value)
    except (TypeError, ValueError):
        return None  # a builtin without a signature: nothing to compare
    params = list(ours.parameters.values())
    kinds = inspect.Parameter
    has_var = any(p.kind is kinds.VAR_POSITIONAL for p in params)
    has_kw = any(p.kind is kinds.VAR_KEYWORD for p in params)
    by_name = {p.name: p for p in params if p.kind in (kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY)}
    positional_ours = [p.name for p in params
                       if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)]
    positional, keyword_only, var, kw = _recorded_params(signature)
    problems = []
    for i, name in enumerate(positional):
        if i < len(positional_ours):
            if positional_ours[i] != name and not (has_kw and name not in by_name):
                problems.append(f"argument {i} is {positional_ours[i]!r}, MindSpore's is {name!r}")
        elif not has_var:
            problems.append(f"takes no argument {i} ({name!r})")
    for name in keyword_only:
        if name not in by_name and not has_kw:
            problems.append(f"takes no keyword {name!r}")
    if var and not has_var:
        problems.append("takes no *args")
    if kw and not has_kw:
        problems.append("takes no **kwargs")
    known = set(positional) | set(keyword_only)
    for p in params:
        if p.default is kinds.empty and p.kind in (kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY) \
                and p.name not in known:
            problems.append(f"requires {p.name!r}, which MindSpore's does not have")
    return "; ".join(problems) or None


_SCALAR_TYPES = ("bool", "int", "float", "str", "NoneType", "list", "tuple", "dict")


def missing_members(key, obj, refused=None, signatures=None, types=None):
    """The problems with ``obj`` against MindSpore's record ``key``, one line each (empty: none).

    With ``types`` (``{attribute: reason}``, possibly empty) an attribute MindSpore holds as a plain
    Python value (bool, int, float, str, None, list, tuple, dict) must have that value's type too,
    except the attributes ``types`` names."""
    refused = refused or {}
    signatures = signatures or {}
    members = recorded(key)["members"]
    problems = []
    for name, reason in {**refused, **signatures}.items():
        if name not in members:
            problems.append(f"{name}: listed as refused or differing, but MindSpore's {key} has no such member")
        elif not isinstance(reason, str) or len(reason) < 10:
            problems.append(f"{name}: a refused or differing member needs a reason")
    for name, entry in sorted(members.items()):
        if name in refused:
            continue
        try:
            value = getattr(obj, name)
        except AttributeError:
            problems.append(f"{name}: missing ({entry['kind']} of MindSpore's {entry['owner']})")
            continue
        except Exception as err:  # noqa: BLE001 - a member that cannot be read is a problem too
            problems.append(f"{name}: reading it raised {type(err).__name__}: {err}")
            continue
        if entry["kind"] == "method":
            if not callable(value):
                problems.append(f"{name}: MindSpore's is a method, cellkit's a {type(value).__name__}")
            elif "signature" in entry and name not in signatures and entry["signature"] != "(*args, **kwargs)":
                # ((*args, **kwargs): a C++ method whose parameters Python cannot see; nothing to compare)
                why = _signature_problem(value, entry["signature"])
                if why:
                    problems.append(f"{name}{entry['signature']}: {why}")
        elif inspect.ismethod(value) and entry.get("type") not in ("function", "method"):
            problems.append(f"{name}: MindSpore's is a {entry['kind']} "
                            f"({entry.get('type', 'property')}), cellkit's a method")
        elif types is not None and entry["kind"] == "attribute" and entry.get("type") in _SCALAR_TYPES \
                and name not in types and type(value).__name__ != entry["type"]:
            problems.append(f"{name}: MindSpore's holds a {entry['type']}, cellkit's a {type(value).__name__}")
    if types is not None:
        problems.extend(f"{name}: listed as a differing type, but MindSpore's {key} has no such attribute"
                        for name in types if name not in members)
    return problems


def check_members(key, obj, refused=None, signatures=None, types=None):
    """Assert that ``obj`` has every public member MindSpore's ``key`` has (see the module docstring)."""
    problems = missing_members(key, obj, refused, signatures, types)
    assert not problems, f"{key} ({type(obj).__name__}): {len(problems)} problem(s):\n  " + "\n  ".join(problems)
