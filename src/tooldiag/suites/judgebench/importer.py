"""Importing released AgentJudgeBench judge outputs into a run directory (``judgebench import``).

The paper's results (HF ``ServiceNow-AI/AgentJudgeBench``) are one file per judge,
``data/judge_<alias>.jsonl``; each row is one generator output with both verdicts of that judge,
as SyGra's judge graph wrote it (``task_executor.py``, notes §5):

* ``id``, ``dag_type``, ``user_message`` (the query at the row's difficulty);
* ``generated_tool_calls``: the plan, OpenAI style ``[{"function": {"name", "arguments"}}]``
  (a list, or a JSON string of one);
* ``judge_response`` (with GT) and ``judge_response_no_gt`` (without GT): the judge's parsed
  reply ``{tool_selection_accuracy: {accuracy, justification}, ..., overall_assessment}``, or
  ``null`` when it could not be parsed (a JSON string of either is read too);
* ``programmatic_judge_response`` ``{<metric>_accuracy: {accuracy}}``, ``per_metric_comparison[_no_gt]``
  and ``overall_llm_alignment_percentage[_no_gt]``: derived numbers, never imported (tooldiag
  recomputes them from the plan and the record), but the programmatic scores are *compared* with
  tooldiag's and the mismatches counted;
* the generator and the difficulty, under the first present of :data:`GENERATOR_KEYS` and
  :data:`DIFFICULTY_KEYS` (the dataset card names them; the SyGra runner kept them only in its
  folder names, so both spellings are accepted, and ``--generator``/``--difficulty`` fill in
  for a file that lacks them).

Two file layouts are recognised: the released ``judge_<alias>.jsonl`` (the judge is the alias)
and the runner's own ``<generator>/judged_by_<judge>/..._<difficulty>_....json[l]`` (judge,
generator and difficulty from the path). ``--judge`` overrides the judge of either.

The plan is stored as a prediction ``(generator, record, difficulty)`` and each verdict as a
judgement ``(judge, generator, record, difficulty, condition)``, so ``analyze`` reads them like
its own runs. Every row must name a record of ``--records`` (the rewritten records' ids are
``<dag_type>_<id>``; either spelling matches). A file is checked whole before anything of it is
written, then written in one transaction: re-importing stores nothing twice, and a second import
whose content differs for a stored key is refused with the file, line and key.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tooldiag.errors import StoreError, UserError
from tooldiag.metrics.structural import METRICS, RELEASED_KEYS, score_plans
from tooldiag.suites.judgebench.conditions import parse_conditions
from tooldiag.suites.judgebench.parsing import parse_judge_reply, verdict_from_object
from tooldiag.suites.judgebench.records import DIFFICULTIES, JudgeBenchRecord
from tooldiag.suites.judgebench.store import JudgeBenchStore

#: Row keys that may hold the generator / the difficulty, first present wins.
GENERATOR_KEYS: tuple[str, ...] = ("generator", "generator_model", "generator_name")
DIFFICULTY_KEYS: tuple[str, ...] = ("difficulty", "difficulty_level")
#: The verdict columns and the condition each is stored under by default.
VERDICT_COLUMNS: dict[str, str] = {"judge_response": "with_gt", "judge_response_no_gt": "without_gt"}
#: Settings pinned for imported models: a later live run under the same name is refused.
IMPORTED = {"source": "imported released judge outputs"}
#: Released scores are rounded to 4 d.p., as are tooldiag's; anything beyond float noise differs.
TOLERANCE = 1e-6
_RELEASED_FILE = re.compile(r"^judge_(?P<alias>.+)\.jsonl?$")
_EXPECTED = (
    "an AgentJudgeBench judge-output row: a JSON object with id, generated_tool_calls and "
    "judge_response and/or judge_response_no_gt"
)
_HINT = (
    "import the released data/judge_<alias>.jsonl files of ServiceNow-AI/AgentJudgeBench "
    "(docs/judgebench.md, 'Importing released judge outputs')"
)


@dataclass(frozen=True)
class FileLayout:
    """What a file's name and place say: its layout and the judge, generator and difficulty they fix."""

    layout: str
    judge: str | None
    generator: str | None = None
    difficulty: str | None = None


