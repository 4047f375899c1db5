"""The judgebench HTML page's human-label, stability and bias-probe tables hold the numbers of report.json.

Each store is one the suite's own tests build (test_human_labels, test_jb_stability, test_probes); the
page and the JSON are written by ``write_report`` from one analysis, and every cell of each new table is
read back from the HTML (its sort value for a number, its text otherwise) and compared with the JSON record.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import tooldiag
from tests.suites.judgebench.test_human_labels import hard_labels, write_jsonl
from tests.suites.judgebench.test_jb_stability import hand_store
from tests.suites.judgebench.test_probes import L, P, _frame, order_probed_store
from tests.support.browser import external_references
from tests.support.html_tables import ParsedTable, parse_html
from tooldiag.suites.judgebench.analysis import AnalysisSettings, JudgeBenchReport
from tooldiag.suites.judgebench.bias import load_bias_inputs
from tooldiag.suites.judgebench.evaluations import EvaluationData, load_evaluations
from tooldiag.suites.judgebench.html import DATA_TABLES
from tooldiag.suites.judgebench.loaders import load_records
from tooldiag.suites.judgebench.report import analyze, write_report

FAST = AnalysisSettings(n_resamples=50, workers=1)
HUMAN = ("human_agreement", "human_kappa", "human_alignment", "human_corrected_rates")
PROBES = ("order_change", "length_bias", "self_preference_family")


def _written(report: JudgeBenchReport, out: Path) -> tuple[dict[str, ParsedTable], dict[str, list[dict[str, Any]]]]:
    """The page's tables by id and report.json's tables by name, both from ``write_report``."""
    write_report(report, out, ("json", "html"))
    tables = parse_html((out / "report.html").read_text("utf-8"))[0]
    return tables, json.loads((out / "report.json").read_text("utf-8"))["tables"]


def _text_of(value: Any) -> str:
    return "yes" if value is True else "no" if value is False else str(value)


def assert_same_as_json(tables: dict[str, ParsedTable], records: dict[str, list[dict[str, Any]]], name: str) -> None:
    html, rows = tables[DATA_TABLES[name]], records[name]
    assert rows, name
    assert html.header == list(rows[0]), name
    assert len(html.rows) == len(rows), name
    for cells, row in zip(html.rows, rows, strict=True):
        for cell, (column, value) in zip(cells, row.items(), strict=True):
            where = f"{name}.{column}"
            if value is None:
                assert cell.value is None and cell.text == "–", where
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                assert cell.value == float(value), where  # the exact number (data-v), not a rounded one
            else:
                assert cell.text == _text_of(value), where


def test_human_label_tables(tmp_path_factory):
    run = tmp_path_factory.mktemp("html_labels") / "run"
    tooldiag.judgebench_predict(run, ["ref/jb-perturb"], difficulties=["easy", "hard"], limit=12)
    tooldiag.judgebench_judge(run, ["ref/jb-exact", "ref/jb-lenient"], conditions=["with_gt"])
    second = hard_labels(run, "ann2")
    for i, row in enumerate(second):  # a second rater who flips every fifth label: a kappa table
        if i % 5 == 0:
            row["label"] = "disagree" if row["label"] == "agree" else "agree"
    labels = hard_labels(run, "ann1") + second
    tooldiag.judgebench_labels_import(run, [write_jsonl(run.parent / "labels.jsonl", labels)])
    tables, records = _written(tooldiag.judgebench_analyze(run, resamples=50, workers=1), run / "labelled")
    assert set(HUMAN) <= set(records)
    for name in HUMAN:
        assert_same_as_json(tables, records, name)
    kappa = tables[DATA_TABLES["human_kappa"]]
    assert kappa.column("kappa")[0].text == f"{records['human_kappa'][0]['kappa']:.3f}"


def test_stability_table(tmp_path):
    store, _, _ = hand_store(tmp_path)
    tables, records = _written(analyze(load_evaluations(store), FAST), tmp_path / "out")
    store.close()
    assert_same_as_json(tables, records, "stability")
    # a section only where its data is: the page's data tables are exactly report.json's (no labels, no probe)
    assert {DATA_TABLES[n] for n in records if n in DATA_TABLES} == set(DATA_TABLES.values()) & set(tables)
    assert "human_agreement" not in records and DATA_TABLES["human_agreement"] not in tables
    row = tables[DATA_TABLES["stability"]]
    assert row.column("flip_pct")[0].text == "62.5"  # 5 of 8 units flip (test_jb_stability, by hand)


@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    store = order_probed_store(tmp_path_factory.mktemp("html_probe"), load_records(limit=12))
    yield store
    store.close()


def test_bias_probe_tables(probed, tmp_path):
    report = analyze(load_evaluations(probed), FAST, bias_inputs=load_bias_inputs(probed))
    tables, records = _written(report, tmp_path / "out")
    present = [name for name in PROBES if name in records]
    assert {"order_change", "length_bias"} <= set(present)
    for name in present:
        assert_same_as_json(tables, records, name)
    page = (tmp_path / "out" / "report.html").read_text("utf-8")
    assert "Order probe: verdict change rate" in page and external_references(page) == []


def test_probe_page_renders_in_the_browser_and_fetches_nothing(probed, tmp_path):
    """Headless Chromium (skips, saying why, where there is none): the new tables are in the DOM, no request made."""
    from tests.support.browser import dump_dom, page_requests, read_dom, recording_proxy

    write_report(analyze(load_evaluations(probed), FAST, bias_inputs=load_bias_inputs(probed)), tmp_path, ("html",))
    with recording_proxy() as proxy:
        dom = read_dom(dump_dom(tmp_path / "report.html", proxy=proxy), DATA_TABLES["order_change"])
        with proxy.lock:
            requests = page_requests(list(proxy.requests))
    assert requests == [] and "Judge reliability" in dom.headings
    assert dom.table_found and len(dom.rows) == 2  # ref/jb-exact and ref/jb-order, one condition


def test_self_preference_family_table(tmp_path):
    """test_probes' synthetic frame: a gpt judge over-credits the gpt generator's plans by 0.2."""
    rng = np.random.default_rng(11)
    gens = ("openai/gpt-4o", "vllm/llama-3-70b", "vllm/mistral-large")
    frame = _frame(150, rng, judge="openai/gpt-5.4", generators=gens)
    truth = rng.uniform(0, 1, (150, 4))
    frame[P] = truth
    own = (frame["generator"] == "openai/gpt-4o").to_numpy()
    frame[L] = np.clip(truth + np.where(own, 0.2, 0.0)[:, None] + rng.normal(0, 0.05, (150, 4)), 0, 1)
    data = EvaluationData(frame=frame, predictions=pd.DataFrame(), judgements=pd.DataFrame())
    tables, records = _written(analyze(data, FAST), tmp_path / "out")
    assert_same_as_json(tables, records, "self_preference_family")
    overall = next(row for row in records["self_preference_family"] if row["metric"] == "all")
    assert overall["direction"] == "favours own family"  # the planted +0.2, shown as the page's text too
