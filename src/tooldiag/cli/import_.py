"""``tooldiag import bfcl``: a folder of BFCL result files into a graded, resumable run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

import_app = typer.Typer(help="Import results written by other harnesses into a run directory.", no_args_is_help=True)

_LAYOUT_HELP = (
    "Step layout of the result files: auto (detect per file), api_fc (API FC handlers: "
    '[{name: arguments-json}]), json_list (xLAM: \'[{"name":..., "arguments":...}]\'), '
    "tool_call_tags (Qwen FC: <tool_call> blocks), fenced_python (Hammer: fenced lists), "
    "prompt (prompt mode: \\[f(a=1)])."
)


@import_app.command("bfcl")
def import_bfcl_command(
    result_dir: Annotated[
        Path, typer.Argument(help="One model's folder from `bfcl generate` (holding multi_turn/ or the result files).")
    ],
    model_name: Annotated[str, typer.Option("--model-name", help="Name to store the run under, e.g. xlam-2-8b.")],
    run_dir: Annotated[
        Path, typer.Option("--run-dir", "-o", help="Run directory (created; re-running the same command resumes it).")
    ],
    layout: Annotated[str, typer.Option("--layout", help=_LAYOUT_HELP)] = "auto",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Import BFCL multi-turn result files and grade every case with BFCL's own checker
    (and the decoder of the handler that wrote them): per-case pass/fail equals
    `bfcl evaluate` on the same files. Every text reply is kept for the diagnostic.

    Example: tooldiag import bfcl result/Salesforce_Llama-xLAM-2-8b-fc-r --model-name xlam-2-8b --run-dir runs/xlam
    """
    from rich.console import Console

    from tooldiag.api import import_bfcl
    from tooldiag.cli.progress import run_progress
    from tooldiag.cli.run import print_summary
    from tooldiag.suites.bfcl.importer import plan_import

    plan = plan_import(result_dir, layout)
    console = Console(stderr=True)
    for result_file in plan.files:
        votes = ", ".join(f"{name} {count}" for name, count in result_file.votes.items()) or "text replies only"
        console.print(
            f"{result_file.path.name}: {len(result_file.entries)} cases, layout {result_file.layout} ({votes})"
        )
    with run_progress(f"import {model_name}", enabled=not quiet) as progress:
        summary = import_bfcl(result_dir, model_name, run_dir, layout=layout, plan=plan, progress=progress)
    print_summary(summary)


#: ``tooldiag import SOURCE``: trace sources, their files and an example each (readers: tooldiag.suites.traces).
_TRACE_COMMANDS = {
    "inspect": ("Inspect AI logs (.eval, compressed or not, or .json)", "logs/2026-11-30T10-00-00_bfcl.eval"),
    "otel": ("OpenTelemetry traces as OTLP JSON or Jaeger JSON (GenAI or OpenInference spans)", "traces.json"),
    "langsmith": ("LangSmith run exports (JSONL of runs)", "runs.jsonl"),
}


def _trace_command(source: str, what: str, example: str) -> None:
    def command(
        files: Annotated[list[Path], typer.Argument(help="Trace files of this source (see above).", metavar="FILE")],
        out: Annotated[
            Path, typer.Option("--out", "-o", help="Agent log to write (JSONL): diagnose, cases and show read it.")
        ],
        gold_map: Annotated[
            Path | None,
            typer.Option("--gold-map", help="Gold classes for traces that carry none (docs/traces.md, 'Gold map')."),
        ] = None,
        trace_format: Annotated[
            str | None, typer.Option("--format", help="Force the file layout instead of detecting it per file.")
        ] = None,
    ) -> None:
        from tooldiag.api import import_traces

        count = import_traces(source, files, out, gold_map=gold_map, fmt=trace_format)
        typer.echo(f"wrote {count} conversation(s) to {out}", err=True)

    command.__doc__ = (
        f"Convert {what} into an agent log: conversations in order, tool calls with their raw\n"
        "arguments and parse errors, failed tool calls marked; gold classes from the benchmark or --gold-map.\n\n"
        f"Example: tooldiag import {source} {example} --out conversations.jsonl && "
        "tooldiag diagnose conversations.jsonl"
    )
    import_app.command(source)(command)


for _source, (_what, _example) in _TRACE_COMMANDS.items():
    _trace_command(_source, _what, _example)


def register(app: typer.Typer) -> None:
    app.add_typer(import_app, name="import", rich_help_panel="Run benchmarks")
