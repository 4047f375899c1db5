"""``tooldiag cases``: the evidence behind a calibration profile, one row per case."""

from __future__ import annotations

import io
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tooldiag.cli.classifier_options import ClassifierOptions, Scheme, classifier_options
from tooldiag.errors import UserError

if TYPE_CHECKING:
    from tooldiag.metrics.cases import CaseRow

#: Output formats of ``tooldiag cases``.
CASES_FORMATS = ("table", "jsonl", "csv", "parquet")

Inputs = Annotated[
    list[Path],
    typer.Argument(
        help="BFCL run directories (from `tooldiag run bfcl` or `tooldiag import bfcl`, probe runs included) "
        "or agent logs (.jsonl, the `tooldiag diagnose` format).",
        show_default=False,
        metavar="INPUT...",
    ),
]
Verdicts = Annotated[
    list[str] | None,
    typer.Option(
        "--verdict", help="Keep cases with this verdict (repeatable): masked, execution_failure, ok, fail, ungraded."
    ),
]
Categories = Annotated[
    list[str] | None, typer.Option("--category", "-c", help="Keep cases of this category (repeatable), e.g. miss_func.")
]
Classes = Annotated[
    list[str] | None,
    typer.Option(
        "--class",
        help="Keep cases in which this action class was emitted at any turn (repeatable): "
        "tool_call, ask, refuse, confirm, other.",
    ),
]
Format = Annotated[str, typer.Option("--format", "-f", help="table (terminal), jsonl, csv or parquet (needs --out).")]
Out = Annotated[
    Path | None, typer.Option("--out", "-o", help="Write to this file instead of standard output.", dir_okay=False)
]


@classifier_options()
def cases_command(
    inputs: Inputs,
    verdict: Verdicts = None,
    category: Categories = None,
    action_class: Classes = None,
    fmt: Format = "table",
    out: Out = None,
    scheme: Scheme = "default",
    *,
    options: ClassifierOptions,
) -> None:
    """One row per case: the class of every emission per turn, the grader's verdict, and the diagnostic verdict.

    A category's Acc > GAR says that the grader passed cases without the gold action;
    this says which. Verdicts (the gold class is the category's: refuse for miss_func,
    ask for miss_param, tool_call for base; a gold turn is a turn at which it is due):

    [bold]masked[/bold]: passed, but the gold class never appeared at a gold turn (the grader masked a wrong action).
    [bold]execution_failure[/bold]: the gold class appeared at a gold turn, the case failed (right action, then
    execution went wrong).
    [bold]ok[/bold]: gold class seen and passed.  [bold]fail[/bold]: neither.
    [bold]ungraded[/bold]: no verdict (an infrastructure error, a log line without "passed").

    Classes per turn read `tool_call,other | refuse`: turn 1 emitted a call then text of class other,
    turn 2 a refusal (`-`: a turn without emission). A count of verdicts goes to stderr.

    Example: tooldiag cases runs/qwen3 --verdict masked --category miss_func

    Example: tooldiag cases runs/qwen3 --class refuse --format parquet --out refusals.parquet
    """
    from tooldiag import api
    from tooldiag.report.cases import CaseFilter, counts_line

    chosen = CaseFilter.of(verdict, category, action_class)  # a typo fails before anything is read
    if fmt not in CASES_FORMATS:
        raise UserError(f"unknown format {fmt!r}", hint="use one of: " + ", ".join(CASES_FORMATS))
    if fmt == "parquet":
        from tooldiag.report.frames import check_parquet_out

        check_parquet_out(out)
    classifier = options.resolve(scheme)
    rows = api.case_rows(inputs, classifier)  # every row: the count line on stderr tells how many were kept
    chosen.check_categories(rows)
    shown = chosen.apply(rows)
    _write(shown, fmt, out)
    typer.echo(counts_line(shown, rows), err=True)


def _write(rows: Sequence[CaseRow], fmt: str, out: Path | None) -> None:
    from tooldiag.cli.io import write_out

    if fmt == "parquet":
        from tooldiag.report.frames import cases_frame, write_parquet

        write_parquet(cases_frame(rows), out)
        typer.echo(f"wrote {out}", err=True)
        return
    from tooldiag.report import cases as evidence

    if fmt == "jsonl":
        write_out(evidence.jsonl_text(rows), out)
    elif fmt == "csv":
        write_out(evidence.csv_text(rows), out)
    else:
        write_out(_rich_table(rows, to_terminal=out is None), out)


def _rich_table(rows: Sequence[CaseRow], *, to_terminal: bool) -> str:
    """The rows as a rich table: the terminal's width (or 200 columns into a file), no colour in a file."""
    from rich.console import Console
    from rich.table import Table as RichTable

    from tooldiag.report.cases import case_table

    table = case_table(rows, with_run=len({row.run for row in rows}) > 1)
    shown = RichTable(header_style="bold")
    for column in table.columns:
        shown.add_column(column.name, overflow="fold")
    for texts in table.texts():
        shown.add_row(*texts)
    tty = to_terminal and sys.stdout.isatty()
    buffer = io.StringIO()
    width = shutil.get_terminal_size().columns if tty else 200
    Console(file=buffer, width=width, force_terminal=tty, no_color=not tty).print(shown)
    return buffer.getvalue()


def register(app: typer.Typer) -> None:
    app.command("cases", rich_help_panel="Action-class diagnostic")(cases_command)
