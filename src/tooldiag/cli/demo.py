"""``tooldiag demo``: the whole pipeline offline, on embedded defaults, in about a minute.

Runs the three BFCL reference policies (``ref/oracle``, ``ref/overcall``, ``ref/halt``)
on all 800 multi-turn cases, grades them with BFCL's checker, prints the action-class
diagnostic (paper 001, Table 1) and writes every report format (``reports/report.html``, one
self-contained page, too); then runs the judge
reliability pipeline (paper 000) with reference generators and judges on the built-in
records. No API key, no GPU, no network.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

POLICIES = ("oracle", "overcall", "halt")


def demo_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the demo's runs and reports.")] = Path(
        "tooldiag-demo"
    ),
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Everything offline: reference policies through all 800 BFCL cases, Table 1, judge pipeline.

    Runs ref/oracle, ref/overcall and ref/halt through BFCL multi-turn, prints the
    action-class diagnostic and writes it in every format, then runs the judge-reliability
    pipeline with reference generators and judges on the built-in records. Re-running resumes.
    """
    from rich.console import Console
    from rich.markdown import Markdown

    from tooldiag.api import run_bfcl
    from tooldiag.cli.progress import run_progress
    from tooldiag.cli.run import print_summary

    console = Console()

    def show(markdown: str) -> None:
        # A terminal gets rendered tables; a pipe or file gets the Markdown itself,
        # whole (rich would cut wide tables to 80 columns).
        if console.is_terminal:
            console.print(Markdown(markdown))
        else:
            print(markdown, flush=True)

    run_dirs = []
    for policy in POLICIES:
        model = f"ref/{policy}"
        run_dir = out / "bfcl" / policy
        with run_progress(f"bfcl {model}", enabled=not quiet) as progress:
            summary = run_bfcl(model, run_dir, progress=progress)
        if not quiet:
            print_summary(summary, console)
        run_dirs.append(run_dir)

    from tooldiag.suites.bfcl.diagnostic import write_reports
    from tooldiag.suites.html_report import HTML_REPORT_FILE, write_html_report
    from tooldiag.suites.judgebench.demo import demo_report, run_demo

    table = write_reports(run_dirs, out / "reports")
    console.print("\n[bold]Action-class diagnostic (paper 001, Table 1)[/bold]")
    show(table)
    console.print(f"reports in every format: {out / 'reports'}")
    overcall = out / "bfcl" / "overcall"
    console.print(
        "the evidence behind the B,M flags: "
        f"[bold]tooldiag cases {overcall} --verdict masked[/bold] lists the cases passed without a refusal; "
        f"[bold]tooldiag show {overcall} multi_turn_miss_func_0[/bold] reads one turn by turn",
        soft_wrap=True,
    )

    console.print("\n[bold]Judge reliability on built-in records (paper 000, Table 2)[/bold]")
    judges = demo_report(out / "judgebench")
    show(run_demo(out / "judgebench", judges))
    # the agent's calibration and the judges' reliability on one page, which opens offline
    page = write_html_report(out / "reports" / HTML_REPORT_FILE, run_dirs, judge_report=judges)
    console.print(f"the whole report as one page (any browser, offline): [bold]{page}[/bold]")


def register(app: typer.Typer) -> None:
    app.command("demo", rich_help_panel="Start here")(demo_command)