@dataclass
class FileSummary:
    path: Path
    layout: str
    judge: str
    rows: int = 0
    predictions_stored: int = 0
    predictions_skipped: int = 0
    verdicts_stored: int = 0
    verdicts_skipped: int = 0
    #: prediction status -> count over the rows of this file.
    plan_statuses: Counter = field(default_factory=Counter)
    #: (condition, status) -> count of the verdicts this file holds.
    verdict_statuses: Counter = field(default_factory=Counter)
    #: Rows whose released programmatic scores were compared, and those that differ.
    checked: int = 0
    mismatches: int = 0
    #: metric -> rows where that metric differs.
    mismatch_metrics: Counter = field(default_factory=Counter)
    #: The first few differences, ``file:line record: released (...) vs recomputed (...)``.
    examples: list[str] = field(default_factory=list)


@dataclass
class ImportSummary:
    run_dir: Path
    files: list[FileSummary] = field(default_factory=list)

    def total(self, name: str) -> int:
        return sum(getattr(f, name) for f in self.files)


@dataclass
class _Row:
    where: str
    record: JudgeBenchRecord
    generator: str
    difficulty: str
    status: str
    calls: list[dict[str, Any]] | None
    error: str | None
    #: condition -> (status, values, verdict as released)
    verdicts: dict[str, tuple[str, dict[str, float | None] | None, dict[str, Any] | None]]
    released_scores: tuple[float, ...] | None


def detect_layout(path: Path, judge: str | None = None) -> FileLayout:
    """The layout of ``path`` from its name and folders; ``judge`` (``--judge``) overrides the judge."""
    if path.parent.name.startswith("judged_by_") and len(path.parent.name) > len("judged_by_"):
        tokens = {t for t in re.split(r"[_.\-]", path.stem) if t in DIFFICULTIES}
        return FileLayout(
            "runner",
            judge or path.parent.name[len("judged_by_") :],
            path.parent.parent.name or None,
            tokens.pop() if len(tokens) == 1 else None,
        )
    match = _RELEASED_FILE.match(path.name)
    if match:
        return FileLayout("released", judge or match["alias"])
    return FileLayout("named by --judge" if judge else "unknown", judge)


def read_rows(path: Path) -> Iterator[tuple[str, Any]]:
    """``(where, value)`` per row: JSON lines (``file:line``), or a JSON list (``file item N``)."""
    if not path.is_file():
        raise UserError(f"{path} does not exist or is not a file", hint=_HINT)
    with path.open(encoding="utf-8") as handle:
        first = ""
        for first in handle:
            if first.strip():
                break
        handle.seek(0)
        if first.lstrip().startswith("["):
            try:
                items = json.load(handle)
            except json.JSONDecodeError as exc:
                raise UserError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})", hint=_HINT) from None
            for number, item in enumerate(items, start=1):
                yield f"{path} item {number}", item
            return
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield f"{path}:{number}", json.loads(line)
            except json.JSONDecodeError as exc:
                raise UserError(
                    f"{path}:{number}: not valid JSON ({exc.msg}); expected {_EXPECTED}", hint=_HINT
                ) from None


