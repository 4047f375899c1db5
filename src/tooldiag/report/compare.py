"""``tooldiag compare``: is run A's Acc or GAR on a category really different from run B's?

Both runs' case rows (:class:`~tooldiag.metrics.cases.CaseRow`, from whichever source read
them) are paired on (category, case), and per category and metric the paired statistics of
:mod:`tooldiag.metrics.paired` are computed: the difference in points, the exact McNemar
p-value (the sign test of per-case differences when cases have several samples), Holm's
adjustment across every test of the comparison, a seeded percentile bootstrap interval
over cases and the minimum detectable difference. docs/compare.md has the formulas.

How rows pair (the hook for repeated runs): a row's case is ``extra["task_id"]`` when its
source gives one (result files whose ``case_id`` names one simulation, not the task), else
its ``case_id``. Several rows of one (category, case) on one side are the case's samples
(repeats; ``extra["sample"]``, or ``extra["trial"]``, orders them), and the case becomes a
cluster: its difference is the mean over A's samples minus the mean over B's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tooldiag.errors import UserError
from tooldiag.metrics.cases import CaseRow
from tooldiag.metrics.paired import (
    case_differences,
    check_alpha,
    holm_adjust,
    mcnemar_exact,
    mcnemar_mdd,
    paired_bootstrap_ci,
    sign_counts,
)

#: What ``--metric`` accepts, and the metrics each choice compares.
METRIC_CHOICES: dict[str, tuple[str, ...]] = {"acc": ("acc",), "gar": ("gar",), "both": ("acc", "gar")}
#: Output formats of ``tooldiag compare``.
COMPARE_FORMATS = ("md", "json", "csv", "parquet")
#: Columns of the tidy table (csv, parquet, ``Comparison.records``).
RECORD_COLUMNS = (
    "category", "metric", "n", "samples", "a_rate", "b_rate", "difference_pp", "a_only", "b_only",
    "p", "p_holm", "ci_low_pp", "ci_high_pp", "mdd_pp", "significant", "verdict",
)  # fmt: skip
_POWER = 0.8

Key = tuple[str, str]


def pair_key(row: CaseRow) -> Key:
    """(category, case) of a row: what pairs it with the other run's rows (module docstring)."""
    task = row.extra.get("task_id")
    return row.category, str(task) if task is not None else row.case_id


def _sample_index(row: CaseRow) -> int:
    for name in ("sample", "trial"):
        value = row.extra.get(name)
        if isinstance(value, int):
            return value
    return 0


def _outcome(row: CaseRow, metric: str) -> bool | None:
    """The binary outcome of ``metric`` for one row; ``None`` when the row has none (errored, ungraded)."""
    if row.errored:
        return None
    return row.passed if metric == "acc" else row.gold_hit


@dataclass(frozen=True)
class PairedTest:
    """One category and metric of a comparison (rates and points are in percent)."""

    category: str
    metric: str
    #: Cases with an outcome on both sides.
    n: int
    #: Most samples any of these cases has on either side (1 without repeats).
    samples: int
    a_rate: float | None
    b_rate: float | None
    difference_pp: float | None
    #: Cases where A did better / B did better (McNemar's discordant pairs at one sample a case).
    a_only: int
    b_only: int
    p: float
    p_holm: float
    ci_pp: tuple[float, float] | None
    mdd_pp: float | None
    significant: bool
    verdict: str

    def record(self) -> dict[str, Any]:
        low, high = self.ci_pp if self.ci_pp is not None else (None, None)
        return {
            "category": self.category,
            "metric": self.metric,
            "n": self.n,
            "samples": self.samples,
            "a_rate": _round(self.a_rate),
            "b_rate": _round(self.b_rate),
            "difference_pp": _round(self.difference_pp),
            "a_only": self.a_only,
            "b_only": self.b_only,
            "p": self.p,
            "p_holm": self.p_holm,
            "ci_low_pp": _round(low),
            "ci_high_pp": _round(high),
            "mdd_pp": _round(self.mdd_pp),
            "significant": self.significant,
            "verdict": self.verdict,
        }


