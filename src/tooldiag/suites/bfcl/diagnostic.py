"""BFCL run stores -> case observations -> calibration reports (paper 001 Tables 1, 14, 5).

The adapter between a stored BFCL run and the suite-agnostic metrics: it classifies
every model emission (harness-injected text excluded: paper 001 App. C.2, reading A),
takes each case's gold class and gold turns from :mod:`tooldiag.suites.bfcl.gold` and
the typed case notes the runner and the importer store, and hands plain
:class:`~tooldiag.metrics.gar.CaseObservation` objects to
:func:`tooldiag.report.build_report` with BFCL's column order.

>>> from tooldiag.suites.bfcl.diagnostic import write_reports
>>> table = write_reports([Path("runs/oracle"), Path("runs/halt")], Path("reports"))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tooldiag.classify import ActionClass, Classifier, classify_batch, get_classifier
from tooldiag.classify.provenance import ClassifierSummary, CountingClassifier
from tooldiag.metrics.cases import case_rows
from tooldiag.metrics.gar import CaseObservation, Thresholds
from tooldiag.metrics.repeats import summarize_repeats
from tooldiag.models.retry import public_url
from tooldiag.report import RunReport, build_report, table1_markdown, write_report_files
from tooldiag.report.repeats import noise_aware_categories
from tooldiag.store import RunStore
from tooldiag.store.usage import usage_summary
from tooldiag.suites.bfcl import CATEGORIES
from tooldiag.suites.bfcl.gold import BfclCaseNotes, bfcl_gold_turns, gold_class
from tooldiag.suites.bfcl.ids import case_id_order
from tooldiag.suites.bfcl.writer import BFCL_DISTRIBUTION
from tooldiag.versions import distribution_version, tooldiag_version


def observations_from_store(
    store: Any, classifier: Classifier, records: Sequence[Any] | None = None, *, samples: bool = False
) -> tuple[list[CaseObservation], bool, list[str]]:
    """Case observations of a :class:`tooldiag.store.RunStore`, whether a text channel
    exists, and notes for the reader (skipped categories). ``records`` (the store's
    :meth:`~tooldiag.store.RunStore.iter_cases`, already read) saves reading it again.
    ``samples`` (a run with repeats, ``records`` its :meth:`~tooldiag.store.RunStore.iter_samples`):
    each observation carries its draw as ``extra["sample"]``, the ``sample`` column of the case rows.

    The text channel is missing only for imported runs in which no model emission
    carries any text (handlers that saved every text reply as ``[]``); a live run
    always records text. ``config.import_info["text_channel"]`` overrides the guess.
    """
    records = list(store.iter_cases()) if records is None else list(records)
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
        notes = BfclCaseNotes.of(record.trajectory.notes)
        gold = gold_class(record.category, notes)
        turns = []
        emissions = []
        for turn in record.trajectory.turns:
            ordered = [next(labels) for step in turn.steps if not step.emission.injected]
            emissions.append(tuple(ordered))
            turns.append(frozenset(ordered) - {ActionClass.OTHER})
        if gold is None:
            skipped[record.category] = skipped.get(record.category, 0) + 1
            continue
        observations.append(
            CaseObservation(
                case_id=record.case_id,
                category=record.category,
                gold=gold,
                passed=None if record.status != "done" else record.passed,
                turns=tuple(turns),
                gold_turns=bfcl_gold_turns(record.category, notes.ground_truth_sizes, notes.give_back_turns),
                errored=record.status != "done",
                emissions=tuple(emissions),
                error_type=record.error_type,
                extra={"sample": record.sample} if samples else {},
            )
        )
    config = store.config
    text_channel = config.source != "import" or any_text
    override = (config.import_info or {}).get("text_channel")
    if isinstance(override, bool):
        text_channel = override
    notes_out = [
        f"{count} {category} case(s) skipped: no gold action class known for this category"
        for category, count in skipped.items()
    ]
    if not text_channel:
        notes_out.append("no text replies were recorded (the handler dropped them): ask/refuse GAR is not computable")
    return observations, text_channel, notes_out


def run_name(config: Any, run_dir: Path) -> str:
    """A row label: the model string, plus the probe when there is one."""
    name = str(getattr(config, "model", "") or run_dir.name)
    probe = getattr(config, "probe", None)
    return f"{name} +{probe}" if probe else name


def public_config(config: Any) -> dict[str, Any]:
    """The run config as JSON, with :func:`public_url` applied to ``base_url`` (the config holds
    no key: the key's environment variable is never stored)."""
    data: dict[str, Any] = config.model_dump(mode="json")
    data["base_url"] = public_url(data.get("base_url"))
    return data


def _iso(unix: float | None) -> str | None:
    return None if unix is None else datetime.fromtimestamp(unix, UTC).isoformat(timespec="seconds")


def run_provenance(store: Any, classifier: ClassifierSummary) -> dict[str, Any]:
    """The provenance block of one run's report (docs/evidence.md, "Provenance")."""
    return {
        "tooldiag": tooldiag_version(),
        "bfcl_eval": distribution_version(BFCL_DISTRIBUTION),
        "writers": store.writers(),
        "classifier": {
            "scheme": classifier.scheme,
            "cue_digest": classifier.cue_digest,
            "cue_files": list(classifier.cue_files),
            "judge": classifier.judge,
            "prompt_version": classifier.prompt_version,
        },
        "config": public_config(store.config),
        "store_created_at": _iso(store.created_at()),
        "report_created_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def report_from_run_dir(
    run_dir: Path,
    classifier: Classifier,
    *,
    thresholds: Thresholds = Thresholds(),
    name: str | None = None,
) -> RunReport:
    """Open a run directory (``tooldiag.errors.StoreError`` if it is not one) and report it."""
    store = RunStore.open(run_dir, sort_key=case_id_order)
    counting = CountingClassifier(classifier)  # the report names the classifier and what it could not read
    try:
        records = list(store.iter_cases())
        repeated = any(count > 1 for count in store.sample_counts().values())
        draws: list[CaseObservation] = []
        if repeated:  # every draw classified; the tables describe draw 0, the Repeats section all
            every = list(store.iter_samples())
            draws, text_channel, notes = observations_from_store(store, counting, every, samples=True)
            cases = [case for case in draws if case.extra["sample"] == 0]
            records = every  # the run summary counts every draw's requests
        else:
            cases, text_channel, notes = observations_from_store(store, counting, records)
        summary = counting.summary()
        report = build_report(
            name or run_name(store.config, Path(run_dir)),
            cases,
            scheme=classifier.name,
            source=str(run_dir),
            text_channel=text_channel,
            thresholds=thresholds,
            notes=notes,
            category_order=CATEGORIES,  # the paper's column order is BFCL's own
            classifier=summary,
        )
        report.provenance = run_provenance(store, summary)
        report.usage = usage_summary(store, records)
        if repeated:
            add_repeats(report, draws, text_channel=text_channel, thresholds=thresholds)
        return report
    finally:
        store.close()


def add_repeats(
    report: RunReport, draws: Sequence[CaseObservation], *, text_channel: bool, thresholds: Thresholds
) -> None:
    """Give ``report`` (draw 0's tables) its Repeats section from every draw (``extra["sample"]``):
    per category :func:`~tooldiag.metrics.repeats.summarize_repeats`, one case row per draw, and
    under ``thresholds.noise_aware`` only the calibration flags that survive the noise floor."""
    by_category: dict[str, dict[int, list[CaseObservation]]] = {}
    for case in draws:
        by_category.setdefault(case.category, {}).setdefault(int(case.extra["sample"]), []).append(case)
    report.repeats = {
        category: summarize_repeats(category, by_category[category], text_channel=text_channel, thresholds=thresholds)
        for category in report.categories
        if category in by_category
    }
    report.cases = case_rows(draws, report.name)
    if thresholds.noise_aware:
        report.categories = noise_aware_categories(report.categories, report.repeats)


def reports_from_run_dirs(
    run_dirs: Sequence[Path],
    classifier: Classifier | None = None,
    *,
    thresholds: Thresholds = Thresholds(),
) -> list[RunReport]:
    """One report per run directory; duplicate names get their directory appended.

    ``classifier`` defaults to the ``default`` scheme (with ``TOOLDIAG_CUES``).
    """
    classifier = classifier or get_classifier("default")
    reports = [report_from_run_dir(Path(d), classifier, thresholds=thresholds) for d in run_dirs]
    counts: dict[str, int] = {}
    for report in reports:
        counts[report.name] = counts.get(report.name, 0) + 1
    for report, run_dir in zip(reports, run_dirs):
        if counts[report.name] > 1:
            report.name = f"{report.name} ({Path(run_dir).name})"
    return reports


def write_reports(run_dirs: Sequence[Path], out_dir: Path, classifier: Classifier | None = None) -> str:
    """Report ``run_dirs`` in every text format under ``out_dir``; return Table 1 as markdown.

    This is what ``tooldiag demo`` calls (its HTML page, which also holds the judge study,
    is :func:`tooldiag.suites.html_report.write_html_report`).
    """
    reports = reports_from_run_dirs([Path(d) for d in run_dirs], classifier)
    write_report_files(reports, out_dir)
    return table1_markdown(reports)
