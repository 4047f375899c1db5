"""``tooldiag classify``: action class of each assistant message in a JSONL file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from tooldiag.errors import UserError

Schemes = Annotated[
    list[str] | None,
    typer.Option(
        "--scheme",
        "-s",
        help="paper (the paper's released classifier), default (tooldiag's), or llm (a judge model; see --judge). "
        "Repeatable with --evaluate.",
    ),
]
CueFiles = Annotated[
    list[Path] | None,
    typer.Option(
        "--cues",
        help="Extra cue file (JSON) for the default scheme; repeatable. Also: TOOLDIAG_CUES=FILE[:FILE].",
        dir_okay=False,
    ),
]
Judge = Annotated[
    str | None,
    typer.Option(
        "--judge", help="Judge model of the llm scheme, e.g. openai/gpt-4o-mini (or TOOLDIAG_CLASSIFY_MODEL)."
    ),
]
JudgeBaseUrl = Annotated[
    str | None,
    typer.Option(
        "--judge-base-url",
        help="Endpoint of the llm scheme's judge, e.g. http://127.0.0.1:8000/v1.",
        rich_help_panel="llm scheme",
    ),
]
JudgeApiKeyEnv = Annotated[
    str | None,
    typer.Option(
        "--judge-api-key-env", help="Environment variable holding the judge's API key.", rich_help_panel="llm scheme"
    ),
]
JudgeConcurrency = Annotated[
    int,
    typer.Option("--judge-concurrency", min=1, help="Judge requests in flight at once.", rich_help_panel="llm scheme"),
]


def resolve_classifier_options(
    scheme: str,
    cues: list[Path] | None,
    judge: str | None,
    judge_base_url: str | None = None,
    judge_api_key_env: str | None = None,
    judge_concurrency: int = 8,
):
    """The classifier the options name, resolved once here and passed down as an object."""
    from tooldiag.classify import SCHEMES, get_classifier

    if scheme not in SCHEMES:
        raise UserError(f"unknown scheme {scheme!r}", hint="use one of: " + ", ".join(SCHEMES))
    judge_options = None
    if scheme == "llm":
        from tooldiag.models.base import ModelOptions

        # cache and retries at their defaults, as for any model
        judge_options = ModelOptions(
            base_url=judge_base_url, api_key_env=judge_api_key_env, concurrency=judge_concurrency
        )
    return get_classifier(scheme, cue_files=cues or (), judge=judge, judge_options=judge_options)


def read_jsonl_objects(source: str) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of ``source`` (a path or ``-``)."""
    from tooldiag.cli.io import CLASSIFY_INPUT, iter_jsonl, jsonl_name

    out = []
    for number, value in iter_jsonl(source, CLASSIFY_INPUT):
        if not isinstance(value, dict):
            raise UserError(
                f"{jsonl_name(source, CLASSIFY_INPUT)} line {number}: "
                f"expected a JSON object, got {type(value).__name__}",
                hint='write an assistant message, e.g. {"role": "assistant", "content": "...", "tool_calls": []}',
            )
        out.append((number, value))
    return out


def message_parts(obj: dict[str, Any]) -> tuple[Any, bool]:
    """``(text, has_calls)`` of an OpenAI assistant message (``text`` accepted for ``content``)."""
    from tooldiag.classify import content_text, has_tool_calls

    text = obj.get("content", obj.get("text"))
    calls = has_tool_calls(obj.get("tool_calls")) or has_tool_calls(obj.get("function_call"))
    return content_text(text), calls


def classify_command(
    file: Annotated[str, typer.Argument(help="JSONL of assistant messages, one per line; - for stdin.")],
    scheme: Schemes = None,
    cues: CueFiles = None,
    judge: Judge = None,
    judge_base_url: JudgeBaseUrl = None,
    judge_api_key_env: JudgeApiKeyEnv = None,
    judge_concurrency: JudgeConcurrency = 8,
    evaluate: Annotated[
        bool,
        typer.Option(
            "--evaluate",
            help=(
                "Lines carry a gold 'label': print per-class precision/recall "
                "of each --scheme (default: paper and default)."
            ),
        ),
    ] = False,
) -> None:
    """Action class of each assistant message in a JSONL file (or - for stdin).

    Writes one JSON object per input line, in order: {"line", "id"?, "action_class"}.

    Example: tooldiag classify messages.jsonl --scheme paper > classes.jsonl
    """
    from tooldiag.classify import classify_batch
    from tooldiag.classify.classes import parse_action_class

    def classifier(name: str):
        return resolve_classifier_options(name, cues, judge, judge_base_url, judge_api_key_env, judge_concurrency)

    rows = read_jsonl_objects(file)
    schemes = scheme or (["paper", "default"] if evaluate else ["default"])
    items = [message_parts(obj) for _, obj in rows]
    if not evaluate:
        if len(schemes) != 1:
            raise UserError("give one --scheme (several only with --evaluate)")
        labels = classify_batch(classifier(schemes[0]), items)
        out = sys.stdout
        for (number, obj), label in zip(rows, labels):
            record: dict[str, Any] = {"line": number}
            if "id" in obj:
                record["id"] = obj["id"]
            record["action_class"] = label.value
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
        return

    from tooldiag.classify.evaluate import confusion_markdown, evaluation_markdown
    from tooldiag.classify.evaluate import evaluate as score

    gold = []
    for number, obj in rows:
        if "label" not in obj:
            raise UserError(
                f"{file} line {number}: no 'label' field", hint="--evaluate needs the gold class in 'label'"
            )
        gold.append(parse_action_class(obj["label"], where=f"{file} line {number}"))
    evaluations = [score(s, gold, classify_batch(classifier(s), items)) for s in schemes]
    typer.echo(evaluation_markdown(evaluations))
    for evaluation in evaluations:
        typer.echo(confusion_markdown(evaluation))


def register(app: typer.Typer) -> None:
    app.command("classify", rich_help_panel="Action-class diagnostic")(classify_command)