@dataclass
class Comparison:
    """Every paired test of run A against run B, with the overlap they were computed on."""

    a: str
    b: str
    alpha: float
    seed: int
    resamples: int
    shared_cases: int
    only_a: int
    only_b: int
    tests: list[PairedTest]
    warnings: list[str] = field(default_factory=list)

    def records(self) -> list[dict[str, Any]]:
        return [test.record() for test in self.tests]

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "alpha": self.alpha,
            "seed": self.seed,
            "resamples": self.resamples,
            "overlap": {"shared_cases": self.shared_cases, "only_a": self.only_a, "only_b": self.only_b},
            "correction": "holm",
            "ci": "percentile bootstrap over cases",
            "tests": self.records(),
            "warnings": list(self.warnings),
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _seed_for(seed: int, category: str, metric: str) -> int:
    """One bootstrap stream per test, fixed by (seed, category, metric): adding a category moves no other CI."""
    digest = hashlib.sha256(f"{seed}\0{category}\0{metric}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _group(rows: Sequence[CaseRow]) -> dict[Key, list[CaseRow]]:
    grouped: dict[Key, list[CaseRow]] = {}
    for row in rows:
        grouped.setdefault(pair_key(row), []).append(row)
    for samples in grouped.values():
        samples.sort(key=_sample_index)  # stable: rows without a sample index keep their order
    return grouped


def _label(metric: str) -> str:
    return "Acc" if metric == "acc" else "GAR"


def _p_text(p: float) -> str:
    return f"{p:.2g}"


def _verdict(test: dict[str, Any], a: str, b: str, alpha: float) -> str:
    what = f"{test['category']} {_label(test['metric'])}"
    if test["n"] == 0:
        return f"not compared on {what}: no case with an outcome in both runs"
    diff, p = test["difference_pp"], test["p_holm"]
    if test["significant"]:
        sign = ">" if diff > 0 else "<"
        text = f"{a} {sign} {b} on {what}: {diff:+.1f} pp, p = {_p_text(p)}"
        if test["ci_pp"] is not None:
            low, high = test["ci_pp"]
            text += f", {100 * (1 - alpha):g}% CI [{low:.0f}, {high:.0f}]"
        return text
    mdd = test["mdd_pp"]
    if mdd is None:
        return f"no detectable difference on {what}: {diff:+.1f} pp, too few cases ({test['n']}) to reach alpha"
    return f"no detectable difference on {what}: {diff:+.1f} pp, p = {_p_text(p)} (MDD {mdd:.0f} pp)"


def compare_rows(
    rows_a: Sequence[CaseRow],
    rows_b: Sequence[CaseRow],
    *,
    a: str = "A",
    b: str = "B",
    metric: str = "both",
    alpha: float = 0.05,
    seed: int = 0,
    resamples: int = 10_000,
) -> Comparison:
    """The paired tests of ``rows_a`` against ``rows_b`` on their shared (category, case) pairs.

    Categories come in A's row order. ``resamples=0`` skips the bootstrap (no CI). A clear
    :class:`~tooldiag.errors.UserError` when the runs share no case.
    """
    if metric not in METRIC_CHOICES:
        raise UserError(f"unknown metric {metric!r}", hint="use one of: " + ", ".join(METRIC_CHOICES))
    check_alpha(alpha)
    grouped_a, grouped_b = _group(rows_a), _group(rows_b)
    shared = [key for key in grouped_a if key in grouped_b]
    only_a = len(grouped_a) - len(shared)
    only_b = len(grouped_b) - len(shared)
    if not shared:
        raise _no_overlap(grouped_a, grouped_b, a, b)
    warnings = []
    if only_a or only_b:
        warnings.append(
            f"compared on the {len(shared)} (category, case) pairs both runs have; "
            f"{only_a} only in {a}, {only_b} only in {b} left out"
        )
    categories = list(dict.fromkeys(category for category, _ in shared))
    raw: list[dict[str, Any]] = []
    for category in categories:
        keys = [key for key in shared if key[0] == category]
        for name in METRIC_CHOICES[metric]:
            raw.append(_test(category, name, keys, grouped_a, grouped_b, alpha=alpha, seed=seed, resamples=resamples))
    family = [test for test in raw if test["n"] > 0]  # a test without cases is no hypothesis: not in Holm's m
    for test, adjusted in zip(family, holm_adjust([t["p"] for t in family]), strict=True):
        test["p_holm"] = adjusted
        test["significant"] = adjusted < alpha
    for test in raw:
        test.setdefault("p_holm", 1.0)
        test.setdefault("significant", False)
    tests = [PairedTest(**test, verdict=_verdict(test, a, b, alpha)) for test in raw]
    return Comparison(a, b, alpha, seed, resamples, len(shared), only_a, only_b, tests, warnings)


def _test(
    category: str,
    metric: str,
    keys: Sequence[Key],
    grouped_a: dict[Key, list[CaseRow]],
    grouped_b: dict[Key, list[CaseRow]],
    *,
    alpha: float,
    seed: int,
    resamples: int,
) -> dict[str, Any]:
    clusters: list[tuple[list[bool], list[bool]]] = []
    for key in keys:
        a_samples = [o for o in (_outcome(row, metric) for row in grouped_a[key]) if o is not None]
        b_samples = [o for o in (_outcome(row, metric) for row in grouped_b[key]) if o is not None]
        if a_samples and b_samples:
            clusters.append((a_samples, b_samples))
    n = len(clusters)
    test: dict[str, Any] = {"category": category, "metric": metric, "n": n, "a_only": 0, "b_only": 0, "p": 1.0}
    test.update(samples=0, a_rate=None, b_rate=None, difference_pp=None, ci_pp=None, mdd_pp=None)
    if n == 0:
        return test
    differences = case_differences(clusters)
    a_better, b_better = sign_counts(differences)
    a_rate = 100 * sum(sum(a) / len(a) for a, _ in clusters) / n  # each case weighs one, whatever its K
    b_rate = 100 * sum(sum(b) / len(b) for _, b in clusters) / n
    ci = None
    if resamples > 0:
        interval = paired_bootstrap_ci(
            differences, confidence=1 - alpha, resamples=resamples, seed=_seed_for(seed, category, metric)
        )
        ci = None if interval is None else (100 * interval[0], 100 * interval[1])
    mdd = mcnemar_mdd(n, (a_better + b_better) / n, alpha=alpha, power=_POWER)
    test.update(
        samples=max(max(len(a), len(b)) for a, b in clusters),
        a_rate=a_rate,
        b_rate=b_rate,
        difference_pp=a_rate - b_rate,
        a_only=a_better,
        b_only=b_better,
        p=mcnemar_exact(a_better, b_better),
        ci_pp=ci,
        mdd_pp=None if mdd is None else 100 * mdd,
    )
    return test


def _no_overlap(grouped_a: dict[Key, list[CaseRow]], grouped_b: dict[Key, list[CaseRow]], a: str, b: str) -> UserError:
    def example(grouped: dict[Key, list[CaseRow]]) -> str:
        if not grouped:
            return "no case"
        category, case = next(iter(grouped))
        return f"{len(grouped)} cases, e.g. {case} ({category})"

    return UserError(
        f"{a} and {b} share no case: {a} has {example(grouped_a)}, {b} has {example(grouped_b)}",
        hint="compare two runs over the same cases (the same suite, categories and case ids)",
    )


# -- rendering -------------------------------------------------------------------------------
def _cell(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def compare_markdown(comparison: Comparison) -> str:
    """The verdict lines, then the table of every test (a markdown document)."""
    c = comparison
    level = f"{100 * (1 - c.alpha):g}%"
    lines = [
        f"# {c.a} vs {c.b}",
        "",
        f"{c.shared_cases} shared (category, case) pairs ({c.only_a} only in {c.a}, {c.only_b} only in {c.b}); "
        f"exact McNemar, Holm-adjusted across {sum(1 for t in c.tests if t.n)} tests at alpha = {c.alpha:g}; "
        f"{level} percentile bootstrap CI over cases ({c.resamples} resamples, seed {c.seed}); "
        f"MDD at power {_POWER:g}.",
        "",
    ]
    lines += [f"- warning: {w}" for w in c.warnings]
    lines += [f"- {test.verdict}" for test in c.tests]
    lines += [
        "",
        f"| category | metric | n | {c.a} % | {c.b} % | A-B pp | A only | B only | p | p (Holm) "
        f"| {level} CI pp | MDD pp |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for t in c.tests:
        ci = "-" if t.ci_pp is None else f"[{t.ci_pp[0]:.1f}, {t.ci_pp[1]:.1f}]"
        lines.append(
            f"| {t.category} | {_label(t.metric)} | {t.n} | {_cell(t.a_rate)} | {_cell(t.b_rate)} | "
            f"{_cell(t.difference_pp)} | {t.a_only} | {t.b_only} | {_p_text(t.p)} | {_p_text(t.p_holm)} | {ci} | "
            f"{_cell(t.mdd_pp)} |"
        )
    return "\n".join(lines) + "\n"


def compare_json_text(comparison: Comparison) -> str:
    return json.dumps(comparison.to_json(), indent=2) + "\n"


def compare_csv_text(comparison: Comparison) -> str:
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(RECORD_COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows(comparison.records())
    return buffer.getvalue()
