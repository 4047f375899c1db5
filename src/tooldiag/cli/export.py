"""``tooldiag export``: a stored run as JSONL (one case per line) or BFCL result files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer


def case_json(record) -> dict[str, Any]:
    """The documented export shape of one stored case."""
    traj = record.trajectory
    return {
        "case_id": record.case_id,
        "category": record.category,
        "status": record.status,
        "passed": record.passed,
        "error_type": record.error_type,
        "error_message": record.grade.error_message if record.grade else traj.inference_error,
        "turns": [
            [
                {
                    "text": step.emission.text,
                    "tool_calls": [
                        {"name": call.name, "arguments": call.arguments, "raw_arguments": call.raw_arguments}
                        for call in step.emission.tool_calls
                    ],
                    "reasoning": step.emission.reasoning,
                    "injected": step.emission.injected,
                    "tool_results": step.tool_results,
                }
                for step in turn.steps
            ]
            for turn in traj.turns
        ],
    }


def export_command(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")],
    format: Annotated[
        str, typer.Option("--format", "-f", help="jsonl (one case per line) or bfcl (BFCL result files in --out).")
    ] = "jsonl",
    out: Annotated[
        Path | None, typer.Option("--out", help="Output file (jsonl; default stdout) or folder (bfcl).")
    ] = None,
) -> None:
    """Export a run as JSONL (one case per line) or as BFCL result files.

    Each JSONL line has case_id, category, status, passed, error_type and turns (per turn a
    list of emissions with text and tool_calls [{name, arguments}]).
    """
    from tooldiag.errors import UserError
    from tooldiag.store import RunStore
    from tooldiag.suites.bfcl.ids import case_id_order

    store = RunStore.open(run_dir, sort_key=case_id_order)
    try:
        if format == "jsonl":
            from tooldiag.cli.io import JSONL_OUT, open_out

            with open_out(out, JSONL_OUT) as handle:
                for record in store.iter_cases():
                    handle.write(json.dumps(case_json(record), ensure_ascii=False) + "\n")
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
            raise UserError(f"unknown export format {format!r}", hint="use --format jsonl or --format bfcl")
    finally:
        store.close()


def register(app: typer.Typer) -> None:
    app.command("export", rich_help_panel="Run benchmarks")(export_command)