def _decoded(value: Any) -> Any:
    """A JSON-string column as its value (the hub stores object columns as strings)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def plan_from_row(value: Any) -> tuple[str, list[dict[str, Any]] | None, str | None]:
    """(status, calls, reason) of ``generated_tool_calls``, with the statuses of ``predict``:
    ``ok``, ``empty`` (no call: excluded from the cells, as paper App. D excludes it) or
    ``unparseable`` (not a list of named calls with object arguments)."""
    value = _decoded(value)
    if value is None or value == []:
        return "empty", [] if value == [] else None, "empty plan"
    if not isinstance(value, list):
        return "unparseable", None, f"generated_tool_calls is a {type(value).__name__}, not a list of calls"
    calls: list[dict[str, Any]] = []
    for i, item in enumerate(value):
        body = item.get("function") if isinstance(item, dict) and isinstance(item.get("function"), dict) else item
        if not isinstance(body, dict) or not isinstance(body.get("name"), str) or not body["name"]:
            return "unparseable", None, f"call {i} has no tool name"
        name = body["name"]
        args = _decoded(body.get("arguments"))
        if args is None or args == "":
            args = {}
        if not isinstance(args, dict):
            return "unparseable", None, f"call {i} ({name}): arguments are not an object"
        calls.append({"name": name, "arguments": args})
    return "ok", calls, None


def verdict_from_row(value: Any) -> tuple[str, dict[str, float | None] | None, dict[str, Any] | None]:
    """(status, values, verdict) of one verdict column: ``ok`` when it scores at least one metric,
    else ``null`` (the released ``null`` for a reply that did not parse, or an object naming no metric)."""
    verdict = parse_judge_reply(value) if isinstance(value, str) else verdict_from_object(value)
    if verdict is None or all(v is None for v in verdict.values.values()):
        return "null", None, None
    return "ok", dict(verdict.values), verdict.as_released()


def released_scores(row: Mapping[str, Any]) -> tuple[float, ...] | None:
    """The row's own programmatic scores: ``programmatic_judge_response``, else the
    ``programmatic_accuracy`` of ``per_metric_comparison``; ``None`` when neither has all four."""
    programmatic = _decoded(row.get("programmatic_judge_response"))
    comparison = _decoded(row.get("per_metric_comparison")) or _decoded(row.get("per_metric_comparison_no_gt"))
    for source, inner in ((programmatic, "accuracy"), (comparison, "programmatic_accuracy")):
        if not isinstance(source, dict):
            continue
        entries = [source.get(RELEASED_KEYS[m]) for m in METRICS]
        values = [e.get(inner) if isinstance(e, dict) else None for e in entries]
        numbers = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(numbers) == len(METRICS):
            return tuple(numbers)
    return None


def _record_index(records: Sequence[JudgeBenchRecord]) -> dict[str, JudgeBenchRecord]:
    return {r.id: r for r in records}


def _find_record(index: dict[str, JudgeBenchRecord], row_id: str, dag_type: Any) -> JudgeBenchRecord | None:
    """The record of a row: its id, or the rewritten spelling ``<dag_type>_<id>``, or the id without it."""
    if row_id in index:
        return index[row_id]
    dag = str(dag_type).strip().replace("-", "_") if isinstance(dag_type, str) else ""
    if dag and f"{dag}_{row_id}" in index:
        return index[f"{dag}_{row_id}"]
    if dag and row_id.startswith(f"{dag}_"):
        return index.get(row_id[len(dag) + 1 :])
    return None


def _first(row: Mapping[str, Any], keys: Sequence[str]) -> Any:
    return next((row[k] for k in keys if row.get(k) not in (None, "")), None)


def parse_file(
    path: Path,
    layout: FileLayout,
    index: dict[str, JudgeBenchRecord],
    *,
    generator: str | None,
    difficulty: str | None,
    conditions: Mapping[str, str],
) -> list[_Row]:
    """Every row of one file, checked; the first row that does not fit stops with ``file:line``."""
    rows: list[_Row] = []
    for where, row in read_rows(path):
        if not isinstance(row, dict) or "id" not in row or "generated_tool_calls" not in row:
            got = ", ".join(sorted(map(str, row))[:8]) if isinstance(row, dict) else type(row).__name__
            raise UserError(f"{where}: not {_EXPECTED} (got {got or 'an empty object'})", hint=_HINT)
        present = [column for column in conditions if column in row]
        if not present:
            raise UserError(
                f"{where}: the row has no judge_response or judge_response_no_gt; expected {_EXPECTED}", hint=_HINT
            )
        gen = _first(row, GENERATOR_KEYS) or layout.generator or generator
        if gen is None:
            raise UserError(
                f"{where}: the row names no generator ({', '.join(GENERATOR_KEYS)}) and no --generator was given",
                hint="pass --generator NAME for a file of one generator's outputs",
            )
        diff = _first(row, DIFFICULTY_KEYS) or layout.difficulty or difficulty
        if diff is None:
            raise UserError(
                f"{where}: the row names no difficulty ({', '.join(DIFFICULTY_KEYS)}) and no --difficulty was given",
                hint="pass --difficulty easy|medium|hard for a file of one difficulty",
            )
        if diff not in DIFFICULTIES:
            raise UserError(f"{where}: difficulty {diff!r} is not one of {', '.join(DIFFICULTIES)}", hint=_HINT)
        record = _find_record(index, str(row["id"]), row.get("dag_type"))
        if record is None:
            raise UserError(
                f"{where}: record id {str(row['id'])!r} is not among the records",
                hint="pass --records with the benchmark records these judgements were made on "
                "(e.g. the rewritten bfcl_agentic_rewritten.jsonl)",
            )
        status, calls, error = plan_from_row(row["generated_tool_calls"])
        rows.append(
            _Row(
                where,
                record,
                str(gen),
                str(diff),
                status,
                calls,
                error,
                {conditions[column]: verdict_from_row(row[column]) for column in present},
                released_scores(row),
            )
        )
    return rows


def _same_values(a: Sequence[float | None], b: Sequence[float | None]) -> bool:
    return all(
        (x is None and y is None) or (x is not None and y is not None and abs(x - y) <= TOLERANCE) for x, y in zip(a, b)
    )


def _values(values: Mapping[str, float | None] | None) -> tuple[float | None, ...]:
    return tuple((values or {}).get(m) for m in METRICS)


def _conflict(where: str, what: str, old: str, new: str, run_dir: Path) -> StoreError:
    return StoreError(
        f"{where}: {what} is already stored in {run_dir} with different content ({old}; this file: {new})",
        hint="a second import of different content is refused: use a fresh --run-dir, or another --judge name",
    )


def _stored_plan(stored: Mapping[str, Any] | None) -> tuple[str | None, Any]:
    return (stored["status"], stored["calls"]) if stored is not None else (None, None)


def _cross_check(summary: FileSummary, rows: Sequence[_Row]) -> None:
    """Compare the released programmatic scores with tooldiag's, on the plans that parsed."""
    checked = [r for r in rows if r.status == "ok" and r.released_scores is not None]
    if not checked:
        return
    ours = score_plans([r.record.expected_calls() for r in checked], [r.calls for r in checked])
    theirs = np.array([r.released_scores for r in checked], dtype=float)
    differs = np.abs(ours - theirs) > TOLERANCE
    summary.checked += len(checked)
    for i in np.flatnonzero(differs.any(axis=1)):
        summary.mismatches += 1
        summary.mismatch_metrics.update(m for m, bad in zip(METRICS, differs[i], strict=True) if bad)
        if len(summary.examples) < 3:
            row = checked[i]
            summary.examples.append(
                f"{row.where} {row.record.id}: released {tuple(theirs[i].round(4).tolist())} "
                f"vs recomputed {tuple(ours[i].round(4).tolist())}"
            )


