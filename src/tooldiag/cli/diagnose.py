"""``tooldiag diagnose``: the calibration profile of any agent's conversation log."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tooldiag.cli.classifier_options import ClassifierOptions, Scheme, classifier_options
from tooldiag.cli.classify import print_classifier_warnings, print_executor_line
from tooldiag.cli.report import (
    PARQUET,
    Confidence,
    ExecFailPp,
    Format,
    MaskingPp,
    Out,
    TCap,
    check_format,
    thresholds_from,
)

if TYPE_CHECKING:
    from tooldiag.diagnose.log import InvalidLine


@classifier_options(executor=True)
def diagnose_command(
    logs: Annotated[
        list[Path],
        typer.Argument(
            help="Agent log: one JSON conversation per line (see examples/agent_log.jsonl); "
            "with --from, one or more trace files of that source.",
            metavar="LOG",
        ),
    ],
    fmt: Format = "md",
    out: Out = None,
    scheme: Scheme = "default",
    *,
    options: ClassifierOptions,
    masking_pp: MaskingPp = -15.0,
    execution_failure_pp: ExecFailPp = 60.0,
    t_cap: TCap = 10,
    confidence: Confidence = 0.95,
    skip_invalid: Annotated[
        bool,
        typer.Option(
            "--skip-invalid",
            help="Skip malformed lines (reported on stderr: how many, and the first few) instead of refusing the log.",
        ),
    ] = False,
    source: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="Read traces of another tool instead of an agent log: inspect (Inspect AI .eval/.json logs), "
            "otel (OTLP or Jaeger JSON: OpenTelemetry GenAI or OpenInference spans), langsmith (run exports). "
            "See docs/traces.md.",
        ),
    ] = None,
    gold_map: Annotated[
        Path | None,
        typer.Option("--gold-map", help="With --from: gold classes for traces that carry none (docs/traces.md)."),
    ] = None,
    trace_format: Annotated[
        str | None,
        typer.Option("--trace-format", help="With --from: force the source's file layout instead of detecting it."),
    ] = None,
) -> None:
    """Calibration profile of any agent's conversation log (JSONL).

    Classifies every assistant message and reports GAR beside Acc per category, like
    `tooldiag report` does for BFCL runs.

    The report names the classifier (judge, prompt, fallbacks); a warning goes to stderr
    when judge answers fell back to the rules, or when a material share of the text is in
    languages without cue data (>= 5% of the text emissions, or >= 10 of them).

    Example: tooldiag diagnose examples/agent_log.jsonl --format json

    Example: tooldiag diagnose --from inspect logs/2026-11-30T10-00-00_bfcl.eval

    Example, the llm scheme's judge on a Ray cluster: tooldiag diagnose log.jsonl --scheme llm
    --judge openai/Qwen3-8B --judge-base-url http://gpu1:8000/v1 --executor ray --ray-address auto
    """
    from tooldiag.api import diagnose_log, diagnose_traces
    from tooldiag.cli.io import write_out
    from tooldiag.report.render import render

    check_format(fmt, (PARQUET,))
    if fmt == PARQUET:
        from tooldiag.report.frames import check_parquet_out

        check_parquet_out(out)
    classifier = options.resolve(scheme)
    invalid: list[InvalidLine] | None = [] if skip_invalid else None
    thresholds = thresholds_from(masking_pp, execution_failure_pp, t_cap, confidence)
    if source is None:
        if len(logs) != 1 or gold_map is not None or trace_format is not None:
            from tooldiag.errors import UserError

            what = f"{len(logs)} logs" if len(logs) != 1 else "--gold-map/--trace-format"
            raise UserError(f"{what} given without --from", hint="diagnose reads one agent log; --from reads traces")
        report = diagnose_log(logs[0], classifier, thresholds=thresholds, invalid=invalid)
    else:
        report = diagnose_traces(
            source, logs, classifier, gold_map=gold_map, fmt=trace_format, thresholds=thresholds, invalid=invalid
        )
    if invalid:
        typer.echo(f"warning: {skipped_lines_text(logs[0] if len(logs) == 1 else source, invalid)}", err=True)
    print_executor_line(classifier)
    print_classifier_warnings([report.classifier])
    if fmt == PARQUET:  # the tidy table of --format csv, numbers as numbers
        from tooldiag.report.frames import report_frame, write_parquet

        write_parquet(report_frame([report]), out)
        typer.echo(f"wrote {out}", err=True)
        return
    write_out(render([report], fmt), out)


def skipped_lines_text(log: Path | str | None, invalid: list[InvalidLine], shown: int = 3) -> str:
    """``skipped 4 invalid line(s) of LOG: line 2 (not valid JSON ...), ...``: the count and the first few."""
    firsts = "; ".join(bad.message for bad in invalid[:shown]) + ("; ..." if len(invalid) > shown else "")
    return f"skipped {len(invalid)} invalid line(s) of {log} (--skip-invalid): {firsts}"


def register(app: typer.Typer) -> None:
    app.command("diagnose", rich_help_panel="Action-class diagnostic")(diagnose_command)
