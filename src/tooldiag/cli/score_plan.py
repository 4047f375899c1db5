"""``tooldiag score-plan``: the AgentJudgeBench programmatic scorer on JSON lines.

Each input line is ``{"expected": [...], "predicted": [...]}`` with calls written as
``{"name", "arguments"}`` or OpenAI ``{"function": {"name", "arguments"}}`` (arguments a dict
or a JSON string); ``--schema-aware`` also needs ``"tools": [...]`` (function schemas) per line.
Each output line holds ``tool_selection``, ``parameter_structure``, ``sequence`` and
``coverage``, rounded to 4 decimals as released (plus the input's ``id`` when it has one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

CHUNK = 10_000


def score_plan_command(
    source: Annotated[str, typer.Argument(help="JSONL file of {expected, predicted} objects, or - for stdin.")],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.", dir_okay=False)
    ] = None,
    schema_aware: Annotated[
        bool,
        typer.Option(
            "--schema-aware",
            help='Do not penalise extra argument keys that the tool\'s schema declares (needs "tools" per line).',
        ),
    ] = False,
    fmt: Annotated[
        str,
        typer.Option(
            "--format", "-f", help="jsonl (one object per line, streamed) or parquet (one table; needs --output)."
        ),
    ] = "jsonl",
) -> None:
    """Score predicted tool-call plans against expected plans (paper 000, Eqs. 1a, 1b, 2, 3)."""
    from tooldiag.cli.io import SCORE_PLAN_INPUT, iter_jsonl, jsonl_name, open_out
    from tooldiag.errors import UserError

    if fmt not in ("jsonl", "parquet"):
        raise UserError(f"unknown format {fmt!r}", hint="use --format jsonl or --format parquet")
    if fmt == "parquet":
        from tooldiag.report.table_files import check_parquet_out

        check_parquet_out(output, flag="--output")
    name = jsonl_name(source, SCORE_PLAN_INPUT)
    lines = iter_jsonl(source, SCORE_PLAN_INPUT)  # a missing input fails before the output is created
    if fmt == "parquet":
        _score_to_parquet(lines, schema_aware, name, output)
        return
    with open_out(output) as sink:
        batch: list[tuple[int, dict]] = []
        for number, item in lines:
            batch.append((number, _check_line(number, item, schema_aware, name)))
            if len(batch) >= CHUNK:
                _flush(batch, schema_aware, name, sink)
                batch = []
        _flush(batch, schema_aware, name, sink)


def _check_line(number: int, item: object, schema_aware: bool, name: str) -> dict:
    from tooldiag.errors import UserError

    if not isinstance(item, dict) or "expected" not in item or "predicted" not in item:
        raise UserError(
            f'{name}:{number} lacks "expected" or "predicted"',
            hint='write {"expected": [{"name": ..., "arguments": {...}}], "predicted": [...]}',
        )
    if schema_aware and not isinstance(item.get("tools"), list):
        raise UserError(f'{name}:{number} has no "tools" list', hint="--schema-aware needs the tool schemas per line")
    return item


def _score_to_parquet(lines, schema_aware: bool, name: str, output: Path | None) -> None:
    """Every line's scores in one table (``id`` first when any line has one); the whole input is held."""
    from tooldiag.metrics.structural import METRICS
    from tooldiag.report.frames import records_frame, write_parquet

    items = [(number, _check_line(number, item, schema_aware, name)) for number, item in lines]
    rows: list[dict] = []
    for start in range(0, len(items), CHUNK):
        rows.extend(_scores(items[start : start + CHUNK], schema_aware, name))
    columns = (["id"] if any("id" in item for _, item in items) else []) + list(METRICS)
    write_parquet(records_frame(rows, columns), output)
    typer.echo(f"wrote {output}", err=True)


def _flush(batch: list[tuple[int, dict]], schema_aware: bool, name: str, sink) -> None:
    import json

    for out in _scores(batch, schema_aware, name):
        sink.write(json.dumps(out) + "\n")


def _scores(batch: list[tuple[int, dict]], schema_aware: bool, name: str) -> list[dict]:
    """The output objects of ``batch`` (``id`` when the line has one, then the four scores)."""
    from tooldiag.errors import UserError
    from tooldiag.metrics.structural import METRICS, score_plans

    if not batch:
        return []
    try:
        scores = score_plans(
            [item["expected"] for _, item in batch],
            [item["predicted"] for _, item in batch],
            schema_aware=schema_aware,
            tools=[item.get("tools") for _, item in batch] if schema_aware else None,
        )
    except UserError as exc:
        # re-score line by line to name the offending line
        from tooldiag.metrics.structural import as_plan

        for number, item in batch:
            try:
                as_plan(item["expected"])
                as_plan(item["predicted"])
            except UserError as line_exc:
                raise UserError(f"{name}:{number}: {line_exc.message}", hint=line_exc.hint) from None
        raise exc
    rows = []
    for (_, item), row in zip(batch, scores, strict=True):
        out = {"id": item["id"]} if "id" in item else {}
        out.update({m: float(v) for m, v in zip(METRICS, row, strict=True)})
        rows.append(out)
    return rows


def register(app: typer.Typer) -> None:
    app.command("score-plan", rich_help_panel="Judge reliability")(score_plan_command)
