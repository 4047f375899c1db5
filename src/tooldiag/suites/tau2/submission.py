"""A leaderboard ``submission.json`` against the trajectories: is its pass^k the one they give?

tau2-bench's leaderboard (``web/leaderboard/public/submissions/<dir>/submission.json``,
schema in shared/tau2/tau2-results-schema.md §8) states per domain ``pass_1`` ... ``pass_4``
as **percentages**. tau2 defines pass^k per task as C(c, k) / C(n, k) (c successes of n
trials; Yao et al., arXiv 2406.12045; tau2 ``metrics/agent_metrics.py``), averaged over tasks,
with k capped at the fewest trials of any task, and leaves infrastructure errors out; the
1.0.1 leaderboard re-grade counts them as failed trials instead (RELEASE_NOTES 1.0.1). Both
recomputations are shown, the difference is taken against tau2's (errors left out).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tooldiag.errors import UserError
from tooldiag.suites.tau2.domains import base_domain
from tooldiag.suites.tau2.json_stream import load_json_file
from tooldiag.suites.tau2.report import SubmissionComparison, SubmissionRow, Tau2Report
from tooldiag.suites.tau2.tau2_version import declared_version

#: The domains a submission may hold (``results`` allows only these keys).
SUBMISSION_DOMAINS = ("retail", "airline", "telecom", "banking_knowledge")
MAX_K = 4

_HINT = "pass a tau2-bench leaderboard submission.json (model_name, results.<domain>.pass_1..pass_4)"


def load_submission(path: str | Path) -> dict[str, Any]:
    """The submission as a dict, checked for what the comparison reads."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file", hint=_HINT)
    data = load_json_file(path)
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise UserError(f"{path}: no 'results' object", hint=_HINT)
    for domain, entry in data["results"].items():
        if entry is None:
            continue
        if not isinstance(entry, dict):
            raise UserError(f"{path}: results.{domain} is not an object", hint=_HINT)
        for k in range(1, MAX_K + 1):
            value = entry.get(f"pass_{k}")
            if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
                raise UserError(f"{path}: results.{domain}.pass_{k} is not a number", hint=_HINT)
    return data


def _percent(value: float | None) -> float | None:
    return None if value is None else 100.0 * value


def compare_submission(report: Tau2Report, path: str | Path) -> SubmissionComparison:
    """Per domain of the submission and k = 1..4: submitted and recomputed pass^k (percent)."""
    data = load_submission(path)
    methodology = data.get("methodology") if isinstance(data.get("methodology"), dict) else {}
    declared_text = methodology.get("tau2_bench_version") if methodology else None
    comparison = SubmissionComparison(
        path=str(path),
        model_name=str(data.get("model_name") or "unknown"),
        declared_version=str(declared_text) if declared_text is not None else None,
    )
    results: dict[str, Any] = {k: v for k, v in data["results"].items() if isinstance(v, dict)}
    rows_by_domain: dict[str, list] = {}
    for row in report.table2:
        rows_by_domain.setdefault(base_domain(row.domain) or row.domain, []).append(row)
    for domain, entry in results.items():
        rows = rows_by_domain.get(domain, [])
        if not rows:
            comparison.notes.append(f"{domain}: in the submission, but no trajectories of it were read")
            continue
        if len(rows) > 1:
            comparison.notes.append(f"{domain}: {len(rows)} agent groups read; each is compared with the submission")
        for row in rows:
            for k in range(1, MAX_K + 1):
                submitted = entry.get(f"pass_{k}")
                recomputed = _percent(row.pass_hat_k.get(k))
                if submitted is None and recomputed is None:
                    continue
                comparison.rows.append(
                    SubmissionRow(
                        domain=domain,
                        agent_model=row.agent_model,
                        k=k,
                        submitted=None if submitted is None else float(submitted),
                        recomputed=recomputed,
                        recomputed_infra_as_failure=_percent(row.pass_hat_k_infra_as_failure.get(k)),
                        difference=None if submitted is None or recomputed is None else recomputed - float(submitted),
                    )
                )
    for domain in sorted(set(rows_by_domain) - set(results)):
        comparison.notes.append(f"{domain}: trajectories read, but the submission states no results for it")
    declared = declared_version(comparison.declared_version)
    if comparison.declared_version is not None and declared is not None:
        read = {i.tau2_version for i in report.inputs if i.tau2_version}
        if read and read != {declared}:
            comparison.notes.append(
                f"the submission says tau2 {comparison.declared_version} ({declared}); the trajectories read as "
                + ", ".join(sorted(read))
            )
    return comparison
