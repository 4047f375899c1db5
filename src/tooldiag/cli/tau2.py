"""``tooldiag tau2``: the action-class diagnostic on existing tau2-bench result files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from tooldiag.cli.io import write_out
from tooldiag.cli.options import ApiKeyEnv, BaseUrl, Concurrency, MaxRetries, NoCache

tau2_app = typer.Typer(
    help="Diagnose tau2-bench results (airline, retail, telecom, banking_knowledge) without re-running anything: "
    "per-class GAR vs Acc (paper Table 2) and confirmation before database writes (Table 3).",
    no_args_is_help=True,
)


@tau2_app.command("diagnose")
def diagnose_command(
    results: Annotated[
        list[Path],
        typer.Argument(help="tau2 results: .json files (any version) or >=1.0 run folders (data/simulations/<run>/)."),
    ],
    format: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            help="md, csv (one tidy table with a 'section' column), json, parquet (the csv table, typed; "
            "needs --out), or html (one self-contained page: Tables 2 and 3, a figure, every write with its "
            "messages; needs --out).",
        ),
    ] = "md",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write here instead of stdout.")] = None,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            help=(
                "LLM consent judge as PROVIDER/MODEL (e.g. openai/gpt-4o); adds its Table "
                "3 rows and its agreement (Cohen's kappa) with the deterministic judge."
            ),
        ),
    ] = None,
    window: Annotated[
        int,
        typer.Option(
            "--window", min=1, help="Dialogue messages before each write shown to the LLM judge (the paper used 10)."
        ),
    ] = 10,
    tasks: Annotated[
        Path | None, typer.Option("--tasks", help="tau2 tasks.json to use for result files that embed no tasks.")
    ] = None,
    ask_ids: Annotated[
        Path | None,
        typer.Option(
            "--ask-ids",
            help='JSON {"airline": ["2", ...], "retail": [...]} replacing the shipped ask-required task ids.',
        ),
    ] = None,
    submission: Annotated[
        Path | None,
        typer.Option(
            "--submission",
            help="A tau2-bench leaderboard submission.json: its pass_1..pass_4 beside the pass^k recomputed from "
            "the trajectories, with the difference per k.",
        ),
    ] = None,
    base_url: BaseUrl = None,
    api_key_env: ApiKeyEnv = None,
    concurrency: Concurrency = 8,
    no_cache: NoCache = False,
    max_retries: MaxRetries = 6,
) -> None:
    """Per model and domain: pass^k, GAR/Acc/Δ per task class with Wilson intervals, and every
    write-tool call judged for explicit user consent, with the message that decided it.

    Example: tooldiag tau2 diagnose telecom_run/ --submission submissions/my-model/submission.json
    """
    from tooldiag.api import tau2_diagnose
    from tooldiag.errors import UserError
    from tooldiag.suites.tau2.formats import FORMATS, render
    from tooldiag.suites.tau2.tasks import load_ask_ids_file

    if format not in (*FORMATS, "parquet", "html"):
        raise UserError(f"unknown format {format!r}", hint=f"use --format {' | '.join((*FORMATS, 'parquet', 'html'))}")
    if format == "parquet":
        from tooldiag.report.table_files import check_parquet_out

        check_parquet_out(out)
    if format == "html" and out is None:
        raise UserError("--format html needs --out", hint="e.g. --format html --out report.html")
    options = None
    if judge is not None:
        from tooldiag.cli.options import build_model_options

        options = build_model_options(base_url, api_key_env, concurrency, no_cache, max_retries)
    settings: dict[str, Any] = {
        "judge": judge,
        "judge_options": options,
        "concurrency": concurrency,
        "window": window,
        "tasks_file": tasks,
        "ask_ids": load_ask_ids_file(ask_ids) if ask_ids else None,
    }
    if format == "html":
        from tooldiag.api import tau2_html

        write_out(tau2_html(results, **settings), out)
        typer.echo(f"wrote {out}", err=True)
        return
    report = tau2_diagnose(results, submission=submission, **settings)
    if report.version_note:
        typer.echo(f"warning: {report.version_note}", err=True)
    if format == "parquet":
        from tooldiag.report.frames import write_parquet
        from tooldiag.suites.tau2.formats import report_frame

        write_parquet(report_frame(report), out)
        typer.echo(f"wrote {out}", err=True)
        return
    write_out(render(report, format), out)


@tau2_app.command("cases")
def cases_command(
    results: Annotated[
        list[Path],
        typer.Argument(help="tau2 results: .json files (any version) or >=1.0 run folders (data/simulations/<run>/)."),
    ],
    unit: Annotated[
        str,
        typer.Option(
            "--unit",
            help="simulation (one row per simulation and Table 2 class) or write (one row per write-tool call, "
            "Table 3).",
        ),
    ] = "simulation",
    verdict: Annotated[
        list[str] | None,
        typer.Option(
            "--verdict", help="Keep rows with this verdict: masked, execution_failure, ok, fail, ungraded (repeatable)."
        ),
    ] = None,
    category: Annotated[
        list[str] | None,
        typer.Option(
            "--category",
            help="Keep rows of this category: tool_call, ask, refuse (simulations) or answer_changed, "
            "answer_unchanged (writes); repeatable.",
        ),
    ] = None,
    format: Annotated[
        str, typer.Option("--format", "-f", help="table (terminal), jsonl, csv or parquet (needs --out).")
    ] = "table",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write here instead of stdout.")] = None,
    scheme: Annotated[
        str | None,
        typer.Option(
            "--scheme",
            help="Classify each agent message with this scheme (default, paper, llm) instead of the multi-label "
            "reading Table 2 uses.",
        ),
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option("--judge", help="LLM consent judge as PROVIDER/MODEL (--unit write): adds its llm_* columns."),
    ] = None,
    window: Annotated[
        int, typer.Option("--window", min=1, help="Dialogue messages before each write shown to the LLM judge.")
    ] = 10,
    tasks: Annotated[
        Path | None, typer.Option("--tasks", help="tau2 tasks.json to use for result files that embed no tasks.")
    ] = None,
    ask_ids: Annotated[
        Path | None,
        typer.Option("--ask-ids", help="JSON {domain: [task ids]} replacing the shipped ask-required task ids."),
    ] = None,
    base_url: BaseUrl = None,
    api_key_env: ApiKeyEnv = None,
    concurrency: Concurrency = 8,
    no_cache: NoCache = False,
    max_retries: MaxRetries = 6,
) -> None:
    """The rows behind Tables 2 and 3: per simulation (or write) the classes per turn, the gold signal,
    tau2's pass and the verdict (masked = passed without the gold action).

    Example: tooldiag tau2 cases results.json --verdict masked
    """
    from tooldiag.api import tau2_cases
    from tooldiag.errors import UserError
    from tooldiag.report.cases import CaseFilter
    from tooldiag.suites.tau2.cases import CASE_FORMATS, case_rows_frame, check_unit, render_case_rows
    from tooldiag.suites.tau2.tasks import load_ask_ids_file

    check_unit(unit)
    verdicts = sorted(CaseFilter.of(verdict).verdicts)
    if format not in CASE_FORMATS:
        raise UserError(f"unknown format {format!r}", hint="use --format " + " | ".join(CASE_FORMATS))
    if format == "parquet":
        from tooldiag.report.table_files import check_parquet_out

        check_parquet_out(out)
    options = None
    if judge is not None:
        from tooldiag.cli.options import build_model_options

        options = build_model_options(base_url, api_key_env, concurrency, no_cache, max_retries)
    rows = tau2_cases(
        results,
        scheme,
        unit=unit,
        verdicts=verdicts,
        categories=category,
        judge=judge,
        judge_options=options,
        concurrency=concurrency,
        window=window,
        tasks_file=tasks,
        ask_ids=load_ask_ids_file(ask_ids) if ask_ids else None,
    )
    if format == "parquet":
        from tooldiag.report.frames import write_parquet

        write_parquet(case_rows_frame(rows, unit), out)
        typer.echo(f"wrote {out}", err=True)
        return
    write_out(render_case_rows(rows, format, unit), out)


@tau2_app.command("ask-scan")
def ask_scan_command(
    sources: Annotated[list[Path], typer.Argument(help="tau2 results files/run folders, or tau2 tasks.json files.")],
    format: Annotated[str, typer.Option("--format", "-f", help="md or json.")] = "md",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write here instead of stdout.")] = None,
) -> None:
    """Propose ask-required tasks with the paper's 14-phrase scan of the user scenario, next to the
    shipped verified ids, so the labels can be re-derived or extended (--ask-ids)."""
    import json

    from tooldiag.errors import UserError
    from tooldiag.suites.tau2.ask_scan import scan_sources

    if format not in ("md", "json"):
        raise UserError(f"unknown format {format!r}", hint="use --format md or --format json")
    rows = scan_sources(sources)
    if format == "json":
        write_out(json.dumps(rows, indent=2) + "\n", out)
        return
    from tooldiag.suites.tau2.formats import ask_scan_markdown

    write_out(ask_scan_markdown(rows), out)


def register(app: typer.Typer) -> None:
    app.add_typer(tau2_app, name="tau2", rich_help_panel="Action-class diagnostic")
