"""Report rendering: the stable JSON schema and pinned table layouts."""

import csv
import io
import json

import pytest

from tooldiag.classify import ActionClass
from tooldiag.errors import UserError
from tooldiag.metrics import CaseObservation
from tooldiag.report import build_report, render, to_json

TC, ASK, REFUSE = ActionClass.TOOL_CALL, ActionClass.ASK, ActionClass.REFUSE


def obs(category, gold, emitted, passed, i):
    return CaseObservation(
        case_id=f"{category}_{i}", category=category, gold=gold, passed=passed, turns=(frozenset(emitted),)
    )


@pytest.fixture
def reports():
    cases = (
        [obs("miss_param", ASK, {ASK} if i < 1 else {TC}, i < 3, i) for i in range(4)]
        + [obs("base", TC, {TC}, i < 1, i) for i in range(4)]
        + [obs("miss_func", REFUSE, {REFUSE}, True, i) for i in range(2)]
    )
    return [build_report("model_a|x", cases, scheme="default"), build_report("m_b", cases[4:8], scheme="default")]


def test_json_schema_is_exactly_the_documented_one(reports):
    data = json.loads(render(reports, "json"))
    assert list(data) == ["runs"]
    run = data["runs"][0]
    assert list(run) == ["name", "overall_acc", "categories", "capability_counts", "cases"]
    assert list(run["cases"][0]) == [
        "run", "case_id", "category", "gold_class", "classes", "gold_hit", "passed", "error_type", "verdict", "errored"
    ]  # fmt: skip
    assert list(run["categories"]) == ["base", "miss_func", "miss_param"]  # paper column order
    cell = run["categories"]["miss_param"]
    assert list(cell) == ["n", "gold_class", "gar", "gar_ci", "turn_gar", "acc", "acc_ci", "delta_pp", "flags"]
    assert cell == {
        "n": 4,
        "gold_class": "ask",
        "gar": 25.0,
        "gar_ci": [4.5587, 69.9358],
        "turn_gar": 25.0,
        "acc": 75.0,
        "acc_ci": [30.0642, 95.4413],
        "delta_pp": -50.0,
        "flags": ["bound_violation", "masking"],
    }
    assert run["capability_counts"] == {"tool_call": 7, "ask": 1, "refuse": 2, "confirm": 0}
    assert run["overall_acc"] == pytest.approx((25.0 + 100.0 + 75.0) / 3, abs=1e-4)
    assert to_json(reports) == data


def test_markdown_table_1_is_pinned(reports):
    md = render(reports, "md")
    assert (
        "| Run | Overall Acc | base GAR | base Acc | base Δ | miss_func GAR | "
        "miss_func Acc | miss_func Δ | miss_param GAR | miss_param Acc | miss_param Δ |" in md
    )
    assert "| model_a\\|x | 66.67 | 100.0 | 25.0 | +75.0 (E) | 100.0 | 100.0 | +0.0 | 25.0 | 75.0 | -50.0 (B,M) |" in md
    assert "| m_b | 25.00 | 100.0 | 25.0 | +75.0 (E) |  |  |  |  |  |  |" in md
    assert "| model_a\\|x | miss_param | 4 | 25.0% [4.6, 69.9] | 25.0% [4.6, 69.9] | +0.0 | 1.00× |" in md
    assert "| m_b | 4 | 4* | 0* | 0* | 0* |" in md
    assert "Gold action per category: base: tool_call; miss_func: refuse; miss_param: ask." in md


def test_csv_is_tidy(reports):
    rows = list(csv.DictReader(io.StringIO(render(reports, "csv"))))
    assert len(rows) == 4
    first = rows[0]
    assert (first["run"], first["category"], first["gold_class"], first["gar"], first["acc"]) == (
        "model_a|x",
        "base",
        "tool_call",
        "100.0000",
        "25.0000",
    )
    assert first["flags"] == "execution_failure" and first["cap_tool_call"] == "7"
    assert rows[2]["flags"] == "bound_violation;masking"


def test_latex_escapes_and_marks(reports):
    tex = render(reports, "latex")
    assert tex.count(r"\begin{tabular}") == 3
    assert r"miss\_param" in tex and r"model\_a|x" in tex
    assert r"\cellcolor{gray!25}\textcolor{red}{$-50.0$}$^{\dagger}$" in tex


def test_unknown_format(reports):
    with pytest.raises(UserError, match="unknown report format"):
        render(reports, "html")


def test_markdown_counts_the_case_verdicts_per_category(reports):
    from tooldiag.report.render import verdict_table

    table = verdict_table(reports[:1])
    rows = {row[1]: dict(zip(("masked", "execution_failure", "ok", "fail", "ungraded"), row[2:])) for row in table.rows}
    by_hand: dict[str, dict[str, int]] = {}
    for case in reports[0].cases:
        counts = by_hand.setdefault(case.category, dict.fromkeys(rows["base"], 0))
        counts[case.verdict.value] += 1
    assert rows == by_hand and sum(rows["miss_param"].values()) == 4
    assert "## Case verdicts" in render(reports, "md")
