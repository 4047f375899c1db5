"""``tooldiag export``: a stored run as JSONL (one case per line), Parquet (one row per case) or BFCL result files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from tooldiag.cli.classifier_options import CueFiles, Judge, Scheme, resolve_classifier_options


def export_command(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")],
    format: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            help="jsonl (one case per line), parquet (one row per case, as `tooldiag cases`; needs --out) "
            "or bfcl (BFCL result files in --out).",
        ),
    ] = "jsonl",
    out: Annotated[
        Path | None, typer.Option("--out", help="Output file (jsonl, parquet; jsonl default stdout) or folder (bfcl).")
    ] = None,
    scheme: Scheme = "default",
    cues: CueFiles = None,
    judge: Judge = None,
) -> None:
    """Export a run as JSONL (one case per line), Parquet (one row per case) or BFCL result files.

    Each JSONL line has case_id, category, status, passed, error_type, error_message and turns
    (per turn a list of emissions with text, tool_calls [{name, arguments}], tool_results and
    action_class), user_messages (per turn [{role, content}]), and the case's gold_class,
    gold_hit and verdict (masked, execution_failure, ok, fail, ungraded: see `tooldiag cases`).
    Classes are the --scheme's (default: default).

    Example: tooldiag export runs/qwen3 --out qwen3.jsonl
    """
    from tooldiag.errors import UserError
    from tooldiag.store import RunStore
    from tooldiag.suites.bfcl.ids import case_id_order

    store = RunStore.open(run_dir, sort_key=case_id_order)
    try:
        if format == "jsonl":
            from tooldiag.cli.io import JSONL_OUT, open_out
            from tooldiag.suites.bfcl.export import export_cases

            cases = export_cases(store, resolve_classifier_options(scheme, cues, judge))
            with open_out(out, JSONL_OUT) as handle:
                for case in cases:
                    handle.write(json.dumps(case, ensure_ascii=False) + "\n")
        elif format == "parquet":
            from tooldiag.report.frames import cases_frame, check_parquet_out, write_parquet
            from tooldiag.suites.bfcl.export import export_case_rows

            check_parquet_out(out)  # before the rows are built
            write_parquet(cases_frame(export_case_rows(store, resolve_classifier_options(scheme, cues, judge))), out)
            typer.echo(f"wrote {out}", err=True)
        elif format == "bfcl":
            if out is None:
                raise UserError("--format bfcl writes a folder", hint="add --out FOLDER")
            from tooldiag.suites.bfcl.export import write_bfcl_results

            if out.exists() and not out.is_dir():
                raise UserError(
                    f"--out {out} is a file; --format bfcl writes a folder", hint="give a folder path for --out"
                )
            try:
                paths = write_bfcl_results(store, out)
            except OSError as exc:
                raise UserError(
                    f"cannot write BFCL result files to {out} ({exc.strerror or exc})",
                    hint="give a writable folder for --out",
                ) from None
            typer.echo("\n".join(str(p) for p in paths))
        else:
            raise UserError(f"unknown export format {format!r}", hint="use --format jsonl, parquet or bfcl")
    finally:
        store.close()


def register(app: typer.Typer) -> None:
    app.command("export", rich_help_panel="Run benchmarks")(export_command)
