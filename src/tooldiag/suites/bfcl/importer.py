"""Import a folder of BFCL result files (``bfcl generate`` output) into a run store.

Each ``BFCL_v4_multi_turn_<cat>_result.json`` (or an archived ``BFCL_v3_...`` one), found
in the folder or its ``multi_turn/`` subfolder, is read line by line; the layout of its
steps is detected (:mod:`tooldiag.suites.bfcl.layouts`) unless forced; every case
becomes a :class:`~tooldiag.trajectory.CaseTrajectory` with every step kept (text
replies included, for the action-class diagnostic) and is graded by the same path as
our own runs (:func:`tooldiag.suites.bfcl.grader.grade_result` with the layout's
decoder), so per-case pass/fail equals ``bfcl evaluate`` on the same files.

Everything is read and checked before the store is touched: a bad folder raises one
:class:`~tooldiag.errors.UserError` and stores nothing. Re-running the same import
skips finished cases; a different model name on the same run directory is refused by
the store.
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooldiag.errors import JsonInputError, UserError, loads_user_json
from tooldiag.runner.progress import NullProgress, ProgressSink
from tooldiag.suites.bfcl import CATEGORIES
from tooldiag.suites.bfcl.data import GIVE_BACK_MESSAGE, MAXIMUM_STEP_LIMIT, BfclCase, load_cases
from tooldiag.suites.bfcl.decode import is_empty_execute_response
from tooldiag.suites.bfcl.gold import BfclCaseNotes
from tooldiag.suites.bfcl.layouts import LAYOUT_NAMES, LAYOUTS, Layout, detect_layout, step_misfit, step_votes
from tooldiag.trajectory import CaseTrajectory, Emission, Grade, Message, RunConfig, Step, Turn, Usage, storable_raw

if TYPE_CHECKING:
    from tooldiag.suites.bfcl.runner import RunSummary

RESULT_FILE = re.compile(
    r"^BFCL_v(?P<version>[34])_multi_turn_(?P<category>base|long_context|miss_func|miss_param)_result\.json$"
)
_EXCERPT = 160


@dataclass
class ResultEntry:
    """One line of a result file."""

    case_id: str
    line: int
    data: dict[str, Any]


@dataclass
class ResultFile:
    """One category's result file, read and checked."""

    path: Path
    category: str
    entries: list[ResultEntry]
    layout: str
    #: Steps showing each layout's syntax (the detection evidence).
    votes: dict[str, int] = field(default_factory=dict)
    #: The BFCL cases of the entries, by id.
    cases: dict[str, BfclCase] = field(default_factory=dict)


@dataclass
class ImportPlan:
    """A whole folder, read and checked; nothing stored yet."""

    folder: Path
    files: list[ResultFile]

    @property
    def layouts(self) -> dict[str, str]:
        return {f.path.name: f.layout for f in self.files}

    @property
    def categories(self) -> list[str]:
        return [c for c in CATEGORIES if any(f.category == c for f in self.files)]

    @property
    def case_ids(self) -> list[str]:
        return [e.case_id for f in self.files for e in f.entries]


def _excerpt(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)
    text = text.replace("\n", "\\n")
    return text if len(text) <= _EXCERPT else text[: _EXCERPT - 3] + "..."


