"""``tooldiag diagnose``: the calibration profile of any agent's conversation log."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tooldiag.cli.classify import CueFiles, Judge
from tooldiag.cli.report import (
    Confidence,
    ExecFailPp,
    Format,
    MaskingPp,
    Out,
    Scheme,
    TCap,
    check_scheme_and_format,
    thresholds_from,
)


def diagnose_command(
    log: Annotated[Path, typer.Argument(help="Agent log: one JSON conversation per line (see examples/agent_log.jsonl).")],
    fmt: Format = "md",
    out: Out = None,
    scheme: Scheme = "default",
    cues: CueFiles = None,
    judge: Judge = None,
    masking_pp: MaskingPp = -15.0,
    execution_failure_pp: ExecFailPp = 60.0,
    t_cap: TCap = 10,
    confidence: Confidence = 0.95,
) -> None:
    """Calibration profile of any agent's conversation log (JSONL).

    Classifies every assistant message and reports GAR beside Acc per category, like
    `tooldiag report` does for BFCL runs.

    Example: tooldiag diagnose examples/agent_log.jsonl --format json
    """
    from tooldiag.cli.io import write_out
    from tooldiag.diagnose import diagnose_log
    from tooldiag.report.render import render

    check_scheme_and_format(scheme, fmt, judge)
    report = diagnose_log(
        log,
        scheme=scheme,
        cue_files=cues or (),
        thresholds=thresholds_from(masking_pp, execution_failure_pp, t_cap, confidence),
    )
    write_out(render([report], fmt), out)


def register(app: typer.Typer) -> None:
    app.command("diagnose", rich_help_panel="Action-class diagnostic")(diagnose_command)
