"""``tooldiag show``: one case turn by turn, with the action class of every emission and why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from tooldiag.cli.classifier_options import ClassifierOptions, Scheme, classifier_options

#: Output formats of ``tooldiag show``.
SHOW_FORMATS = ("text", "json")

ShowFormat = Annotated[str, typer.Option("--format", "-f", help="text (for a terminal) or json (complete).")]


@classifier_options()
def show_command(
    input: Annotated[Path, typer.Argument(help="A BFCL run directory, or an agent log (JSONL).")],
    case_id: Annotated[str, typer.Argument(help="A case id of the run (see `tooldiag cases`), or a conversation id.")],
    fmt: ShowFormat = "text",
    scheme: Scheme = "default",
    *,
    options: ClassifierOptions,
) -> None:
    """One case turn by turn: user messages, each emission with its action class and the rule
    or cue that decided it, decoded calls, tool results, and the verdicts (docs/evidence.md).

    Example: tooldiag show runs/qwen3 multi_turn_miss_func_12 --format json
    """
    from tooldiag import api
    from tooldiag.errors import UserError

    if fmt not in SHOW_FORMATS:
        raise UserError(f"unknown format {fmt!r}", hint="use one of: " + ", ".join(SHOW_FORMATS))
    classifier = options.resolve(scheme)
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
