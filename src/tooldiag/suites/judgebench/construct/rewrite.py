"""Difficulty rewrites: easy -> medium (conversational) and medium -> hard (vague), the trace untouched.

Why only four fields change: a rewrite must test a judge on a harder *query* for the very same
plan, so the calls, their argument names and the reference trace are the record's and stay
byte-identical; the step writes ``query_medium``, ``query_hard``, ``rewrite_medium_status`` and
``rewrite_hard_status`` and copies every other field of the input row as it was. As in the
released data, a rewrite that failed (the model call failed, the answer was empty or
unreadable) or that came back identical to its source keeps the source query with status
``FAILED``; ``OK`` otherwise. The hard query is rewritten from the medium one as stored (the
easy query when the medium rewrite failed).

Each transition is one request (prompt files ``rewrite_medium.txt`` / ``rewrite_hard.txt``)
through the model backends and :func:`tooldiag.runner.run_pool`; its result is committed to
``rewrite.sqlite`` (:mod:`.rewrite_store`) as it finishes, so a killed run resumes without
redoing or duplicating a rewrite. The output file is written once every record is done.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooldiag.errors import ModelCallError, UserError
from tooldiag.judges.extract import strip_reasoning
from tooldiag.judges.reply import draw_until_parsed
from tooldiag.models.base import ModelBackend, TaskContext
from tooldiag.runner import NullProgress, ProgressSink
from tooldiag.suites.judgebench.construct.rewrite_store import ConstructStore
from tooldiag.suites.judgebench.construct.rewrite_text import normalized, numbers
from tooldiag.suites.judgebench.generate import fatal, run_units
from tooldiag.suites.judgebench.loaders import BUILTIN, records_from_rows
from tooldiag.suites.judgebench.prompts import PromptTemplate, load_template
from tooldiag.suites.judgebench.records import JudgeBenchRecord
from tooldiag.trajectory import GenerationConfig

#: Target difficulty -> (source difficulty, prompt file).
TRANSITIONS: dict[str, tuple[str, str]] = {"medium": ("easy", "rewrite_medium"), "hard": ("medium", "rewrite_hard")}
#: What a records file must hold for the rewrite (and every judgebench command).
REQUIRED_FIELDS = ("id", "dag_type", "user_message", "available_tools", "expected_responses")
REWRITE_FIELDS = ("query_medium", "query_hard", "rewrite_medium_status", "rewrite_hard_status")
STORE_NAME = "rewrite.sqlite"
DEFAULT_RETRIES = 1


@dataclass
class RecordsInput:
    """The rows of a records file as read (written back unchanged but for the rewrite fields) and their records."""

    origin: str
    rows: list[dict[str, Any]]
    records: list[JudgeBenchRecord]


@dataclass
class RewriteSummary:
    model: str
    ran: int = 0
    skipped: int = 0
    #: (target difficulty, store status) -> count over the transitions this call ran.
    statuses: Counter = field(default_factory=Counter)
    #: (target difficulty, OK/FAILED) -> count over the written file.
    written: Counter = field(default_factory=Counter)
    out: Path | None = None
    wall_s: float = 0.0


# --------------------------------------------------------------------------- input


def read_records_input(source: str | Path) -> RecordsInput:
    """Rows and records of ``source`` (``builtin`` or a .jsonl/.json/.parquet records file).

    A file of another kind (a BFCL result file, a tau2 results file, per-difficulty rows) is
    refused with one line that says what it is and what was expected.
    """
    from tooldiag.suites.judgebench import loaders

    spec = str(source)
    if spec == BUILTIN:
        rows, origin = loaders._builtin_rows(), "built-in records"
    else:
        path = Path(spec).expanduser()
        if not path.is_file():
            raise UserError(
                f"records file {spec} does not exist",
                hint="pass a .jsonl/.json/.parquet records file (`tooldiag judgebench generate` writes one) or builtin",
            )
        rows, origin = _read_rows(path), str(path)
    check_records_schema(rows, origin)
    return RecordsInput(origin, rows, records_from_rows(rows, origin))


def _read_rows(path: Path) -> list[dict[str, Any]]:
    from tooldiag.suites.judgebench import loaders

    if path.suffix.lower() == ".parquet":
        return loaders._file_rows(path)
    text = path.read_text("utf-8")
    try:  # one JSON document (a list of records, or some other tool's results object)
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    else:
        return whole if isinstance(whole, list) else [whole]
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise UserError(f"{path}:{number} is not valid JSON: {exc.msg}", hint="one record per line") from None
    return rows


def _looks_like(row: dict[str, Any]) -> str | None:
    """What kind of file a row that is not a record comes from, when it is one tooldiag knows."""
    if "result" in row and "id" in row:
        return "a BFCL result file"
    if "simulations" in row or "tasks" in row:
        return "a tau2 results file"
    if "expected" in row and "predicted" in row:
        return "a score-plan input file"
    return None


def check_records_schema(rows: Sequence[Any], origin: str) -> None:
    """Refuse rows that are not one AgentJudgeBench record each, naming what was expected."""
    expected = "rewrite takes AgentJudgeBench records, one per line, with " + ", ".join(REQUIRED_FIELDS)
    if not rows:
        raise UserError(f"{origin} holds no records", hint=expected)
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise UserError(f"{origin}: row {number} is not a JSON object", hint=expected)
        missing = [k for k in REQUIRED_FIELDS if k not in row]
        if missing:
            kind = _looks_like(row)
            what = f"is {kind}, not" if kind else "is not"
            raise UserError(
                f"{origin} {what} an AgentJudgeBench records file (row {number} lacks {', '.join(missing)})",
                hint=expected,
            )
        if "difficulty" in row:
            raise UserError(
                f"{origin} holds per-difficulty rows (row {number} has a 'difficulty' column)",
                hint="rewrite takes one row per record (the source or the rewritten layout)",
            )


# --------------------------------------------------------------------------- replies


def read_rewrite(text: str | None) -> tuple[str, str | None]:
    """(status, query) of one rewrite reply: ``ok``, ``empty`` or ``unparseable``.

    The prompt asks for ``{"query": ...}``; the first JSON object with a string ``query`` wins. A
    reply with no brace at all is taken as the query itself (models often just write it).
    """
    from tooldiag.judges.extract import iter_json_values

    body = strip_reasoning(text or "")
    if not body.strip():
        return "empty", None
    for value in iter_json_values(body):
        if isinstance(value, dict) and isinstance(value.get("query"), str):
            query = value["query"].strip()
            return ("ok", query) if query else ("empty", None)
    if "{" not in body and "```" not in body:
        return "ok", body.strip().strip('"').strip()
    return "unparseable", None


def parameter_names(record: JudgeBenchRecord) -> list[str]:
    names: dict[str, None] = {}
    for tool in record.available_tools:
        body = tool.get("function", tool)
        properties = (body.get("parameters") or {}).get("properties") or {}
        names.update(dict.fromkeys(str(k) for k in properties))
    return list(names)


# --------------------------------------------------------------------------- runner


def _valid(row: dict[str, Any] | None, source: str) -> bool:
    """A stored transition is reused while its source is unchanged and it did not fail on infrastructure."""
    return row is not None and row["status"] != "error" and row["source"] == source


def _result(row: dict[str, Any] | None, source: str) -> str:
    return row["rewrite"] if row is not None and row["status"] == "ok" else source


def start_step(
    progress: ProgressSink | None, config: GenerationConfig | None, retries: int, default_retries: int
) -> tuple[float, ProgressSink, GenerationConfig]:
    """The start of a construct step (rewrite, meta-judge): its clock, its progress sink (a silent one when
    none is given) and its generation config (temperature 0 when none is given). A negative ``retries`` is
    refused, the hint giving the step's ``default_retries`` as the example."""
    started = time.perf_counter()
    if retries < 0:
        raise UserError(f"--retries must be 0 or more, got {retries}", hint=f"e.g. --retries {default_retries}")
    return started, progress or NullProgress(), config or GenerationConfig(temperature=0.0)


