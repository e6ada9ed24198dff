"""Write docs/ops.md from cellkit's op registries and MindSpore's use counts.

    python docs/build_ops.py            # or: python -m docs.build_ops

Reads every family of ``cellkit.ops.function`` (``FAMILIES``) and of ``cellkit.ops.operations``
(the Primitive tables), ``cellkit.ops.functional`` (``F``) and ``cellkit.ops.composite`` (``C``),
and ``docs/data/mindspore_ops_usage.tsv`` (MindSpore 2.10's functional ops and Primitives with the
number of files of mindcv, mindnlp and mindformers that use each, and the module MindSpore defines
it in). Nothing here names an op: a family added to a ``FAMILIES`` table appears by itself.
``tests/test_ops.py`` checks that docs/ops.md is what this script writes.
"""

from __future__ import annotations

import inspect
import re
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
USAGE = ROOT / "docs" / "data" / "mindspore_ops_usage.tsv"
OUT = ROOT / "docs" / "ops.md"

# Why MindSpore names are not in cellkit.ops, by the MindSpore module that defines them (the
# longest matching prefix wins); a name of that module that cellkit has is simply covered.
REASONS = {
    "mindspore.ops.function.comm_func": "point-to-point, object and uneven collectives: not yet implemented (the "
                                        "group-of-one and mapped-axis collectives are in `comm_func`, docs/distributed.md)",
    "mindspore.ops.operations.comm_ops": "point-to-point and uneven collectives: not yet implemented (the group-of-one "
                                         "and mapped-axis collectives are in `comm_ops`, docs/distributed.md)",
    "mindspore.ops.function.sparse": "sparse COO/CSR tensors have no cellkit counterpart (JAX's sparse is experimental)",
    "mindspore.ops.operations.sparse_ops": "sparse COO/CSR tensors have no cellkit counterpart",
    "mindspore.ops.operations._csr_ops": "sparse COO/CSR tensors have no cellkit counterpart",
    "mindspore.ops.operations._quant_ops": "Ascend quantisation-aware-training kernels",
    "mindspore.ops.operations._thor_ops": "Ascend THOR optimizer kernels",
    "mindspore.ops.operations._embedding_cache_ops": "parameter-server embedding cache",
    "mindspore.ops.operations._inner_ops": "MindSpore-internal kernels",
    "mindspore.ops.operations.inner_ops": "MindSpore-internal fused kernels",
    "mindspore.ops.primitive": "graph-compiler internals (MindSpore's IR building blocks)",
    "mindspore.ops.operations.control_ops": "graph-compiler control flow: use Python control flow or `jax.lax`",
    "mindspore.ops.vm_impl_registry": "graph-compiler internals",
    "mindspore.ops.op_info_register": "kernel registration for MindSpore's backends",
    "mindspore.ops.operations._ms_kernel": "MindSpore's kernel DSL",
    "mindspore.ops.operations._sequence_ops": "graph-compiler internals",
    "mindspore.ops.composite.base": "graph-compiler internals",
}
# Reasons for single names (they win over the module's reason).
NAME_REASONS = {
    "ApplyRotaryPosEmb": "Ascend-only kernel whose layouts and `cos_format` MindSpore 2.10 leaves undocumented "
                         "(no CPU kernel to check against): use `ops.rotary_position_embedding`",
    "PagedAttention": "Ascend inference kernel over a paged KV cache (block tables of device memory): "
                      "not yet implemented; `nn.MultiheadAttention` covers the computation",
    "PagedAttentionMask": "Ascend inference kernel over a paged KV cache: not yet implemented",
    "ReshapeAndCache": "Ascend in-place write into a paged KV cache: not yet implemented",
    "DynamicRNN": "Ascend fused LSTM kernel (time-major, packed weights): not yet implemented; `nn.LSTM` covers it",
    "GradOperation": "planned: `cellkit.grad` and `cellkit.value_and_grad` cover its uses",
}
NOT_YET = "not yet implemented"


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _first_sentence(doc) -> str:
    doc = inspect.cleandoc(doc or "").split("\n\n")[0].replace("\n", " ")
    return doc if len(doc) <= 110 else doc[:107] + "..."


