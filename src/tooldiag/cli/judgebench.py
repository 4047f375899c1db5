"""``tooldiag judgebench predict | judge | analyze | drift | records | generate | gates | rewrite | metajudge``,
``import``.

A study lives in one run directory: ``predict`` stores generator plans, ``judge`` stores
verdicts under prompt conditions, ``analyze`` writes the report. Both run commands resume:
re-run the same command after an interruption and only missing units are done.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tooldiag.cli.model_call import ModelCall, Quiet, model_call_options, print_step_summary
from tooldiag.cli.options import ApiKeyEnv, BaseUrl, Concurrency, MaxRetries, NoCache, build_model_options

app = typer.Typer(
    help="Judge reliability on AgentJudgeBench-style records (paper 000): predict, judge, analyze.",
    no_args_is_help=True,
)

RunDir = Annotated[Path, typer.Option("--run-dir", help="Run directory (created if missing; resumed if present).")]
ExistingRunDir = Annotated[
    Path, typer.Option("--run-dir", help="Run directory written by `judgebench predict` (must exist).")
]
Records = Annotated[
    str,
    typer.Option(
        "--records",
        help=(
            "builtin (36 records shipped with tooldiag), a "
            ".jsonl/.json/.parquet file, or hf:OWNER/NAME[:CONFIG][@SPLIT]."
        ),
    ),
]
Difficulties = Annotated[str, typer.Option("--difficulties", help="Comma list of easy, medium, hard.")]
Thinking = Annotated[
    str | None,
    typer.Option(
        "--thinking", help="on/off: sent as chat_template_kwargs.enable_thinking (vLLM, SGLang); default: not sent."
    ),
]


def _thinking(value: str | None) -> bool | None:
    from tooldiag.errors import UserError

    if value is None:
        return None
    lowered = value.strip().lower()
    if lowered in ("on", "true", "yes", "1"):
        return True
    if lowered in ("off", "false", "no", "0"):
        return False
    raise UserError(f"--thinking must be on or off, got {value!r}", hint="e.g. --thinking off")


#: The model options of every judgebench command (one builder for the whole CLI).
_options = build_model_options


@app.command("predict")
@model_call_options(temperature="0", temperature_help="Number, or 'default' to send none (paper: 0).", executor=True)
def predict_command(
    generator: Annotated[
        list[str],
        typer.Option(
            "--generator", "-g", help="Generator model string (repeatable), e.g. openai/NAME or ref/jb-perturb."
        ),
    ],
    run_dir: RunDir,
    records: Records = "builtin",
    difficulties: Difficulties = "easy,medium,hard",
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Only the first N records.")] = None,
    thinking: Thinking = None,
    *,
    call: ModelCall,
) -> None:
    """Ask each generator to plan every record at every difficulty, single-shot, native tool calls.

    Example: tooldiag judgebench predict -g ref/jb-perturb --run-dir runs/jb

    Example, on a Ray cluster (this process alone writes runs/jb; re-run the same command to resume):
    tooldiag judgebench predict -g openai/Qwen3-8B --base-url http://gpu1:8000/v1 --run-dir runs/jb
    --executor ray --ray-address auto --concurrency 64
    """
    from rich.console import Console

    from tooldiag.api import judgebench_predict

    console = Console()
    judgebench_predict(
        run_dir,
        generator,
        records=records,
        difficulties=difficulties.split(","),
        limit=limit,
        config=call.generation(_thinking(thinking)),
        options=call.options(),
        prompt_dir=call.prompts,
        progress=call.progress(),
        on_done=lambda name, summary: print_step_summary(console, name, summary),
        **call.executor_options(),
    )
    console.print(f"stored in {run_dir}; next: tooldiag judgebench judge --run-dir {run_dir} --judge MODEL")


@app.command("judge")
@model_call_options(
    temperature="0.15",
    temperature_help="Number, or 'default' to send none (paper: 0.15 for vLLM judges, provider default otherwise).",
    executor=True,
)
def judge_command(
    judge: Annotated[
        list[str],
        typer.Option("--judge", "-j", help="Judge model string (repeatable), e.g. openai/NAME or ref/jb-exact."),
    ],
    run_dir: ExistingRunDir,
    conditions: Annotated[
        str,
        typer.Option(
            "--conditions",
            help=(
                "Comma list of with_gt, without_gt, without_gt_half_default, "
                "free_form, corrupted_gt, prometheus, prometheus_without_gt (or all)."
            ),
        ),
    ] = "with_gt,without_gt",
    generator: Annotated[
        list[str] | None, typer.Option("--generator", "-g", help="Only these generators' plans (repeatable).")
    ] = None,
    difficulties: Difficulties = "easy,medium,hard",
    thinking: Thinking = None,
    retries: Annotated[
        int, typer.Option("--retries", min=0, help="Re-asks after an unparseable reply before storing a null.")
    ] = 2,
    samples: Annotated[
        int,
        typer.Option(
            "--samples",
            min=1,
            help="Independent draws per plan and condition (at --temperature); analyze then reports their "
            "stability and uses the median draw. Raising it on a stored run adds only the new draws.",
        ),
    ] = 1,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the corrupted_gt derangement and of the --probe rewrites.")
    ] = 42,
    probe: Annotated[
        list[str] | None,
        typer.Option(
            "--probe",
            help="Bias probe (repeatable): 'order' also judges each plan with independent calls permuted "
            "and argument keys reordered (same programmatic scores); analyze reports the verdict change rate.",
        ),
    ] = None,
    *,
    call: ModelCall,
) -> None:
    """Have each judge score every stored plan under each condition.

    Example, three independent draws per verdict (analyze then reports flip rate and alpha):
    tooldiag judgebench judge --run-dir runs/jb --judge ref/jb-flaky --samples 3

    Example, the order probe: tooldiag judgebench judge -j ref/jb-exact -j ref/jb-order --run-dir runs/jb --probe order

    Example, the grid on a Ray cluster (units: plan x condition x draw; this process alone writes runs/jb,
    a killed run resumes with the same command): tooldiag judgebench judge -j openai/Qwen3-32B
    --base-url http://gpu1:8000/v1 --run-dir runs/jb --conditions all --executor ray --ray-address auto
    """
    from rich.console import Console

    from tooldiag.api import judgebench_judge

    console = Console()
    judgebench_judge(
        run_dir,
        judge,
        conditions=conditions,
        generators=generator,
        difficulties=difficulties.split(","),
        config=call.generation(_thinking(thinking)),
        retries=retries,
        seed=seed,
        options=call.options(),
        prompt_dir=call.prompts,
        progress=call.progress(),
        on_done=lambda name, summary: print_step_summary(console, name, summary),
        samples=samples,
        probes=probe or (),
        **call.executor_options(),
    )
    console.print(f"next: tooldiag judgebench analyze --run-dir {run_dir}")


@app.command("analyze")
def analyze_command(
    run_dir: ExistingRunDir,
    out: Annotated[Path | None, typer.Option("--out", help="Report folder (default: RUN_DIR/report).")] = None,
    formats: Annotated[
        str,
        typer.Option(
            "--formats",
            help="Comma list of md, csv, json, parquet (tables/<name>.parquet: the tables, typed), html "
            "(report.html: one self-contained page with the figures).",
        ),
    ] = "md,csv,json",
    resamples: Annotated[
        int, typer.Option("--resamples", min=10, help="Bootstrap resamples per cell (paper: 2000).")
    ] = 2000,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 42,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Threads for the bootstrap.")] = 2,
    scorer: Annotated[
        str,
        typer.Option(
            "--scorer", help="released (paper Eqs. 1-3) or schema_aware (extra schema-declared keys not penalised)."
        ),
    ] = "released",
) -> None:
    """Alignment, GT lift, agreement, robustness and decision guide, as md/csv/json/parquet/html."""
    from tooldiag.api import judgebench_analyze
    from tooldiag.suites.judgebench.report import summary_markdown, write_report

    chosen = tuple(f.strip() for f in formats.split(",") if f.strip())
    report = judgebench_analyze(run_dir, scorer=scorer, resamples=resamples, seed=seed, workers=workers)
    target = out or run_dir / "report"
    written = write_report(report, target, chosen)
    typer.echo(summary_markdown(report))
    typer.echo(f"{len(written)} files in {target}")


@app.command("drift")
def drift_command(
    run_dir: ExistingRunDir,
    judge: Annotated[str, typer.Option("--judge", "-j", help="Judge A, as stored (e.g. ref/jb-exact).")],
    against: Annotated[str, typer.Option("--against", help="Judge B, compared with A on the plans both judged.")],
    condition: Annotated[
        str | None, typer.Option("--condition", help="Only this condition (default: every condition both judged).")
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="md, json, csv or parquet (parquet needs --out).")] = "md",
    out: Annotated[Path | None, typer.Option("--out", help="Write the table to this file instead of printing.")] = None,
) -> None:
    """Which verdicts change from one judge (or prompt version) to another, per metric and condition."""
    from tooldiag.api import judgebench_drift
    from tooldiag.suites.judgebench.drift import write_drift

    report = judgebench_drift(run_dir, judge, against, condition=condition)
    text = write_drift(report, fmt, out)
    if text is not None:
        typer.echo(text, nl=False)
    else:
        typer.echo(f"drift table written to {out}")


@app.command("records")
def records_command(records: Records = "builtin") -> None:
    """Check a record source and count its records per DAG topology and difficulty."""
    from collections import Counter

    from rich.console import Console

    from tooldiag.suites.judgebench.loaders import load_records
    from tooldiag.suites.judgebench.records import DIFFICULTIES

    loaded = load_records(records)
    dags = Counter(r.dag_type for r in loaded)
    console = Console()
    console.print(f"{len(loaded)} records from {records}")
    for dag, n in sorted(dags.items()):
        console.print(f"  {dag}: {n}")
    for difficulty in DIFFICULTIES:
        console.print(f"  with a {difficulty} query: {sum(1 for r in loaded if r.query(difficulty))}")


@app.command("gates")
def gates_command(
    records: Annotated[str, typer.Argument(help="Records file (.jsonl/.json/.parquet, released layout) or builtin.")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the report as JSON here (and as markdown beside it, .md).")
    ] = None,
) -> None:
    """Run the quality gates on every record of a file; exit 1 if any record fails a gate."""
    from tooldiag.api import judgebench_gates

    report = judgebench_gates(records, out=out)
    typer.echo(report.to_markdown(), nl=False)
    if out is not None:
        typer.echo(f"report written to {out} and {out.with_suffix('.md')}")
    if report.failed_records:
        raise typer.Exit(1)


@app.command("rewrite")
@model_call_options(temperature="0")
def rewrite_command(
    records: Annotated[str, typer.Argument(help="Records file (.jsonl/.json/.parquet) or builtin.")],
    model: Annotated[
        str, typer.Option("--model", "-m", help="Rewriter model string, e.g. openai/NAME or ref/rewrite.")
    ],
    out: Annotated[Path, typer.Option("--out", help="Rewritten records file to write (JSONL).")],
    run_dir: Annotated[
        Path | None,
        typer.Option(
            "--run-dir",
            help="Where each rewrite is stored as it finishes (created if missing; resumed "
            "if present). Default: OUT with suffix .run.",
        ),
    ] = None,
    retries: Annotated[int, typer.Option("--retries", min=0, help="Re-asks after an empty or unreadable answer.")] = 1,
    *,
    call: ModelCall,
) -> None:
    """Rewrite every easy query to medium and every medium to hard; calls and trace stay (FAILED: original kept).

    Example: tooldiag judgebench rewrite builtin --model ref/rewrite --out rewritten.jsonl
    """
    from rich.console import Console

    from tooldiag.api import judgebench_rewrite

    summary = judgebench_rewrite(
        records,
        model,
        out,
        run_dir=run_dir,
        config=call.generation(),
        retries=retries,
        options=call.options(),
        prompt_dir=call.prompts,
        progress=call.progress(),
    )
    console = Console()
    print_step_summary(console, model, summary)
    for target in ("medium", "hard"):
        ok, failed = summary.written[(target, "OK")], summary.written[(target, "FAILED")]
        console.print(f"  {target}: {ok} OK, {failed} FAILED (original kept)")
    console.print(f"wrote {summary.out}; next: tooldiag judgebench metajudge {summary.out} --judge MODEL")


@app.command("metajudge")
@model_call_options(temperature="0")
def metajudge_command(
    rewritten: Annotated[str, typer.Argument(help="Rewritten records file (from `judgebench rewrite`).")],
    judge: Annotated[
        list[str],
        typer.Option("--judge", "-j", help="Meta-judge model string (repeatable), e.g. openai/NAME or ref/metajudge."),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Folder for the votes and the table (created if missing; resumed if present). "
            "Default: REWRITTEN with suffix .metajudge.",
        ),
    ] = None,
    retries: Annotated[int, typer.Option("--retries", min=0, help="Re-asks after an unreadable vote.")] = 2,
    *,
    call: ModelCall,
) -> None:
    """Meta-judges vote on preservation and hardening of every rewrite; writes Table 22 (paper 000 App. N).

    Example: tooldiag judgebench metajudge rewritten.jsonl --judge ref/metajudge
    """
    from rich.console import Console

    from tooldiag.api import judgebench_metajudge
    from tooldiag.suites.judgebench.construct.metajudge import table_markdown

    console = Console()
    table, written = judgebench_metajudge(
        rewritten,
        judge,
        out=out,
        config=call.generation(),
        retries=retries,
        options=call.options(),
        prompt_dir=call.prompts,
        progress=call.progress(),
        on_done=lambda name, summary: print_step_summary(console, name, summary),
    )
    typer.echo(table_markdown(table))
    typer.echo(f"{len(written)} files in {written[0].parent}")


def _range(value: str, option: str) -> tuple[int, int]:
    """``8-19`` or ``8`` -> (low, high)."""
    from tooldiag.errors import UserError

    low, sep, high = value.strip().partition("-")
    try:
        bounds = (int(low), int(high) if sep else int(low))
    except ValueError:
        raise UserError(f"{option} must be N or MIN-MAX, got {value!r}", hint=f"e.g. {option} 2-5") from None
    return bounds


def _list(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


@app.command("generate")
def generate_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Records file to write (JSONL, one record per line).")],
    n: Annotated[int, typer.Option("--n", min=0, help="How many records.")] = 100,
    seed: Annotated[int, typer.Option("--seed", help="Seed: the same seed writes the same bytes.")] = 1,
    domains: Annotated[
        str | None, typer.Option("--domains", help="Comma list of domains (default: all fifteen).")
    ] = None,
    topologies: Annotated[
        str | None,
        typer.Option("--topologies", help="Comma list of topologies (default: all six at the paper's shares)."),
    ] = None,
    tools_per_record: Annotated[
        str, typer.Option("--tools-per-record", help="Offered tools per record, N or MIN-MAX.")
    ] = "8-19",
    calls: Annotated[str, typer.Option("--calls", help="Expected calls per record, N or MIN-MAX within 2-5.")] = "2-5",
    llm_queries: Annotated[
        str | None,
        typer.Option(
            "--llm-queries", help="Model that rewrites each template query once (kept if it states every value)."
        ),
    ] = None,
    base_url: BaseUrl = None,
    api_key_env: ApiKeyEnv = None,
    concurrency: Concurrency = 8,
    no_cache: NoCache = False,
    max_retries: MaxRetries = 6,
    no_gates: Annotated[
        bool, typer.Option("--no-gates", help="Skip the six quality gates (and their report); faster, unchecked.")
    ] = False,
    quiet: Quiet = False,
) -> None:
    """Synthetic records: a DAG plan over a domain's tools, executed for its trace, with a query.

    Every record passes the six quality gates (regenerated up to 5 times when one fails); the
    gate report is written beside the records (RECORDS.gates.json / .md).
    """
    from collections import Counter

    from rich.console import Console

    from tooldiag.api import judgebench_generate
    from tooldiag.cli.progress import run_progress

    result = judgebench_generate(
        out,
        n,
        seed,
        domains=_list(domains),
        topologies=_list(topologies),
        tools_per_record=_range(tools_per_record, "--tools-per-record"),
        calls=_range(calls, "--calls"),
        llm_queries=llm_queries,
        quality_gates=not no_gates,
        options=_options(base_url, api_key_env, concurrency, no_cache, max_retries),
        progress=lambda label: run_progress(label, enabled=not quiet),
    )
    console = Console()
    shares = Counter(r["dag_type"] for r in result.records)
    total = max(len(result.records), 1)
    console.print(f"{len(result.records)} records in {out}")
    for dag, count in sorted(shares.items()):
        console.print(f"  {dag}: {count} ({100 * count / total:.1f} %)")
    if result.dropped:
        console.print(f"  {len(result.dropped)} records failed every attempt and were left out")
    regenerated = len({a.index for a in result.attempts if a.attempt > 0})
    if result.attempts:
        from tooldiag.suites.judgebench.construct.gate_report import report_paths

        console.print(f"  quality gates: {regenerated} regenerated; report {report_paths(out)[1]}")


labels_app = typer.Typer(help="Human / audit labels of stored plans (paper 000 App. G): import.", no_args_is_help=True)
app.add_typer(labels_app, name="labels")


@labels_app.command("import")
def labels_import_command(
    files: Annotated[list[Path], typer.Argument(help="Label files (.jsonl, .json or .csv; long or wide layout).")],
    run_dir: ExistingRunDir,
    rater: Annotated[str | None, typer.Option("--rater", help="Rater of rows that name none (default: human).")] = None,
) -> None:
    """Store per-metric labels (agree/disagree with the programmatic score, or a score in [0, 1]).

    One JSONL row per metric:

        {"record_id": "linear_0", "generator": "ref/jb-perturb", "difficulty": "hard",
         "metric": "sequence", "rater": "ann1", "label": "disagree"}

    or one row per output with a column per metric ("tool_selection": "agree", ...; the released
    names tool_selection_accuracy, ... work too). Then `tooldiag judgebench analyze` adds human
    agreement, human-corrected alignment (App. G), inter-rater kappa and corrected pass rates.

    Example: tooldiag judgebench labels import audit.csv --run-dir runs/jb --rater alice
    """
    from tooldiag.api import judgebench_labels_import

    result = judgebench_labels_import(run_dir, files, rater=rater)
    typer.echo(result.summary())


@app.command("import")
def import_command(
    files: Annotated[
        list[Path], typer.Argument(help="Released judge-output files (judge_<alias>.jsonl), one or more.")
    ],
    run_dir: RunDir,
    records: Annotated[
        str | None,
        typer.Option(
            "--records",
            help="The benchmark records the rows were judged on (as for predict: a .jsonl/.json/.parquet "
            "file, hf:OWNER/NAME[:CONFIG], or builtin). Default: the records already in --run-dir.",
        ),
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option("--judge", "-j", help="Judge name to store under (default: ALIAS of judge_ALIAS.jsonl)."),
    ] = None,
    generator: Annotated[
        str | None, typer.Option("--generator", "-g", help="Generator of rows that name none (a one-generator file).")
    ] = None,
    difficulty: Annotated[
        str | None, typer.Option("--difficulty", help="Difficulty of rows that name none: easy, medium or hard.")
    ] = None,
    gt_condition: Annotated[
        str, typer.Option("--gt-condition", help="Condition of judge_response (e.g. corrupted_gt for a C3 file).")
    ] = "with_gt",
    no_gt_condition: Annotated[
        str,
        typer.Option(
            "--no-gt-condition", help="Condition of judge_response_no_gt (e.g. without_gt_half_default for C2)."
        ),
    ] = "without_gt",
) -> None:
    """Import released AgentJudgeBench judge outputs (HF ServiceNow-AI/AgentJudgeBench) for `analyze`.

    Plans become predictions, judge_response / judge_response_no_gt verdicts become judgements.

    Re-importing a file stores nothing twice; different content for a stored key is refused.

    Example: tooldiag judgebench import data/judge_qwq_32b.jsonl --records records.jsonl --run-dir released
    """
    from tooldiag.api import judgebench_import

    summary = judgebench_import(
        files,
        run_dir,
        records=records,
        judge=judge,
        generator=generator,
        difficulty=difficulty,
        gt_condition=gt_condition,
        no_gt_condition=no_gt_condition,
    )
    for item in summary.files:
        verdicts = ", ".join(f"{c} {s} {n}" for (c, s), n in sorted(item.verdict_statuses.items()))
        plans = ", ".join(f"{s} {n}" for s, n in sorted(item.plan_statuses.items()))
        typer.echo(
            f"{item.path} ({item.layout} layout, judge {item.judge}): {item.rows} rows; plans {plans}: "
            f"{item.predictions_stored} stored, {item.predictions_skipped} already stored; "
            f"verdicts {verdicts}: {item.verdicts_stored} stored, {item.verdicts_skipped} already stored"
        )
        metrics = ", ".join(f"{m} {n}" for m, n in sorted(item.mismatch_metrics.items()))
        typer.echo(
            f"  programmatic cross-check: {item.checked} rows compared, {item.mismatches} differ from tooldiag's "
            f"recomputed scores{f' ({metrics})' if metrics else ''}"
        )
        for example in item.examples:
            typer.echo(f"    {example}")
    typer.echo(f"next: tooldiag judgebench analyze --run-dir {run_dir}")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="judgebench", rich_help_panel="Judge reliability")