# -- finding and reading files ---------------------------------------------------------
def find_result_files(folder: str | Path) -> list[tuple[str, Path]]:
    """``(category, path)`` of the multi-turn result files in ``folder`` (or ``folder/multi_turn``)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise UserError(
            f"result folder {folder} does not exist", hint="give the folder that `bfcl generate` wrote for one model"
        )
    found: dict[str, list[Path]] = {}
    for where in (folder, folder / "multi_turn"):
        if not where.is_dir():
            continue
        for path in sorted(where.iterdir()):
            match = RESULT_FILE.match(path.name)
            if match and path.is_file():
                found.setdefault(match["category"], []).append(path)
    if not found:
        nested = sorted(p.parent.parent.name for p in folder.glob("*/multi_turn/BFCL_v*_multi_turn_*_result.json"))
        hint = (
            f"{folder} holds one folder per model; give one of them, e.g. {folder / nested[0]}"
            if nested
            else "give the folder of one model, holding BFCL_v4_multi_turn_<category>_result.json files (or "
            "multi_turn/)"
        )
        raise UserError(f"no BFCL multi-turn result files in {folder}", hint=hint)
    out = []
    for category in CATEGORIES:
        paths = found.get(category, [])
        if len(paths) > 1:
            raise UserError(
                f"{folder} holds {len(paths)} result files for {category}: {', '.join(str(p) for p in paths)}",
                hint="keep one result file per category (move the others away)",
            )
        if paths:
            out.append((category, paths[0]))
    return out


def read_result_file(path: Path, category: str) -> list[ResultEntry]:
    """The JSONL entries of one result file, checked for shape, sorted by id as BFCL does."""
    entries: list[ResultEntry] = []
    prefix = f"multi_turn_{category}_"
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise UserError(f"cannot read {path} ({exc.strerror or exc})", hint="check the file's permissions") from None
    with handle:
        _read_lines(path, handle, prefix, category, entries)
    entries.sort(key=lambda e: int(e.case_id.rsplit("_", 1)[1]))
    return entries


def _read_lines(path: Path, handle, prefix: str, category: str, entries: list[ResultEntry]) -> None:
    seen: dict[str, int] = {}
    for line_no, raw_line in enumerate(handle, start=1):
        try:
            line = raw_line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UserError(
                f"{path} line {line_no} is not UTF-8 text ({exc.reason} at byte {exc.start})",
                hint="result files are UTF-8 JSONL; restore the file from `bfcl generate`",
            ) from None
        if not line.strip():
            continue
        try:
            data = loads_user_json(line, f"{path} line {line_no}", repair=False)  # the store repairs and notes it
        except JsonInputError as exc:
            raise UserError(
                f"{path} line {line_no} is not JSON ({exc.reason})",
                hint="result files hold one JSON object per line; restore the file from `bfcl generate`",
            ) from None
        if not isinstance(data, dict) or "id" not in data or "result" not in data:
            raise UserError(
                f'{path} line {line_no} is not a BFCL result entry (needs "id" and "result"): {_excerpt(data)}',
                hint="give the result files of `bfcl generate`, not score files",
            )
        case_id = data["id"]
        number = case_id[len(prefix) :] if isinstance(case_id, str) and case_id.startswith(prefix) else ""
        if not number.isdigit():
            raise UserError(
                f"{path} line {line_no}: id {case_id!r} is not a {category} case",
                hint=f"ids in this file look like {prefix}0; check the file name matches its content",
            )
        if case_id in seen:
            raise UserError(
                f"{path} line {line_no}: id {case_id} repeats line {seen[case_id]}",
                hint="keep one result per case (bfcl generate --allow-overwrite rewrites the file)",
            )
        seen[case_id] = line_no
        entries.append(ResultEntry(case_id, line_no, data))


def _check_structure(path: Path, entry: ResultEntry) -> None:
    result = entry.data["result"]
    if not isinstance(result, list):
        return  # BFCL's inference_error: graded as such
    tried = ", ".join(LAYOUT_NAMES)
    for t, turn in enumerate(result):
        if not isinstance(turn, list):
            raise UserError(
                f"{path} line {entry.line} ({entry.case_id}): turn {t} fits no BFCL layout (tried {tried}): "
                f"it is a {type(turn).__name__}, not a list of steps: {_excerpt(turn)}",
                hint="multi-turn results are result[turn][step]; is this a single-turn category's file?",
            )
        for s, step in enumerate(turn):
            reason = step_misfit(step)
            if reason:
                raise UserError(
                    f"{path} line {entry.line} ({entry.case_id}): step [{t}][{s}] fits no BFCL layout (tried {tried}): "
                    f"{reason}: {_excerpt(step)}",
                    hint="import the files `bfcl generate` wrote, unchanged",
                )


def _steps(entries: list[ResultEntry]):
    for entry in entries:
        result = entry.data["result"]
        if isinstance(result, list):
            for turn in result:
                yield from turn


def _choose_layout(path: Path, entries: list[ResultEntry], forced: str) -> tuple[str | None, dict[str, int]]:
    detection = detect_layout(_steps(entries))
    if forced == "auto":
        return detection.layout, detection.votes
    layout = LAYOUTS[forced]
    if layout.text_steps:
        for entry in entries:
            result = entry.data["result"]
            for t, turn in enumerate(result if isinstance(result, list) else []):
                for s, step in enumerate(turn):
                    if isinstance(step, (list, dict)):
                        raise UserError(
                            f"{path} line {entry.line} ({entry.case_id}): --layout {forced} reads text steps, "
                            f"but step [{t}][{s}] is a list of calls (api_fc): {_excerpt(step)}",
                            hint="drop --layout to detect the layout, or use --layout api_fc",
                        )
    if detection.layout and detection.layout != forced and not detection.votes.get(forced):
        raise UserError(
            f"{path}: --layout {forced} finds no call in any step, but {detection.votes[detection.layout]} steps "
            f"look like {detection.layout} (e.g. {_excerpt(_first_voting_step(entries, detection.layout))})",
            hint=f"drop --layout to detect the layout, or use --layout {detection.layout}",
        )
    return forced, detection.votes


def _first_voting_step(entries: list[ResultEntry], layout: str) -> Any:
    return next((s for s in _steps(entries) if layout in step_votes(s)), None)


def _load_entry_cases(path: Path, entries: list[ResultEntry]) -> dict[str, BfclCase]:
    try:
        return {case.id: case for case in load_cases(ids=[e.case_id for e in entries])}
    except UserError as exc:
        for entry in entries:
            try:
                load_cases(ids=[entry.case_id])
            except UserError:
                raise UserError(f"{path} line {entry.line}: {exc.message}", hint=exc.hint) from None
        raise


def plan_import(folder: str | Path, layout: str = "auto") -> ImportPlan:
    """Read and check every result file of ``folder``; raises :class:`UserError` on bad input."""
    if layout != "auto" and layout not in LAYOUTS:
        raise UserError(f"unknown layout {layout!r}", hint=f"use auto or one of: {', '.join(LAYOUT_NAMES)}")
    folder = Path(folder).resolve()
    files: list[ResultFile] = []
    for category, path in find_result_files(folder):
        entries = read_result_file(path, category)
        cases = _load_entry_cases(path, entries)
        for entry in entries:
            _check_structure(path, entry)
        chosen, votes = _choose_layout(path, entries, layout)
        files.append(ResultFile(path, category, entries, chosen or "", votes, cases))
    # A file with text replies only shows no layout; every layout grades it alike,
    # so take the one the folder's other files show (else api_fc).
    shown = [f.layout for f in files if f.layout]
    fallback = max(set(shown), key=shown.count) if shown else "api_fc"
    for f in files:
        f.layout = f.layout or fallback
    total = sum(len(f.entries) for f in files)
    if total == 0:
        raise UserError(f"the result files in {folder} hold no entries", hint="run `bfcl generate` first")
    return ImportPlan(folder.resolve(), files)


# -- building trajectories ---------------------------------------------------------------
def _at(table: Any, t: int, s: int) -> Any:
    try:
        return table[t][s]
    except (TypeError, IndexError, KeyError):
        return None


def _finite_or_none(value: Any) -> float | None:
    """A number of a result file as a float; NaN, Infinity, a number past float's range or a boolean is none."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _int_or_none(value: Any) -> int | None:
    """A token count as stored: a finite number within SQLite's integers, else no count."""
    number = _finite_or_none(value)
    return int(number) if number is not None and abs(number) < 2**63 else None