def import_file(
    store: JudgeBenchStore,
    path: Path,
    records: Sequence[JudgeBenchRecord],
    *,
    judge: str | None = None,
    generator: str | None = None,
    difficulty: str | None = None,
    conditions: Mapping[str, str] = VERDICT_COLUMNS,
) -> FileSummary:
    """Import one file (see the module docstring); nothing is written unless the whole file fits."""
    layout = detect_layout(path, judge)
    if layout.judge is None:
        raise UserError(
            f"{path}: cannot tell the judge: the file is not named judge_<alias>.jsonl nor kept in a "
            "judged_by_<judge> folder",
            hint="pass --judge NAME, or keep the released file name",
        )
    rows = parse_file(
        path, layout, _record_index(records), generator=generator, difficulty=difficulty, conditions=conditions
    )
    summary = FileSummary(path, layout.layout, layout.judge, rows=len(rows))
    new_plans: dict[tuple[str, str, str], _Row] = {}
    new_verdicts: dict[tuple[str, str, str, str], tuple[_Row, str]] = {}
    stored_plans = {(p["generator"], p["record_id"], p["difficulty"]): p for p in store.predictions(status=None)}
    stored_verdicts = store.stored_verdicts(layout.judge)
    for row in rows:
        key = (row.generator, row.record.id, row.difficulty)
        summary.plan_statuses[row.status] += 1
        seen = new_plans.get(key)
        old = stored_plans.get(key)
        if seen is not None or old is not None:
            old_status, old_calls = (seen.status, seen.calls) if seen is not None else _stored_plan(old)
            if (old_status, old_calls) != (row.status, row.calls):
                where = f"the plan of {'|'.join(key)}"
                raise _conflict(
                    row.where, where, f"{old_status} {old_calls}", f"{row.status} {row.calls}", store.run_dir
                )
            summary.predictions_skipped += seen is None
        else:
            new_plans[key] = row
        for condition, (status, values, _) in row.verdicts.items():
            vkey = (*key, condition)
            summary.verdict_statuses[(condition, status)] += 1
            known = new_verdicts.get(vkey)
            stored = stored_verdicts.get(vkey)
            before = (known[1], _values(known[0].verdicts[condition][1])) if known is not None else stored
            if before is not None and before[0] != "error":
                if before[0] != status or not _same_values(before[1], _values(values)):
                    what = f"judge {layout.judge}'s {condition} verdict on {'|'.join(key)}"
                    raise _conflict(
                        row.where, what, f"{before[0]} {before[1]}", f"{status} {_values(values)}", store.run_dir
                    )
                summary.verdicts_skipped += known is None
                continue
            new_verdicts[vkey] = (row, status)
    _cross_check(summary, rows)
    _write(store, path, layout.judge, new_plans, new_verdicts, sorted(set(conditions.values())))
    summary.predictions_stored = len(new_plans)
    summary.verdicts_stored = len(new_verdicts)
    return summary


