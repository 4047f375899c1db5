"""Re-derive ask-required candidates from tau2 tasks (``tooldiag tau2 ask-scan``).

The paper's ask label is a keyword scan of each user scenario followed by manual
verification (paper 001 §4.2: 41 candidates, 36 kept). This runs the scan on any task
set (a results file's embedded tasks or a ``tasks.json``) and marks which candidates
are among the shipped verified ids, so a user can audit, extend or replace them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tooldiag.errors import UserError
from tooldiag.suites.tau2.domains import ASK_DOMAINS, base_domain
from tooldiag.suites.tau2.json_stream import load_json_file
from tooldiag.suites.tau2.reader import open_results, validate_model
from tooldiag.suites.tau2.schema import TaskRecord
from tooldiag.suites.tau2.tasks import scan_ask_candidates, shipped_ask_ids


def _first_byte(path: Path) -> bytes:
    with open(path, "rb") as handle:
        while chunk := handle.read(4096):
            stripped = chunk.lstrip()
            if stripped:
                return stripped[:1]
    return b""


def _tasks_of(path: Path) -> tuple[list[TaskRecord], str]:
    if path.is_file() and _first_byte(path) == b"[":
        raw = load_json_file(path)
        tasks = [validate_model(TaskRecord, item, f"{path}[{i}]") for i, item in enumerate(raw)]
        domain = ""
        for task in tasks:
            scenario = task.user_scenario
            if isinstance(scenario, dict) and isinstance(scenario.get("instructions"), dict):
                domain = str(scenario["instructions"].get("domain") or "")
                if domain:
                    break
        return tasks, domain or "unknown"
    header = open_results(path).header
    return list(header.tasks.values()), header.domain


def scan_sources(paths: list[Path]) -> list[dict[str, Any]]:
    """Per source: domain, task count and each candidate with its phrases and whether
    it is a shipped verified ask id of the base domain (``None`` for other domains)."""
    if not paths:
        raise UserError("nothing to scan", hint="pass tau2 results files, run folders or tasks.json files")
    rows: list[dict[str, Any]] = []
    for path in paths:
        if not path.exists():
            raise UserError(
                f"{path}: no such file or folder", hint="pass a tau2 results file, run folder or tasks.json"
            )
        tasks, domain = _tasks_of(path)
        base = base_domain(domain)
        shipped = set(shipped_ask_ids(base)) if base in ASK_DOMAINS else None
        hits = scan_ask_candidates(tasks)
        rows.append(
            {
                "source": str(path),
                "domain": domain,
                "n_tasks": len(tasks),
                "candidates": [
                    {"task_id": task_id, "phrases": phrases, "shipped": None if shipped is None else task_id in shipped}
                    for task_id, phrases in hits.items()
                ],
            }
        )
    return rows