def tool_results_from_log(inference_log: Any) -> dict[tuple[int, int], list[str]]:
    """``(turn, step) -> tool results`` from BFCL's ``inference_log`` (best effort)."""
    out: dict[tuple[int, int], list[str]] = {}
    if not isinstance(inference_log, list):
        return out
    turn = 0
    for item in inference_log:
        if not isinstance(item, dict):
            continue  # state records between turns
        for key, records in item.items():
            if not (
                isinstance(key, str) and key.startswith("step_") and key[5:].isdigit() and isinstance(records, list)
            ):
                continue
            results = [
                r["content"] if isinstance(r.get("content"), str) else json.dumps(r.get("content"))
                for r in records
                if isinstance(r, dict) and r.get("role") == "tool"
            ]
            if results:
                out[(turn, int(key[5:]))] = results
        turn += 1
    return out


def build_step(layout: Layout, step: Any, extra: dict[str, Any]) -> Step:
    """One stored step: the raw emission, the calls the layout reads, and BFCL's decode."""
    if layout.text_steps or not isinstance(step, (list, dict)):
        text = step if isinstance(step, str) else None
        emission = Emission(text=text, tool_calls=layout.tool_calls(step) if text is not None else [], **extra)
    else:
        emission = Emission(tool_calls=layout.tool_calls(step), raw=storable_raw(step), **extra)
    try:
        decoded = layout.decode(step)
    except Exception as exc:  # noqa: BLE001 - BFCL drops a step whose decode raises
        return Step(emission=emission, decoded_calls=None, decode_error=f"{type(exc).__name__}: {exc}"[:500])
    return Step(emission=emission, decoded_calls=[] if is_empty_execute_response(decoded) else list(decoded))


