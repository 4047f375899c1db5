"""Write a stored run as BFCL result files, so BFCL's own ``bfcl evaluate`` can grade it,
or as one JSON object per case with its action classes and verdict (``export --format jsonl``).

Our own runs are written as BFCL's OpenAI FC handler writes them (a step is
``[{name: arguments_json}]`` or the text that ended the turn). Imported runs are
written back in the layout they were read from (the raw step), so re-grading the
export with BFCL gives the same grades as the original files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooldiag.store.outputs import check_output_path
from tooldiag.suites.bfcl.decode import fc_result_item
from tooldiag.suites.bfcl.gold import BfclCaseNotes
from tooldiag.suites.bfcl.ids import case_id_order
from tooldiag.trajectory import CaseTrajectory, Step

if TYPE_CHECKING:
    from tooldiag.classify import Classifier
    from tooldiag.metrics.cases import CaseRow
    from tooldiag.store import CaseRecord


def _step_item(step: Step, layout: str | None) -> Any:
    emission = step.emission
    if layout is None:
        return fc_result_item(emission)
    if emission.raw is not None:
        return emission.raw
    if emission.text is not None or not emission.tool_calls:
        return emission.text
    return fc_result_item(emission)


def result_field(trajectory: CaseTrajectory) -> Any:
    """BFCL's ``result`` for one case (a string for an inference error)."""
    if trajectory.inference_error is not None:
        return f"Error during inference: {trajectory.inference_error}"
    notes = BfclCaseNotes.of(trajectory.notes)
    if notes.bfcl_inference_error is not None:
        return notes.bfcl_inference_error
    layout = notes.layout
    return [[_step_item(s, layout) for s in turn.steps if not s.emission.injected] for turn in trajectory.turns]


def write_bfcl_results(store, out_dir: str | Path) -> list[Path]:
    """``BFCL_v4_multi_turn_<cat>_result.json`` (JSONL, sorted by id) per category."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    lines: dict[str, list[str]] = {}
    for record in store.iter_cases(sort_key=case_id_order):
        traj = record.trajectory
        entry: dict[str, Any] = {"id": record.case_id, "result": result_field(traj)}
        if isinstance(entry["result"], list):
            entry["latency"] = [[s.emission.latency_s for s in t.steps if not s.emission.injected] for t in traj.turns]
        lines.setdefault(record.category, []).append(json.dumps(entry, ensure_ascii=False))
    paths = []
    for category, rows in lines.items():
        path = out_dir / f"BFCL_v4_multi_turn_{category}_result.json"
        check_output_path(path)
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


# -- ``tooldiag export --format jsonl|parquet``: one case per line, with its evidence -----------
def _classified(store: Any, classifier: Classifier) -> list[tuple[CaseRecord, list[list[str | None]], CaseRow | None]]:
    """Every stored case with the class of each step per turn (``None`` for injected text) and its evidence row.

    The classes come from the diagnostic's own adapter (one classification pass, as ``report``
    and ``cases`` make it), so an export and a report of the same run never disagree; a case of
    a category without a gold class has no evidence row and is classified here instead.
    """
    from tooldiag.classify import classify_batch
    from tooldiag.metrics.cases import case_row
    from tooldiag.suites.bfcl.diagnostic import observations_from_store, run_name

    observations, _, _ = observations_from_store(store, classifier)
    by_id = {obs.case_id: obs for obs in observations}
    name = run_name(store.config, Path(store.run_dir))
    records = list(store.iter_cases(sort_key=case_id_order))
    loose = [
        (step.emission.text, bool(step.emission.tool_calls))
        for record in records
        if record.case_id not in by_id
        for turn in record.trajectory.turns
        for step in turn.steps
        if not step.emission.injected
    ]
    loose_labels = iter(classify_batch(classifier, loose))
    out = []
    for record in records:
        obs = by_id.get(record.case_id)
        labels = iter(
            [action.value for turn in obs.emissions or () for action in turn]
            if obs is not None
            else [label.value for label in _take(loose_labels, record)]
        )
        classes = [
            [None if step.emission.injected else next(labels) for step in turn.steps]
            for turn in record.trajectory.turns
        ]
        out.append((record, classes, case_row(obs, name) if obs is not None else None))
    return out


def _take(labels: Any, record: CaseRecord) -> list[Any]:
    count = sum(not s.emission.injected for turn in record.trajectory.turns for s in turn.steps)
    return [next(labels) for _ in range(count)]


def case_json(record: CaseRecord, classes: list[list[str | None]], row: CaseRow | None) -> dict[str, Any]:
    """The documented export shape of one stored case (docs/evidence.md).

    The keys it always had (case_id ... turns) come first and keep their meaning; each
    emission gains ``action_class`` (``None`` for harness-injected text, which is never a
    model emission), the case gains ``user_messages`` (per turn, the messages the user side
    sent) and the evidence of ``tooldiag cases``: ``gold_class``, ``gold_hit``, ``verdict``
    (``None`` for a category without a gold class).
    """
    traj = record.trajectory
    return {
        "case_id": record.case_id,
        "category": record.category,
        "status": record.status,
        "passed": record.passed,
        "error_type": record.error_type,
        "error_message": record.grade.error_message if record.grade else traj.inference_error,
        "turns": [
            [
                {
                    "text": step.emission.text,
                    "tool_calls": [
                        {"name": call.name, "arguments": call.arguments, "raw_arguments": call.raw_arguments}
                        for call in step.emission.tool_calls
                    ],
                    "reasoning": step.emission.reasoning,
                    "injected": step.emission.injected,
                    "tool_results": step.tool_results,
                    "action_class": action_class,
                }
                for step, action_class in zip(turn.steps, turn_classes, strict=True)
            ]
            for turn, turn_classes in zip(traj.turns, classes, strict=True)
        ],
        "user_messages": [
            [{"role": message.role, "content": message.content} for message in turn.user_messages]
            for turn in traj.turns
        ],
        "gold_class": row.gold_class if row else None,
        "gold_hit": row.gold_hit if row else None,
        "verdict": row.verdict.value if row else None,
    }


def export_cases(store: Any, classifier: Classifier) -> list[dict[str, Any]]:
    """``tooldiag export --format jsonl``: one :func:`case_json` per stored case, in BFCL's id order."""
    return [case_json(record, classes, row) for record, classes, row in _classified(store, classifier)]


def export_case_rows(store: Any, classifier: Classifier) -> list[CaseRow]:
    """``tooldiag export --format parquet``: the evidence rows (as ``tooldiag cases``) of the cases that have one."""
    return [row for _, _, row in _classified(store, classifier) if row is not None]
