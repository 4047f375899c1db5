"""``tooldiag audit``: rater labels attached to a BFCL run, and how far raters and classifier agree."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tooldiag.cli.classifier_options import ClassifierOptions, Scheme, classifier_options
from tooldiag.cli.report import Out

audit_app = typer.Typer(
    help="Audit labels (paper 001 App. F): attach raters' action classes to a BFCL run, then report "
    "inter-rater Cohen's kappa, the classifier against the raters and the adjudicated share.",
    no_args_is_help=True,
)

RunDir = Annotated[
    Path, typer.Option("--run-dir", "-r", help="BFCL run (from `tooldiag run bfcl` or `tooldiag import bfcl`).")
]


@audit_app.command("import")
def import_command(
    file: Annotated[Path, typer.Argument(help="Audit labels: JSONL, one row per case (or turn) x rater.")],
    run_dir: RunDir,
) -> None:
    """Attach audit labels to a run (stored in RUN_DIR/audit_labels.jsonl).

    Row: {"case_id": "multi_turn_miss_param_12", "rater": "r1", "label": "ask", "turn": 2, "note": "..."};
    "turn" (from 0) is optional (absent: the whole case); rater "adjudicated" marks the adjudicated label.
    Every row is checked before anything is stored; importing the same rows again changes nothing.

    Example: tooldiag audit import labels.jsonl --run-dir runs/xlam
    """
    from tooldiag import api

    summary = api.audit_import(file, run_dir)
    typer.echo(summary.line(), err=True)
    if summary.replaced:
        typer.echo(f"warning: {summary.replaced} stored label(s) replaced by a different label", err=True)


@audit_app.command("report")
@classifier_options()
def report_command(
    run_dir: Annotated[Path, typer.Argument(help="BFCL run holding imported audit labels.")],
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            help="md, json, or parquet (needs --out: FILE.parquet gets the per-class table, a folder every table).",
        ),
    ] = "md",
    out: Out = None,
    scheme: Scheme = "default",
    *,
    options: ClassifierOptions,
) -> None:
    """Inter-rater kappa, classifier vs raters per class, adjudicated share and the disagreements.

    Example: tooldiag audit report runs/xlam --scheme paper --format json
    """
    from tooldiag import api
    from tooldiag.cli.io import write_out
    from tooldiag.suites.bfcl.audit_report import AUDIT_FORMATS, render_audit_report

    if fmt not in (*AUDIT_FORMATS, "parquet"):
        from tooldiag.errors import UserError

        raise UserError(f"unknown format {fmt!r}", hint="use one of: " + ", ".join((*AUDIT_FORMATS, "parquet")))
    if fmt == "parquet":
        from tooldiag.report.table_files import check_parquet_out

        check_parquet_out(out)
    classifier = options.resolve(scheme)
    report = api.audit_report(run_dir, classifier)
    for warning in report.classifier.warnings() if report.classifier else ():
        typer.echo(f"warning: {warning}", err=True)
    if fmt == "parquet":
        from tooldiag.report.table_files import write_parquet_tables
        from tooldiag.suites.bfcl.audit_report import MAIN_AUDIT_TABLE, audit_frames

        for path in write_parquet_tables(audit_frames(report), out, main=MAIN_AUDIT_TABLE):
            typer.echo(f"wrote {path}", err=True)
        return
    write_out(render_audit_report(report, fmt), out)


def register(app: typer.Typer) -> None:
    app.add_typer(audit_app, name="audit", rich_help_panel="Action-class diagnostic")
