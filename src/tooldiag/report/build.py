"""From run stores (or any case observations) to :class:`RunReport` objects.

This is the adapter between storage and the pure metrics: it classifies every model
emission of a stored run (harness-injected text excluded: paper 001 App. C.2, reading
A), derives each case's gold turns from the BFCL notes the runner stores, and hands
plain :class:`~tooldiag.metrics.gar.CaseObservation` objects to the metric functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from tooldiag.classify import Classifier, get_classifier
from tooldiag.classify.classes import ActionClass
from tooldiag.metrics.gar import (
    BFCL_GOLD,
    CaseObservation,
    Thresholds,
    bfcl_gold_turns,
    capability_counts,
    overall_accuracy,
    summarize_category,
)
from tooldiag.report.model import RunReport, ordered_categories


def classify_batch(classifier: Classifier, items: Sequence[tuple[Any, bool]]) -> list[ActionClass]:
    """Labels for ``(text, has_calls)`` pairs; batched when the classifier supports it (llm)."""
    many = getattr(classifier, "classify_many", None)
    if many is not None:
        return list(many(items))
    return [classifier(text, has_calls) for text, has_calls in items]


def build_report(
    name: str,
    cases: Sequence[CaseObservation],
    *,
    scheme: str,
    source: str = "",
    text_channel: bool = True,
    thresholds: Thresholds = Thresholds(),
    notes: Iterable[str] = (),
) -> RunReport:
    """Every Table 1 / 14 / 5 number of one run from its case observations."""
    by_category: dict[str, list[CaseObservation]] = {}
    for case in cases:
        by_category.setdefault(case.category, []).append(case)
    categories = {
        category: summarize_category(category, by_category[category], text_channel=text_channel, thresholds=thresholds)
        for category in ordered_categories(list(by_category))
    }
    return RunReport(
        name=name,
        source=source,
        scheme=scheme,
        categories=categories,
        capability=capability_counts(cases, thresholds),
        overall_acc=overall_accuracy(summary.acc for summary in categories.values()),
        thresholds=thresholds,
        notes=list(notes),
    )


def _gold_for(record: Any) -> ActionClass | None:
    gold = BFCL_GOLD.get(record.category)
    if gold is not None:
        return gold
    raw = record.trajectory.notes.get("gold_class")
    if isinstance(raw, str):
        try:
            return ActionClass(raw)
        except ValueError:
            return None
    return None


def observations_from_store(store: Any, classifier: Classifier) -> tuple[list[CaseObservation], bool, list[str]]:
    """Case observations of a :class:`tooldiag.store.RunStore`, whether a text channel
    exists, and notes for the reader (skipped categories).

    The text channel is missing only for imported runs in which no model emission
    carries any text (handlers that saved every text reply as ``[]``); a live run
    always records text. ``config.import_info["text_channel"]`` overrides the guess.
    """
    records = list(store.iter_cases())
    items: list[tuple[Any, bool]] = []
    any_text = False
    for record in records:
        for turn in record.trajectory.turns:
            for step in turn.steps:
                emission = step.emission
                if emission.injected:
                    continue
                items.append((emission.text, bool(emission.tool_calls)))
                if not emission.tool_calls and isinstance(emission.text, str) and emission.text.strip():
                    any_text = True
    labels = iter(classify_batch(classifier, items))
    observations: list[CaseObservation] = []
    skipped: dict[str, int] = {}
    for record in records:
        gold = _gold_for(record)
        turns = []
        for turn in record.trajectory.turns:
            classes = set()
            for step in turn.steps:
                if step.emission.injected:
                    continue
                classes.add(next(labels))
            classes.discard(ActionClass.OTHER)
            turns.append(frozenset(classes))
        if gold is None:
            skipped[record.category] = skipped.get(record.category, 0) + 1
            continue
        notes = record.trajectory.notes
        observations.append(
            CaseObservation(
                case_id=record.case_id,
                category=record.category,
                gold=gold,
                passed=None if record.status != "done" else record.passed,
                turns=tuple(turns),
                gold_turns=bfcl_gold_turns(record.category, notes.get("ground_truth_sizes"), notes.get("give_back_turns")),
                errored=record.status != "done",
            )
        )
    config = store.config
    text_channel = config.source != "import" or any_text
    override = (config.import_info or {}).get("text_channel")
    if isinstance(override, bool):
        text_channel = override
    notes_out = [f"{count} {category} case(s) skipped: no gold action class known for this category" for category, count in skipped.items()]
    if not text_channel:
        notes_out.append("no text replies were recorded (the handler dropped them): ask/refuse GAR is not computable")
    return observations, text_channel, notes_out


def run_name(config: Any, run_dir: Path) -> str:
    """A row label: the model string, plus the probe when there is one."""
    name = str(getattr(config, "model", "") or run_dir.name)
    probe = getattr(config, "probe", None)
    return f"{name} +{probe}" if probe else name


def report_from_run_dir(
    run_dir: Path,
    *,
    scheme: str = "default",
    cue_files: Sequence[Path] = (),
    thresholds: Thresholds = Thresholds(),
    name: str | None = None,
) -> RunReport:
    """Open a run directory (``tooldiag.errors.StoreError`` if it is not one) and report it."""
    from tooldiag.store import RunStore

    store = RunStore.open(run_dir)
    try:
        classifier = get_classifier(scheme, cue_files=cue_files)
        cases, text_channel, notes = observations_from_store(store, classifier)
        return build_report(
            name or run_name(store.config, Path(run_dir)),
            cases,
            scheme=scheme,
            source=str(run_dir),
            text_channel=text_channel,
            thresholds=thresholds,
            notes=notes,
        )
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            close()


def reports_from_run_dirs(
    run_dirs: Sequence[Path],
    *,
    scheme: str = "default",
    cue_files: Sequence[Path] = (),
    thresholds: Thresholds = Thresholds(),
) -> list[RunReport]:
    """One report per run directory; duplicate names get their directory appended."""
    reports = [report_from_run_dir(Path(d), scheme=scheme, cue_files=cue_files, thresholds=thresholds) for d in run_dirs]
    counts: dict[str, int] = {}
    for report in reports:
        counts[report.name] = counts.get(report.name, 0) + 1
    for report, run_dir in zip(reports, run_dirs):
        if counts[report.name] > 1:
            report.name = f"{report.name} ({Path(run_dir).name})"
    return reports
