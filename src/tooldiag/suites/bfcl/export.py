"""Write a stored run as BFCL result files, so BFCL's own ``bfcl evaluate`` can grade it."""

from __future__ import annotations

import json
from pathlib import Path

from tooldiag.suites.bfcl.rollout import bfcl_result


def write_bfcl_results(store, out_dir: str | Path) -> list[Path]:
    """``BFCL_v4_multi_turn_<cat>_result.json`` (JSONL, sorted by id) per category."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    lines: dict[str, list[str]] = {}
    for record in store.iter_cases():
        traj = record.trajectory
        if traj.inference_error is not None:
            entry = {"id": record.case_id, "result": f"Error during inference: {traj.inference_error}"}
        else:
            entry = {
                "id": record.case_id,
                "result": bfcl_result(traj),
                "latency": [[s.emission.latency_s for s in t.steps if not s.emission.injected] for t in traj.turns],
            }
        lines.setdefault(record.category, []).append(json.dumps(entry, ensure_ascii=False))
    paths = []
    for category, rows in lines.items():
        path = out_dir / f"BFCL_v4_multi_turn_{category}_result.json"
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
        paths.append(path)
    return paths
