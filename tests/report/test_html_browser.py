"""The HTML report in a real browser (headless Chromium): it renders, its filters work, it fetches nothing.

The page under test is built from the report skeleton (``tooldiag.report.html``) the way the real
report is: sections with a sortable table, a matplotlib figure as inline SVG and a case table with
its filter block. :func:`tests.support.browser.check_report_in_browser` runs every check; after
the merge the same function is pointed at the demo's ``reports/report.html``. Each check is shown
to fail on a page that breaks it, so that none of them passes by construction.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support import browser
from tests.support.browser import (
    BrowserFacts,
    check_report_in_browser,
    dump_dom,
    external_references,
    page_requests,
    pixels_of,
    read_dom,
    recording_proxy,
    screenshot,
)
from tooldiag.report.html import Section, figure_html, note_html, render_page, table_html
from tooldiag.report.html.svg import new_figure, svg_of
from tooldiag.report.table import Column, Table

#: The case rows of the synthetic page: (case id, verdict tokens); 3 of 7 hold "masked".
CASES = [
    ("base_0", "ok"),
    ("base_1", "masked"),
    ("miss_func_0", "masked exec_fail"),
    ("miss_func_1", "exec_fail"),
    ("miss_param_0", "ok"),
    ("long_context_0", "masked"),
    ("long_context_1", "refused"),
]
MASKED = sum("masked" in verdict.split() for _, verdict in CASES)
HEADINGS = ["Calibration", "Case browser", "Notes"]


def synthetic_report() -> str:
    """A page with the real report's parts: a sortable table, a figure, a filterable case table."""
    table1 = Table(columns=[Column("category"), Column("Acc", decimals=1), Column("GAR", decimals=1)], title="Table 1")
    for category, acc, gar in [("base", 72.0, 70.5), ("miss_func", 41.5, 12.0), ("long_context", 55.0, 61.0)]:
        table1.add(category, acc, gar)
    figure, axes = new_figure(5.0, 3.5)
    axes.plot([0, 100], [0, 100], color="grey", linestyle="--", label="Acc = GAR")
    axes.scatter([70.5, 12.0, 61.0], [72.0, 41.5, 55.0], color="tab:red", s=60, label="runs")
    axes.fill_between([0, 100], [0, 100], [100, 100], color="tab:orange", alpha=0.2, label="masking")
    axes.set_xlabel("GAR")
    axes.set_ylabel("Acc")
    axes.legend()
    calibration = table_html(table1, table_id="table1") + figure_html(svg_of(figure, label="GAR vs Acc"), "GAR vs Acc")

    cases = Table(columns=[Column("case"), Column("verdict")], title="Cases")
    for case_id, verdict in CASES:
        cases.add(case_id, verdict)
    options = "".join(f'<option value="{v}">{v}</option>' for v in ("masked", "exec_fail", "ok", "refused"))
    filters = (
        '<div class="filters" data-table="cases">'
        f'<select data-attr="verdict"><option value="">every verdict</option>{options}</select>'
        '<input type="search" data-attr="text" placeholder="search"><span class="count"></span></div>'
    )
    browser_body = filters + table_html(cases, table_id="cases", row_attrs=[{"data-verdict": v} for _, v in CASES])
    sections = [
        Section("calibration", HEADINGS[0], calibration),
        Section("case-browser", HEADINGS[1], browser_body),
        Section("notes", HEADINGS[2], note_html("Masking: Acc above GAR.", "warn")),
    ]
    return render_page("tooldiag report", sections, subtitle="synthetic page for the browser test")


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("html") / "report.html"
    path.write_text(synthetic_report(), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def facts(report_file: Path, tmp_path_factory: pytest.TempPathFactory) -> BrowserFacts:
    browser.require_browser()
    shot = tmp_path_factory.mktemp("shot") / "report.png"
    return check_report_in_browser(report_file, HEADINGS, screenshot_to=shot)


# ---------------------------------------------------------------------------- the synthetic report


def test_report_passes_every_browser_check(facts: BrowserFacts) -> None:
    assert facts.problems == []
    assert facts.headings == HEADINGS
    assert facts.requests == [] and facts.external_references == []
    assert not facts.pixels.blank


def test_js_filter_shows_exactly_the_masked_rows(facts: BrowserFacts) -> None:
    assert 0 < MASKED < len(CASES)
    assert facts.rows == len(CASES)
    assert facts.rows_shown_unfiltered == len(CASES) and facts.shown_unfiltered == str(len(CASES))
    assert facts.matching_rows == MASKED == facts.rows_shown_filtered and facts.shown_filtered == str(MASKED)
    assert facts.wrongly_hidden == facts.wrongly_shown == 0


def test_filter_hash_hides_the_other_rows_in_the_dumped_dom(report_file: Path) -> None:
    """The hash preset in the DOM itself: which rows carry ``hidden`` (another value than the facts' one)."""
    dom = read_dom(dump_dom(report_file, "cases:verdict=exec_fail"), "cases")
    shown = [row.data["verdict"] for row in dom.rows if not row.hidden]
    assert shown == ["masked exec_fail", "exec_fail"] and dom.shown == "2"


def test_screenshot_shows_the_page(report_file: Path, tmp_path: Path) -> None:
    pixels = pixels_of(screenshot(report_file, tmp_path / "shot.png", (800, 900)))
    assert (pixels.width, pixels.height) == (800, 900)
    assert not pixels.blank and pixels.colours > 50


def test_synthetic_report_has_no_url_at_all(report_file: Path) -> None:
    text = report_file.read_text(encoding="utf-8")
    assert external_references(text) == [] and not re.search(r"https?://", text)


# ---------------------------------------------------------------------------- each check can fail


def test_blank_page_is_detected(tmp_path: Path) -> None:
    page = tmp_path / "blank.html"
    page.write_text("<!DOCTYPE html><html><body></body></html>", encoding="utf-8")
    assert pixels_of(screenshot(page, tmp_path / "blank.png", (400, 300))).blank


def test_proxy_sees_every_request_a_leaky_page_makes(tmp_path: Path) -> None:
    """An image, a CSS background, a fetch, an XHR and a loopback image: each reaches the proxy."""
    page = tmp_path / "leaky.html"
    page.write_text(
        "<!DOCTYPE html><html><head><style>body{background:url(http://example.invalid/bg.png)}</style></head>"
        '<body><h2>Leaky</h2><img src="http://example.invalid/x.png"><img src="http://127.0.0.1:8123/loop.png">'
        '<script>fetch("https://example.invalid/f.json").catch(function () {});'
        'var x = new XMLHttpRequest(); x.open("GET", "http://example.invalid/xhr"); x.send();</script>'
        "</body></html>",
        encoding="utf-8",
    )
    with recording_proxy() as proxy:
        dom = dump_dom(page, proxy=proxy)
        seen = list(proxy.requests)
    assert "<h2>Leaky</h2>" in dom
    targets = {str(r) for r in page_requests(seen)}
    assert {
        "GET http://example.invalid/x.png",
        "GET http://example.invalid/bg.png",
        "GET http://127.0.0.1:8123/loop.png",
        "CONNECT example.invalid:443",
        "GET http://example.invalid/xhr",
    } <= targets
    assert len(external_references(page.read_text(encoding="utf-8"))) == 5


def test_check_names_every_broken_promise(tmp_path: Path) -> None:
    """No page script (so no filtering), a missing heading, an external image: the check lists all three."""
    html = synthetic_report()
    html = re.sub(r"<script>\(function \(\) \{.*?</script>", "", html, count=1, flags=re.S)
    html = html.replace("</main>", '<img src="http://example.invalid/pixel.png"></main>')
    page = tmp_path / "broken.html"
    page.write_text(html, encoding="utf-8")
    with pytest.raises(AssertionError) as failure:
        check_report_in_browser(page, [*HEADINGS, "Judges"])
    message = str(failure.value)
    assert "headings missing from the rendered DOM: ['Judges']" in message
    assert "the page made 3 request(s) in 3 browser runs, to ['GET http://example.invalid/pixel.png']" in message
    assert "data-shown=None" in message
    assert "external references in the file: ['<img src> http://example.invalid/pixel.png']" in message


def test_missing_browser_skips_with_the_reason_and_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(browser.shutil, "which", lambda name: None)
    with pytest.raises(pytest.skip.Exception, match=r"no Chromium found .*apt-get install chromium"):
        browser.require_browser()


# --------------------------------------------------------------------- reading the DOM, statically


def test_read_dom_takes_the_rows_of_the_named_table_only() -> None:
    dom = read_dom(
        '<h2>A <b>b</b></h2><table id="other"><tbody><tr data-verdict="ok"></tr></tbody></table>'
        '<div class="filters x" data-table="cases" data-shown="1"></div>'
        '<table id="cases"><thead><tr><th>h</th></tr></thead><tbody><tr class="hidden" data-verdict="ok"><td>'
        '<table><tbody><tr data-verdict="nested"></tr></tbody></table></td></tr>'
        '<tr data-verdict="masked exec_fail"></tr></tbody></table>'
    )
    assert dom.headings == ["A b"] and dom.table_found and dom.filter_found and dom.shown == "1"
    assert [(row.hidden, row.has("verdict", "masked")) for row in dom.rows] == [(True, False), (False, True)]


# --------------------------------------------------------------------------- external references

LEAKS = {
    '<img src="http://cdn.example/x.png">': "<img src> http://cdn.example/x.png",
    '<link rel="stylesheet" href="https://fonts.example/css">': "<link href> https://fonts.example/css",
    '<script src="//cdn.example/lib.js"></script>': "<script src> //cdn.example/lib.js",
    '<form action="https://collect.example/post"></form>': "<form action> https://collect.example/post",
    '<svg xmlns="http://www.w3.org/2000/svg"></svg>': "<svg xmlns> http://www.w3.org/2000/svg",
    '<svg><use xlink:href="http://x.example/s.svg#a"/></svg>': "<use xlink:href> http://x.example/s.svg#a",
    '<img srcset="a.png 1x, https://x.example/b.png 2x">': "<img srcset> https://x.example/b.png",
    "<style>body { background: url('https://x.example/bg.png') }</style>": "<style> https://x.example/bg.png",
    "<style>@import url(//x.example/a.css);</style>": "<style> //x.example/a.css",
    '<style>@import "https://x.example/b.css";</style>': "<style> https://x.example/b.css",
    '<div style="background:url(http://x.example/c.png)"></div>': "<div style> http://x.example/c.png",
    '<script>fetch("https://api.example/v1")</script>': "<script> https://api.example/v1",
    "<script>var r = new XMLHttpRequest(); r.open('GET', 'http://api.example/q');</script>": (
        "<script> http://api.example/q"
    ),
    "<script>fetch('//api.example/rel')</script>": "<script> //api.example/rel",
    "<script>new WebSocket('wss://ws.example/s')</script>": "<script> wss://ws.example/s",
    "<button onclick=\"fetch('https://x.example/t')\">go</button>": "<button onclick> https://x.example/t",
    '<meta http-equiv="refresh" content="0; url=https://x.example/">': "<meta content> https://x.example/",
    "<!-- copied from https://x.example/snippet -->": "<!-- --> https://x.example/snippet",
    '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0//EN" "http://www.w3.org/TR/xhtml1/DTD/x.dtd">': (
        "<!DOCTYPE> http://www.w3.org/TR/xhtml1/DTD/x.dtd"
    ),
    '<a href="https://arxiv.org/abs/2501.00001">paper</a>': "<a href> https://arxiv.org/abs/2501.00001",
}

CLEAN = [
    "<p>Paper 001: https://arxiv.org/abs/2501.00001 (a URL in text loads nothing)</p>",
    "<pre>GET http://api.example/users  (a transcript quoting a URL)</pre>",
    '<a href="#calibration">Calibration</a><a href="#cases:verdict=masked">masked cases</a>',
    '<svg><defs><clipPath id="f1-c"></clipPath></defs><g clip-path="url(#f1-c)"><use xlink:href="#f1-m"/></g></svg>',
    '<img src="data:image/png;base64,iVBORw0KGgo=">',
    "<style>.a { background: url(data:image/svg+xml,%3Csvg%3E) } /* no remote */</style>",
    "<script>// a comment, then a local call\nvar u = location.hash; fetch(u);</script>",
    '<td data-text="see http://example.org in the reply">a cell</td>',
]


@pytest.mark.parametrize("snippet", list(LEAKS))
def test_external_reference_is_found(snippet: str) -> None:
    assert external_references(f"<!DOCTYPE html><html><body>{snippet}</body></html>") == [LEAKS[snippet]]


@pytest.mark.parametrize("snippet", CLEAN)
def test_local_or_textual_url_is_not_a_reference(snippet: str) -> None:
    assert external_references(f"<!DOCTYPE html><html><body>{snippet}</body></html>") == []
