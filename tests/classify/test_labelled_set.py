"""The labelled evaluation set: shape, coverage, and the scheme comparison it supports.

Thresholds here are floors well under the measured values (docs/diagnostic.md), so a
regression of the default rules fails the suite while cue-list extensions do not.
"""

import json
from collections import Counter
from pathlib import Path

import pytest

from tooldiag.classify import ActionClass, classify
from tooldiag.metrics.classification import evaluate

DATA = Path(__file__).resolve().parents[1] / "data" / "classifier" / "en-original.jsonl"


@pytest.fixture(scope="module")
def rows():
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]


def score(rows, scheme):
    gold = [ActionClass(r["label"]) for r in rows]
    return evaluate(scheme, gold, [classify(r.get("content"), r.get("tool_calls"), scheme=scheme) for r in rows])


def test_shape_and_coverage(rows):
    assert len(rows) >= 200
    assert len({r["id"] for r in rows}) == len(rows)
    labels = Counter(r["label"] for r in rows)
    assert set(labels) == {a.value for a in ActionClass} and min(labels.values()) >= 40
    assert {"bfcl", "tau2"} <= {r["style"] for r in rows}
    assert {"dev", "holdout"} == {r["split"] for r in rows}
    assert all(r["role"] == "assistant" and "note" in r for r in rows)


def test_default_beats_paper_on_held_out_emissions(rows):
    holdout = [r for r in rows if r["split"] == "holdout"]
    default, paper = score(holdout, "default"), score(holdout, "paper")
    assert default.accuracy >= 0.90
    assert default.accuracy - paper.accuracy >= 0.20
    assert default.macro_f1 - paper.macro_f1 >= 0.25


def test_default_per_class_recall_and_precision(rows):
    result = score(rows, "default")
    for class_score in result.scores:
        assert class_score.recall >= 0.9 and class_score.precision >= 0.9, class_score
    confirm = next(s for s in score(rows, "paper").scores if s.action is ActionClass.CONFIRM)
    assert confirm.true_positive == 0  # the paper's confirm means completion claims, not consent
