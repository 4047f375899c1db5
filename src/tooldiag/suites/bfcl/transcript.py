"""A BFCL run directory -> the transcript of one case (``tooldiag show RUN_DIR CASE_ID``), or of all.

The stored trajectory already holds every emission, BFCL's decoded calls and the tool
results; this adapter adds what only the suite knows: the case's gold class and gold
turns (:mod:`tooldiag.suites.bfcl.gold`, the same the report uses) and the grader's
:class:`~tooldiag.trajectory.Grade`. Injected emissions (a probe's placeholder) are
shown and marked as not counted, exactly as the diagnostic leaves them out.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tooldiag.classify.explain import Explanation
from tooldiag.errors import StoreError, UserError
from tooldiag.report.transcript import Transcript, build_transcript, emission_items, explain_distinct
from tooldiag.store import RunStore
from tooldiag.suites.bfcl.diagnostic import run_name
from tooldiag.suites.bfcl.gold import BfclCaseNotes, bfcl_gold_turns, gold_class
from tooldiag.suites.bfcl.ids import case_id_order

#: Close ids named in the hint of an unknown case id.
CLOSE_IDS = 5

_SHOWS = "tooldiag show reads BFCL run directories (`tooldiag run bfcl`, `tooldiag import bfcl`) and agent logs (JSONL)"


def _open_run(run_dir: Path) -> RunStore:
    """The run store in ``run_dir``; a one-line error naming what the folder is instead."""
    if (run_dir / "judgebench.sqlite").is_file():
        raise UserError(f"{run_dir} is an AgentJudgeBench store, not a BFCL run", hint=_SHOWS)
    try:
        store = RunStore.open(run_dir, sort_key=case_id_order)
    except StoreError as exc:
        raise UserError(f"{run_dir} is not a BFCL run ({exc.message})", hint=_SHOWS) from None
    if store.config.suite != "bfcl":
        suite = store.config.suite
        store.close()
        raise UserError(f"{run_dir} is a {suite} run, not a BFCL run", hint=_SHOWS)
    return store


def unknown_case(case_id: str, where: str, known: list[str], lister: str) -> UserError:
    """The error of a case id the input does not hold: the closest ids, and the command that lists them."""
    close = difflib.get_close_matches(case_id, known, n=CLOSE_IDS, cutoff=0.5)
    hint = (f"close ids: {', '.join(close)}; " if close else "") + f"`{lister}` lists all {len(known)} case ids"
    return UserError(f"no case {case_id!r} in {where}", hint=hint)


def bfcl_transcript(run_dir: str | Path, case_id: str, classifier: Any) -> Transcript:
    """The transcript of ``case_id`` in the BFCL run ``run_dir``, classified by ``classifier``."""
    run_dir = Path(run_dir)
    store = _open_run(run_dir)
    try:
        record = store.get_case(case_id)
        if record is None:
            known = [r.case_id for r in store.iter_cases()]
            raise unknown_case(case_id, f"the run {run_dir}", known, f"tooldiag cases {run_dir}")
        return _case_transcript(store, record, classifier, run_dir, run_name(store.config, run_dir))
    finally:
        store.close()


def bfcl_transcripts(run_dir: str | Path, classifier: Any, *, run: str | None = None) -> list[Transcript]:
    """The transcript of every case of the BFCL run ``run_dir``, in the run's case order.

    What :func:`bfcl_transcript` gives for each case, built for a whole run at once (the HTML
    report embeds every case): the store is read once and every distinct emission of the run
    is explained once, in one :func:`~tooldiag.report.transcript.explain_distinct` call (a judge
    scheme batches its requests). ``run`` names the run (default: the model, plus the probe), e.g.
    the name a report got when two runs shared one.
    """
    run_dir = Path(run_dir)
    store = _open_run(run_dir)
    try:
        records = list(store.iter_cases())
        name = run if run is not None else run_name(store.config, run_dir)
        per_case = [emission_items(record.trajectory.turns) for record in records]
        reasons = explain_distinct(classifier, [item for items in per_case for item in items])
        out = []
        start = 0
        for record, items in zip(records, per_case, strict=True):
            why = reasons[start : start + len(items)]
            start += len(items)
            out.append(_case_transcript(store, record, classifier, run_dir, name, why))
        return out
    finally:
        store.close()


def _case_transcript(
    store: RunStore,
    record: Any,
    classifier: Any,
    run_dir: Path,
    run: str,
    explanations: Sequence[Explanation] | None = None,
) -> Transcript:
    """One stored case as a transcript: its gold class and gold turns, the grade, the remarks."""
    trajectory = record.trajectory
    notes = BfclCaseNotes.of(trajectory.notes)
    gold = gold_class(record.category, notes)
    gold_turns = bfcl_gold_turns(record.category, notes.ground_truth_sizes, notes.give_back_turns)
    grade = record.grade
    remarks = []
    if gold is None:
        remarks.append(f"no gold action class is known for category {record.category!r}: no diagnostic verdict")
    if any(step.emission.injected for turn in trajectory.turns for step in turn.steps):
        remarks.append("INJECTED emissions are the harness's text (a probe's), shown but not counted")
    return build_transcript(
        trajectory.turns,
        classifier,
        run=run,
        source=str(run_dir),
        case_id=record.case_id,
        category=record.category,
        gold_class=gold,
        gold_turns=gold_turns,
        passed=record.passed,
        error_type=record.error_type if grade is None else grade.error_type,
        error_message=None if grade is None else grade.error_message,
        errored=record.status != "done",
        inference_error=trajectory.inference_error,
        notes=remarks,
        extra={"probe": store.config.probe} if store.config.probe else {},
        explanations=explanations,
    )
