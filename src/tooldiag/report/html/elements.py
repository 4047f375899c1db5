"""HTML fragments: tables, figures and notes, every piece of text escaped.

A :class:`~tooldiag.report.table.Table` becomes a ``<table class="sortable">`` whose cells
show the column's display text (the same text as the markdown report) and carry the raw
value in ``data-v`` when it is a number, so that the page's script sorts numbers as numbers
and a missing value sorts last. Every number a figure draws is in a table next to it.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

from tooldiag.report.table import BLANK, Table


def esc(text: Any) -> str:
    """``text`` as HTML text (quotes escaped too, so it is safe in an attribute)."""
    return html.escape("" if text is None else str(text), quote=True)


def _sort_value(value: Any) -> str | None:
    if value is None or value is BLANK or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value)):
        return repr(float(value))
    number = getattr(value, "value", None)  # a composite cell (a value with its interval)
    if isinstance(number, (int, float)) and not isinstance(number, bool):
        return repr(float(number))
    return None


def table_html(
    table: Table,
    *,
    table_id: str | None = None,
    caption: str | None = None,
    row_attrs: Sequence[Mapping[str, str]] | None = None,
) -> str:
    """``table`` as a sortable HTML table (click a header to sort).

    ``row_attrs`` adds attributes per row (``data-verdict`` etc.), for the page's filters.
    """
    head = "".join(f'<th scope="col" title="{esc(c.id)}">{esc(c.name)}</th>' for c in table.columns)
    body = []
    for index, row in enumerate(table.rows):
        attrs = "".join(f' {esc(k)}="{esc(v)}"' for k, v in (row_attrs[index] if row_attrs else {}).items())
        cells = []
        for column, value in zip(table.columns, row, strict=True):
            sort = _sort_value(value)
            data = f' data-v="{sort}"' if sort is not None else ""
            cells.append(f"<td{data}>{esc(column.text(value))}</td>")
        body.append(f"<tr{attrs}>{''.join(cells)}</tr>")
    ident = f' id="{esc(table_id)}"' if table_id else ""
    title = caption if caption is not None else table.title
    cap = f"<caption>{esc(title)}</caption>" if title else ""
    note = f'<p class="note">{esc(table.note)}</p>' if table.note else ""
    return (
        f'<div class="table-wrap"><table class="sortable"{ident}>{cap}<thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>{note}"
    )


def figure_html(svg: str, caption: str, *, figure_id: str | None = None) -> str:
    """An inline SVG (from :func:`tooldiag.report.html.svg.svg_of`) with its caption."""
    ident = f' id="{esc(figure_id)}"' if figure_id else ""
    return f"<figure{ident}>{svg}<figcaption>{esc(caption)}</figcaption></figure>"


def note_html(text: str, kind: str = "note") -> str:
    """A short paragraph: ``note`` (grey), ``warn`` (a flag the reader must see) or ``ok``."""
    return f'<p class="{esc(kind)}">{esc(text)}</p>'
