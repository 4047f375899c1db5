"""The tau2 section of the HTML report on the fixtures: Table 2 and 3 numbers, write rows and their messages."""

from __future__ import annotations

import pytest

import tooldiag
from tests.support.html_tables import parse_html
from tooldiag.cli.main import main
from tooldiag.suites.tau2.cases import tau2_evidence
from tooldiag.suites.tau2.html import WRITES_TABLE, excerpt, tau2_section

from .conftest import AIRLINE_V1, RETAIL_V0


@pytest.fixture(scope="module")
def evidence():
    return tau2_evidence([RETAIL_V0, AIRLINE_V1])


@pytest.fixture(scope="module")
def page() -> str:
    return tooldiag.tau2_html([RETAIL_V0, AIRLINE_V1])


def test_per_class_numbers_are_table_2s(page, evidence):
    table = parse_html(page)[0]["tau2-classes"]
    cells = [(r.agent_model, r.domain, c) for r in evidence.report.table2 for c in r.paper_classes]
    assert len(table.rows) == len(cells) == 6
    for row, (model, domain, cell) in zip(table.rows, cells, strict=True):
        assert [row[0].text, row[1].text, row[2].text] == [model, domain, cell.task_class]
        assert row[5].value == pytest.approx(cell.gar.value) and row[6].value == pytest.approx(cell.acc.value)
        assert row[5].text == f"{100 * cell.gar.value:.1f} [{100 * cell.gar.low:.1f}, {100 * cell.gar.high:.1f}]"
    assert 'id="tau2-fig-classes"' in page and page.count("<svg") == 1
    assert "25.0 [4.6, 69.9]" in page  # fake/agent-a retail ask GAR, as in the markdown report


def test_write_rows_are_table_3s_writes_with_their_messages(page, evidence):
    tables = parse_html(page)[0]
    writes = tables[WRITES_TABLE]
    counted = sum(r.n_events for r in evidence.report.table3 if r.subset == "all" and r.judge == "deterministic")
    assert len(writes.rows) == len(evidence.writes) == counted == 6
    assert [a["data-verdict"] for a in writes.row_attrs] == [row.verdict.value for row in evidence.writes]
    assert [a["data-consent"] for a in writes.row_attrs] == [e.deterministic.verdict for e in evidence.report.events]
    assert len(tables["tau2-consent"].rows) == len(evidence.report.table3)
    requests = [c.text for c in writes.column("consent request (agent)")]
    answers = [c.text for c in writes.column("user's answer")]
    first = evidence.report.events[0].deterministic
    assert requests[0] == f"msg {first.request_index}: {excerpt(first.request_text)}"
    assert answers[0] == f"msg {first.reply_index} (agree): Yes, please go ahead."
    assert all(requests) and all(answers)
    assert f'<div class="filters" data-table="{WRITES_TABLE}">' in page and '<option value="masked">' in page


def test_messages_are_escaped(evidence):
    event = evidence.report.events[0]
    hostile = event.model_copy(
        update={"deterministic": event.deterministic.model_copy(update={"request_text": "<script>x()</script> & go"})}
    )
    report = evidence.report.model_copy(update={"events": [hostile, *evidence.report.events[1:]]})
    body = tau2_section(report, evidence.writes).body
    assert "<script>x()" not in body and "&lt;script&gt;x()&lt;/script&gt; &amp; go" in body


def test_no_url_anywhere(page):
    assert "http" not in page


def test_long_messages_are_cut():
    assert excerpt("a  b\n c") == "a b c"
    cut = excerpt("word " * 100, 20)
    assert len(cut) <= 20 and cut.endswith("…")


def test_diagnose_format_html(tmp_path, capsys):
    out = tmp_path / "tau2.html"
    main(["tau2", "diagnose", str(RETAIL_V0), "--format", "html", "--out", str(out)])
    page = out.read_text("utf-8")
    assert page.startswith("<!DOCTYPE html>") and '<section id="tau2">' in page and f'id="{WRITES_TABLE}"' in page
    assert len(parse_html(page)[0][WRITES_TABLE].rows) == 4


def test_diagnose_html_without_out_is_a_user_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["tau2", "diagnose", str(RETAIL_V0), "--format", "html"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --format html needs --out") and "Traceback" not in err
