"""HTML views of Cells and Parameters for Jupyter (``_repr_html_``).

A Cell shows as a collapsible tree of its sub-Cells, the first level open; each
node lists its own Parameters (name, shape, dtype, trainable, size) and the number
of values below it, with the trainable ones counted apart when some are frozen.
A long ``extend_repr`` is cut short (the whole of it shows on hover).
A Cell whose leaves are not arrays (``jax.tree.map(jnp.shape, net)``) shows each
Parameter's leaf instead of its shape and dtype.

>>> from cellkit import nn
>>> html = nn.SequentialCell([nn.Dense(2, 3), nn.ReLU()])._repr_html_()
>>> "<details" in html and "0.weight" in html and "9 params" in html
True
"""

from __future__ import annotations

import html as _html

import numpy as np

__all__ = ["cell_html", "parameter_html", "count_params"]

_STYLE = ("<style>.ck-cell{font-family:monospace;font-size:12px}"
          ".ck-cell details{margin-left:1.2em}.ck-cell summary{cursor:pointer}"
          ".ck-cell table{border-collapse:collapse;margin:2px 0 4px 1.2em}"
          ".ck-cell td,.ck-cell th{padding:1px 8px;text-align:left;border-bottom:1px solid #ddd}"
          ".ck-frozen{color:#888}</style>")


_MAX_EXTRA = 80  # characters of a Cell's extend_repr shown in its title


def count_params(cell) -> int:
    """Number of scalar values in a Cell's Parameters (shared ones counted once)."""
    return int(sum(p.size for p in cell.get_parameters() if p._holds_array()))


def _count_trainable(cell) -> int:
    return int(sum(p.size for p in cell.get_parameters() if p._holds_array() and p.requires_grad))


def _fmt_count(n: int) -> str:
    for unit, size in (("M", 10 ** 6), ("k", 10 ** 3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def _param_rows(cell) -> str:
    rows = []
    for attr, p in cell._own_params():
        cls = "" if p.requires_grad else " class='ck-frozen'"
        if p._holds_array():
            cols = f"<td>{p.shape}</td><td>{p.dtype}</td>"
            size = _fmt_count(p.size)
        else:
            cols = f"<td colspan='2'>{_html.escape(repr(p._value))}</td>"
            size = ""
        rows.append(f"<tr{cls}><td>{_html.escape(p.name)}</td>{cols}"
                    f"<td>{'yes' if p.requires_grad else 'no'}</td><td>{size}</td></tr>")
    if not rows:
        return ""
    head = "<tr><th>parameter</th><th>shape</th><th>dtype</th><th>trainable</th><th>size</th></tr>"
    return f"<table>{head}{''.join(rows)}</table>"


def _extra(cell) -> str:
    try:
        return cell.extend_repr()
    except Exception:  # e.g. hyper-parameters that are not arrays any more
        return ""


def _node(cell, label: str, depth: int) -> str:
    extra = _extra(cell)
    title = f"<b>{_html.escape(label)}</b>{_html.escape(cell.cls_name)}"
    if extra and "\n" not in extra:
        if len(extra) > _MAX_EXTRA:  # the full text shows on hover
            short = extra[:_MAX_EXTRA].rsplit(", ", 1)[0] + ", …"
            title += f"(<span title='{_html.escape(extra, quote=True)}'>{_html.escape(short)}</span>)"
        else:
            title += f"({_html.escape(extra)})"
    n, trainable = count_params(cell), _count_trainable(cell)
    counts = f"{_fmt_count(n)} params"
    if trainable != n:
        counts += f" ({_fmt_count(trainable)} trainable)"
    title += f" <span class='ck-frozen'>· {counts} · {cell.phase}</span>"
    children = "".join(_node(c, f"{k}: ", depth + 1) for k, c in cell._cells.items())
    body = _param_rows(cell) + children
    if not body:
        return f"<div style='margin-left:1.2em'>{title}</div>"
    return f"<details{' open' if depth <= 1 else ''}><summary>{title}</summary>{body}</details>"


def cell_html(cell) -> str:
    """The HTML tree for ``cell``."""
    return f"{_STYLE}<div class='ck-cell'>{_node(cell, '', 0)}</div>"


def parameter_html(param) -> str:
    """A one-line HTML summary of a Parameter with a few of its values."""
    if not param._holds_array():
        return (f"{_STYLE}<div class='ck-cell'><b>Parameter</b> {_html.escape(param.name)} "
                f"{_html.escape(repr(param._value))} requires_grad={param.requires_grad}</div>")
    values = "(not initialised yet)" if param.has_init else ""
    if not param.has_init:
        arr = np.asarray(param.value)
        values = _html.escape(np.array2string(arr.reshape(-1)[:6], precision=4, separator=", "))
        if arr.size > 6:
            values = values[:-1] + ", …]"
    return (f"{_STYLE}<div class='ck-cell'><b>Parameter</b> {_html.escape(param.name)} "
            f"{param.shape} {param.dtype} requires_grad={param.requires_grad} "
            f"<span class='ck-frozen'>{values}</span></div>")
