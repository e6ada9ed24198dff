"""HTML views of Cells and Parameters for Jupyter (``_repr_html_``).

A Cell shows as a collapsible tree of its sub-Cells; each node lists its own
Parameters (name, shape, dtype, trainable) and the number of values below it.

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


def count_params(cell) -> int:
    """Number of scalar values in a Cell's Parameters (shared ones counted once)."""
    return int(sum(p.size for p in cell.get_parameters()))


def _fmt_count(n: int) -> str:
    for unit, size in (("M", 10 ** 6), ("k", 10 ** 3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def _param_rows(cell) -> str:
    rows = []
    for attr, p in cell._own_params():
        cls = "" if p.requires_grad else " class='ck-frozen'"
        rows.append(f"<tr{cls}><td>{_html.escape(p.name)}</td><td>{p.shape}</td><td>{p.dtype}</td>"
                    f"<td>{'yes' if p.requires_grad else 'no'}</td><td>{_fmt_count(p.size)}</td></tr>")
    if not rows:
        return ""
    head = "<tr><th>parameter</th><th>shape</th><th>dtype</th><th>trainable</th><th>size</th></tr>"
    return f"<table>{head}{''.join(rows)}</table>"


def _node(cell, label: str, open_: bool) -> str:
    extra = cell.extend_repr()
    title = f"<b>{_html.escape(label)}</b>{_html.escape(cell.cls_name)}"
    if extra and "\n" not in extra:
        title += f"({_html.escape(extra)})"
    n = count_params(cell)
    title += f" <span class='ck-frozen'>· {_fmt_count(n)} params · {cell.phase}</span>"
    children = "".join(_node(c, f"{k}: ", False) for k, c in cell._cells.items())
    body = _param_rows(cell) + children
    if not body:
        return f"<div style='margin-left:1.2em'>{title}</div>"
    return f"<details{' open' if open_ else ''}><summary>{title}</summary>{body}</details>"


def cell_html(cell) -> str:
    """The HTML tree for ``cell``."""
    return f"{_STYLE}<div class='ck-cell'>{_node(cell, '', True)}</div>"


def parameter_html(param) -> str:
    """A one-line HTML summary of a Parameter with a few of its values."""
    values = ""
    if not param.has_init:
        arr = np.asarray(param.value)
        values = _html.escape(np.array2string(arr.reshape(-1)[:6], precision=4, separator=", "))
        if arr.size > 6:
            values = values[:-1] + ", …]"
    return (f"{_STYLE}<div class='ck-cell'><b>Parameter</b> {_html.escape(param.name)} "
            f"{param.shape} {param.dtype} requires_grad={param.requires_grad} "
            f"<span class='ck-frozen'>{values}</span></div>")
