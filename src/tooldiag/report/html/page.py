"""The HTML document: sections, a table of contents, inline style and script.

A report is a list of :class:`Section` objects (an id, a title, HTML body, optional
section-specific script); :func:`render_page` wraps them in one document with everything
inline. The page script gives every ``table.sortable`` click-to-sort headers and every
``.filters`` block its row filters:

* ``<div class="filters" data-table="ID">`` holding ``<select data-attr="verdict">`` (and
  more selects, or a ``<input type="search" data-attr="text">``): a row of table ``ID`` is
  shown when, for every select with a value, its ``data-<attr>`` attribute (space-separated
  tokens) holds that value, and its text contains the search string;
* the location hash presets filters: ``#ID:verdict=masked,category=miss_func`` selects those
  values on load (a link to a filtered view; the browser test uses it);
* the count of visible rows is written to the block's ``.count`` element.

The style and script are package data (``assets/page.css``, ``assets/page.js``), inlined.
No external URL appears anywhere: no font, no CDN, no analytics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from tooldiag.report.html.elements import esc


def asset(name: str) -> str:
    """The text of ``assets/<name>`` (package data: the page's stylesheet and script)."""
    return resources.files("tooldiag.report.html").joinpath("assets", name).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Section:
    """One part of the report: ``id`` (the anchor), ``title`` (the ``<h2>`` and the contents entry),
    ``body`` (HTML, already escaped) and ``script`` (JS this section needs, run after the page's)."""

    id: str
    title: str
    body: str
    script: str = ""


def render_page(title: str, sections: Sequence[Section], *, subtitle: str = "", footer: str = "") -> str:
    """The whole document as one string: nothing in it is fetched from anywhere."""
    toc = "".join(f'<a href="#{esc(s.id)}">{esc(s.title)}</a>' for s in sections)
    body = "".join(f'<section id="{esc(s.id)}"><h2>{esc(s.title)}</h2>{s.body}</section>' for s in sections)
    scripts = "".join(f"<script>{s.script}</script>" for s in sections if s.script)
    sub = f"<p>{esc(subtitle)}</p>" if subtitle else ""
    foot = f'<footer class="page">{esc(footer)}</footer>' if footer else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{asset('page.css')}</style></head>"
        f'<body><header class="page"><h1>{esc(title)}</h1>{sub}</header>'
        f'<nav class="toc">{toc}</nav><main>{body}</main>{foot}'
        f"<script>{asset('page.js')}</script>{scripts}</body></html>\n"
    )