def _signature(obj) -> str:
    try:
        if inspect.isclass(obj):
            text = str(inspect.signature(obj.__init__)).replace("(self, ", "(").replace("(self)", "()")
        else:
            text = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"
    # A default that is an object prints its address: leave it out, so the file is the same on every run.
    return re.sub(r" at 0x[0-9a-f]+", "", text)


def load_usage(path=USAGE):
    """``{(group, name): (files, module)}`` from the usage table."""
    rows = {}
    for line in path.read_text().splitlines()[1:]:
        files, group, name, module = (line.split("\t") + [""])[:4]
        rows[(group, name)] = (int(files), module)
    return rows


def _implementation(fn, renames) -> str:
    if getattr(fn, "_cellkit_eager_wrapped", False):   # cellkit.eager_jit's wrapper: describe the op itself
        fn = fn.__wrapped__
    if fn.__name__ in renames and renames[fn.__name__][0] is getattr(fn, "__wrapped__", None):
        jax_fn = renames[fn.__name__][0]
        return f"`{jax_fn.__module__}.{jax_fn.__name__}`"
    wrapped = getattr(fn, "__wrapped__", None)
    if wrapped is not None and getattr(wrapped, "__module__", "").startswith("jax"):
        return f"`{wrapped.__module__}.{wrapped.__name__}`"
    return _cell(_first_sentence(fn.__doc__))


def _family_renames(module):
    return getattr(module, "RENAMES", {})


def _rename_sig(name, renames, fn):
    return renames[name][1] if name in renames else _signature(fn)


