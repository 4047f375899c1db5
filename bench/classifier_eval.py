"""Per-class precision/recall of the paper and default schemes on the labelled set.

    uv run python bench/classifier_eval.py [--data tests/data/classifier/en-original.jsonl]

Prints one table per split (``dev``: written while the default rules were tuned;
``holdout``: written after the rules were frozen, never tuned on; ``all``), the
confusion matrices of the holdout split, and classification speed. The tables in
docs/diagnostic.md are this script's output.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from tooldiag.classify import classify, get_classifier, has_tool_calls
from tooldiag.classify.classes import ActionClass
from tooldiag.classify.evaluate import confusion_markdown, evaluate, evaluation_markdown

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "tests" / "data" / "classifier" / "en-original.jsonl")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines() if line.strip()]
    splits = {
        "dev": [r for r in rows if r["split"] == "dev"],
        "holdout": [r for r in rows if r["split"] == "holdout"],
        "all": rows,
    }
    for name, subset in splits.items():
        gold = [ActionClass(r["label"]) for r in subset]
        evaluations = [
            evaluate(s, gold, [classify(r.get("content"), r.get("tool_calls"), scheme=s) for r in subset])
            for s in ("paper", "default")
        ]
        print(f"### {name} ({len(subset)} emissions)\n")
        print(evaluation_markdown(evaluations))
        if name == "holdout":
            for evaluation in evaluations:
                print(confusion_markdown(evaluation))
    for scheme in ("paper", "default"):
        classifier = get_classifier(scheme)
        items = [(r.get("content"), has_tool_calls(r.get("tool_calls"))) for r in rows] * 20
        start = time.perf_counter()
        for text, calls in items:
            classifier(text, calls)
        elapsed = time.perf_counter() - start
        print(f"{scheme}: {1e6 * elapsed / len(items):.0f} µs per emission ({len(items)} emissions)")


if __name__ == "__main__":
    main()
