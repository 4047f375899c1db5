"""``tooldiag classify``: action class of each assistant message in a JSONL file."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tooldiag.cli.classifier_options import ClassifierOptions, classifier_options
from tooldiag.errors import UserError

if TYPE_CHECKING:
    from tooldiag.classify import Classifier
    from tooldiag.classify.provenance import ClassifierSummary
    from tooldiag.cli.classify_input import InputItem

Schemes = Annotated[
    list[str] | None,
    typer.Option(
        "--scheme",
        "-s",
        help="paper (the paper's released classifier), default (tooldiag's rules), default+learned (the rules "
        "with a learned text model: more accurate, slower), or llm (a judge model; see --judge). "
        "Repeatable with --evaluate.",
    ),
]
EvalFormat = Annotated[
    str | None,
    typer.Option("--format", "-f", help="Output of --evaluate: md (tables, the default) or json."),
]

#: Output formats of ``--evaluate``.
EVALUATE_FORMATS = ("md", "json")

_EvaluateFormat = Annotated[
    str | None,
    typer.Option(
        "--format",
        "-f",
        help="Output of --evaluate: md (tables, the default), json, or parquet (needs --out: FILE.parquet gets "
        "the per-class scores, a folder also the confusion matrices).",
    ),
]
_EvaluateOut = Annotated[
    Path | None,
    typer.Option("--out", "-o", help="Where --evaluate --format parquet writes (a FILE.parquet or a folder)."),
]


def print_executor_line(classifier: Classifier) -> None:
    """With ``--executor ray``: the units retried and workers lost, on stderr (nothing for a local run)."""
    counts = getattr(classifier, "executor_counts", None)
    line = counts.line() if counts is not None else None
    if line:
        typer.echo(line, err=True)


def print_classifier_warnings(summaries: Sequence[ClassifierSummary | None]) -> None:
    """Each summary's warnings (judge fallbacks, text outside the cue languages) as ``warning:`` lines on stderr."""
    for summary in summaries:
        for warning in summary.warnings() if summary is not None else ():
            typer.echo(f"warning: {warning}", err=True)


@classifier_options(executor=True)
def classify_command(
    file: Annotated[
        str,
        typer.Argument(
            help="JSONL: one assistant message per line, or one conversation per line "
            "(the agent-log format of tooldiag diagnose); - for stdin."
        ),
    ],
    scheme: Schemes = None,
    *,
    options: ClassifierOptions,
    evaluate: Annotated[
        bool,
        typer.Option(
            "--evaluate",
            help=(
                "Lines carry a gold 'label': print accuracy, Cohen's kappa, per-class precision/recall "
                "and the confusion matrix of each --scheme (default: paper and default; llm with --judge)."
            ),
        ),
    ] = False,
    fmt: _EvaluateFormat = None,
    evaluate_out: _EvaluateOut = None,
) -> None:
    """Action class of each assistant message in a JSONL file (or - for stdin).

    Reads one assistant message per line ({"role": "assistant", "content": ..., "tool_calls": ...};
    role may be absent) or one conversation per line ({"id": ..., "messages": [...]}, each
    assistant message classified). Writes one JSON object per emission, in order:
    {"line", "id"?, "message"? (index in the conversation), "action_class"}; a summary
    line (classifier, judge, fallbacks, languages without cue data) goes to stderr.
    Any other line (a user/system/tool message, a non-object, ...) is refused: exit 2.

    Example: tooldiag classify messages.jsonl --scheme paper > classes.jsonl

    Example, the judge's requests on a Ray cluster: tooldiag classify messages.jsonl --scheme llm
    --judge openai/Qwen3-8B --judge-base-url http://gpu1:8000/v1 --executor ray --ray-address auto
    """
    from tooldiag.classify.provenance import summarize
    from tooldiag.cli.classify_input import read_input

    schemes = scheme or (["paper", "default"] if evaluate else ["default"])
    if not evaluate and len(schemes) != 1:
        raise UserError("give one --scheme (several only with --evaluate)")
    if fmt is not None and not evaluate:
        raise UserError("--format applies to --evaluate", hint="classify writes JSON lines; add --evaluate for tables")
    if (fmt or "md") not in (*EVALUATE_FORMATS, "parquet"):
        raise UserError(f"unknown format {fmt!r}", hint="use one of: " + ", ".join((*EVALUATE_FORMATS, "parquet")))
    if fmt == "parquet":
        from tooldiag.report.table_files import check_parquet_out

        check_parquet_out(evaluate_out)
    elif evaluate_out is not None:
        raise UserError(
            "--out applies to --evaluate --format parquet", hint="md and json go to stdout; redirect with >"
        )
    local = replace(options, executor="local", ray_address=None)  # --executor applies to the llm scheme's judge
    classifiers = [(options if name == "llm" else local).resolve(name) for name in schemes]
    if options.executor != "local" and "llm" not in schemes:
        raise UserError("--executor applies to --scheme llm only", hint="add --scheme llm, or drop --executor")
    items = read_input(file, labelled=evaluate)
    pairs = [(item.text, item.has_calls) for item in items]
    if not evaluate:
        labels, summary = summarize(classifiers[0], pairs)
        out = sys.stdout
        for item, label in zip(items, labels):
            out.write(json.dumps(item.output(label.value), ensure_ascii=False) + "\n")
        out.flush()
        typer.echo(f"classifier: {summary.describe()}", err=True)
        print_executor_line(classifiers[0])
        print_classifier_warnings([summary])
        return
    _evaluate(file, items, classifiers, fmt or "md", evaluate_out)


def _evaluate(
    file: str, items: Sequence[InputItem], classifiers: Sequence[Classifier], fmt: str, out: Path | None = None
) -> None:
    """``--evaluate``: every classifier against the gold labels, as tables (md) or one JSON object."""
    from tooldiag.classify.classes import parse_action_class
    from tooldiag.classify.provenance import summarize
    from tooldiag.cli.io import CLASSIFY_INPUT, jsonl_name
    from tooldiag.metrics.classification import evaluate as score
    from tooldiag.report.classification import confusion_markdown, evaluation_markdown

    name = jsonl_name(file, CLASSIFY_INPUT)
    gold = [parse_action_class(item.obj["label"], where=f"{name} line {item.line}") for item in items]
    pairs = [(item.text, item.has_calls) for item in items]
    results = []
    for classifier in classifiers:
        labels, summary = summarize(classifier, pairs)
        results.append((score(classifier.name, gold, labels), summary))
    if fmt == "parquet":
        from tooldiag.report.classification import MAIN_EVALUATION_TABLE, evaluation_frames
        from tooldiag.report.table_files import write_parquet_tables

        frames = evaluation_frames([evaluation for evaluation, _ in results])
        for path in write_parquet_tables(frames, out, main=MAIN_EVALUATION_TABLE):
            typer.echo(f"wrote {path}", err=True)
    elif fmt == "json":
        document = {
            "n": len(gold),
            "schemes": [{**evaluation.to_json(), "classifier": summary.to_json()} for evaluation, summary in results],
        }
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    else:
        typer.echo("\n".join(f"Classifier: {summary.describe()}." for _, summary in results) + "\n")
        typer.echo(evaluation_markdown([evaluation for evaluation, _ in results]))
        for evaluation, _ in results:
            typer.echo(confusion_markdown(evaluation))
    print_classifier_warnings([summary for _, summary in results])


def register(app: typer.Typer) -> None:
    app.command("classify", rich_help_panel="Action-class diagnostic")(classify_command)
