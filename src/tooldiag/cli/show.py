"""``tooldiag show``: one case turn by turn, with the action class of every emission and why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from tooldiag.cli.classify import (
    CueFiles,
    Judge,
    JudgeApiKeyEnv,
    JudgeBaseUrl,
    JudgeCache,
    JudgeConcurrency,
    JudgeMaxRetries,
    JudgeTimeout,
    resolve_classifier_options,
)
from tooldiag.cli.report import Scheme

#: Output formats of ``tooldiag show``.
SHOW_FORMATS = ("text", "json")

ShowFormat = Annotated[str, typer.Option("--format", "-f", help="text (for a terminal) or json (complete).")]


def show_command(
    input: Annotated[Path, typer.Argument(help="A BFCL run directory, or an agent log (JSONL).")],
    case_id: Annotated[str, typer.Argument(help="A case id of the run (see `tooldiag cases`), or a conversation id.")],
    fmt: ShowFormat = "text",
    scheme: Scheme = "default",
    cues: CueFiles = None,
    judge: Judge = None,
    judge_base_url: JudgeBaseUrl = None,
    judge_api_key_env: JudgeApiKeyEnv = None,
    judge_concurrency: JudgeConcurrency = 8,
    judge_timeout: JudgeTimeout = None,
    judge_cache: JudgeCache = True,
    judge_max_retries: JudgeMaxRetries = 2,
) -> None:
    """One case turn by turn: user messages, each emission with its action class and the rule
    or cue that decided it, decoded calls, tool results, and the verdicts (docs/evidence.md).

    Example: tooldiag show runs/qwen3 multi_turn_miss_func_12 --format json
    """
    from tooldiag import api
    from tooldiag.errors import UserError

    if fmt not in SHOW_FORMATS:
        raise UserError(f"unknown format {fmt!r}", hint="use one of: " + ", ".join(SHOW_FORMATS))
    classifier = resolve_classifier_options(
        scheme, cues, judge, judge_base_url, judge_api_key_env, judge_concurrency,
        judge_timeout=judge_timeout, judge_cache=judge_cache, judge_max_retries=judge_max_retries,
    )  # fmt: skip
    transcript = api.show_case(input, case_id, classifier)
    if fmt == "json":
        typer.echo(json.dumps(transcript.to_json(), indent=2, ensure_ascii=False))
        return
    from rich.console import Console

    from tooldiag.report.transcript import TEXT_WIDTH, render_text

    console = Console(highlight=False, soft_wrap=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=TEXT_WIDTH, color_system=None)
    render_text(transcript, console)


def register(app: typer.Typer) -> None:
    app.command("show", rich_help_panel="Action-class diagnostic")(show_command)
