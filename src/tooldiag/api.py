"""The Python front door: one function per thing the command line does.

Each ``tooldiag`` command parses its options and calls exactly one function here, so
a notebook or a grid script gets the same behaviour as the CLI with the same
arguments, and nothing is assembled twice. ``import tooldiag`` exposes these names
lazily (heavy suites load only when a function is called).

>>> import tooldiag
>>> tooldiag.run_bfcl("ref/oracle", "runs/oracle", categories=["base"], limit=5)  # doctest: +SKIP
>>> tooldiag.report_runs(["runs/oracle"])[0].overall_acc  # doctest: +SKIP
100.0

The names are listed in ``tooldiag/__init__.py`` (``_FRONT_DOOR``); none may be the name
of a subpackage (``tooldiag.report`` is the package, so the function is ``report_runs``). This module is the
edge: it resolves classifiers (scheme, cue files, judge model and
its endpoint options) and models once and passes the objects down.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tooldiag.classify import get_classifier
from tooldiag.metrics.gar import Thresholds

if TYPE_CHECKING:
    import pandas as pd

    from tooldiag.classify import Classifier
    from tooldiag.diagnose.log import InvalidLine
    from tooldiag.metrics.cases import CaseRow
    from tooldiag.models.base import ModelBackend, ModelOptions
    from tooldiag.report.compare import Comparison
    from tooldiag.report.model import RunReport
    from tooldiag.report.transcript import Transcript
    from tooldiag.runner.progress import ProgressSink
    from tooldiag.suites.bfcl.audit import ImportSummary
    from tooldiag.suites.bfcl.audit_report import AuditReport
    from tooldiag.suites.bfcl.importer import ImportPlan
    from tooldiag.suites.bfcl.probes.report import ProbeReport
    from tooldiag.suites.bfcl.runner import RunSummary
    from tooldiag.suites.cases import CaseSource
    from tooldiag.suites.judgebench.construct.gate_report import GateReport
    from tooldiag.suites.judgebench.construct.gates import Executor
    from tooldiag.suites.judgebench.construct.generate import GenerationResult
    from tooldiag.suites.judgebench.construct.metajudge import MetaJudgeSummary, MetaJudgeTable
    from tooldiag.suites.judgebench.construct.rewrite import RewriteSummary
    from tooldiag.suites.judgebench.drift import DriftReport
    from tooldiag.suites.judgebench.generate import PredictSummary
    from tooldiag.suites.judgebench.importer import ImportSummary as JudgeImportSummary
    from tooldiag.suites.judgebench.judge import JudgeSummary
    from tooldiag.suites.judgebench.labels import LabelImport
    from tooldiag.suites.judgebench.report import JudgeBenchReport
    from tooldiag.suites.judgebench.store import JudgeBenchStore
    from tooldiag.suites.tau2.report import Tau2Report
    from tooldiag.trajectory import GenerationConfig

#: A judgebench command's per-model summary.
S = TypeVar("S")


#: The action classifier every diagnostic below uses (``tooldiag ... --scheme``).
classifier = get_classifier


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
    progress: ProgressSink | None = None,
    workers: int | None = 1,
    repeats: int = 1,
    executor: str = "local",
    ray_address: str | None = None,
    base_urls: Sequence[str] | None = None,
    endpoint_per_node: str | None = None,
) -> RunSummary:
    """``tooldiag run bfcl``: run (or resume) ``model`` on BFCL multi-turn into ``run_dir``.

    ``repeats`` (``--repeats K``): K draws per case, stored as samples 0..K-1 (read them with
    :meth:`tooldiag.store.RunStore.iter_samples`, or :func:`case_rows`' ``sample`` column).

    ``probe`` is an SRI / CRI spec (docs/probes.md); ``progress`` hears of every graded case.
    ``workers`` above 1 shards the cases over that many processes (``None``: one per core, as
    ``--workers`` left out does); the default, 1, runs in this process. Workers are spawned, so a
    script that asks for them runs this under ``if __name__ == "__main__":``.
    ``executor="ray"`` runs the cases as Ray tasks (``ray_address``: ``auto`` or ``HOST:PORT``;
    ``None`` starts a local Ray), spread round-robin over ``base_urls`` when several are given
    (docs/distributed.md); ``endpoint_per_node`` (``--endpoint-per-node``, a URL template such as
    ``http://{node_ip}:8000/v1``) instead sends each Ray task to the endpoint of the node it runs on.
    """
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
        progress=progress,
        workers=workers,
        repeats=repeats,
        executor=executor,
        ray_address=ray_address,
        base_urls=list(base_urls) if base_urls else None,
        endpoint_per_node=endpoint_per_node,
    )


def import_bfcl(
    result_dir: str | Path,
    model_name: str,
    run_dir: str | Path,
    *,
    layout: str = "auto",
    plan: ImportPlan | None = None,
    progress: ProgressSink | None = None,
) -> RunSummary:
    """``tooldiag import bfcl``: BFCL result files into a graded, resumable run.

    ``plan`` (from :func:`tooldiag.suites.bfcl.importer.plan_import` of the same folder and
    layout) saves reading the files twice; ``progress`` hears of every graded case.
    """
    from tooldiag.suites.bfcl.importer import import_bfcl_results

    return import_bfcl_results(result_dir, model_name, run_dir, layout, plan=plan, progress=progress)


def report_runs(
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


def html_report(
    run_dirs: Sequence[str | Path],
    classifier: Classifier | str | None = None,
    *,
    baseline: Sequence[str | Path] | None = None,
    thresholds: Thresholds = Thresholds(),
    judgebench: str | Path | None = None,
) -> str:
    """``tooldiag report --format html``: one self-contained HTML page.

    The summary (the agent's flags beside the judges' guide), the calibration figures and
    tables, the case browser with every transcript; with ``baseline``, ``run_dirs`` are probe
    runs and the page adds their shift panels (paper 001 Fig. 2 style, Tables 4, 6-11); with
    ``judgebench`` (a judgebench store), the judge study (paper 000). Nothing outside the page
    is referenced.
    """
    from tooldiag.suites.html_report import html_report as build

    judge_report = judgebench_analyze(judgebench) if judgebench is not None else None
    return build(
        run_dirs, _classifier_of(classifier), baseline=baseline, thresholds=thresholds, judge_report=judge_report
    )


def audit_import(file: str | Path, run_dir: str | Path) -> ImportSummary:
    """``tooldiag audit import``: attach rater labels (JSONL, docs/diagnostic.md) to a BFCL run.

    Every row is checked (fields, action class, case and turn in the run) before anything
    is stored; rows already stored are not duplicated, a changed label replaces the old one.
    """
    from tooldiag.suites.bfcl.audit import import_audit_labels

    return import_audit_labels(file, run_dir)


def audit_report(run_dir: str | Path, classifier: Classifier | str | None = None) -> AuditReport:
    """``tooldiag audit report``: inter-rater kappa, classifier vs raters, adjudicated share (paper 001 App. F)."""
    from tooldiag.suites.bfcl.audit_report import audit_report_from_run_dir

    return audit_report_from_run_dir(run_dir, _classifier_of(classifier))


def show_case(input: str | Path, case_id: str, classifier: Classifier | str | None = None) -> Transcript:
    """``tooldiag show``: one case turn by turn, every emission with its class and the rule behind it.

    ``input`` is a BFCL run directory or an agent log (JSONL); ``case_id`` a case id of the
    run or a conversation id of the log. A missing path, a folder that is no BFCL run and
    an unknown id are :class:`~tooldiag.errors.UserError` with the fix.
    """
    from tooldiag.errors import UserError

    path = Path(input)
    if not path.exists():
        raise UserError(
            f"{path} does not exist", hint="give a BFCL run directory (tooldiag run bfcl --run-dir) or an agent log"
        )
    if path.is_file():
        from tooldiag.diagnose.transcript import log_transcript

        return log_transcript(path, case_id, _classifier_of(classifier))
    from tooldiag.suites.bfcl.transcript import bfcl_transcript

    return bfcl_transcript(path, case_id, _classifier_of(classifier))


# -- the evidence: one row per case, DataFrames ----------------------------------------------
def case_rows(
    inputs: str | Path | Sequence[str | Path],
    classifier: Classifier | str | None = None,
    *,
    verdicts: Iterable[str] | None = None,
    categories: Iterable[str] | None = None,
    classes: Iterable[str] | None = None,
) -> list[CaseRow]:
    """``tooldiag cases``: one :class:`~tooldiag.metrics.cases.CaseRow` per case of every input, filtered.

    ``inputs``: BFCL run directories (``run bfcl`` / ``import bfcl``, probe runs included)
    and agent logs (``.jsonl``, the ``diagnose`` format); :data:`tooldiag.suites.cases.CASE_SOURCES`
    lists the kinds. ``verdicts`` (masked, execution_failure, ok, fail, ungraded),
    ``categories`` and ``classes`` (emitted at any turn) keep the rows that match; an
    unknown name is a :class:`~tooldiag.errors.UserError`, never an empty answer.
    """
    from tooldiag.report.cases import CaseFilter
    from tooldiag.suites.cases import rows_from_inputs

    chosen = CaseFilter.of(verdicts, categories, classes)  # names checked before anything is read
    rows = rows_from_inputs(_paths(inputs), _classifier_of(classifier))
    chosen.check_categories(rows)
    return chosen.apply(rows)


def load_cases(inputs: str | Path | Sequence[str | Path], classifier: Classifier | str | None = None) -> pd.DataFrame:
    """The case rows of ``inputs`` (as :func:`case_rows`) as a DataFrame, one row per case.

    Columns (docs/evidence.md, "DataFrames and Parquet"): run, case_id, category,
    gold_class, classes (per turn the list of emission classes), n_turns, n_emissions,
    gold_hit, passed (nullable boolean), error_type, verdict, errored, then any suite extras.
    """
    from tooldiag.report.frames import cases_frame

    return cases_frame(case_rows(inputs, classifier))


def load_report(
    run_dirs: str | Path | Sequence[str | Path], classifier: Classifier | str | None = None
) -> pd.DataFrame:
    """The calibration profile of each input as a DataFrame: one row per run and category.

    The columns of ``tooldiag report --format csv`` (:func:`tooldiag.report.render.tidy_table`),
    numbers as numbers (percentages 0-100, missing as ``None``/NaN), ``flags`` as a list.
    BFCL run directories and agent logs are read as by :func:`case_rows`.
    """
    from tooldiag.report.frames import report_frame
    from tooldiag.suites.cases import reports_from_inputs

    return report_frame(reports_from_inputs(_paths(run_dirs), _classifier_of(classifier)))


def _paths(inputs: str | Path | Sequence[str | Path]) -> list[Path]:
    """One path or several: a lone string is one input, never a sequence of characters."""
    if isinstance(inputs, (str, Path)):
        return [Path(inputs)]
    return [Path(p) for p in inputs]


# -- agent logs and tau2 -------------------------------------------------------------------
def diagnose_log(
    log: str | Path,
    classifier: Classifier | str | None = None,
    *,
    thresholds: Thresholds = Thresholds(),
    invalid: list[InvalidLine] | None = None,
) -> RunReport:
    """``tooldiag diagnose``: the calibration profile of an agent log (JSONL conversations).

    ``invalid``: a list to skip bad lines into (``--skip-invalid``) instead of refusing the log.
    """
    from tooldiag.diagnose import diagnose_log as diagnose

    return diagnose(Path(log), _classifier_of(classifier), thresholds=thresholds, invalid=invalid)


def import_traces(
    source: str,
    paths: Iterable[str | Path],
    out: str | Path,
    *,
    gold_map: str | Path | None = None,
    fmt: str | None = None,
) -> int:
    """``tooldiag import inspect|otel|langsmith``: trace files as an agent log at ``out``; returns
    how many conversations it holds. Every conversation is checked as ``diagnose`` would read it
    before anything is written, so a log that would be refused is never written."""
    from tooldiag.diagnose import conversations_from_objects
    from tooldiag.suites.traces import read_traces
    from tooldiag.suites.traces.agent_log import load_gold_map, write_agent_log

    files = [Path(p) for p in paths]
    objects = read_traces(source, files, load_gold_map(gold_map) if gold_map is not None else None, fmt)
    conversations_from_objects(objects, _trace_name(source, files))
    return write_agent_log(objects, out)


def diagnose_traces(
    source: str,
    paths: Iterable[str | Path],
    classifier: Classifier | str | None = None,
    *,
    gold_map: str | Path | None = None,
    fmt: str | None = None,
    thresholds: Thresholds = Thresholds(),
    invalid: list[InvalidLine] | None = None,
) -> RunReport:
    """``tooldiag diagnose --from inspect|otel|langsmith``: the calibration profile of trace files,
    read as :func:`import_traces` reads them, with no agent log written."""
    from tooldiag.diagnose import conversations_from_objects, diagnose_conversations
    from tooldiag.suites.traces import read_traces
    from tooldiag.suites.traces.agent_log import load_gold_map

    files = [Path(p) for p in paths]
    name = _trace_name(source, files)
    objects = read_traces(source, files, load_gold_map(gold_map) if gold_map is not None else None, fmt)
    conversations = conversations_from_objects(objects, name, invalid=invalid)
    source_text = ", ".join(str(f) for f in files)
    return diagnose_conversations(
        conversations, name, f"{source}: {source_text}", _classifier_of(classifier), thresholds=thresholds,
        invalid=invalid,
    )  # fmt: skip


def _trace_name(source: str, files: Sequence[Path]) -> str:
    """A report title for trace files: the one file's stem, or the source and the file count."""
    return files[0].stem if len(files) == 1 else f"{source} ({len(files)} files)"


def tau2_diagnose(
    results: Iterable[str | Path],
    *,
    judge: str | None = None,
    judge_options: ModelOptions | None = None,
    concurrency: int = 8,
    window: int = 10,
    tasks_file: str | Path | None = None,
    ask_ids: Mapping[str, set[str]] | None = None,
    submission: str | Path | None = None,
) -> Tau2Report:
    """``tooldiag tau2 diagnose``: paper 001 Tables 2 and 3 from tau2-bench result files
    (``submission``: a leaderboard submission.json whose pass^k is compared with the recomputed one)."""
    from tooldiag.suites.tau2.analysis import diagnose as diagnose_tau2

    return diagnose_tau2(
        results,
        judge=judge,
        judge_options=judge_options,
        concurrency=concurrency,
        window=window,
        tasks_file=tasks_file,
        ask_ids=ask_ids,
        submission=submission,
    )


def tau2_cases(
    results: Iterable[str | Path],
    classifier: Classifier | str | None = None,
    *,
    unit: str = "simulation",
    verdicts: Iterable[str] | None = None,
    categories: Iterable[str] | None = None,
    judge: str | None = None,
    judge_options: ModelOptions | None = None,
    concurrency: int = 8,
    window: int = 10,
    tasks_file: str | Path | None = None,
    ask_ids: Mapping[str, set[str]] | None = None,
) -> list[CaseRow]:
    """``tooldiag tau2 cases``: the rows behind Tables 2 (``unit="simulation"``) and 3 (``unit="write"``).

    ``verdicts`` / ``categories`` keep only the rows with one of them; ``classifier``
    (a scheme name or object) replaces the multi-label reading of the agent's messages
    (docs/tau2.md, "Cases"). The other options are :func:`tau2_diagnose`'s.
    """
    from tooldiag.report.cases import CaseFilter
    from tooldiag.suites.tau2.cases import check_unit, tau2_case_rows

    check_unit(unit)
    chosen = CaseFilter.of(verdicts, categories)  # names checked before any file is read
    rows = tau2_case_rows(
        [Path(p) for p in results],
        None if classifier is None else _classifier_of(classifier),
        unit=unit,
        judge=judge,
        judge_options=judge_options,
        concurrency=concurrency,
        window=window,
        tasks_file=tasks_file,
        ask_ids=ask_ids,
    )
    return chosen.apply(rows)


def load_tau2(
    results: Iterable[str | Path],
    classifier: Classifier | str | None = None,
    *,
    table: str = "simulations",
    judge: str | None = None,
    judge_options: ModelOptions | None = None,
    concurrency: int = 8,
    window: int = 10,
    tasks_file: str | Path | None = None,
    ask_ids: Mapping[str, set[str]] | None = None,
) -> pd.DataFrame:
    """tau2 results as a DataFrame: ``simulations`` (the rows of :func:`tau2_cases`), ``writes``
    (one row per write event with its consent verdict), ``classes`` (Table 2 per class:
    counts, GAR and Acc with their Wilson bounds as fractions, Δ) or ``consent`` (Table 3).
    Columns: docs/tau2.md, "DataFrames"."""
    from tooldiag.suites.tau2.cases import tau2_evidence, tau2_frame, tau2_table

    name = tau2_table(table)
    evidence = tau2_evidence(
        [Path(p) for p in results],
        None if classifier is None else _classifier_of(classifier),
        judge=judge,
        judge_options=judge_options,
        concurrency=concurrency,
        window=window,
        tasks_file=tasks_file,
        ask_ids=ask_ids,
    )
    return tau2_frame(evidence, name)


def tau2_html(
    results: Iterable[str | Path],
    *,
    judge: str | None = None,
    judge_options: ModelOptions | None = None,
    concurrency: int = 8,
    window: int = 10,
    tasks_file: str | Path | None = None,
    ask_ids: Mapping[str, set[str]] | None = None,
) -> str:
    """``tooldiag tau2 diagnose --format html``: one self-contained page with Tables 2 and 3, the GAR/Acc
    figure and every write with the messages behind its verdict (one pass over the files)."""
    from tooldiag.suites.tau2.cases import tau2_evidence
    from tooldiag.suites.tau2.html import tau2_page

    evidence = tau2_evidence(
        [Path(p) for p in results],
        judge=judge,
        judge_options=judge_options,
        concurrency=concurrency,
        window=window,
        tasks_file=tasks_file,
        ask_ids=ask_ids,
    )
    return tau2_page(evidence)


# -- AgentJudgeBench (paper 000) -------------------------------------------------------------
def judgebench_predict(
    run_dir: str | Path,
    generators: Sequence[str],
    *,
    records: str = "builtin",
    difficulties: Sequence[str] = ("easy", "medium", "hard"),
    limit: int | None = None,
    config: GenerationConfig | None = None,
    options: ModelOptions | None = None,
    prompt_dir: str | Path | None = None,
    progress: Callable[[str], AbstractContextManager[ProgressSink]] | None = None,
    on_done: Callable[[str, PredictSummary], None] | None = None,
    executor: str = "local",
    ray_address: str | None = None,
) -> list[PredictSummary]:
    """``tooldiag judgebench predict``: each generator plans every record at every difficulty.

    Resumable: plans already in ``run_dir`` are skipped. ``progress(label)`` opens one
    progress display per generator; ``on_done(generator, summary)`` hears of each as it ends.
    ``executor="ray"`` (``--executor ray``) plans the units as Ray tasks on the cluster at
    ``ray_address`` (``auto`` or ``HOST:PORT``; ``None``: a local Ray); this process stays the only
    writer of ``run_dir`` (docs/distributed.md).
    """
    from tooldiag.models import ModelOptions
    from tooldiag.runner.ray_units import check_executor_options
    from tooldiag.suites.judgebench.generate import check_difficulties, predict
    from tooldiag.suites.judgebench.loaders import load_records
    from tooldiag.suites.judgebench.store import JudgeBenchStore

    chosen = check_difficulties(difficulties)
    check_executor_options(executor, ray_address)  # a missing Ray is refused before anything is written
    loaded = load_records(records, limit=limit)
    options = options or ModelOptions()
    return _each_model(
        generators,
        options,
        lambda: JudgeBenchStore(Path(run_dir)),
        "predict",
        lambda store, name, backend, sink: predict(
            store,
            loaded,
            name,
            backend,
            difficulties=chosen,
            config=config,
            concurrency=options.concurrency,
            prompt_dir=prompt_dir,
            progress=sink,
            executor=executor,
            ray_address=ray_address,
            options=options,
        ),
        progress,
        on_done,
    )


def judgebench_judge(
    run_dir: str | Path,
    judges: Sequence[str],
    *,
    conditions: Sequence[str] | str = ("with_gt", "without_gt"),
    generators: Sequence[str] | None = None,
    difficulties: Sequence[str] = ("easy", "medium", "hard"),
    config: GenerationConfig | None = None,
    retries: int = 2,
    seed: int = 42,
    options: ModelOptions | None = None,
    prompt_dir: str | Path | None = None,
    progress: Callable[[str], AbstractContextManager[ProgressSink]] | None = None,
    on_done: Callable[[str, JudgeSummary], None] | None = None,
    samples: int = 1,
    probes: Sequence[str] | str = (),
    executor: str = "local",
    ray_address: str | None = None,
) -> list[JudgeSummary]:
    """``tooldiag judgebench judge``: every judge scores every stored plan under each condition.

    ``run_dir`` must hold plans from :func:`judgebench_predict`; verdicts already stored
    are skipped. ``samples`` independent draws (at the judge's temperature) are stored per plan
    and condition; raising it later adds the missing draws. ``progress`` and ``on_done`` as for
    :func:`judgebench_predict`. ``probes`` (``order``) also judges each plan's equivalent rewrite
    (``--probe order``, docs/judgebench.md "Bias probes"). ``executor`` and ``ray_address`` as for
    :func:`judgebench_predict`: the units (plan x condition x draw) as Ray tasks, one writer.
    """
    from tooldiag.models import ModelOptions
    from tooldiag.runner.ray_units import check_executor_options
    from tooldiag.suites.judgebench.conditions import parse_conditions
    from tooldiag.suites.judgebench.generate import check_difficulties
    from tooldiag.suites.judgebench.judge import judge_predictions
    from tooldiag.suites.judgebench.probes import check_probes
    from tooldiag.suites.judgebench.store import JudgeBenchStore

    chosen_probes = check_probes(probes)
    chosen_conditions = parse_conditions(conditions)
    chosen = check_difficulties(difficulties)
    check_executor_options(executor, ray_address)
    options = options or ModelOptions()
    return _each_model(
        judges,
        options,
        lambda: JudgeBenchStore(Path(run_dir), create=False),
        "judge",
        lambda store, name, backend, sink: judge_predictions(
            store,
            name,
            backend,
            conditions=chosen_conditions,
            generators=generators or None,
            difficulties=chosen,
            config=config,
            retries=retries,
            samples=samples,
            seed=seed,
            concurrency=options.concurrency,
            prompt_dir=prompt_dir,
            progress=sink,
            probes=chosen_probes,
            executor=executor,
            ray_address=ray_address,
            options=options,
        ),
        progress,
        on_done,
    )


def _each_model(
    names: Sequence[str],
    options: ModelOptions,
    open_store: Callable[[], JudgeBenchStore],
    verb: str,
    run: Callable[[JudgeBenchStore, str, ModelBackend, ProgressSink | None], Coroutine[Any, Any, S]],
    progress: Callable[[str], AbstractContextManager[ProgressSink]] | None,
    on_done: Callable[[str, S], None] | None,
) -> list[S]:
    """Run ``run`` once per model, in order, inside one store; every model is resolved
    first, so a bad model string fails before the store is opened or created."""
    from tooldiag.models import resolve_model

    backends = {name: resolve_model(name, options) for name in dict.fromkeys(names)}
    out = []
    with open_store() as store:
        for name, backend in backends.items():
            with _progress_of(progress, f"{verb} {name}") as sink:
                summary = asyncio.run(run(store, name, backend, sink))
            out.append(summary)
            if on_done is not None:
                on_done(name, summary)
    return out


def _progress_of(
    factory: Callable[[str], AbstractContextManager[ProgressSink]] | None, label: str
) -> AbstractContextManager[ProgressSink | None]:
    return factory(label) if factory is not None else nullcontext(None)


def judgebench_rewrite(
    records: str | Path,
    model: str,
    out: str | Path,
    *,
    run_dir: str | Path | None = None,
    config: GenerationConfig | None = None,
    retries: int = 1,
    options: ModelOptions | None = None,
    prompt_dir: str | Path | None = None,
    progress: Callable[[str], AbstractContextManager[ProgressSink]] | None = None,
) -> RewriteSummary:
    """``tooldiag judgebench rewrite``: easy -> medium and medium -> hard queries, calls and trace untouched.

    ``records`` is a records file (or ``builtin``); ``out`` receives every row with
    ``query_medium``, ``query_hard`` and their ``OK``/``FAILED`` statuses. Resumable: each rewrite
    is stored in ``run_dir`` (default ``OUT`` with suffix ``.run``) as it finishes.
    """
    from tooldiag.models import ModelOptions, resolve_model
    from tooldiag.suites.judgebench.construct import rewrite as rw
    from tooldiag.suites.judgebench.construct.rewrite_store import ConstructStore

    loaded = rw.read_records_input(records)
    options = options or ModelOptions()
    backend = resolve_model(model, options)
    folder = Path(run_dir) if run_dir is not None else rw.default_run_dir(out)
    with ConstructStore(folder / rw.STORE_NAME) as store, _progress_of(progress, f"rewrite {model}") as sink:
        summary = asyncio.run(
            rw.rewrite_records(
                store,
                loaded.records,
                model,
                backend,
                config=config,
                retries=retries,
                concurrency=options.concurrency,
                prompt_dir=prompt_dir,
                progress=sink,
            )
        )
        rows = rw.rewritten_rows(loaded, store)
    summary.out = rw.write_jsonl(rows, out)
    for row in rows:
        summary.written[("medium", row["rewrite_medium_status"])] += 1
        summary.written[("hard", row["rewrite_hard_status"])] += 1
    return summary


def judgebench_metajudge(
    rewritten: str | Path,
    judges: Sequence[str],
    *,
    out: str | Path | None = None,
    config: GenerationConfig | None = None,
    retries: int = 2,
    options: ModelOptions | None = None,
    prompt_dir: str | Path | None = None,
    progress: Callable[[str], AbstractContextManager[ProgressSink]] | None = None,
    on_done: Callable[[str, MetaJudgeSummary], None] | None = None,
) -> tuple[MetaJudgeTable, list[Path]]:
    """``tooldiag judgebench metajudge``: preservation and hardening votes per rewrite (paper 000 App. N).

    Every judge votes on each transition of each rewritten record; the votes are stored in
    ``out`` (default ``REWRITTEN`` with suffix ``.metajudge``) as they come, so a run resumes, and
    the table (Table 22) is written there. Returns the table and the files written.
    """
    from tooldiag.errors import UserError
    from tooldiag.models import ModelOptions, resolve_model
    from tooldiag.suites.judgebench.construct import metajudge as mj
    from tooldiag.suites.judgebench.construct.rewrite import read_records_input
    from tooldiag.suites.judgebench.construct.rewrite_store import ConstructStore

    loaded = read_records_input(rewritten)
    items, failed = mj.triplet_items(loaded.records)
    options = options or ModelOptions()
    names = list(dict.fromkeys(judges))
    if not names:
        raise UserError("name at least one meta-judge", hint="e.g. --judge ref/metajudge --judge openai/NAME")
    backends = {name: resolve_model(name, options) for name in names}
    folder = Path(out) if out is not None else Path(str(rewritten)).with_suffix(".metajudge")
    with ConstructStore(folder / mj.STORE_NAME) as store:
        for name, backend in backends.items():
            with _progress_of(progress, f"metajudge {name}") as sink:
                summary = asyncio.run(
                    mj.vote_items(
                        store,
                        items,
                        name,
                        backend,
                        config=config,
                        retries=retries,
                        concurrency=options.concurrency,
                        prompt_dir=prompt_dir,
                        progress=sink,
                    )
                )
            if on_done is not None:
                on_done(name, summary)
        votes = mj.current_votes(store.votes(), names, items)
    table = mj.metajudge_table(votes, names, items, failed)
    return table, mj.write_table(table, votes, folder)


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
    from tooldiag.suites.judgebench.bias import load_bias_inputs
    from tooldiag.suites.judgebench.evaluations import load_evaluations
    from tooldiag.suites.judgebench.report import analyze
    from tooldiag.suites.judgebench.store import JudgeBenchStore

    if scorer not in ("released", "schema_aware"):
        raise UserError(f"--scorer must be released or schema_aware, got {scorer!r}", hint="e.g. --scorer schema_aware")
    from tooldiag.suites.judgebench.labels import label_frame

    with JudgeBenchStore(Path(run_dir), create=False) as store:
        data = load_evaluations(store, schema_aware=scorer == "schema_aware")
        labels = label_frame(store)
        bias_inputs = load_bias_inputs(store)
    if data.frame.empty:
        raise UserError(f"{run_dir} holds no parsed judge verdicts yet", hint="run `tooldiag judgebench judge` first")
    return analyze(
        data,
        AnalysisSettings(n_resamples=resamples, seed=seed, workers=workers),
        labels=labels,
        bias_inputs=bias_inputs,
    )


def judgebench_drift(run_dir: str | Path, judge: str, against: str, *, condition: str | None = None) -> DriftReport:
    """``tooldiag judgebench drift``: which verdicts change from ``judge`` to ``against`` on the same stored plans.

    Per condition and metric (and pooled): plans both judged, the share whose 3-bin verdict changed,
    the mean absolute score change, the bin transitions and Cohen's kappa; plans only one side judged
    are counted, not compared. To compare two prompt versions of one model, judge into the same run
    under two judge names (docs/judgebench.md, "Judge drift").
    """
    from tooldiag.suites.judgebench.drift import verdict_drift

    return verdict_drift(run_dir, judge, against, condition=condition)


def judgebench_gates(
    records: str | Path, *, out: str | Path | None = None, executor: Executor | None = None
) -> GateReport:
    """``tooldiag judgebench gates FILE``: the six quality gates (paper 000 §3.1) on every record of a file.

    ``records`` is a .jsonl/.json/.parquet file in the released layout or ``builtin``; a file of
    another schema is refused with one line. Trace consistency re-executes records that
    tooldiag's generator wrote (with ``executor``, else the packaged one) and is skipped for
    others. ``out`` writes the report as JSON there and as markdown beside it (``.md``). The
    report's ``failed_records`` is the number of records that fail a gate (docs/judgebench.md,
    "Quality gates").
    """
    from tooldiag.suites.judgebench.construct.gate_check import gate_rows, read_record_rows

    rows, _ = read_record_rows(records)
    report = gate_rows(rows, executor)
    if out is not None:
        target = Path(out)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(report.to_json(), encoding="utf-8")
        target.with_suffix(".md").write_text(report.to_markdown(), encoding="utf-8")
    return report


def judgebench_html(report: JudgeBenchReport, title: str = "Judge reliability report") -> str:
    """``tooldiag judgebench analyze --formats html``: the analysis (:func:`judgebench_analyze`) as one
    self-contained page: alignment by difficulty (paper 000 Fig. 8), per metric and topology, GT lift,
    kappa heatmap, confusion matrices and the decision guide, each figure above its numbers."""
    from tooldiag.suites.judgebench.html import judgebench_page

    return judgebench_page(report, title)


def load_judgebench(
    run_dir: str | Path,
    table: str = "judgements",
    *,
    scorer: str = "released",
    resamples: int = 2000,
    seed: int = 42,
    workers: int = 2,
) -> pd.DataFrame:
    """A judge-reliability run as a DataFrame.

    ``judgements``: one row per judge x condition x plan (status, the judge's values,
    the programmatic scores, the record's difficulty and DAG topology, the alignment);
    read from the store, no bootstrap. ``alignment``: every cell (judge x generator x
    difficulty x condition) with its alignment and 95 % bootstrap CI, in percent; any
    other table name of ``tooldiag judgebench analyze`` (``table2``, ``contrasts``,
    ``inter_judge``, ...) gives that table. Columns: docs/judgebench.md, "DataFrames".
    """
    from tooldiag.errors import UserError
    from tooldiag.suites.judgebench.evaluations import judgement_frame
    from tooldiag.suites.judgebench.report import JUDGEBENCH_TABLES
    from tooldiag.suites.judgebench.store import JudgeBenchStore

    if table not in JUDGEBENCH_TABLES:
        raise UserError(f"unknown judgebench table {table!r}", hint="use one of: " + ", ".join(JUDGEBENCH_TABLES))
    if table == "judgements":
        if scorer not in ("released", "schema_aware"):
            raise UserError(
                f"--scorer must be released or schema_aware, got {scorer!r}", hint="e.g. scorer='schema_aware'"
            )
        with JudgeBenchStore(Path(run_dir), create=False) as store:
            return judgement_frame(store, schema_aware=scorer == "schema_aware")
    report = judgebench_analyze(run_dir, scorer=scorer, resamples=resamples, seed=seed, workers=workers)
    import pandas as pd

    from tooldiag.suites.judgebench.bias import BIAS_SECTIONS

    name = "cells" if table == "alignment" else table
    if name not in report.tables and (name == "stability" or name in BIAS_SECTIONS):
        return pd.DataFrame()  # stability: only with repeated draws; a bias table: only with its probe's data
    if name not in report.tables:
        raise UserError(
            f"{run_dir} has no {table} table (it needs human labels, and human_kappa two raters)",
            hint="import labels with `tooldiag judgebench labels import FILE --run-dir DIR`",
        )
    return report.tables[name].reset_index(drop=True)


def judgebench_generate(
    out: str | Path,
    n: int,
    seed: int,
    *,
    domains: Sequence[str] | None = None,
    topologies: Sequence[str] | None = None,
    frequencies: Mapping[str, float] | None = None,
    tools_per_record: tuple[int, int] = (8, 19),
    calls: tuple[int, int] = (2, 5),
    gates: Callable[[dict[str, Any]], list[str]] | None = None,
    quality_gates: bool = True,
    max_attempts: int = 5,
    llm_queries: str | None = None,
    options: ModelOptions | None = None,
    config: GenerationConfig | None = None,
    progress: Callable[[str], AbstractContextManager[ProgressSink]] | None = None,
) -> GenerationResult:
    """``tooldiag judgebench generate``: ``n`` synthetic records for ``seed``, written to ``out`` (JSONL).

    Byte-identical for the same arguments (without ``llm_queries``). Every record goes through
    the six quality gates (paper 000 §3.1; ``construct/gates.py``, trace consistency by
    re-executing it in its domain) unless ``quality_gates=False``; ``gates(record) -> failed gate
    names`` replaces them. A failing record is regenerated up to ``max_attempts`` times, and the
    gate report (``records.gates.json`` / ``.md``) is written beside ``out``. ``llm_queries`` names a
    model that rewrites each template query once (kept only when it states every value).
    The model is resolved before any record is built, so a bad model string fails first.
    """
    from tooldiag.models import ModelOptions, resolve_model
    from tooldiag.suites.judgebench.construct.generate import check_settings, generate_records, record_line
    from tooldiag.suites.judgebench.construct.llm_query import apply_queries, write_llm_queries

    check_settings(domains, topologies, frequencies, tools_per_record, calls)
    if gates is None and quality_gates:
        from tooldiag.suites.judgebench.construct.gate_check import generated_record_gates as gates

    options = options or ModelOptions()
    backend = resolve_model(llm_queries, options) if llm_queries else None
    with _progress_of(progress, f"generate {n} records") as sink:
        if sink is not None:
            sink.start(n, 0)
        result = generate_records(
            n,
            seed,
            domains=domains,
            topologies=topologies,
            frequencies=frequencies,
            tools_per_record=tools_per_record,
            calls=calls,
            gates=gates,
            max_attempts=max_attempts,
            on_record=(lambda record: sink.advance(record["dag_type"])) if sink is not None else None,
        )
        if sink is not None:
            sink.finish()
    if backend is not None and llm_queries is not None:
        with _progress_of(progress, f"queries {llm_queries}") as sink:
            texts = asyncio.run(
                write_llm_queries(
                    result.records, backend, concurrency=options.concurrency, config=config, progress=sink
                )
            )
        apply_queries(result.records, texts, llm_queries, gates)
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    partial.write_text("".join(record_line(r) + "\n" for r in result.records), encoding="utf-8")
    partial.replace(target)
    if gates is not None:
        from tooldiag.suites.judgebench.construct.gate_report import GateReport, write_gate_report

        attempts = [(a.dag_type, a.attempt, list(a.failures)) for a in result.attempts]
        write_gate_report(GateReport.from_attempts(attempts), target)
    return result


def judgebench_labels_import(
    run_dir: str | Path, files: Sequence[str | Path], *, rater: str | None = None
) -> LabelImport:
    """``tooldiag judgebench labels import FILE...``: human / audit labels of stored plans, per metric and rater.

    Each label is agree/disagree with the programmatic score or a score in [0, 1], for one
    record (x generator x difficulty, which may be left out when the run holds one plan that
    fits), one metric and one rater (``rater`` for rows naming none; default ``human``). All or
    nothing: any unknown record, metric or plan, or a label conflicting with a stored one of the
    same rater, is refused before anything is written; re-importing the same labels adds nothing.
    ``analyze`` then reports human agreement, human-corrected alignment (paper 000 App. G), kappa
    between raters and corrected pass rates from human TPR/TNR (docs/judgebench.md, "Human and audit labels").
    """
    from tooldiag.errors import UserError
    from tooldiag.suites.judgebench.labels import import_labels
    from tooldiag.suites.judgebench.store import JudgeBenchStore

    if not files:
        raise UserError("no label file given", hint="e.g. tooldiag judgebench labels import labels.jsonl --run-dir DIR")
    with JudgeBenchStore(Path(run_dir), create=False) as store:
        return import_labels(store, [Path(f) for f in files], rater=rater)


def judgebench_import(
    files: Sequence[str | Path],
    run_dir: str | Path,
    *,
    records: str | None = None,
    judge: str | None = None,
    generator: str | None = None,
    difficulty: str | None = None,
    gt_condition: str = "with_gt",
    no_gt_condition: str = "without_gt",
) -> JudgeImportSummary:
    """``tooldiag judgebench import FILE...``: released AgentJudgeBench judge outputs into a run directory.

    Each file (``judge_<alias>.jsonl`` of HF ``ServiceNow-AI/AgentJudgeBench``, or the runner's
    ``<generator>/judged_by_<judge>/...`` files) is checked whole, then stored: plans as
    predictions, ``judge_response`` under ``gt_condition`` and ``judge_response_no_gt`` under
    ``no_gt_condition``, so :func:`judgebench_analyze` reads them. ``records`` (a record source as
    for :func:`judgebench_predict`) must hold every row's record; without it the records already
    in ``run_dir`` are used. Re-importing stores nothing twice; different content for a stored key
    is refused. The summary counts, per file, the rows whose released programmatic scores differ
    from tooldiag's (docs/judgebench.md, "Importing released judge outputs").
    """
    from tooldiag.errors import UserError
    from tooldiag.suites.judgebench.importer import import_released, verdict_conditions
    from tooldiag.suites.judgebench.loaders import load_records
    from tooldiag.suites.judgebench.store import JudgeBenchStore

    conditions = verdict_conditions(gt_condition, no_gt_condition)
    loaded = load_records(records) if records is not None else None
    with JudgeBenchStore(Path(run_dir)) as store:
        if loaded is None:
            loaded = list(store.records().values())
            if not loaded:
                raise UserError(
                    f"{run_dir} holds no records to match the rows against",
                    hint="pass --records with the benchmark records (e.g. bfcl_agentic_rewritten.jsonl)",
                )
        return import_released(
            store, files, loaded, judge=judge, generator=generator, difficulty=difficulty, conditions=conditions
        )


# -- paired comparison of two runs -----------------------------------------------------------
def compare_runs(
    run_a: str | Path,
    run_b: str | Path,
    classifier: Classifier | str | None = None,
    *,
    classifier_b: Classifier | str | None = None,
    metric: str = "both",
    alpha: float = 0.05,
    seed: int = 0,
    resamples: int = 10_000,
) -> Comparison:
    """``tooldiag compare``: per category, is A's Acc / GAR really different from B's? (docs/compare.md)

    ``run_a`` / ``run_b``: any input ``case_rows`` reads (BFCL run directories, imported runs,
    agent logs, tau2 results files), over the same cases. ``classifier`` reads both unless
    ``classifier_b`` reads B (a warning says the schemes differ). The comparison carries
    warnings for a partial overlap and for inputs whose facts differ (tau2 version, oracle
    agent); no shared case at all is a :class:`~tooldiag.errors.UserError`.
    """
    from tooldiag.report.compare import compare_rows
    from tooldiag.suites.cases import source_of

    paths = [Path(run_a), Path(run_b)]
    sources = [source_of(path) for path in paths]  # both inputs checked before either is read
    classifiers = [_classifier_of(classifier), _classifier_of(classifier if classifier_b is None else classifier_b)]
    rows = [source.rows(path, chosen) for source, path, chosen in zip(sources, paths, classifiers, strict=True)]
    names = [side[0].run if side else path.name for side, path in zip(rows, paths, strict=True)]
    if names[0] == names[1]:
        by_path = [f"{name} ({path.name})" for name, path in zip(names, paths, strict=True)]
        names = by_path if by_path[0] != by_path[1] else [f"A ({names[0]})", f"B ({names[1]})"]
    comparison = compare_rows(
        rows[0], rows[1], a=names[0], b=names[1], metric=metric, alpha=alpha, seed=seed, resamples=resamples
    )
    comparison.warnings[:0] = _comparison_warnings(paths, sources, classifiers, names)
    return comparison


def _comparison_warnings(
    paths: Sequence[Path], sources: Sequence[CaseSource], classifiers: Sequence[Classifier], names: Sequence[str]
) -> list[str]:
    """Why the two inputs' numbers may differ for reasons other than the runs: classifier, kind, suite version."""
    warnings = []
    schemes = [(c.name, tuple(str(p) for p in getattr(c, "cue_files", ()) or ())) for c in classifiers]
    if schemes[0] != schemes[1]:
        shown = [name + (f" + cues {', '.join(cues)}" if cues else "") for name, cues in schemes]
        warnings.append(
            f"{names[0]} is classified by the {shown[0]} scheme, {names[1]} by {shown[1]}: "
            "a GAR difference may be the classifiers', not the runs'"
        )
    if sources[0].name != sources[1].name:
        warnings.append(f"{names[0]} is {sources[0].name}, {names[1]} is {sources[1].name}")
    facts = [source.facts(path) if source.facts is not None else {} for source, path in zip(sources, paths)]
    for key in dict.fromkeys([*facts[0], *facts[1]]):
        values = [fact.get(key, "unknown") for fact in facts]
        if values[0] != values[1]:
            warnings.append(f"{key} differs: {values[0]} ({names[0]}) vs {values[1]} ({names[1]})")
    return warnings
