"""Audit labels on a BFCL run: import (validation, idempotence) and the report's numbers.

The run is ref/oracle on three cases, whose emissions are known: every turn of
multi_turn_base_2 calls tools (then reports in text); multi_turn_miss_param_0 asks at
turn 3 (its gold turn); multi_turn_miss_func_0 refuses at turn 2 (its gold turn, the one
before the give-back turn 3) and calls tools everywhere else.
"""

import json
from fractions import Fraction

import pytest

from tooldiag import audit_import, audit_report, run_bfcl
from tooldiag.classify import ActionClass
from tooldiag.errors import StoreError, UserError
from tooldiag.metrics.agreement import cohen_kappa
from tooldiag.suites.bfcl.audit import AUDIT_FILE, load_labels
from tooldiag.suites.bfcl.audit_report import render_audit_report

CASES = ["multi_turn_base_2", "multi_turn_miss_param_0", "multi_turn_miss_func_0"]

#: (case_id, turn, r1, r2, adjudicated); None: the rater gave no label.
ITEMS = [
    ("multi_turn_base_2", 0, "tool_call", "tool_call", None),
    ("multi_turn_base_2", 1, "tool_call", "tool_call", None),
    ("multi_turn_miss_param_0", 3, "ask", "confirm", "ask"),
    ("multi_turn_miss_func_0", 2, "refuse", "refuse", None),
    ("multi_turn_miss_func_0", None, "refuse", "ask", None),
    ("multi_turn_miss_param_0", None, "ask", "ask", None),
    ("multi_turn_base_2", None, "tool_call", None, None),
]


def rows_of(items):
    rows = []
    for case_id, turn, *labels in items:
        for rater, label in zip(("r1", "r2", "adjudicated"), labels):
            if label is None:
                continue
            row = {"case_id": case_id, "rater": rater, "label": label}
            if turn is not None:
                row["turn"] = turn
            rows.append(row)
    return rows


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def run_dir(tmp_path):
    run_bfcl("ref/oracle", tmp_path / "run", ids=CASES)
    return tmp_path / "run"


@pytest.fixture
def labelled(run_dir, tmp_path):
    audit_import(write_jsonl(tmp_path / "labels.jsonl", rows_of(ITEMS)), run_dir)
    return run_dir


def test_kappa_matches_hand_computation_and_sklearn():
    r1 = [row[2] for row in ITEMS if row[3] is not None]
    r2 = [row[3] for row in ITEMS if row[3] is not None]
    # p_o = 4/6; marginals r1 (tc, ask, refuse) = 2, 2, 2; r2 (tc, ask, refuse, confirm) = 2, 2, 1, 1 of 6
    p_o = Fraction(4, 6)
    p_e = Fraction(2 * 2 + 2 * 2 + 2 * 1, 36)
    by_hand = (p_o - p_e) / (1 - p_e)
    assert by_hand == Fraction(7, 13)
    pair = cohen_kappa(r1, r2)
    assert pair.n == 6 and pair.agreement == pytest.approx(4 / 6)
    assert pair.kappa == pytest.approx(float(by_hand))
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    assert pair.kappa == pytest.approx(sklearn_metrics.cohen_kappa_score(r1, r2))


def test_kappa_edge_cases():
    import math

    empty = cohen_kappa([], [])
    assert empty.n == 0 and math.isnan(empty.kappa) and math.isnan(empty.agreement)
    # one class throughout, on both sides: p_e = p_o = 1, kappa 1 (sklearn: NaN)
    assert cohen_kappa(["ask", "ask"], ["ask", "ask"]).kappa == 1.0
    assert cohen_kappa(["ask", "refuse"], ["refuse", "ask"]).kappa == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        cohen_kappa(["ask"], [])


def test_report_numbers(labelled):
    report = audit_report(labelled)
    assert (report.labels, report.items, report.cases) == (14, 7, 3)
    assert (report.case_items, report.turn_items) == (3, 4)
    assert report.raters == ("r1", "r2")
    [(first, second, pair)] = report.pairs
    assert (first, second, pair.n) == ("r1", "r2", 6)
    assert pair.kappa == pytest.approx(7 / 13)
    versus = {v.reference: v for v in report.versus}
    assert list(versus) == ["r1", "r2", "adjudicated"]
    # the oracle does what r1 says everywhere (turn class = highest priority; case class = gold turns)
    assert versus["r1"].agreement.n == 7 and versus["r1"].agreement.agreement == 1.0
    assert versus["r2"].agreement.n == 6 and versus["r2"].agreement.agreement == pytest.approx(4 / 6)
    assert versus["adjudicated"].agreement.n == 1 and versus["adjudicated"].agreement.agreement == 1.0
    ask = next(s for s in versus["r2"].scores if s.action is ActionClass.ASK)
    assert (ask.support, ask.predicted, ask.true_positive) == (2, 2, 1)
    assert ask.precision == 0.5 and ask.recall == 0.5
    # adjudicated share: 1 of 7 items; 1 of the 2 disagreements resolved
    assert report.adjudicated_items == 1 and report.adjudicated_share == pytest.approx(1 / 7)
    assert report.resolved == 1 and report.resolved_share == 0.5
    listed = [
        (d.item, {r: c.value for r, c in d.labels.items()}, d.adjudicated, d.classifier) for d in report.disagreements
    ]
    assert listed == [
        (("multi_turn_miss_func_0", None), {"r1": "refuse", "r2": "ask"}, None, ActionClass.REFUSE),
        (("multi_turn_miss_param_0", 3), {"r1": "ask", "r2": "confirm"}, ActionClass.ASK, ActionClass.ASK),
    ]


