"""Human / audit labels of generator outputs: reading label files and storing them in a run (``labels import``).

A label says, for one generator output (record x generator x difficulty), one metric and one
rater, either whether the rater **agrees** with the programmatic score or which **score** in
[0, 1] the rater gives. Paper 000 App. G is the first kind: one annotator marked agree/disagree
per metric on 120 hard records (480 metric-level verdicts, 92.7 % agreement), and on a
disagreement the human score is the opposite side of the programmatic one,
``0 if p >= 0.5 else 1`` (:func:`human_score`). Two file layouts are read, as JSONL, JSON
(a list of rows) or CSV:

* **long**: one row per metric, ``{"record_id", "generator", "difficulty", "metric", "rater",
  "label": "agree"|"disagree"}`` or ``..., "score": 0.5}``;
* **wide** (the shape of the paper's study: one row per record, one verdict per metric):
  ``{"record_id", "generator", "difficulty", "rater", "tool_selection": "agree", ...}``, metric
  columns named as tooldiag names them or as the released judge output does
  (``tool_selection_accuracy``, ``parameter_structure_accuracy``, ``sequence_accuracy``,
  ``query_coverage_accuracy``); an empty cell leaves that metric unlabelled.

``id`` may stand for ``record_id`` and ``annotator`` for ``rater``; a row without a rater gets
``--rater`` (default ``human``). ``generator`` and ``difficulty`` may be left out when the run
holds one usable plan of the record that fits the rest (the paper's annotator labelled hard
outputs of a single generator); otherwise the row is ambiguous and refused. The programmatic
score an agree/disagree label refers to is the released scorer's (what an annotator is shown),
pinned in the store at import, so a later ``--scorer`` choice does not change what was labelled.

An import is all or nothing: every problem of every file is collected first (unknown record,
metric, generator or difficulty; a row that is neither layout; a label and a score at once; a
score outside [0, 1]; two different labels for one key and rater, within the files or against
the store) and the first is raised as a :class:`~tooldiag.errors.UserError`. Re-importing the
same labels adds nothing.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from tooldiag.errors import UserError
from tooldiag.metrics.structural import METRICS
from tooldiag.suites.judgebench.evaluations import P_COLS, programmatic_scores
from tooldiag.suites.judgebench.store import LABEL_COLUMNS, JudgeBenchStore

#: Metric spellings a label file may use -> tooldiag's metric name.
METRIC_NAMES: dict[str, str] = {
    **{m: m for m in METRICS},
    "tool_selection_accuracy": "tool_selection",
    "parameter_structure_accuracy": "parameter_structure",
    "sequence_accuracy": "sequence",
    "query_coverage_accuracy": "coverage",
}
LABEL_VALUES = ("agree", "disagree")
DEFAULT_RATER = "human"
FORMAT_HINT = "label files: docs/judgebench.md, 'Human and audit labels' (long or wide layout, .jsonl/.json/.csv)"

#: The stored key of a label: record, generator, difficulty, metric, rater.
LabelKey = tuple[str, str, str, str, str]


def human_score(label: str, programmatic: float) -> float:
    """The human's score implied by an agree/disagree label (paper 000 App. G).

    Agreement keeps the programmatic score; on disagreement "the human score is 0 if p >= 0.5
    else 1", i.e. the rater is taken to hold the opposite verdict.
    """
    if label == "agree":
        return float(programmatic)
    return 0.0 if programmatic >= 0.5 else 1.0


@dataclass
class _Row:
    """One metric-level label as read from a file, before it is resolved against the run."""

    where: str
    source: str
    record_id: str
    generator: str | None
    difficulty: str | None
    metric: str
    rater: str
    label: str | None
    score: float | None


@dataclass
class LabelImport:
    """What ``labels import`` did: labels read, added and unchanged, and the added ones per rater."""

    files: list[str]
    read: int = 0
    added: int = 0
    #: Rows identical to a stored label or to an earlier row (a re-import adds nothing).
    unchanged: int = 0
    raters: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        who = ", ".join(f"{r} ({n})" for r, n in sorted(self.raters.items())) or "-"
        return (
            f"{self.read} labels read from {len(self.files)} file(s): {self.added} added, "
            f"{self.unchanged} already stored or repeated; raters: {who}"
        )


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _text(value: Any) -> str | None:
    return None if _blank(value) else str(value).strip()


def _file_rows(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """``(where, row)`` pairs of a .jsonl, .json or .csv file."""
    if not path.is_file():
        raise UserError(f"label file {path} does not exist", hint=FORMAT_HINT)
    suffix = path.suffix.lower()
    text = path.read_text(encoding="utf-8")
    rows: list[tuple[str, Any]] = []
    if suffix == ".csv":
        reader = csv.DictReader(text.splitlines())
        rows = [(f"{path.name} line {i}", dict(row)) for i, row in enumerate(reader, start=2)]
    elif suffix == ".json":
        try:
            body = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path.name} is not valid JSON ({exc.msg})", hint=FORMAT_HINT) from None
        if not isinstance(body, list):
            raise UserError(f"{path.name} holds no list of label rows", hint=FORMAT_HINT)
        rows = [(f"{path.name} row {i}", row) for i, row in enumerate(body, start=1)]
    elif suffix == ".jsonl":
        for i, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append((f"{path.name} line {i}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise UserError(f"{path.name} line {i} is not valid JSON ({exc.msg})", hint=FORMAT_HINT) from None
    else:
        raise UserError(f"{path.name}: unknown label file type {suffix or '(none)'}", hint=FORMAT_HINT)
    for where, row in rows:
        if not isinstance(row, dict):
            raise UserError(f"{where} is not an object with named fields", hint=FORMAT_HINT)
    return rows


def _verdict(value: Any, where: str, problems: list[str]) -> tuple[str | None, float | None] | None:
    """``(label, None)``, ``(None, score)`` or ``None`` (a problem was recorded) for one cell value."""
    if isinstance(value, bool):
        return ("agree" if value else "disagree"), None
    if isinstance(value, (int, float)):
        number = float(value)
    else:
        word = str(value).strip().lower()
        if word in LABEL_VALUES:
            return word, None
        try:
            number = float(word)
        except ValueError:
            problems.append(f"{where}: label {value!r} is neither agree, disagree nor a score in [0, 1]")
            return None
    if not 0.0 <= number <= 1.0:
        problems.append(f"{where}: score {number:g} is outside [0, 1]")
        return None
    return None, number


def _parse(where: str, source: str, raw: dict[str, Any], default_rater: str, problems: list[str]) -> list[_Row]:
    """The metric-level labels of one file row (long or wide layout)."""
    record_id = _text(raw.get("record_id", raw.get("id")))
    if record_id is None:
        problems.append(f"{where}: no record_id")
        return []
    generator, difficulty = _text(raw.get("generator")), _text(raw.get("difficulty"))
    rater = _text(raw.get("rater", raw.get("annotator"))) or default_rater

    def row(metric: str, label: str | None, score: float | None) -> _Row:
        return _Row(where, source, record_id, generator, difficulty, metric, rater, label, score)

    if "metric" in raw:
        metric_text = _text(raw["metric"]) or ""
        metric = METRIC_NAMES.get(metric_text)
        if metric is None:
            problems.append(f"{where}: unknown metric {metric_text!r} (known: {', '.join(METRICS)})")
            return []
        label, score = _text(raw.get("label")), raw.get("score")
        if label is not None and not _blank(score):
            problems.append(f"{where}: give a label or a score, not both")
            return []
        if label is None and _blank(score):
            problems.append(f"{where}: no label (agree/disagree) and no score")
            return []
        parsed = _verdict(label if label is not None else score, where, problems)
        if parsed is None:
            return []
        if label is not None and parsed[0] is None:
            problems.append(f"{where}: label must be agree or disagree, got {label!r} (a number goes in 'score')")
            return []
        return [row(metric, *parsed)]
    columns = [c for c in raw if c in METRIC_NAMES]
    if not columns:
        problems.append(f"{where}: neither a 'metric' field (long layout) nor metric columns (wide layout)")
        return []
    out = []
    for column in columns:
        if _blank(raw[column]):
            continue
        parsed = _verdict(raw[column], f"{where} ({column})", problems)
        if parsed is not None:
            out.append(row(METRIC_NAMES[column], *parsed))
    return out


def _value_text(label: str | None, score: float | None) -> str:
    return repr(label) if label is not None else f"score {score:g}"


def import_labels(store: JudgeBenchStore, paths: list[Path], rater: str | None = None) -> LabelImport:
    """Read every file, check every row against the run and the stored labels, then store the new ones."""
    default_rater = (rater or "").strip() or DEFAULT_RATER
    problems: list[str] = []
    rows: list[_Row] = []
    for path in paths:
        for where, raw in _file_rows(Path(path)):
            rows.extend(_parse(where, Path(path).name, raw, default_rater, problems))
    result = LabelImport(files=[str(p) for p in paths], read=len(rows))
    records = store.records()
    scores = programmatic_scores(store)
    plans: dict[str, list[tuple[str, str]]] = {}
    programmatic: dict[tuple[str, str, str], list[float]] = {}
    for g, r, d, *p in scores[["generator", "record_id", "difficulty", *P_COLS]].itertuples(index=False, name=None):
        plans.setdefault(r, []).append((g, d))
        programmatic[(g, r, d)] = [float(v) for v in p]
    stored = {
        (s["record_id"], s["generator"], s["difficulty"], s["metric"], s["rater"]): (s["label"], s["score"], "store")
        for s in store.labels()
    }
    seen: dict[LabelKey, tuple[str | None, float | None, str]] = {}
    new: list[tuple[Any, ...]] = []
    for row in rows:
        if row.record_id not in records:
            problems.append(f"{row.where}: unknown record id {row.record_id!r} (not in this run)")
            continue
        fits = [
            (g, d)
            for g, d in plans.get(row.record_id, [])
            if row.generator in (None, g) and row.difficulty in (None, d)
        ]
        if not fits:
            which = " ".join(f"{k} {v}" for k, v in (("generator", row.generator), ("difficulty", row.difficulty)) if v)
            problems.append(f"{row.where}: no usable plan of record {row.record_id!r} {which} in this run".rstrip())
            continue
        if len(fits) > 1:
            listed = ", ".join(f"{g}/{d}" for g, d in sorted(fits)[:4])
            problems.append(
                f"{row.where}: record {row.record_id!r} has {len(fits)} plans ({listed}); say which generator "
                "and difficulty the label is for"
            )
            continue
        generator, difficulty = fits[0]
        key: LabelKey = (row.record_id, generator, difficulty, row.metric, row.rater)
        p = programmatic[(generator, row.record_id, difficulty)][METRICS.index(row.metric)]
        score = row.score if row.label is None else human_score(row.label, p)
        previous = seen.get(key) or stored.get(key)
        if previous is not None:
            same = previous[0] == row.label and (row.label is not None or previous[1] == score)
            if not same:
                origin = "the store holds" if previous[2] == "store" else f"{previous[2]} gives"
                problems.append(
                    f"{row.where}: conflicting labels for record {row.record_id!r}, {generator}/{difficulty}, "
                    f"{row.metric}, rater {row.rater!r}: {origin} {_value_text(previous[0], previous[1])}, "
                    f"this row {_value_text(row.label, row.score)}"
                )
            else:
                result.unchanged += 1
            continue
        seen[key] = (row.label, row.score if row.label is None else None, row.where)
        new.append((*key, row.label, score, p, row.source))
        result.raters[row.rater] = result.raters.get(row.rater, 0) + 1
    if problems:
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        raise UserError(
            problems[0] + more,
            hint="nothing was imported; fix the file(s) and re-run. A rater's label is fixed once stored: "
            "import a revision under another --rater or into a fresh run directory. " + FORMAT_HINT,
        )
    store.put_labels(new)
    result.added = len(new)
    return result


def label_frame(store: JudgeBenchStore) -> pd.DataFrame:
    """The stored labels as a DataFrame (:data:`LABEL_COLUMNS` plus ``dag_type``); empty when the run has none."""
    frame = pd.DataFrame(store.labels(), columns=list(LABEL_COLUMNS))
    frame["score"] = frame["score"].astype(float)
    frame["programmatic"] = frame["programmatic"].astype(float)
    if frame.empty:  # the usual case: no records to decode, analyze pays nothing for labels it has not got
        return frame.assign(dag_type=pd.Series(dtype=object))
    frame["dag_type"] = frame["record_id"].map({rid: r.dag_type for rid, r in store.records().items()})
    return frame