def build_trajectory(case: BfclCase, entry: ResultEntry, layout: Layout, source: str) -> CaseTrajectory:
    """The trajectory of one imported case (no grade)."""
    data = entry.data
    notes = BfclCaseNotes(
        ground_truth_sizes=case.ground_truth_sizes(),
        give_back_turns=sorted(case.missed_function),
        layout=layout.name,
        source_file=source,
    )
    result = data["result"]
    if not isinstance(result, list):
        notes.bfcl_inference_error = result if isinstance(result, str) else json.dumps(result)
        if isinstance(data.get("traceback"), str):
            notes.bfcl_traceback = data["traceback"]
        return CaseTrajectory(case_id=case.id, category=case.category, notes=notes.dump())
    tool_results = tool_results_from_log(data.get("inference_log"))
    turns = []
    for t, raw_turn in enumerate(result):
        if t in case.missed_function:
            user = [Message(role="user", content=GIVE_BACK_MESSAGE)]
            turn_notes = {"give_back_functions": [d["name"] for d in case.missed_function[t]]}
        else:
            user = [
                Message(role="user", content=m.get("content")) for m in (case.turns[t] if t < len(case.turns) else [])
            ]
            turn_notes = {}
        steps = []
        for s, raw_step in enumerate(raw_turn):
            reasoning = _at(data.get("reasoning_content"), t, s)
            latency = _at(data.get("latency"), t, s)
            usage = Usage(
                input_tokens=_int_or_none(_at(data.get("input_token_count"), t, s)),
                output_tokens=_int_or_none(_at(data.get("output_token_count"), t, s)),
            )
            extra = {
                "reasoning": reasoning if isinstance(reasoning, str) and reasoning else None,
                "latency_s": _finite_or_none(latency),
                "usage": usage if usage.input_tokens is not None or usage.output_tokens is not None else None,
            }
            step = build_step(layout, raw_step, extra)
            step.tool_results = tool_results.get((t, s), [])
            steps.append(step)
        turns.append(Turn(index=t, user_messages=user, steps=steps, notes=turn_notes))
    if len(result) < len(case.ground_truth) and turns:
        # BFCL records fewer turns only after force-quitting one at the step cap.
        turns[-1].force_terminated = True
        turns[-1].notes["step_cap"] = MAXIMUM_STEP_LIMIT + 1
    return CaseTrajectory(case_id=case.id, category=case.category, turns=turns, notes=notes.dump())


def import_case(case: BfclCase, entry: ResultEntry, layout: Layout, source: str) -> tuple[CaseTrajectory, Grade]:
    """Build and grade one case exactly as ``bfcl evaluate`` grades the same entry."""
    from tooldiag.suites.bfcl.grader import grade_result

    trajectory = build_trajectory(case, entry, layout, source)
    grade, _ = grade_result(case, entry.data["result"], layout.decode)
    return trajectory, grade


# -- the whole import ------------------------------------------------------------------
def import_config(plan: ImportPlan, model_name: str) -> RunConfig:
    return RunConfig(
        suite="bfcl",
        model=model_name,
        categories=plan.categories,
        case_ids=plan.case_ids,
        source="import",
        import_info={"folder": str(plan.folder), "layouts": plan.layouts},
    )


def import_bfcl_results(
    result_dir: str | Path,
    model_name: str,
    run_dir: str | Path,
    layout: str = "auto",
    plan: ImportPlan | None = None,
    progress: ProgressSink | None = None,
) -> RunSummary:
    """Python API: import ``result_dir`` as model ``model_name`` into ``run_dir``; returns
    a :class:`~tooldiag.suites.bfcl.runner.RunSummary`. ``plan`` (from :func:`plan_import`
    of the same folder and layout) saves reading the files twice; ``progress`` hears of
    every stored case, as for a live run.

    Example: ``import_bfcl_results("result/Salesforce_Llama-xLAM-2-8b-fc-r", "xlam-2-8b", "runs/xlam")``.
    """
    from tooldiag.store import RunStore
    from tooldiag.suites.bfcl.runner import RunSummary, advance_case, usage_now
    from tooldiag.suites.bfcl.writer import bfcl_writer

    progress = progress or NullProgress()
    started = time.perf_counter()
    if not model_name or not model_name.strip():
        raise UserError(
            "--model-name is empty", hint="name the model the results belong to, e.g. --model-name xlam-2-8b"
        )
    plan = plan or plan_import(result_dir, layout)
    store = RunStore.create_or_resume(run_dir, import_config(plan, model_name), writer=bfcl_writer())
    try:
        finished = store.finished_ids()
        total = len(plan.case_ids)
        todo = [(f, e) for f in plan.files for e in f.entries if e.case_id not in finished]
        progress.start(total, total - len(todo), store.status_counts())
        for result_file, entry in todo:
            source = (
                str(result_file.path.relative_to(plan.folder))
                if result_file.path.is_relative_to(plan.folder)
                else str(result_file.path)
            )
            trajectory, grade = import_case(
                result_file.cases[entry.case_id], entry, LAYOUTS[result_file.layout], source
            )
            store.put_case(trajectory, grade)
            advance_case(progress, trajectory, grade)
        progress.finish()
        return RunSummary(
            run_dir=Path(run_dir),
            model=model_name,
            counts=store.status_counts(),
            ran=len(todo),
            skipped=total - len(todo),
            wall_s=time.perf_counter() - started,
            usage=usage_now(store),
        )
    finally:
        store.close()
