"""``tooldiag audit report``: raters against each other and against the classifier (paper 001 App. F).

Reads the labels :mod:`tooldiag.suites.bfcl.audit` stored with a BFCL run and reports

* what was labelled: items (whole cases and single turns), cases, raters;
* inter-rater agreement: Cohen κ, raw agreement and n for every pair of raters, on the
  items both labelled (the adjudicator is not a rater here: its labels exist only where
  the raters disagreed, so a κ against it would measure the sampling, not agreement);
* the classifier against every rater and against the adjudicated label: agreement, κ
  and per-class precision / recall of the classifier's class (scikit-learn's
  definitions, :func:`tooldiag.metrics.classification.evaluate`);
* the adjudicated share: items with an adjudicated label, and rater disagreements
  resolved by one; and the list of disagreements with each rater's and the
  classifier's label.

The classifier's class of an item follows the paper's audit rubric (§0.2): a turn is
classed by the highest-priority class among its emissions (one tool call makes the turn
``tool_call``), harness-injected text left out as in the diagnostic. A whole-case label
is compared with the highest-priority class over the case's *gold turns*
(:func:`tooldiag.suites.bfcl.gold.bfcl_gold_turns`: the turns where the gold class is
due), or over every turn when the case has no known gold turns.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooldiag.classify import ActionClass, Classifier, classify_batch, get_classifier
from tooldiag.classify.classes import highest_priority
from tooldiag.classify.provenance import ClassifierSummary, CountingClassifier
from tooldiag.errors import UserError
from tooldiag.metrics.agreement import PairAgreement, cohen_kappa
from tooldiag.metrics.classification import ClassScore, evaluate
from tooldiag.report.table import Column, Table, table_json, table_records, to_markdown
from tooldiag.store import CaseRecord, RunStore
from tooldiag.suites.bfcl.audit import ADJUDICATED, AuditLabel, Item, item_order, load_labels
from tooldiag.suites.bfcl.diagnostic import run_name
from tooldiag.suites.bfcl.gold import BfclCaseNotes, bfcl_gold_turns
from tooldiag.suites.bfcl.ids import case_id_order

if TYPE_CHECKING:
    import pandas as pd

#: Formats of :func:`render_audit_report`.
AUDIT_FORMATS = ("md", "json")


@dataclass(frozen=True)
class Versus:
    """The classifier against one reference (a rater, or the adjudicated label)."""

    reference: str
    agreement: PairAgreement
    scores: tuple[ClassScore, ...]


@dataclass(frozen=True)
class Disagreement:
    """An item the raters labelled differently."""

    item: Item
    labels: dict[str, ActionClass]
    adjudicated: ActionClass | None
    classifier: ActionClass | None


@dataclass
class AuditReport:
    """Everything ``tooldiag audit report`` prints; the tables are built from it."""

    name: str
    run_dir: str
    scheme: str
    labels: int
    items: int
    cases: int
    case_items: int
    turn_items: int
    raters: tuple[str, ...]
    pairs: list[tuple[str, str, PairAgreement]]
    versus: list[Versus]
    adjudicated_items: int
    #: Items at least two raters labelled, differently; and how many of them carry an adjudicated label.
    disagreements: list[Disagreement]
    resolved: int
    notes: list[str] = field(default_factory=list)
    #: Which classifier gave the classifier's classes (judge, fallbacks, languages without cues).
    classifier: ClassifierSummary | None = None

    @property
    def adjudicated_share(self) -> float | None:
        return self.adjudicated_items / self.items if self.items else None

    @property
    def resolved_share(self) -> float | None:
        return self.resolved / len(self.disagreements) if self.disagreements else None


# -- the classifier's class of an item ----------------------------------------------------------
def _turn_emissions(record: CaseRecord) -> list[list[tuple[Any, bool]]]:
    """Per turn, the ``(text, has_calls)`` of every emission the model made (injected text left out)."""
    return [
        [(step.emission.text, bool(step.emission.tool_calls)) for step in turn.steps if not step.emission.injected]
        for turn in record.trajectory.turns
    ]


def classifier_classes(
    store: RunStore, items: Sequence[Item], classifier: Classifier
) -> tuple[dict[Item, ActionClass], int]:
    """The classifier's class of every item whose case (and turn) the run holds, and how many it lacks.

    All emissions of the audited cases go to the classifier in one batch (one round of
    requests for the ``llm`` scheme).
    """
    case_ids = sorted({case_id for case_id, _ in items}, key=case_id_order)
    records = {case_id: store.get_case(case_id) for case_id in case_ids}
    per_case = {case_id: _turn_emissions(record) for case_id, record in records.items() if record is not None}
    flat = [emission for turns in per_case.values() for turn in turns for emission in turn]
    labels = iter(classify_batch(classifier, flat))
    turn_classes = {
        case_id: [frozenset(next(labels) for _ in turn) for turn in turns] for case_id, turns in per_case.items()
    }
    out: dict[Item, ActionClass] = {}
    missing = 0
    for case_id, turn in items:
        classes = turn_classes.get(case_id)
        record = records.get(case_id)
        if classes is None or record is None or (turn is not None and turn >= len(classes)):
            missing += 1
            continue
        if turn is not None:
            out[(case_id, turn)] = highest_priority(classes[turn])
            continue
        notes = BfclCaseNotes.of(record.trajectory.notes)
        gold = bfcl_gold_turns(record.category, notes.ground_truth_sizes, notes.give_back_turns)
        chosen = [t for t in (gold or range(len(classes))) if t < len(classes)] or range(len(classes))
        out[(case_id, None)] = highest_priority(frozenset().union(*(classes[t] for t in chosen)))
    return out, missing


# -- the report ---------------------------------------------------------------------------------
def build_audit_report(
    labels: Sequence[AuditLabel], predicted: dict[Item, ActionClass], *, name: str, run_dir: str, scheme: str
) -> AuditReport:
    """The statistics of ``labels`` against each other and against ``predicted`` (pure)."""
    by_item: dict[Item, dict[str, ActionClass]] = {}
    for label in labels:
        by_item.setdefault(label.item, {})[label.rater] = label.label
    items = sorted(by_item, key=item_order)
    raters = tuple(sorted({label.rater for label in labels} - {ADJUDICATED}))
    pairs = []
    for first, second in combinations(raters, 2):
        shared = [by_item[item] for item in items if first in by_item[item] and second in by_item[item]]
        pairs.append((first, second, cohen_kappa([x[first] for x in shared], [x[second] for x in shared])))
    references = list(raters) + ([ADJUDICATED] if any(ADJUDICATED in x for x in by_item.values()) else [])
    versus = []
    for reference in references:
        judged = [item for item in items if reference in by_item[item] and item in predicted]
        gold = [by_item[item][reference] for item in judged]
        guess = [predicted[item] for item in judged]
        versus.append(Versus(reference, cohen_kappa(gold, guess), evaluate(scheme, gold, guess).scores))
    disagreements = []
    for item in items:
        rated = {rater: label for rater, label in by_item[item].items() if rater != ADJUDICATED}
        if len(rated) >= 2 and len(set(rated.values())) > 1:
            disagreements.append(Disagreement(item, rated, by_item[item].get(ADJUDICATED), predicted.get(item)))
    return AuditReport(
        name=name,
        run_dir=run_dir,
        scheme=scheme,
        labels=len(labels),
        items=len(items),
        cases=len({case_id for case_id, _ in items}),
        case_items=sum(1 for _, turn in items if turn is None),
        turn_items=sum(1 for _, turn in items if turn is not None),
        raters=raters,
        pairs=pairs,
        versus=versus,
        adjudicated_items=sum(1 for x in by_item.values() if ADJUDICATED in x),
        disagreements=disagreements,
        resolved=sum(1 for d in disagreements if d.adjudicated is not None),
    )


def audit_report_from_run_dir(run_dir: str | Path, classifier: Classifier | None = None) -> AuditReport:
    """Open a BFCL run, read its stored audit labels and report them against ``classifier``
    (default: the ``default`` scheme)."""
    classifier = classifier or get_classifier("default")
    store = RunStore.open(run_dir, sort_key=case_id_order)
    try:
        labels = load_labels(run_dir)
        if not labels:
            raise UserError(
                f"{run_dir} holds no audit labels",
                hint=f"attach them first: tooldiag audit import FILE --run-dir {run_dir}",
            )
        items = sorted({label.item for label in labels}, key=item_order)
        counting = CountingClassifier(classifier)  # the report says which classifier, and what it could not read
        predicted, missing = classifier_classes(store, items, counting)
        report = build_audit_report(
            labels, predicted, name=run_name(store.config, Path(run_dir)), run_dir=str(run_dir), scheme=classifier.name
        )
        report.classifier = counting.summary()
    finally:
        store.close()
    if missing:
        report.notes.append(
            f"{missing} labelled item(s) name a case or turn the run no longer holds: "
            "left out of the classifier comparison"
        )
    return report


# -- tables -------------------------------------------------------------------------------------
def _kappa(name: str = "kappa") -> Column:
    return Column(name, decimals=3, missing="–")


def _rate(name: str, key: str = "") -> Column:
    return Column(f"{name} %", key=key or name, decimals=1, percent=True, missing="–")


def _turn_text(turn: int | None) -> str:
    return "case" if turn is None else str(turn)


def summary_table(report: AuditReport) -> Table:
    table = Table(columns=[Column("measure"), Column("value")], key="audit_summary", title="Audit labels")
    table.add("labels (rows)", report.labels)
    table.add("items labelled", report.items)
    table.add("cases", report.cases)
    table.add("whole-case items", report.case_items)
    table.add("turn items", report.turn_items)
    table.add("raters", ", ".join(report.raters) or "none")
    share = report.adjudicated_share
    table.add("items with an adjudicated label", f"{report.adjudicated_items} ({_percent(share)})")
    table.add("rater disagreements", len(report.disagreements))
    table.add("disagreements adjudicated", f"{report.resolved} ({_percent(report.resolved_share)})")
    table.records.append(
        {
            "labels": report.labels,
            "items": report.items,
            "cases": report.cases,
            "case_items": report.case_items,
            "turn_items": report.turn_items,
            "raters": list(report.raters),
            "adjudicated_items": report.adjudicated_items,
            "adjudicated_share": share,
            "disagreements": len(report.disagreements),
            "resolved": report.resolved,
            "resolved_share": report.resolved_share,
        }
    )
    return table


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def inter_rater_table(report: AuditReport) -> Table:
    columns = [Column("rater A", key="rater_a"), Column("rater B", key="rater_b"), Column("n")]
    table = Table(columns=[*columns, _rate("agreement"), _kappa()], key="inter_rater", title="Inter-rater agreement")
    for first, second, pair in report.pairs:
        table.add(first, second, pair.n, _defined(pair.agreement), _defined(pair.kappa))
        table.records.append({"rater_a": first, "rater_b": second, **_pair_record(pair)})
    table.note = "Cohen's kappa on the items both raters labelled."
    return table


def classifier_table(report: AuditReport) -> Table:
    columns = [Column("reference"), Column("n"), _rate("agreement"), _kappa()]
    table = Table(columns=columns, key="classifier_agreement", title=f"Classifier ({report.scheme}) against the raters")
    for versus in report.versus:
        pair = versus.agreement
        table.add(versus.reference, pair.n, _defined(pair.agreement), _defined(pair.kappa))
        table.records.append({"reference": versus.reference, **_pair_record(pair)})
    return table


def per_class_table(report: AuditReport) -> Table:
    columns = [
        Column("reference"),
        Column("class"),
        Column("reference n", key="support"),
        Column("classifier n", key="predicted"),
        _rate("precision"),
        _rate("recall"),
    ]
    table = Table(columns=columns, key="classifier_per_class", title="Classifier precision / recall per class")
    for versus in report.versus:
        for score in versus.scores:
            if score.support or score.predicted:
                table.add(
                    versus.reference, score.action.value, score.support, score.predicted, score.precision, score.recall
                )
    table.note = (
        "precision: of the items the classifier put in the class, the share the reference put there too; "
        "recall: of the reference's items of the class, the share the classifier put there."
    )
    return table


def disagreement_table(report: AuditReport) -> Table:
    raters = list(report.raters)
    columns = [
        Column("case_id"),
        Column("turn"),
        *(Column(r) for r in raters),
        Column(ADJUDICATED),
        Column("classifier"),
    ]
    table = Table(columns=columns, key="disagreements", title="Rater disagreements")
    for d in report.disagreements:
        case_id, turn = d.item
        cells = [d.labels[r].value if r in d.labels else "" for r in raters]
        adjudicated = d.adjudicated.value if d.adjudicated else ""
        table.add(case_id, _turn_text(turn), *cells, adjudicated, d.classifier.value if d.classifier else "")
    return table


def _defined(value: float) -> float | None:
    return None if value != value else value  # NaN: no items


def _pair_record(pair: PairAgreement) -> dict[str, Any]:
    return {"n": pair.n, "agreement": _defined(pair.agreement), "kappa": _defined(pair.kappa)}


def audit_tables(report: AuditReport) -> list[Table]:
    return [
        summary_table(report),
        inter_rater_table(report),
        classifier_table(report),
        per_class_table(report),
        disagreement_table(report),
    ]


#: The table ``--format parquet --out FILE.parquet`` writes (a folder gets every table of :func:`audit_frames`).
MAIN_AUDIT_TABLE = "classifier_per_class"


def audit_frames(report: AuditReport) -> dict[str, pd.DataFrame]:
    """Every table as a DataFrame, by table key: rates as fractions, kappas as numbers.

    The summary is its record (one row: counts, shares, the raters as a list), since its
    display rows mix numbers and words in one column.
    """
    from tooldiag.report.frames import records_frame, table_frame

    frames = {}
    for table in audit_tables(report):
        frames[table.key] = records_frame(table.records) if table.key == "audit_summary" else table_frame(table)
    return frames


def render_audit_report(report: AuditReport, fmt: str = "md") -> str:
    """The report as markdown (headed tables) or JSON (``{"run", ..., "tables": [...]}``)."""
    if fmt not in AUDIT_FORMATS:
        raise UserError(f"unknown format {fmt!r}", hint="use one of: " + ", ".join(AUDIT_FORMATS))
    tables = audit_tables(report)
    if fmt == "json":
        data = {
            "run": report.name,
            "run_dir": report.run_dir,
            "scheme": report.scheme,
            "classifier": report.classifier.to_json() if report.classifier else None,
            "tables": [{**table_json(table), "records": table.records or table_records(table)} for table in tables],
            "notes": report.notes,
        }
        return json.dumps(data, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    parts = [f"# Audit: {report.name} (classifier: {report.scheme})\n"]
    if report.classifier:
        parts.append(f"\nClassifier: {report.classifier.describe()}\n")
    for table in tables:
        if not table.rows:
            continue
        parts.append(f"\n## {table.title}\n\n{to_markdown(table)}")
        if table.note:
            parts.append(f"\n{table.note}\n")
    if not report.disagreements:
        parts.append("\nThe raters agree on every item they share.\n")
    for note in report.notes:
        parts.append(f"\nNote: {note}\n")
    return "".join(parts)
