"""Accuracy of the classifier schemes per language and per class on the labelled sets.

    uv run python bench/classifier_eval.py [--data tests/data/classifier] [--scheme default] [--misses] [--learned]

Reads every ``*.jsonl`` file of the folder (format: docs/diagnostic.md, "Measuring the
classifier"). Splits: ``dev`` rows were written while the rules were tuned (optimistic);
``holdout`` rows were written by authors who never saw the rules, and the rules were
not tuned on them (the honest estimate). Prints, for the held-out split: accuracy per
language for every scheme, precision / recall per class, recall per class per language,
and the confusion matrix; where a blind second rater relabelled the held-out rows
(``raters/*.jsonl``), the raters' agreement and kappa and each scheme's accuracy on the
rows both raters label alike; then the same summary for ``dev``. The tables in
docs/diagnostic.md and the README are this script's output. ``--misses`` lists the
held-out rows a scheme got wrong (for documenting known misses, not for tuning).
``--learned`` adds a column ``default+learned``: the default rules with the learned text
model overriding their weak (ask / other) findings (docs/diagnostic.md, "A learned model
beside the rules"; off in the registered scheme).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from tooldiag.classify import classify_batch, get_classifier, has_tool_calls
from tooldiag.classify.classes import ActionClass
from tooldiag.classify.language import SUPPORTED_LANGUAGES
from tooldiag.metrics.classification import CLASS_ORDER, Evaluation, evaluate
from tooldiag.report.classification import confusion_markdown, evaluation_markdown

ROOT = Path(__file__).resolve().parents[1]

#: Files whose ``holdout`` rows were tuned on after they were measured, so they count as ``dev``:
#: the 65 held-out rows of the original set, and batches ``a`` to ``h`` of every language (each
#: measured untouched first, figures in docs/diagnostic.md, then tuned on). Batch ``i`` stays held
#: out: no rule was tuned on it and the learned model was never trained on it.
TUNED_ON = (
    "en-original.jsonl",
    "-holdout-a.jsonl",
    "-holdout-b.jsonl",
    "-holdout-c.jsonl",
    "-holdout-d.jsonl",
    "-holdout-e.jsonl",
    "-holdout-f.jsonl",
    "-holdout-g.jsonl",
    "-holdout-h.jsonl",
)


def load_rows(folder: Path) -> list[dict[str, Any]]:
    rows = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                row.setdefault("language", "en")
                row["file"] = path.name
                if path.name.endswith(TUNED_ON):
                    row["split"] = "dev"
                rows.append(row)
    return rows


def pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def score(scheme: str, rows: list[dict[str, Any]], labels: dict[str, ActionClass]) -> Evaluation:
    return evaluate(scheme, [ActionClass(r["label"]) for r in rows], [labels[r["id"]] for r in rows])


def language_table(rows: list[dict[str, Any]], schemes: list[str], labels: dict[str, dict[str, ActionClass]]) -> str:
    by_language: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_language[row["language"] if row["language"] in SUPPORTED_LANGUAGES else "other"].append(row)
    order = [code for code in (*SUPPORTED_LANGUAGES, "other") if code in by_language]
    head = "| language | n | " + " | ".join(f"{s} acc" for s in schemes) + " | default min class recall |"
    lines = [head, "|---" * (3 + len(schemes)) + "|"]
    for code in [*order, "all"]:
        subset = rows if code == "all" else by_language[code]
        evaluations = {s: score(s, subset, labels[s]) for s in schemes}
        recalls = [c.recall for c in evaluations.get("default", evaluations[schemes[0]]).scores if c.support]
        cells = " | ".join(pct(evaluations[s].accuracy) for s in schemes)
        lines.append(f"| {code} | {len(subset)} | {cells} | {pct(min(recalls)) if recalls else '–'} |")
    return "\n".join(lines) + "\n"


def recall_by_language(rows: list[dict[str, Any]], labels: dict[str, ActionClass]) -> str:
    codes = [code for code in SUPPORTED_LANGUAGES if any(r["language"] == code for r in rows)]
    lines = ["| class | " + " | ".join(codes) + " |", "|---" * (1 + len(codes)) + "|"]
    for action in CLASS_ORDER:
        cells = []
        for code in codes:
            subset = [r for r in rows if r["language"] == code and r["label"] == action.value]
            hits = sum(1 for r in subset if labels[r["id"]] is action)
            cells.append(f"{hits}/{len(subset)}" if subset else "–")
        lines.append(f"| {action.value} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def load_second_rater(folder: Path) -> dict[str, str]:
    """``id -> label`` of the blind second rater (``raters/*.jsonl``: audit-label rows
    ``{"id", "rater", "label"}``), written without seeing the gold labels or the rules."""
    labels: dict[str, str] = {}
    for path in sorted((folder / "raters").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                labels[row["id"]] = row["label"]
    return labels


def rater_table(
    rows: list[dict[str, Any]], second: dict[str, str], schemes: list[str], labels: dict[str, dict[str, ActionClass]]
) -> str:
    """Gold vs second rater (agreement, kappa), and each scheme against gold, against the second
    rater, and on the consensus rows (both raters gave the same label)."""
    from tooldiag.metrics.agreement import cohen_kappa

    head = "| language | n | raters agree | kappa |"
    for s in schemes:
        head += f" {s} vs gold | {s} vs rater 2 | {s} on consensus |"
    lines = [head, "|---" * (4 + 3 * len(schemes)) + "|"]
    codes = [c for c in SUPPORTED_LANGUAGES if any(r["language"] == c for r in rows)]
    for code in [*codes, "all"]:
        subset = [r for r in rows if (code == "all" or r["language"] == code) and r["id"] in second]
        if not subset:
            continue
        pair = cohen_kappa([r["label"] for r in subset], [second[r["id"]] for r in subset])
        consensus = [r for r in subset if second[r["id"]] == r["label"]]
        cells = [code, str(len(subset)), pct(pair.agreement), f"{pair.kappa:.3f}"]
        for s in schemes:
            got = labels[s]
            cells.append(pct(sum(got[r["id"]].value == r["label"] for r in subset) / len(subset)))
            cells.append(pct(sum(got[r["id"]].value == second[r["id"]] for r in subset) / len(subset)))
            share = sum(got[r["id"]].value == r["label"] for r in consensus) / len(consensus) if consensus else None
            cells.append(f"{pct(share)} ({len(consensus)})")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "tests" / "data" / "classifier")
    parser.add_argument("--scheme", action="append", help="schemes to compare (default: paper and default)")
    parser.add_argument("--misses", action="store_true", help="list the held-out rows each scheme got wrong")
    parser.add_argument("--learned", action="store_true", help="add the default rules + learned model column")
    args = parser.parse_args()
    schemes = args.scheme or ["paper", "default"]
    rows = load_rows(args.data)
    classifiers: dict[str, Any] = {name: get_classifier(name) for name in schemes}
    if args.learned:
        from tooldiag.classify.default import DefaultClassifier

        classifiers["default+learned"] = DefaultClassifier(learned=True)
        schemes = [*schemes, "default+learned"]
    labels = {}
    for name in schemes:
        predicted = classify_batch(
            classifiers[name], [(r.get("content"), has_tool_calls(r.get("tool_calls"))) for r in rows]
        )
        labels[name] = {r["id"]: label for r, label in zip(rows, predicted)}
    for split in ("holdout", "dev"):
        subset = [r for r in rows if r["split"] == split]
        if not subset:
            continue
        files = sorted({r["file"] for r in subset})
        print(f"## {split}: {len(subset)} emissions in {len(files)} files\n")
        print("Accuracy per language (%):\n")
        print(language_table(subset, schemes, labels))
        evaluations = [score(s, subset, labels[s]) for s in schemes]
        print("Precision / recall per class (%), all languages:\n")
        print(evaluation_markdown(evaluations))
        if "default" in labels:
            print("Recall per class and language, default scheme (hits / gold):\n")
            print(recall_by_language(subset, labels["default"]))
            if split == "holdout":
                print(confusion_markdown(score("default", subset, labels["default"])))
        second = load_second_rater(args.data)
        if split == "holdout" and second:
            print("Second rater (blind relabelling of the held-out rows; accuracy in %, consensus n in brackets):\n")
            print(rater_table(subset, second, schemes, labels))
        if split == "holdout" and args.misses:
            for name in schemes:
                misses = [r for r in subset if labels[name][r["id"]].value != r["label"]]
                print(f"### {name}: {len(misses)} held-out misses\n")
                for r in misses:
                    text = (r.get("content") or "").replace("\n", " ")[:160]
                    print(f"- {r['id']} gold {r['label']} got {labels[name][r['id']].value}: {text}")
                print()


if __name__ == "__main__":
    main()
