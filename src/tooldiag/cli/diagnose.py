"""``tooldiag diagnose``: the calibration profile of any agent's conversation log."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tooldiag.cli.classify import (
    CueFiles,
    Judge,
    JudgeApiKeyEnv,
    JudgeBaseUrl,
    JudgeConcurrency,
    resolve_classifier_options,
)
from tooldiag.cli.report import (
    Confidence,
    ExecFailPp,
    Format,
    MaskingPp,
    Out,
    Scheme,
    TCap,
    check_format,
    thresholds_from,
)


def diagnose_command(
    log: Annotated[
        Path, typer.Argument(help="Agent log: one JSON conversation per line (see examples/agent_log.jsonl).")
    ],
    fmt: Format = "md",
    out: Out = None,
    scheme: Scheme = "default",
    cues: CueFiles = None,
    judge: Judge = None,
    judge_base_url: JudgeBaseUrl = None,
    judge_api_key_env: JudgeApiKeyEnv = None,
    judge_concurrency: JudgeConcurrency = 8,
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
    from tooldiag.api import diagnose_log
    from tooldiag.cli.io import write_out
    from tooldiag.report.render import render

    check_format(fmt)
    report = diagnose_log(
        log,
        resolve_classifier_options(scheme, cues, judge, judge_base_url, judge_api_key_env, judge_concurrency),
        thresholds=thresholds_from(masking_pp, execution_failure_pp, t_cap, confidence),
    )
    write_out(render([report], fmt), out)


def register(app: typer.Typer) -> None:
    app.command("diagnose", rich_help_panel="Action-class diagnostic")(diagnose_command)
