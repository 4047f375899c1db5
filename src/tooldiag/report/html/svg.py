"""matplotlib figures as inline SVG that reference nothing outside the HTML file.

matplotlib's SVG output names its XML namespaces with URLs (``xmlns="http://www.w3.org/..."``)
and embeds RDF metadata with more URLs (Dublin Core, the creator's site). An SVG inlined in
HTML5 needs neither: the HTML parser puts ``<svg>`` in the SVG namespace and reads
``xlink:href`` as it should. So we drop the XML prolog, the namespace declarations and the
metadata, and keep the drawing; the file then holds no ``http://`` that is not a plain link.
Text stays text (``svg.fonttype = none``): smaller, searchable, and styled by the page's font.
"""

from __future__ import annotations

import io
import itertools
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_PROLOG = re.compile(r"^.*?(?=<svg\b)", re.S)
_NAMESPACE = re.compile(r'\s+xmlns(?::\w+)?="[^"]*"')
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
_COMMENT = re.compile(r"<!--.*?-->\s*", re.S)
_SIZE = re.compile(r'(<svg\b[^>]*?)\s+width="[^"]*"\s+height="[^"]*"')
_ID = re.compile(r'\bid="([^"]+)"')
#: Numbers the figures of a process, so that figures on one page never share an element id.
_FIGURES = itertools.count(1)


def _prefix_ids(text: str, prefix: str) -> str:
    """Every ``id`` of the drawing, and every reference to one (``url(#x)``, ``href="#x"``), prefixed."""
    ids = set(_ID.findall(text))
    if not ids:
        return text
    text = _ID.sub(lambda m: f'id="{prefix}{m.group(1)}"', text)
    names = "|".join(re.escape(name) for name in sorted(ids, key=len, reverse=True))
    return re.sub(rf"#({names})(?=[\")])", lambda m: f"#{prefix}{m.group(1)}", text)


def new_figure(width_in: float = 6.4, height_in: float = 4.0) -> tuple[Figure, Any]:
    """A figure and its axes, drawn off-screen (the Agg canvas; no display needed)."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width_in, height_in), layout="constrained")
    return figure, figure.add_subplot()


def svg_of(figure: Figure, *, label: str = "") -> str:
    """``figure`` as an ``<svg>`` element for inline use; ``label`` becomes its accessible name.

    The SVG scales with the page (its width and height attributes are dropped; the viewBox
    stays), and its element ids are prefixed per call so that several figures share a page.
    """
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": label or "tooldiag"}):
        figure.savefig(buffer, format="svg", metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
    text = buffer.getvalue()
    text = _PROLOG.sub("", text, count=1)
    text = _METADATA.sub("", text)
    text = _COMMENT.sub("", text)
    text = _NAMESPACE.sub("", text)
    text = _SIZE.sub(r"\1", text, count=1)
    text = _prefix_ids(text, f"f{next(_FIGURES)}-")
    if label:
        from tooldiag.report.html.elements import esc

        text = text.replace("<svg", f'<svg role="img" aria-label="{esc(label)}"', 1)
    return text.strip()