def build(usage=None) -> str:
    sys.path.insert(0, str(ROOT))
    import cellkit.ops as ops
    from cellkit.ops import composite, function, functional, operations

    usage = load_usage() if usage is None else usage
    uses = {}
    for (group, name), (files, _) in usage.items():
        if group in ("ops_func", "ops_prim"):
            uses[(group, name)] = files

    lines = [
        "# cellkit.ops",
        "",
        "<!-- Generated by docs/build_ops.py from the op registries; do not edit by hand. -->",
        "",
        "MindSpore's functional ops, Primitives (`P`), `F` and `C`. Every op takes Parameters wherever it",
        "takes Tensors and returns `jax.Array`s, so it works eagerly, in `cellkit.jit` and in plain",
        "`jax.jit`/`jax.grad`. A rename is one line of its family's `RENAMES` "
        "(`cellkit/ops/function/*_func.py`); a Primitive is one line of its family's `PRIMITIVES` "
        "(`cellkit/ops/operations/*_ops.py`). \"Uses\" is the number of source files of mindcv, mindnlp and "
        "mindformers that use the name (`docs/data/mindspore_ops_usage.tsv`).",
        "",
    ]

    def covered(group, name):
        if group == "ops_prim":
            return hasattr(operations, name) or name in ops.__all__
        return name in ops.__all__ or name in functional.__all__ or name in composite.__all__

    lines += ["## Coverage", "", "| group | names covered | of | uses covered | of | use-weighted |",
              "|---|---|---|---|---|---|"]
    for group in ("ops_func", "ops_prim"):
        names = [n for (g, n) in uses if g == group]
        have = [n for n in names if covered(group, n)]
        total = sum(uses[(group, n)] for n in names)
        got = sum(uses[(group, n)] for n in have)
        pct = 100.0 * got / total if total else 100.0
        lines.append(f"| {group} | {len(have)} | {len(names)} | {got} | {total} | {pct:.1f}% |")
    lines.append("")

    lines += ["## Functional ops by family (`cellkit.ops.function`)", ""]
    for family, module in function.FAMILIES.items():
        renames = _family_renames(module)
        lines += [f"### {family} (`{module.__name__}`)", "", "| op | MindSpore signature | implementation | uses |",
                  "|---|---|---|---|"]
        for name in sorted(module.__all__):
            fn = getattr(module, name)
            sig = _rename_sig(name, renames, fn) if callable(fn) else ""
            impl = _implementation(fn, renames) if callable(fn) else _cell(_first_sentence(getattr(fn, "__doc__", "")))
            lines.append(f"| `{name}` | `{_cell(sig)}` | {impl} | {uses.get(('ops_func', name), 0)} |")
        lines.append("")

    lines += ["## Primitives by family (`cellkit.ops.operations`, MindSpore's `P`)", ""]
    for family, module in operations.FAMILIES.items():
        lines += [f"### {family} (`{module.__name__}`)", "", "| Primitive | constructor | calls | uses |",
                  "|---|---|---|---|"]
        for name in sorted(module.__all__):
            cls = getattr(module, name)
            target = getattr(cls, "op", None)
            calls = f"`{getattr(target, '__name__', re.sub(r' at 0x[0-9a-f]+', '', repr(target)))}`" if target is not None else \
                _cell(_first_sentence(cls.__doc__))
            lines.append(f"| `{name}` | `{_cell(_signature(cls))}` | {calls} | {uses.get(('ops_prim', name), 0)} |")
        lines.append("")

    in_families = {n for m in (*function.FAMILIES.values(), *operations.FAMILIES.values()) for n in m.__all__}
    extra_ops = sorted(set(ops.__all__) - in_families)
    if extra_ops:
        lines += ["## Other names of `cellkit.ops`", "", "| name | signature | what it is |", "|---|---|---|"]
        for name in extra_ops:
            obj = getattr(ops, name)
            lines.append(f"| `{name}` | `{_cell(_signature(obj))}` | {_cell(_first_sentence(obj.__doc__))} |")
        lines.append("")

    f_own = sorted(set(functional.__all__) - set(function.__all__))
    lines += ["## `F` (`cellkit.ops.functional`)", "",
              "Every functional op above, and these names of its own:", "", "| name | is |", "|---|---|"]
    aliases = getattr(functional, "ALIASES", {})
    for name in f_own:
        target = aliases.get(name)
        what = f"`ops.{target}`" if target else _cell(_first_sentence(getattr(functional, name).__doc__))
        lines.append(f"| `{name}` | {what} |")
    lines.append("")

    lines += ["## `C` (`cellkit.ops.composite`)", "", "| name | what it is |", "|---|---|"]
    for name in composite.__all__:
        lines.append(f"| `{name}` | {_cell(_first_sentence(getattr(composite, name).__doc__))} |")
    lines.append("")

    lines += ["## Not covered", "",
              "Names of MindSpore 2.10's `ops` that cellkit does not have, used ones first. Reasons by the",
              "MindSpore module that defines the name; \"not yet implemented\" means nothing stands in the way.",
              "", "| name | group | uses | MindSpore module | reason |", "|---|---|---|---|---|"]
    missing = [(files, group, name, module) for (group, name), (files, module) in usage.items()
               if group in ("ops_func", "ops_prim") and files >= 1 and not covered(group, name)]
    for files, group, name, module in sorted(missing, key=lambda r: (-r[0], r[2], r[1])):
        lines.append(f"| `{name}` | {group} | {files} | `{module}` | {_reason(name, module)} |")
    lines.append("")
    unused = [(group, module) for (group, name), (files, module) in usage.items()
              if group in ("ops_func", "ops_prim") and files == 0 and not covered(group, name)]
    counts = {}
    for group, module in unused:
        counts[(module, _reason("", module))] = counts.get((module, _reason("", module)), 0) + 1
    lines += ["Names not covered and used in none of the files, by MindSpore module:", "",
              "| MindSpore module | names | reason |", "|---|---|---|"]
    for (module, reason), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0])):
        lines.append(f"| `{module}` | {n} | {reason} |")
    lines += ["", "Differences from MindSpore are listed in docs/differences.md.", ""]
    return "\n".join(lines)


def _reason(name, module):
    if name in NAME_REASONS:
        return NAME_REASONS[name]
    best = max((p for p in REASONS if module.startswith(p)), key=len, default=None)
    return REASONS[best] if best else NOT_YET


def main():
    OUT.write_text(build())
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