def _write(
    store: JudgeBenchStore,
    path: Path,
    judge: str,
    plans: Mapping[tuple[str, str, str], _Row],
    verdicts: Mapping[tuple[str, str, str, str], tuple[_Row, str]],
    conditions: Sequence[str],
) -> None:
    """Store the records the rows name, pin the imported models, then every new row in one commit."""
    used = {row.record.id: row.record for row in plans.values()}
    used.update({row.record.id: row.record for row, _ in verdicts.values()})
    store.add_records(used[rid] for rid in sorted(used))
    for generator in sorted({key[0] for key in plans}):
        store.pin_settings("generator", generator, "", IMPORTED)
    for condition in conditions:
        if any(key[3] == condition for key in verdicts):
            store.pin_settings("judge", judge, condition, IMPORTED)
    with store.transaction():
        for (generator, record_id, difficulty), row in plans.items():
            store.put_prediction(
                generator=generator,
                record_id=record_id,
                difficulty=difficulty,
                status=row.status,
                calls=row.calls,
                raw={"imported_from": path.name, "where": row.where},
                error=row.error,
            )
        for (generator, record_id, difficulty, condition), (row, status) in verdicts.items():
            _, values, verdict = row.verdicts[condition]
            store.put_judgement(
                judge=judge,
                generator=generator,
                record_id=record_id,
                difficulty=difficulty,
                condition=condition,
                status=status,
                values=values,
                verdict=verdict,
                raw=verdict,
                attempts=1,
                error=None if status == "ok" else "null in the released file",
                prompt="released",
            )


def verdict_conditions(with_gt: str = "with_gt", without_gt: str = "without_gt") -> dict[str, str]:
    """The verdict column -> condition map; an ablation file's columns go to its own condition
    (e.g. a C2 file: ``judge_response_no_gt`` -> ``without_gt_half_default``)."""
    chosen = parse_conditions([with_gt, without_gt])
    if len(chosen) != 2:
        raise UserError(
            f"the with-GT and without-GT columns must go to two conditions, got {with_gt} twice",
            hint="e.g. --gt-condition corrupted_gt --no-gt-condition without_gt",
        )
    return {"judge_response": with_gt, "judge_response_no_gt": without_gt}


def import_released(
    store: JudgeBenchStore,
    files: Sequence[str | Path],
    records: Sequence[JudgeBenchRecord],
    *,
    judge: str | None = None,
    generator: str | None = None,
    difficulty: str | None = None,
    conditions: Mapping[str, str] = VERDICT_COLUMNS,
) -> ImportSummary:
    """Import each file in turn (each one whole or not at all) into ``store``."""
    if not files:
        raise UserError(
            "name at least one file to import", hint="e.g. tooldiag judgebench import data/judge_qwq_32b.jsonl"
        )
    if difficulty is not None and difficulty not in DIFFICULTIES:
        raise UserError(
            f"--difficulty must be one of {', '.join(DIFFICULTIES)}, got {difficulty!r}", hint="e.g. --difficulty hard"
        )
    summary = ImportSummary(store.run_dir)
    for name in files:
        summary.files.append(
            import_file(
                store,
                Path(name),
                records,
                judge=judge,
                generator=generator,
                difficulty=difficulty,
                conditions=conditions,
            )
        )
    return summary