def pin_step_settings(
    store: ConstructStore, key: str, own: dict[str, Any], config: GenerationConfig, retries: int, what: str
) -> None:
    """Pin a construct step's settings under ``key``: its ``own`` ones, then the generation config (less its
    timeout) and ``retries``, so that a resume with other settings is refused (:meth:`ConstructStore.pin`)."""
    generation = config.model_dump(mode="json", exclude={"timeout_s"})
    store.pin(key, {**own, "generation": generation, "retries": retries}, what)


async def rewrite_records(
    store: ConstructStore,
    records: Sequence[JudgeBenchRecord],
    model: str,
    backend: ModelBackend,
    *,
    config: GenerationConfig | None = None,
    retries: int = DEFAULT_RETRIES,
    concurrency: int = 8,
    prompt_dir: str | Path | None = None,
    progress: ProgressSink | None = None,
) -> RewriteSummary:
    """Rewrite every record's easy query to medium and its medium to hard, storing each as it finishes."""
    started, progress, config = start_step(progress, config, retries, DEFAULT_RETRIES)
    templates = {target: load_template(name, prompt_dir) for target, (_, name) in TRANSITIONS.items()}
    own = {"model": model, "prompts": sorted(t.tag for t in templates.values())}
    pin_step_settings(store, "rewrite_settings", own, config, retries, "rewrite run")
    summary = RewriteSummary(model)
    stored = store.rewrites()
    units: list[JudgeBenchRecord] = []
    planned = 0
    for record in records:
        medium_row = stored.get((record.id, "medium"))
        todo = 0 if _valid(medium_row, record.user_message) else 1
        medium = _result(medium_row, record.user_message) if todo == 0 else None
        todo += 0 if medium is not None and _valid(stored.get((record.id, "hard")), medium) else 1
        summary.skipped += 2 - todo
        planned += todo
        if todo:
            units.append(record)
    progress.start(planned + summary.skipped, summary.skipped)

    async def transition(record: JudgeBenchRecord, target: str, source: str) -> str:
        template = templates[target]
        try:
            status, query, raw, attempts, error = await _ask(backend, record, target, source, template, config, retries)
        except ModelCallError as exc:
            raise fatal(model, exc) from None
        if status == "ok" and query is not None and normalized(query) == normalized(source):
            status, error = "identical", "the rewrite equals its source"
        store.put_rewrite(record.id, target, status, source, query if status == "ok" else None, raw, error, attempts)
        summary.statuses[(target, status)] += 1
        summary.ran += 1
        progress.advance(status)
        return query if status == "ok" and query is not None else source

    async def work(record: JudgeBenchRecord) -> None:
        # one worker owns a record, so the rows read before the run are still its rows
        medium_row = stored.get((record.id, "medium"))
        if _valid(medium_row, record.user_message):
            medium = _result(medium_row, record.user_message)
        else:
            medium = await transition(record, "medium", record.user_message)
        hard_row = stored.get((record.id, "hard"))
        if not _valid(hard_row, medium):
            await transition(record, "hard", medium)

    return await run_units(
        units, work, concurrency, progress=progress, backend=backend, summary=summary, started=started
    )


