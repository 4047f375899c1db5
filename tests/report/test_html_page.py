"""The HTML page skeleton: one self-contained document, escaped text, SVG with no URL."""

from __future__ import annotations

import re

from tooldiag.report.html import Section, figure_html, render_page, table_html
from tooldiag.report.html.svg import new_figure, svg_of
from tooldiag.report.table import Column, Table


def test_page_is_self_contained_and_escapes_text():
    table = Table(columns=[Column("name"), Column("acc", decimals=1)], title="<b>Table</b>")
    table.add("<script>alert(1)</script>", 72.0)
    table.add("m", None)
    figure, axes = new_figure()
    axes.plot([0, 100], [0, 100], marker="o", label="Acc = GAR")
    axes.legend()
    page = render_page("Report & co", [Section("calibration", "Calibration", table_html(table, table_id="t1"))])
    page += figure_html(svg_of(figure, label="GAR vs Acc"), "caption")
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<title>Report &amp; co</title>" in page
    assert not re.search(r"https?://", page)  # no namespace URL, no RDF metadata, no CDN
    assert 'data-v="72.0"' in page and page.count("<svg") == 1
    assert '<section id="calibration"><h2>Calibration</h2>' in page and 'href="#calibration"' in page


def test_two_figures_never_share_an_element_id():
    ids = []
    for _ in range(2):
        figure, axes = new_figure()
        axes.plot([0, 1], [0, 1], marker="o")
        ids.append(set(re.findall(r'id="([^"]+)"', svg_of(figure, label="same"))))
    assert ids[0] and ids[1] and not ids[0] & ids[1]
