"""``tooldiag report``: the action-class calibration profile of one or more runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tooldiag.cli.classifier_options import ClassifierOptions, Scheme, classifier_options
from tooldiag.cli.classify import print_classifier_warnings

Format = Annotated[
    str,
    typer.Option(
        "--format",
        "-f",
        help="md, csv, json, latex, parquet (the csv's tidy table) or html (one offline page); both need --out.",
    ),
]
Out = Annotated[
    Path | None, typer.Option("--out", "-o", help="Write to this file instead of standard output.", dir_okay=False)
]
MaskingPp = Annotated[
    float,
    typer.Option(
        "--masking-pp",
        help="Delta (pp) at or below which an ask/refuse/confirm category is flagged 'masking'.",
        rich_help_panel="Thresholds",
    ),
]
ExecFailPp = Annotated[
    float,
    typer.Option(
        "--execution-failure-pp",
        help="Delta (pp) at or above which a tool_call category is flagged 'execution_failure'.",
        rich_help_panel="Thresholds",
    ),
]
TCap = Annotated[
    int,
    typer.Option(
        "--t-cap",
        min=1,
        help="Cases a class must be emitted in to count as within capability (Table 5).",
        rich_help_panel="Thresholds",
    ),
]
Confidence = Annotated[
    float,
    typer.Option(
        "--confidence", min=0.5, max=0.999, help="Coverage of the Wilson intervals.", rich_help_panel="Thresholds"
    ),
]
NoiseAware = Annotated[
    bool,
    typer.Option(
        "--noise-aware",
        help=(
            "For runs with --repeats: keep a masking / execution_failure / bound_violation flag only when "
            "the mean Delta passes its threshold by more than the noise floor (2 x sd of the per-draw Delta)."
        ),
        rich_help_panel="Thresholds",
    ),
]
Baseline = Annotated[
    list[Path] | None,
    typer.Option(
        "--baseline",
        "-b",
        help=(
            "Baseline run (no --probe) of the same model; RUN_DIRS are then probe "
            "runs and the report gives their shifts (repeat once per model)."
        ),
    ),
]


def thresholds_from(
    masking_pp: float, execution_failure_pp: float, t_cap: int, confidence: float, noise_aware: bool = False
):
    from tooldiag.metrics.gar import Thresholds

    return Thresholds(
        masking_pp=masking_pp,
        execution_failure_pp=execution_failure_pp,
        t_cap=t_cap,
        confidence=confidence,
        noise_aware=noise_aware,
    )


#: ``--format parquet``: the tidy table of ``--format csv`` (one row per run and category) as a Parquet file.
PARQUET = "parquet"
#: ``--format html``: one self-contained page (figures as inline SVG, sortable tables; docs/html-report.md).
HTML = "html"


JudgeBench = Annotated[
    Path | None,
    typer.Option(
        "--judgebench",
        help=(
            "With --format html: a judgebench store (`tooldiag judgebench judge --run-dir DIR`); its judge study "
            "joins the page, and the summary puts the agent's flags beside which judge to trust per difficulty."
        ),
        file_okay=False,
    ),
]


def check_format(fmt: str, extra: tuple[str, ...] = ()) -> None:
    """``fmt`` is a text format of the renderers, or one of the command's ``extra`` ones (report: parquet)."""
    from tooldiag.errors import UserError
    from tooldiag.report.render import FORMATS

    if fmt not in (*FORMATS, *extra):
        raise UserError(f"unknown format {fmt!r}", hint="use one of: " + ", ".join((*FORMATS, *extra)))


@classifier_options()
def report_command(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run directories (from `tooldiag run` or `tooldiag import`).")],
    fmt: Format = "md",
    out: Out = None,
    scheme: Scheme = "default",
    *,
    options: ClassifierOptions,
    masking_pp: MaskingPp = -15.0,
    execution_failure_pp: ExecFailPp = 60.0,
    t_cap: TCap = 10,
    confidence: Confidence = 0.95,
    baseline: Baseline = None,
    judgebench: JudgeBench = None,
    noise_aware: NoiseAware = False,
) -> None:
    """Action-class calibration profile of runs (paper 001 Tables 1, 14, 5).

    Table 1: GAR, Acc and Delta per category, overall Acc; Table 14: case- vs
    turn-level GAR with Wilson CIs; Table 5: capability counts.
    With --baseline: RUN_DIRS are probe runs (`run bfcl --probe`) and the report gives
    their shifts against the baseline of the same model (Tables 4, 6-11; docs/probes.md).

    With --format html: one page (figures and tables, offline): summary, calibration, the probe
    section under --baseline, the case browser (every case with its transcript) and, with
    --judgebench DIR, the judge study beside the agent's profile.

    Runs with --repeats get a Repeats section (mean, spread, pass^k, flip rates, which flags
    survive the noise floor); --noise-aware keeps only the surviving flags in Table 1.

    Example: tooldiag report runs/qwen3 runs/xlam --format latex --out table1.tex
    """
    from tooldiag import api
    from tooldiag.cli.io import write_out
    from tooldiag.report.render import render

    check_format(fmt, (PARQUET, HTML))
    if fmt == PARQUET:
        from tooldiag.report.frames import check_parquet_out

        check_parquet_out(out)
    if fmt == HTML and out is None:
        from tooldiag.errors import UserError

        raise UserError("--format html writes a whole page, not a text for the terminal", hint="add --out report.html")
    if judgebench is not None and fmt != HTML:
        from tooldiag.errors import UserError

        raise UserError("--judgebench joins a judge study to the HTML page only", hint="add --format html --out F")
    classifier = options.resolve(scheme)
    thresholds = thresholds_from(masking_pp, execution_failure_pp, t_cap, confidence, noise_aware)
    # -- one self-contained page (tooldiag.suites.html_report), with the probe section under --baseline -----
    if fmt == HTML:
        from tooldiag.classify.provenance import CountingClassifier

        counting = CountingClassifier(classifier)  # every run of the page counts here: one warning block
        write_out(
            api.html_report(run_dirs, counting, baseline=baseline, thresholds=thresholds, judgebench=judgebench), out
        )
        print_classifier_warnings([counting.summary()])
        return
    # -- probe shifts (tooldiag.suites.bfcl.probes.report), only with --baseline --------------------------
    if baseline:
        from tooldiag.classify.provenance import CountingClassifier
        from tooldiag.suites.bfcl.probes import report as probes

        counting = CountingClassifier(classifier)  # the probe tables carry no classifier line: stderr does
        probe_report = api.probe_report(run_dirs, baseline, counting)
        if fmt == PARQUET:  # the tidy rows of --format csv: model, probe, category, metric, value
            from tooldiag.report.frames import records_frame, write_parquet

            write_parquet(records_frame(probes.tidy_rows(probe_report), probes.TIDY_COLUMNS), out)
            typer.echo(f"wrote {out}", err=True)
        else:
            write_out(probes.render(probe_report, fmt), out)
        typer.echo(f"classifier: {counting.summary().describe()}", err=True)
        print_classifier_warnings([counting.summary()])
        return
    reports = api.report_runs(run_dirs, classifier, thresholds=thresholds)
    print_classifier_warnings([report.classifier for report in reports])
    if fmt == PARQUET:
        from tooldiag.report.frames import report_frame, write_parquet

        write_parquet(report_frame(reports), out)
        typer.echo(f"wrote {out}", err=True)
        return
    write_out(render(reports, fmt), out)


def register(app: typer.Typer) -> None:
    app.command("report", rich_help_panel="Action-class diagnostic")(report_command)