async def _ask(
    backend: ModelBackend,
    record: JudgeBenchRecord,
    target: str,
    source: str,
    template: PromptTemplate,
    config: GenerationConfig,
    retries: int,
) -> tuple[str, str | None, list[str | None] | None, int, str | None]:
    """(status, query, raw replies, attempts, error) of one transition; a fatal model error propagates."""
    names = parameter_names(record)
    values: dict[str, Any] = {
        "query": source,
        "system_prompt": record.system_prompt or "(none)",
        "tool_names": ", ".join(record.tool_names()) or "(none)",
        "parameter_names": ", ".join(names) or "(none)",
    }
    if "values_to_keep" in template.placeholders:
        values["values_to_keep"] = ", ".join(sorted(numbers(source))) or "(none)"
    messages = [template.message(**values)]

    def context(attempt: int) -> TaskContext:
        return TaskContext(
            suite="judgebench",
            case_id=record.id,
            category=f"rewrite_{target}",
            sample=attempt,
            answer_key={"role": "rewrite", "target": target, "query": source, "parameter_names": names},
        )

    try:
        draws = await draw_until_parsed(
            backend,
            messages,
            config,
            lambda text: q if (q := read_rewrite(text))[0] == "ok" else None,
            retries=retries,
            context=context,
        )
    except ModelCallError as exc:
        if exc.fatal:
            raise
        return "error", None, None, 0, exc.message
    if draws.value is not None:
        return "ok", draws.value[1], draws.texts, draws.attempts, None
    status, _ = read_rewrite(draws.texts[-1] if draws.texts else None)
    return status, None, draws.texts, draws.attempts, f"{status} answer after {draws.attempts} attempt(s)"


# --------------------------------------------------------------------------- output


def rewritten_rows(records_input: RecordsInput, store: ConstructStore) -> list[dict[str, Any]]:
    """The input rows with the four rewrite fields from the store (every other field as read)."""
    stored = store.rewrites()
    out = []
    for row, record in zip(records_input.rows, records_input.records, strict=True):
        medium_row = stored.get((record.id, "medium"))
        medium = _result(medium_row, record.user_message)
        hard_row = stored.get((record.id, "hard"))
        if hard_row is not None and hard_row["source"] != medium:
            hard_row = None
        hard = _result(hard_row, medium)
        new = dict(row)
        new["query_medium"] = medium
        new["query_hard"] = hard
        new["rewrite_medium_status"] = "OK" if medium_row is not None and medium_row["status"] == "ok" else "FAILED"
        new["rewrite_hard_status"] = "OK" if hard_row is not None and hard_row["status"] == "ok" else "FAILED"
        out.append(new)
    return out


def write_jsonl(rows: Sequence[dict[str, Any]], out: str | Path, *, sort_keys: bool = False) -> Path:
    """Write ``rows`` as JSON lines through a temporary file, so a reader never sees half a file.

    Keys keep the rows' order unless ``sort_keys`` (a record keeps the field order it was read with)."""
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    with tmp.open("w", encoding="utf-8", newline="\n") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, sort_keys=sort_keys) + "\n")
    os.replace(tmp, target)
    return target


def default_run_dir(out: str | Path) -> Path:
    """Where a rewrite run keeps its store when no ``--run-dir`` is given: ``OUT`` with suffix ``.run``."""
    return Path(out).with_suffix(".run")
