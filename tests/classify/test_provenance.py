"""Classifier provenance (what a report says about its labels) and Cohen's kappa of an evaluation."""

import json
import random
from pathlib import Path

import numpy as np
import pytest

from tooldiag.classify import ActionClass, get_classifier
from tooldiag.classify.provenance import ClassifierSummary, CountingClassifier
from tooldiag.cli.main import main
from tooldiag.metrics.agreement import kappa_from_confusion
from tooldiag.metrics.classification import CLASS_ORDER, evaluate

LABELLED = Path(__file__).resolve().parents[1] / "data" / "classifier" / "en-original.jsonl"
RUSSIAN = "Извините, я не могу выполнить этот запрос."


class EnglishOnly:
    """A rule classifier that has cue data for English only (as the paper scheme)."""

    name = "english"
    languages = frozenset({"en"})

    def __call__(self, text, has_calls):
        return ActionClass.TOOL_CALL if has_calls else ActionClass.OTHER


def test_counting_classifier_counts_and_passes_labels_through():
    counting = CountingClassifier(EnglishOnly())
    items = [(RUSSIAN, False), ("Which folder do you want?", False), ("", False), (None, True), (RUSSIAN, True)]
    assert counting.classify_many(items) == [ActionClass.OTHER] * 3 + [ActionClass.TOOL_CALL] * 2
    summary = counting.summary()
    assert (summary.scheme, summary.emissions, summary.text_emissions) == ("english", 5, 2)
    assert summary.outside_languages == {"ru": 1} and summary.judge is None and summary.fallbacks == 0
    assert counting(RUSSIAN, False) is ActionClass.OTHER and counting.summary().outside == 2


def test_a_judge_reads_every_language():
    class AnyLanguage(EnglishOnly):
        languages = None

    counting = CountingClassifier(AnyLanguage())
    counting.classify_many([(RUSSIAN, False)])
    assert counting.summary().outside_languages == {}


def test_the_default_scheme_knows_its_cue_languages():
    counting = CountingClassifier(get_classifier("default"))
    counting.classify_many([("¿En qué carpeta quiere guardar el archivo?", False), (RUSSIAN, False)])
    assert counting.summary().outside_languages == {"ru": 1}


@pytest.mark.parametrize(
    "outside, text, material",
    [(0, 100, False), (4, 100, False), (5, 100, True), (1, 10, True), (10, 1000, True), (9, 1000, False)],
)
def test_material_share_rule(outside, text, material):
    summary = ClassifierSummary("default", text_emissions=text, outside_languages={"ko": outside} if outside else {})
    assert summary.outside_is_material is material
    assert (summary.outside_warning() is not None) is material


def test_summary_json_and_line():
    summary = ClassifierSummary(
        "llm", judge="openai/x", prompt_version="action-class-judge-v2", emissions=120, text_emissions=80,
        fallbacks=3, outside_languages={"ru": 2},
    )  # fmt: skip
    assert summary.to_json() == {
        "scheme": "llm", "judge": "openai/x", "prompt": "action-class-judge-v2", "cue_files": [], "emissions": 120,
        "text_emissions": 80, "fallbacks": 3, "outside_languages": {"ru": 2}, "judge_error": None,
    }  # fmt: skip
    assert summary.describe() == (
        "llm (judge openai/x; prompt action-class-judge-v2): 120 emissions (80 with text), "
        "3 fell back to the default rules, 2 outside the supported languages (ru 2)"
    )


def test_kappa_by_hand_and_against_sklearn_and_the_agreement_module():
    a, o = ActionClass.ASK, ActionClass.OTHER
    # gold a a a o, predicted a a o o: p_o = 3/4, p_e = (3/4)(2/4) + (1/4)(2/4) = 1/2, kappa = 1/2
    assert evaluate("x", [a, a, a, o], [a, a, o, o]).kappa == pytest.approx(0.5)
    assert evaluate("x", [], []).kappa is None and evaluate("x", [a] * 3, [a] * 3).kappa == 1.0

    from sklearn.metrics import cohen_kappa_score

    rng = random.Random(7)
    for _ in range(20):
        gold = [rng.choice(CLASS_ORDER) for _ in range(60)]
        predicted = [g if rng.random() < 0.7 else rng.choice(CLASS_ORDER) for g in gold]
        evaluation = evaluate("x", gold, predicted)
        expected = cohen_kappa_score([g.value for g in gold], [p.value for p in predicted])
        assert evaluation.kappa == pytest.approx(expected, abs=1e-12)
        matrix = np.array([[evaluation.confusion.get((g, p), 0) for p in CLASS_ORDER] for g in CLASS_ORDER])
        assert evaluation.kappa == pytest.approx(kappa_from_confusion(matrix), abs=1e-12)


def test_evaluate_prints_kappa_and_json(capsys):
    main(["classify", str(LABELLED), "--evaluate"])
    out = capsys.readouterr().out
    assert out.startswith("Classifier: paper: 418 emissions") and "\nClassifier: default: 418 emissions" in out
    kappa_row = next(line for line in out.splitlines() if line.startswith("| kappa | 418 |"))
    paper_kappa, default_kappa = (float(cell) for cell in kappa_row.split("|")[3:6:2])
    main(["classify", str(LABELLED), "--evaluate", "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    assert document["n"] == 418 and [s["scheme"] for s in document["schemes"]] == ["paper", "default"]
    paper, default = document["schemes"]
    assert paper["kappa"] == pytest.approx(paper_kappa, abs=5e-4) and default["kappa"] == pytest.approx(
        default_kappa, abs=5e-4
    )
    assert set(default["classes"]) == {c.value for c in CLASS_ORDER}
    assert set(default["classes"]["ask"]) == {"precision", "recall", "support", "predicted"}
    assert sum(sum(row.values()) for row in default["confusion"].values()) == 418
    assert default["classifier"]["scheme"] == "default" and 0 < default["accuracy"] <= 1
