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

    from tooldiag.classify import get_classifier
    from tooldiag.report import table1_markdown, write_report_files
    from tooldiag.suites.bfcl.diagnostic import reports_from_run_dirs
    from tooldiag.suites.html_report import HTML_REPORT_FILE, write_html_report
    from tooldiag.suites.judgebench.demo import demo_report, run_demo

    classifier = get_classifier("default")
    reports = reports_from_run_dirs(run_dirs, classifier)  # once, for the text reports and the page
    write_report_files(reports, out / "reports")
    table = table1_markdown(reports)
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
    console.print("\n[bold]Records built by the generator (paper 000 §3.1, App. N)[/bold]")
    show(generated_study(out / "judgebench" / "generated"))
    # the agent's calibration and the judges' reliability on one page, which opens offline
    page = write_html_report(
        out / "reports" / HTML_REPORT_FILE, run_dirs, classifier, reports=reports, judge_report=judges
    )
    console.print(f"the whole report as one page (any browser, offline): [bold]{page}[/bold]")


#: The demo's generated set: small enough for seconds, every topology present.
GENERATED_N = 30
GENERATED_SEED = 1


def generated_study(folder: Path) -> str:
    """Build a small set with ``judgebench generate`` (gated), rewrite it with ``ref/rewrite``,
    validate the rewrites with ``ref/metajudge``, and run the demo's judge pipeline on it.

    Every step is the command a user runs on their own tools; each resumes (the records are
    byte-identical for the seed, the rewrites and votes are stored, the plans and verdicts too).
    Returns a short markdown summary: the gate outcome, the App. N table, Table 2 of the set.
    """
    from tooldiag import api
    from tooldiag.suites.judgebench.construct.metajudge import table_markdown
    from tooldiag.suites.judgebench.demo import DEMO_CONDITIONS, DEMO_GENERATORS, DEMO_JUDGES
    from tooldiag.suites.judgebench.report import md_table

    records = folder / "records.jsonl"
    generated = api.judgebench_generate(records, GENERATED_N, GENERATED_SEED)
    regenerated = len({a.index for a in generated.attempts if a.attempt > 0})
    rewritten = folder / "rewritten.jsonl"
    rewrite = api.judgebench_rewrite(records, "ref/rewrite", rewritten)
    table, _ = api.judgebench_metajudge(rewritten, ["ref/metajudge"], out=folder / "metajudge")
    run = folder / "run"
    api.judgebench_predict(run, list(DEMO_GENERATORS), records=str(rewritten))
    api.judgebench_judge(run, list(DEMO_JUDGES), conditions=list(DEMO_CONDITIONS))
    report = api.judgebench_analyze(run, resamples=200)
    table2 = report.tables["table2"]
    one_decimal = {c: ".1f" for c in table2.columns if table2[c].dtype.kind == "f"}
    shares = ", ".join(f"{dag} {count}" for dag, count in sorted(_count(generated.records).items()))
    ok = sum(count for (_, status), count in rewrite.written.items() if status == "OK")
    return (
        f"{len(generated.records)} records in {records} ({shares}); every one passed the six quality gates "
        f"({regenerated} regenerated; report {records.with_suffix('.gates.md')}). "
        f"Rewrites: {ok} of {2 * len(generated.records)} OK.\n\n"
        f"Meta-judge validation (App. N, Table 22):\n\n{table_markdown(table)}\n"
        f"Judge alignment on the generated set (Table 2):\n\n{md_table(table2, one_decimal)}"
    )


def _count(records: list[dict]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in records:
        counts[record["dag_type"]] = counts.get(record["dag_type"], 0) + 1
    return counts


def register(app: typer.Typer) -> None:
    app.command("demo", rich_help_panel="Start here")(demo_command)
