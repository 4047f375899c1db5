"""One self-contained HTML file for every report: inline CSS, JS and SVG, no network.

The pieces, each in its own module:

* :mod:`.page`: :class:`Section` and :func:`render_page` (the document, its inline style and
  script: sortable tables, filters, the table of contents);
* :mod:`.elements`: HTML for a :class:`~tooldiag.report.table.Table` (sortable), a figure with
  its caption, a note; every string escaped;
* :mod:`.svg`: a matplotlib figure as an inline ``<svg>`` element with nothing that points
  outside the file (no XML namespaces as URLs, no RDF metadata).

Why one file: a user who wants to look rather than read, or to send a colleague the result,
opens it offline in any browser; nothing is fetched, so nothing can go missing or leak.
matplotlib is imported only by :mod:`.svg`, and only when a figure is drawn.
"""

from tooldiag.report.html.elements import esc, figure_html, note_html, table_html
from tooldiag.report.html.page import Section, render_page

__all__ = ["Section", "esc", "figure_html", "note_html", "render_page", "table_html"]
