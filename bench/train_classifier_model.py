"""Train the default scheme's learned text model from the rows the rules were tuned on.

    uv run python bench/train_classifier_model.py            # write src/tooldiag/classify/model/text_model.json.gz
    uv run python bench/train_classifier_model.py --check    # exit 1 unless the shipped file is what this writes
    uv run python bench/train_classifier_model.py --cv       # leave-one-file-out accuracy of the model alone

Training rows: every labelled file (``en-original``, the ``*-dev`` files, batches ``a`` to ``h``)
except the measuring batch ``i`` (:data:`MEASURED_ONLY`), which was written blind
before this round's tuning and never trained on (docs/diagnostic.md, "A learned model beside the
rules"). Tool-call rows are left out: the rules find calls (99.3 % recall unseen); the model separates ask, refuse,
confirm and other. Pure Python and seeded, so the output is byte-identical for the same
rows on any machine (weights rounded to 4 decimals; the file is gzip with mtime 0).

The model: multinomial logistic regression on binary n-gram features
(:func:`tooldiag.classify.learned.features`; seen in at least :data:`MIN_COUNT` rows),
L2-regularised, trained by Adagrad SGD for :data:`EPOCHS` epochs in a seeded order.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tooldiag.classify.learned import MODEL_FILE, TextModel, encode_model, features

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "classifier"
OUTPUT = ROOT / "src" / "tooldiag" / "classify" / "model" / MODEL_FILE

CLASSES = ("ask", "refuse", "confirm", "other")
MIN_COUNT = 2
EPOCHS = 12
LEARNING_RATE = 0.5
L2 = 1e-4
SEED = 11
VERSION = "text-model-v1"


#: The batch that measures the model and the rules: written blind after both were frozen, never trained
#: or tuned on (docs/diagnostic.md, "Measuring the classifier").
MEASURED_ONLY = ("-holdout-i.jsonl",)


def is_training_file(name: str) -> bool:
    """Every labelled file except the measuring batch: the dev files and batches a to h, which the
    rules were tuned on after each was first measured untouched."""
    return name.endswith(".jsonl") and not name.endswith(MEASURED_ONLY)


def training_files(folder: Path = DATA) -> list[Path]:
    return sorted(p for p in folder.glob("*.jsonl") if is_training_file(p.name))


def training_digest(folder: Path = DATA) -> str:
    """SHA-256 over the training files' names and bytes (stored in the model; a test compares it)."""
    digest = hashlib.sha256()
    for path in training_files(folder):
        digest.update(path.name.encode("utf-8") + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def training_rows(folder: Path = DATA) -> list[dict[str, Any]]:
    rows = []
    for path in training_files(folder):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if row["label"] in CLASSES and not row.get("tool_calls") and isinstance(row.get("content"), str):
                    row["file"] = path.name
                    rows.append(row)
    return rows


def train(rows: Sequence[dict[str, Any]], *, epochs: int = EPOCHS, seed: int = SEED, digest: str = "") -> TextModel:
    """Multinomial logistic regression by Adagrad SGD: deterministic for the same rows and seed."""
    encoded = [(sorted(set(features(r["content"]))), CLASSES.index(r["label"])) for r in rows]
    counts = Counter(f for feats, _ in encoded for f in feats)
    vocab = sorted(f for f, n in counts.items() if n >= MIN_COUNT)
    index = {f: i for i, f in enumerate(vocab)}
    data = [([index[f] for f in feats if f in index], label) for feats, label in encoded]
    k = len(CLASSES)
    weights = [[0.0] * k for _ in vocab]
    squares = [[1e-8] * k for _ in vocab]
    bias = [0.0] * k
    bias_squares = [1e-8] * k
    order = list(range(len(data)))
    rng = random.Random(seed)
    for _ in range(epochs):
        rng.shuffle(order)
        for position in order:
            feats, label = data[position]
            scores = list(bias)
            for f in feats:
                row = weights[f]
                for c in range(k):
                    scores[c] += row[c]
            top = max(scores)
            exps = [math.exp(s - top) for s in scores]
            total = sum(exps)
            grads = [e / total for e in exps]
            grads[label] -= 1.0
            for c in range(k):
                bias_squares[c] += grads[c] * grads[c]
                bias[c] -= LEARNING_RATE * grads[c] / math.sqrt(bias_squares[c])
            for f in feats:
                row, sq = weights[f], squares[f]
                for c in range(k):
                    g = grads[c] + L2 * row[c]
                    sq[c] += g * g
                    row[c] -= LEARNING_RATE * g / math.sqrt(sq[c])
    kept = {}
    for f, row in zip(vocab, weights):
        rounded = tuple(round(w, 4) for w in row)
        if any(abs(w) >= 0.001 for w in rounded):
            kept[f] = rounded
    return TextModel(VERSION, CLASSES, tuple(round(b, 4) for b in bias), kept, training_digest=digest)


def cross_validate(rows: Sequence[dict[str, Any]], **options: Any) -> list[tuple[str, str, str, float]]:
    """Leave-one-file-out predictions ``(id, gold, predicted, probability)`` of the model alone."""
    out = []
    for name in sorted({r["file"] for r in rows}):
        model = train([r for r in rows if r["file"] != name], **options)
        for r in rows:
            if r["file"] == name:
                label, prob = model.predict(r["content"])
                out.append((r["id"], r["label"], label, prob))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the shipped file instead of writing it")
    parser.add_argument("--cv", action="store_true", help="print leave-one-file-out accuracy of the model alone")
    args = parser.parse_args(argv)
    rows = training_rows()
    if args.cv:
        predictions = cross_validate(rows)
        hits = sum(gold == got for _, gold, got, _ in predictions)
        print(f"leave-one-file-out accuracy: {100 * hits / len(predictions):.1f}% of {len(predictions)} rows")
        return 0
    blob = encode_model(train(rows, digest=training_digest()))
    if args.check:
        same = OUTPUT.exists() and OUTPUT.read_bytes() == blob
        print("shipped model matches the trainer" if same else f"{OUTPUT} differs from the trainer's output")
        return 0 if same else 1
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_bytes(blob)
    print(f"wrote {OUTPUT} ({len(blob)} bytes, {len(rows)} training rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
