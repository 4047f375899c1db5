"""The Python front door: one function per thing the command line does.

Each ``tooldiag`` command parses its options and calls exactly one function here, so
a notebook or a grid script gets the same behaviour as the CLI with the same
arguments, and nothing is assembled twice. ``import tooldiag`` exposes these names
lazily (heavy suites load only when a function is called).

>>> import tooldiag
>>> tooldiag.run_bfcl("ref/oracle", "runs/oracle", categories=["base"], limit=5)  # doctest: +SKIP
>>> tooldiag.report(["runs/oracle"])[0].overall_acc  # doctest: +SKIP
100.0

This module is the edge: it resolves classifiers (scheme, cue files, judge model and
its endpoint options) and models once and passes the objects down.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooldiag.metrics.gar import Thresholds

if TYPE_CHECKING:
    from tooldiag.classify import Classifier
    from tooldiag.models.base import ModelOptions
    from tooldiag.report.model import RunReport
    from tooldiag.suites.bfcl.importer import ImportPlan
    from tooldiag.suites.bfcl.probes.report import ProbeReport
    from tooldiag.suites.bfcl.runner import RunSummary
    from tooldiag.suites.judgebench.report import JudgeBenchReport
    from tooldiag.suites.tau2.report import Tau2Report
    from tooldiag.trajectory import GenerationConfig

__all__ = [
    "classifier",
    "diagnose",
    "import_bfcl",
    "judgebench_analyze",
    "judgebench_judge",
    "judgebench_predict",
    "probe_report",
    "report",
    "run_bfcl",
    "tau2_diagnose",
]


def classifier(
    scheme: str = "default",
    *,
    cue_files: Sequence[str | Path] = (),
    judge: str | None = None,
    judge_options: ModelOptions | None = None,
) -> Classifier:
    """The action classifier every diagnostic below uses (``tooldiag ... --scheme``)."""
    from tooldiag.classify import get_classifier

    return get_classifier(scheme, cue_files=cue_files, judge=judge, judge_options=judge_options)


def _classifier_of(value: Classifier | str | None) -> Classifier:
    if value is None or isinstance(value, str):
        return classifier(value or "default")
    return value


# -- BFCL multi-turn -----------------------------------------------------------------------
def run_bfcl(
    model: str,
    run_dir: str | Path,
    *,
    categories: Sequence[str] | None = None,
    ids: Sequence[str] | None = None,
    limit: int | None = None,
    generation: GenerationConfig | None = None,
    options: ModelOptions | None = None,
    probe: str | None = None,
    on_start: Callable[..., Any] | None = None,
    on_case: Callable[..., Any] | None = None,
) -> RunSummary:
    """``tooldiag run bfcl``: run (or resume) ``model`` on BFCL multi-turn into ``run_dir``."""
    from tooldiag.suites.bfcl.runner import run_bfcl as run

    return run(
        model,
        run_dir,
        categories=list(categories) if categories else None,
        ids=list(ids) if ids else None,
        limit=limit,
        generation=generation,
        options=options,
        probe=probe,
        on_start=on_start,
        on_case=on_case,
    )


def import_bfcl(
    result_dir: str | Path,
    model_name: str,
    run_dir: str | Path,
    *,
    layout: str = "auto",
    plan: ImportPlan | None = None,
    on_start: Callable[..., Any] | None = None,
    on_case: Callable[..., Any] | None = None,
) -> RunSummary:
    """``tooldiag import bfcl``: BFCL result files into a graded, resumable run."""
    from tooldiag.suites.bfcl.importer import import_bfcl_results

    return import_bfcl_results(result_dir, model_name, run_dir, layout, on_start=on_start, on_case=on_case, plan=plan)


def report(
    run_dirs: Sequence[str | Path],
    classifier: Classifier | str | None = None,
    *,
    thresholds: Thresholds = Thresholds(),
) -> list[RunReport]:
    """``tooldiag report``: the calibration profile (paper 001 Tables 1, 14, 5) of each run."""
    from tooldiag.suites.bfcl.diagnostic import reports_from_run_dirs

    return reports_from_run_dirs([Path(d) for d in run_dirs], _classifier_of(classifier), thresholds=thresholds)


def probe_report(
    run_dirs: Sequence[str | Path],
    baselines: Sequence[str | Path],
    classifier: Classifier | str | None = None,
) -> ProbeReport:
    """``tooldiag report --baseline``: SRI / CRI shifts against baselines (paper 001 Tables 4, 6-11)."""
    from tooldiag.suites.bfcl.probes.report import probe_report_from_dirs

    return probe_report_from_dirs(run_dirs, baselines, _classifier_of(classifier))


# -- agent logs and tau2 -------------------------------------------------------------------
def diagnose(
    log: str | Path,
    classifier: Classifier | str | None = None,
    *,
    thresholds: Thresholds = Thresholds(),
) -> RunReport:
    """``tooldiag diagnose``: the calibration profile of an agent log (JSONL conversations)."""
    from tooldiag.diagnose import diagnose_log

    return diagnose_log(Path(log), _classifier_of(classifier), thresholds=thresholds)


def tau2_diagnose(
    results: Iterable[str | Path],
    *,
    judge: str | None = None,
    judge_options: ModelOptions | None = None,
    concurrency: int = 8,
    window: int = 10,
    tasks_file: str | Path | None = None,
    ask_ids: Mapping[str, set[str]] | None = None,
) -> Tau2Report:
    """``tooldiag tau2 diagnose``: paper 001 Tables 2 and 3 from tau2-bench result files."""
    from tooldiag.suites.tau2.analysis import diagnose as diagnose_tau2

    return diagnose_tau2(
        results,
        judge=judge,
        judge_options=judge_options,
        concurrency=concurrency,
        window=window,
        tasks_file=tasks_file,
        ask_ids=ask_ids,
    )


# -- AgentJudgeBench (paper 000) -------------------------------------------------------------
def judgebench_predict(*args: Any, **kwargs: Any) -> Any:
    """``tooldiag judgebench predict``: generator plans for every record and difficulty."""
    raise NotImplementedError


def judgebench_judge(*args: Any, **kwargs: Any) -> Any:
    """``tooldiag judgebench judge``: verdicts of each judge on every stored plan."""
    raise NotImplementedError


def judgebench_analyze(
    run_dir: str | Path,
    *,
    scorer: str = "released",
    resamples: int = 2000,
    seed: int = 42,
    workers: int = 2,
) -> JudgeBenchReport:
    """``tooldiag judgebench analyze``: alignment, GT lift, agreement and robustness (paper 000)."""
    from tooldiag.errors import UserError
    from tooldiag.suites.judgebench.analysis import AnalysisSettings
    from tooldiag.suites.judgebench.evaluations import load_evaluations
    from tooldiag.suites.judgebench.report import analyze
    from tooldiag.suites.judgebench.store import JudgeBenchStore

    if scorer not in ("released", "schema_aware"):
        raise UserError(f"--scorer must be released or schema_aware, got {scorer!r}", hint="e.g. --scorer schema_aware")
    with JudgeBenchStore(Path(run_dir), create=False) as store:
        data = load_evaluations(store, schema_aware=scorer == "schema_aware")
    if data.frame.empty:
        raise UserError(f"{run_dir} holds no parsed judge verdicts yet", hint="run `tooldiag judgebench judge` first")
    return analyze(data, AnalysisSettings(n_resamples=resamples, seed=seed, workers=workers))