def test_rendered_report(labelled):
    report = audit_report(labelled, "paper")
    assert report.scheme == "paper"
    md = render_audit_report(report, "md")
    assert "| r1 | r2 | 6 | 66.7 | 0.538 |" in md
    assert "| multi_turn_miss_param_0 | 3 | ask | confirm | ask | ask |" in md
    assert "| multi_turn_miss_func_0 | case | refuse | ask |  | refuse |" in md
    data = json.loads(render_audit_report(report, "json"))
    tables = {table["key"]: table for table in data["tables"]}
    assert tables["inter_rater"]["records"] == [
        {"rater_a": "r1", "rater_b": "r2", "n": 6, "agreement": pytest.approx(4 / 6), "kappa": pytest.approx(7 / 13)}
    ]
    summary = tables["audit_summary"]["records"][0]
    assert summary["adjudicated_share"] == pytest.approx(1 / 7) and summary["resolved_share"] == 0.5
    assert len(tables["disagreements"]["records"]) == 2
    with pytest.raises(UserError, match="unknown format"):
        render_audit_report(report, "latex")


def test_reimport_is_idempotent_and_a_changed_label_replaces(labelled, tmp_path):
    stored = (labelled / AUDIT_FILE).read_bytes()
    again = audit_import(write_jsonl(tmp_path / "labels.jsonl", rows_of(ITEMS)), labelled)
    assert (again.read, again.added, again.unchanged, again.replaced, again.stored) == (14, 0, 14, 0, 14)
    assert (labelled / AUDIT_FILE).read_bytes() == stored
    # a later file: r2 changes its mind on one item, a third rater joins
    later = [
        {"case_id": "multi_turn_miss_param_0", "turn": 3, "rater": "r2", "label": "ask", "note": "re-read"},
        {"case_id": "multi_turn_miss_param_0", "turn": 3, "rater": "r3", "label": "ask"},
    ]
    summary = audit_import(write_jsonl(tmp_path / "later.jsonl", later), labelled)
    assert (summary.added, summary.unchanged, summary.replaced, summary.stored) == (1, 0, 1, 15)
    assert summary.raters == ("adjudicated", "r1", "r2", "r3")
    labels = {label.key: label for label in load_labels(labelled)}
    assert labels[("multi_turn_miss_param_0", 3, "r2")].label is ActionClass.ASK
    assert labels[("multi_turn_miss_param_0", 3, "r2")].note == "re-read"
    report = audit_report(labelled)
    assert [(a, b) for a, b, _ in report.pairs] == [("r1", "r2"), ("r1", "r3"), ("r2", "r3")]
    assert [d.item for d in report.disagreements] == [("multi_turn_miss_func_0", None)]


BAD_ROWS = [
    ('{"case_id": "multi_turn_base_999", "rater": "r1", "label": "ask"}', "is not in the run"),
    ('{"case_id": "multi_turn_base_2", "rater": "r1", "label": "maybe"}', "'maybe' is not an action class"),
    ('{"case_id": "multi_turn_base_2", "rater": "r1", "label": "ask"', "not valid JSON"),
    ('{"case_id": "multi_turn_base_2", "rater": "r1", "label": "ask", "turn": 9}', "has turns 0..4, not turn 9"),
    ('{"case_id": "multi_turn_base_2", "rater": "r1", "label": "ask", "turn": "2"}', "'turn' must be a turn index"),
    ('{"case_id": "multi_turn_base_2", "label": "ask"}', "no 'rater' field"),
    ('{"case_id": "multi_turn_base_2", "rater": "r1", "label": "ask", "lable": "x"}', "unknown field 'lable'"),
    ('{"case_id": "multi_turn_base_2", "rater": "r3", "label": "ask", "adjudicated": true}', "'adjudicated'"),
    ('{"case_id": "multi_turn_base_2", "rater_a": {}, "rater_b": {}, "final": {}}', "released audit file"),
    ('["multi_turn_base_2", "r1", "ask"]', "expected a JSON object"),
    ('{"case_id": "multi_turn_base_2", "rater": "r1", "label": "refuse", "turn": 0}', "was labelled 'tool_call'"),
]


@pytest.mark.parametrize("bad, message", BAD_ROWS)
def test_bad_line_names_its_number_and_stores_nothing(labelled, tmp_path, bad, message):
    stored = (labelled / AUDIT_FILE).read_bytes()
    good = json.dumps({"case_id": "multi_turn_base_2", "rater": "r1", "label": "tool_call", "turn": 0})
    path = tmp_path / "bad.jsonl"
    path.write_text(f"{good}\n\n{bad}\n", encoding="utf-8")
    with pytest.raises(UserError, match="line 3") as caught:
        audit_import(path, labelled)
    assert message in caught.value.message and caught.value.hint
    assert (labelled / AUDIT_FILE).read_bytes() == stored


def test_no_labels_and_no_run(run_dir, tmp_path):
    with pytest.raises(UserError, match="holds no audit labels"):
        audit_report(run_dir)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(UserError, match="holds no labels"):
        audit_import(empty, run_dir)
    with pytest.raises(StoreError, match="holds no tooldiag run"):
        audit_import(write_jsonl(tmp_path / "l.jsonl", rows_of(ITEMS)), tmp_path / "nowhere")
    assert not (run_dir / AUDIT_FILE).exists()


def test_damaged_store_file_is_one_clear_error(labelled):
    (labelled / AUDIT_FILE).write_text('{"case_id": "x"}\n', encoding="utf-8")
    with pytest.raises(StoreError, match="unreadable"):
        audit_report(labelled)
