"""``tooldiag compare``: is the difference between two runs real? Paired tests per category."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tooldiag.cli.classifier_options import ClassifierOptions, Scheme, classifier_options
from tooldiag.errors import UserError

if TYPE_CHECKING:
    from tooldiag.report.compare import Comparison

_INPUT_HELP = "a BFCL run directory (run or imported), an agent log (.jsonl) or a tau2-bench results file (.json)"
RunA = Annotated[Path, typer.Argument(help=f"Run A: {_INPUT_HELP}.", show_default=False, metavar="RUN_A")]
RunB = Annotated[Path, typer.Argument(help="Run B, over the same cases.", show_default=False, metavar="RUN_B")]
Format = Annotated[str, typer.Option("--format", "-f", help="md (verdicts and table), json, csv or parquet (--out).")]
Out = Annotated[
    Path | None, typer.Option("--out", "-o", help="Write to this file instead of standard output.", dir_okay=False)
]
Metric = Annotated[str, typer.Option("--metric", "-m", help="acc, gar or both.")]
Alpha = Annotated[
    float, typer.Option("--alpha", help="Family-wise significance level (Holm across every test); CI level 1-alpha.")
]
Seed = Annotated[int, typer.Option("--seed", help="Seed of the bootstrap (same seed, same numbers).")]
Resamples = Annotated[
    int, typer.Option("--resamples", min=0, help="Bootstrap resamples of the cases (0: no confidence interval).")
]
SchemeB = Annotated[
    str | None,
    typer.Option("--scheme-b", help="Classifier scheme for RUN_B when it differs from --scheme (a warning says so)."),
]


@classifier_options()
def compare_command(
    run_a: RunA,
    run_b: RunB,
    fmt: Format = "md",
    out: Out = None,
    metric: Metric = "both",
    alpha: Alpha = 0.05,
    seed: Seed = 0,
    resamples: Resamples = 10_000,
    scheme: Scheme = "default",
    scheme_b: SchemeB = None,
    *,
    options: ClassifierOptions,
) -> None:
    """Per category, the paired difference in Acc and GAR between two runs over the same cases.

    Cases pair on category and case id (a tau2 task on its task id); the overlap used is reported.

    Per category and metric: both rates, A-B in points, the exact McNemar p (Holm-adjusted across every test),
    a seeded percentile bootstrap CI over cases, and the minimum detectable difference (MDD, power 0.8).

    A verdict line each: "A > B on miss_func GAR: +100.0 pp, p = 2.5e-60, 95% CI [100, 100]" or
    "no detectable difference on base Acc: +1.5 pp, p = 0.62 (MDD 12 pp)". Formulas: docs/compare.md.

    Several rows of one case (repeats, tau2 trials) are its samples: the bootstrap resamples whole cases.

    Example: tooldiag compare runs/oracle runs/overcall

    Example: tooldiag compare runs/a runs/b --metric gar --alpha 0.01 --format json --out a_vs_b.json
    """
    from tooldiag import api
    from tooldiag.report.compare import COMPARE_FORMATS, METRIC_CHOICES

    if fmt not in COMPARE_FORMATS:
        raise UserError(f"unknown format {fmt!r}", hint="use one of: " + ", ".join(COMPARE_FORMATS))
    if metric not in METRIC_CHOICES:
        raise UserError(f"unknown metric {metric!r}", hint="use one of: " + ", ".join(METRIC_CHOICES))
    from tooldiag.metrics.paired import check_alpha

    check_alpha(alpha)
    if fmt == "parquet":
        from tooldiag.report.frames import check_parquet_out

        check_parquet_out(out)
    classifier = options.resolve(scheme)
    classifier_b = None if scheme_b is None else options.resolve(scheme_b)
    comparison = api.compare_runs(
        run_a, run_b, classifier, classifier_b=classifier_b, metric=metric, alpha=alpha, seed=seed, resamples=resamples
    )
    for warning in comparison.warnings:
        typer.echo(f"warning: {warning}", err=True)
    _write(comparison, fmt, out)


def _write(comparison: Comparison, fmt: str, out: Path | None) -> None:
    from tooldiag.cli.io import write_out
    from tooldiag.report.compare import (
        RECORD_COLUMNS,
        compare_csv_text,
        compare_json_text,
        compare_markdown,
    )

    if fmt == "parquet":
        from tooldiag.report.frames import records_frame, write_parquet

        write_parquet(records_frame(comparison.records(), RECORD_COLUMNS), out)
        typer.echo(f"wrote {out}", err=True)
    elif fmt == "json":
        write_out(compare_json_text(comparison), out)
    elif fmt == "csv":
        write_out(compare_csv_text(comparison), out)
    else:
        write_out(compare_markdown(comparison), out)


def register(app: typer.Typer) -> None:
    app.command("compare", rich_help_panel="Action-class diagnostic")(compare_command)
