"""Write a stored run as BFCL result files, so BFCL's own ``bfcl evaluate`` can grade it.

Our own runs are written as BFCL's OpenAI FC handler writes them (a step is
``[{name: arguments_json}]`` or the text that ended the turn). Imported runs are
written back in the layout they were read from (the raw step), so re-grading the
export with BFCL gives the same grades as the original files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tooldiag.suites.bfcl.decode import fc_result_item
from tooldiag.suites.bfcl.gold import BfclCaseNotes
from tooldiag.suites.bfcl.ids import case_id_order
from tooldiag.trajectory import CaseTrajectory, Step


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
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
        paths.append(path)
    return paths
