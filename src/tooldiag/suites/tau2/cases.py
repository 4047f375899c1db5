"""The evidence behind Tables 2 and 3: one row per simulation (and class), or per database write.

``tooldiag tau2 diagnose`` says *that* a class passes more simulations than it gets the
gold action right (Acc > GAR); these rows say *which*. They are
:class:`~tooldiag.metrics.cases.CaseRow` s, the rows of every suite's ``cases``, built
from the same single pass over the files as the tables (:func:`.analysis.collect`), so
that a row's verdict and the table's count can never disagree.

``unit="simulation"``: one row per simulation and Table 2 class its task belongs to.
Table 2 counts a simulation in every class of its task (an ask-required task is also
tool_call- or refuse-required), so a simulation of such a task gives two rows, one per
class, each with that class's gold signal; per class, the rows are exactly the
simulations of Table 2's cell.

* ``run``: the agent model and its domain, ``model [domain]`` (``model (oracle) [domain]``
  for the oracle agent); ``case_id``: the simulation id (``task/trial`` when the file has none);
* ``category`` = ``gold_class``: the Table 2 class (``tool_call``, ``ask``, ``refuse``);
* ``classes``: per turn (from one user message to the next; agent messages before the
  first user message form a turn of their own when there are any, the fixed greeting is
  left out), every agent message's class in order. A tool-call message is ``tool_call``;
  a text message gives each class it shows evidence of (the multi-label reading Table 2
  uses), or ``other``; with a ``classifier``, that classifier's one class per message;
* ``gold_hit``: Table 2's GAR signal of the class: tool_call = every reference action
  matched; ask = some user-visible agent message classified ask (by ``classifier`` when
  given, which can then differ from Table 2); refuse = no write-tool call;
* ``passed``: tau2's reward success (reward 1), the rule of Table 2's Acc; ``None`` for an
  infrastructure error, which Table 2 leaves out (the row is ``errored``, ``ungraded``);
* ``error_type``: the termination reason when it is not a normal stop (user_stop, agent_stop);
* ``verdict``: masked / execution_failure / ok / fail / ungraded (docs/evidence.md).

Extra columns: ``task_id``, ``trial``, ``domain``, ``reward``, ``termination_reason``,
``split`` (write / read_only / empty / user_only, Table 2b), ``user_model``, ``source``,
``user_tool_calls`` (the user simulator's own calls, comma-separated: user-side, in no class).

``unit="write"``: one row per write-tool call, the unit of Table 3. ``gold_class`` is
``confirm`` and ``gold_hit`` is Table 3's GAR signal: the deterministic judge found a
consent request before the write that the user agreed to (a request the user did not
agree to is no hit, as in Table 3). ``passed`` is the simulation's success (Table 3's
Acc), so ``masked`` is an unconfirmed write inside a passing simulation: the writes
behind a negative Δ. ``category`` is Table 3's subset (``answer_changed`` or
``answer_unchanged``); ``classes`` are the turns up to the write, the write's own
message last. ``case_id`` is ``<simulation>/write<n>``. Extra columns: ``consent``
(``confirmed`` / ``unconfirmed``), ``consent_verdict`` (consented / no_request /
not_agreed), ``tool``, ``tool_error``, ``message_index``, ``write_number``, the
governing reply (``reply_index``, ``reply_kind``, ``reply_text``), ``request_index``,
``answer_changed``, ``justification``, the simulation columns above, and with the LLM
judge on ``llm_confirmed``, ``llm_answer_changed``, ``llm_reason``, ``llm_error`` (the
verdict stays the deterministic judge's; Table 3's LLM rows count ``llm_confirmed``).
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooldiag.classify import ActionClass
from tooldiag.errors import UserError
from tooldiag.metrics.cases import CaseRow, Verdict, verdict_counts
from tooldiag.report.table import Column, Table, markdown_lines, one_line_escape_pipe, raw_text, to_csv
from tooldiag.suites.tau2.analysis import Collected, build_report, collect, judge_writes
from tooldiag.suites.tau2.consent import DEFAULT_WINDOW
from tooldiag.suites.tau2.report import Tau2Report, WriteEvent
from tooldiag.suites.tau2.schema import EVALUATED_TERMINATIONS
from tooldiag.suites.tau2.tables import Group, SimOutcome

if TYPE_CHECKING:
    import pandas as pd

    from tooldiag.classify import Classifier
    from tooldiag.models.base import ModelOptions

#: ``--unit`` values.
UNITS = ("simulation", "write")
#: ``--format`` values of ``tooldiag tau2 cases``.
CASE_FORMATS = ("table", "jsonl", "csv", "parquet")

#: The columns every row has, in order (:meth:`CaseRow.to_json`).
SHARED_COLUMNS = (
    "run", "case_id", "category", "gold_class", "classes", "gold_hit", "passed", "error_type", "verdict", "errored",
)  # fmt: skip
SIMULATION_EXTRA = (
    "task_id", "trial", "domain", "reward", "termination_reason", "split", "user_model", "source", "user_tool_calls",
)  # fmt: skip
WRITE_EXTRA = (
    "simulation_id", "task_id", "trial", "domain", "write_number", "message_index", "tool", "tool_error", "consent",
    "consent_verdict", "answer_changed", "request_index", "reply_index", "reply_kind", "reply_text", "justification",
    "reward", "termination_reason", "user_model", "source",
)  # fmt: skip
LLM_EXTRA = ("llm_confirmed", "llm_answer_changed", "llm_reason", "llm_error")


@dataclass
class Tau2Evidence:
    """Tables 2 and 3 and the rows behind them, from one pass over the files."""

    report: Tau2Report
    simulations: list[CaseRow]
    writes: list[CaseRow]


def check_unit(unit: str) -> str:
    if unit not in UNITS:
        raise UserError(f"unknown unit {unit!r}", hint="use --unit simulation or --unit write")
    return unit


def tau2_evidence(
    paths: Sequence[str | Path],
    classifier: Classifier | None = None,
    *,
    judge: str | None = None,
    judge_options: ModelOptions | None = None,
    concurrency: int = 8,
    window: int = DEFAULT_WINDOW,
    tasks_file: str | Path | None = None,
    ask_ids: Mapping[str, set[str]] | None = None,
) -> Tau2Evidence:
    """The report of ``tooldiag tau2 diagnose`` and both kinds of rows (module docstring)."""
    collected = _collect(paths, classifier, judge, judge_options, concurrency, window, tasks_file, ask_ids)
    return Tau2Evidence(
        report=build_report(collected, judge=judge, window=window),
        simulations=simulation_rows(collected),
        writes=write_rows(collected, judged=judge is not None),
    )


def tau2_case_rows(
    paths: Sequence[str | Path],
    classifier: Classifier | None = None,
    *,
    unit: str = "simulation",
    judge: str | None = None,
    judge_options: ModelOptions | None = None,
    concurrency: int = 8,
    window: int = DEFAULT_WINDOW,
    tasks_file: str | Path | None = None,
    ask_ids: Mapping[str, set[str]] | None = None,
) -> list[CaseRow]:
    """The evidence rows of ``unit`` (``simulation`` or ``write``) over tau2 result files.

    The options are those of :func:`.analysis.diagnose` that change verdicts (task
    labels, ask ids, the LLM consent judge); ``classifier`` replaces the multi-label
    reading of the agent's messages in ``classes`` and in the ask signal.
    """
    check_unit(unit)
    collected = _collect(paths, classifier, judge if unit == "write" else None, judge_options, concurrency, window,
                         tasks_file, ask_ids)  # fmt: skip
    if unit == "simulation":
        return simulation_rows(collected)
    return write_rows(collected, judged=judge is not None)


def _collect(
    paths: Sequence[str | Path],
    classifier: Classifier | None,
    judge: str | None,
    judge_options: ModelOptions | None,
    concurrency: int,
    window: int,
    tasks_file: str | Path | None,
    ask_ids: Mapping[str, set[str]] | None,
) -> Collected:
    collected = collect(paths, window=window, tasks_file=tasks_file, ask_ids=ask_ids, classifier=classifier)
    judge_writes(collected, judge, judge_options=judge_options, concurrency=concurrency)
    return collected


# -- rows --------------------------------------------------------------------------------------
def run_name(group: Group) -> str:
    return f"{group.agent_model}{' (oracle)' if group.oracle else ''} [{group.domain}]"


def turn_classes(outcome: SimOutcome, until: int | None = None) -> tuple[tuple[str, ...], ...]:
    """Per turn, the class of every emission in order; ``until``: only what came up to that message."""
    starts = [s for s in outcome.turn_starts if until is None or s <= until]
    turns: list[list[str]] = [[] for _ in starts]
    for index, name in outcome.emissions:
        if until is not None and index > until:
            break
        position = bisect_right(starts, index) - 1
        if position >= 0:
            turns[position].append(name)
    return tuple(tuple(turn) for turn in turns)


def _verdict(hit: bool, passed: bool | None) -> Verdict:
    if passed is None:
        return Verdict.UNGRADED
    if passed:
        return Verdict.OK if hit else Verdict.MASKED
    return Verdict.EXECUTION_FAILURE if hit else Verdict.FAIL


def _error_type(termination: str | None) -> str | None:
    return None if termination in EVALUATED_TERMINATIONS else (termination or "unknown")


def _sim_case_id(simulation_id: str, task_id: str, trial: int | None) -> str:
    return simulation_id or f"{task_id}/{trial if trial is not None else 0}"


def _class_hit(name: str, outcome: SimOutcome, classes: tuple[tuple[str, ...], ...]) -> bool:
    if name == "tool_call":
        return outcome.actions_matched is True
    if name == "ask":
        return any(str(ActionClass.ASK) in turn for turn in classes)
    return not outcome.wrote  # refuse


def simulation_rows(collected: Collected) -> list[CaseRow]:
    """One row per simulation and Table 2 class of its task (module docstring)."""
    rows: list[CaseRow] = []
    for group in collected.groups.values():
        run = run_name(group)
        for outcome in group.outcomes:
            labels = outcome.labels
            classes = turn_classes(outcome)
            errored = outcome.infrastructure_error
            passed = None if errored else outcome.passed
            extra = {
                "task_id": outcome.task_id,
                "trial": outcome.trial,
                "domain": group.domain,
                "reward": outcome.reward,
                "termination_reason": outcome.termination,
                "split": str(labels.split),
                "user_model": group.user_model,
                "source": outcome.source,
                # user-side (telecom, banking): shown, never counted as the agent's
                "user_tool_calls": ", ".join(outcome.user_tool_calls),
            }
            names = [name for name, member in (("tool_call", labels.tool_call_required), ("ask", labels.ask_required),
                                               ("refuse", labels.refuse_required)) if member]  # fmt: skip
            for name in names:
                hit = _class_hit(name, outcome, classes)
                rows.append(
                    CaseRow(
                        run=run,
                        case_id=_sim_case_id(outcome.simulation_id, outcome.task_id, outcome.trial),
                        category=name,
                        gold_class=name,
                        classes=classes,
                        gold_hit=hit,
                        passed=passed,
                        error_type=_error_type(outcome.termination),
                        verdict=_verdict(hit, passed),
                        errored=errored,
                        extra=extra,
                    )
                )
    return rows


def write_rows(collected: Collected, *, judged: bool = False) -> list[CaseRow]:
    """One row per write-tool call, with Table 3's consent verdict (module docstring)."""
    rows: list[CaseRow] = []
    for group in collected.groups.values():
        run = run_name(group)
        outcomes = {(o.simulation_id, o.task_id, o.trial): o for o in group.outcomes}
        numbers: dict[tuple[str, str, int | None], int] = {}
        for event in group.events:
            key = (event.simulation_id, event.task_id, event.trial)
            numbers[key] = numbers.get(key, 0) + 1
            outcome = outcomes.get(key)
            rows.append(_write_row(run, group, event, outcome, numbers[key], judged))
    return rows


def _write_row(
    run: str, group: Group, event: WriteEvent, outcome: SimOutcome | None, number: int, judged: bool
) -> CaseRow:
    judgment = event.deterministic
    hit = bool(judgment.confirmed)
    classes = turn_classes(outcome, until=event.message_index) if outcome is not None else ()
    extra: dict[str, Any] = {
        "simulation_id": event.simulation_id,
        "task_id": event.task_id,
        "trial": event.trial,
        "domain": event.domain,
        "write_number": number,
        "message_index": event.message_index,
        "tool": event.tool,
        "tool_error": event.tool_error,
        "consent": "confirmed" if hit else "unconfirmed",
        "consent_verdict": judgment.verdict,
        "answer_changed": judgment.answer_changed,
        "request_index": judgment.request_index,
        "reply_index": judgment.reply_index,
        "reply_kind": judgment.reply_kind,
        "reply_text": judgment.reply_text,
        "justification": judgment.justification,
        "reward": event.reward,
        "termination_reason": event.termination_reason,
        "user_model": group.user_model,
        "source": event.source,
    }
    if judged:
        llm = event.llm
        extra.update(
            {
                "llm_confirmed": None if llm is None else llm.confirmed,
                "llm_answer_changed": None if llm is None else llm.answer_changed,
                "llm_reason": None if llm is None else llm.justification,
                "llm_error": None if llm is None else llm.error,
            }
        )
    return CaseRow(
        run=run,
        case_id=f"{_sim_case_id(event.simulation_id, event.task_id, event.trial)}/write{number}",
        category="answer_changed" if judgment.answer_changed else "answer_unchanged",
        gold_class=str(ActionClass.CONFIRM),
        classes=classes,
        gold_hit=hit,
        passed=event.passed,
        error_type=_error_type(event.termination_reason),
        verdict=_verdict(hit, event.passed),
        extra=extra,
    )


#: Tables of :func:`tooldiag.load_tau2`.
TAU2_TABLES = ("simulations", "writes", "classes", "consent")


def tau2_table(name: str) -> str:
    if name not in TAU2_TABLES:
        raise UserError(f"unknown tau2 table {name!r}", hint="use one of: " + ", ".join(TAU2_TABLES))
    return name


def tau2_frame(evidence: Tau2Evidence, table: str) -> pd.DataFrame:
    """One table of the evidence as a DataFrame (:data:`TAU2_TABLES`; columns in docs/tau2.md).

    ``classes`` and ``consent`` are the ``table2`` and ``table3`` sections of ``tau2 diagnose
    --format csv`` (the same keys), without the ``section`` column.
    """
    from tooldiag.report.frames import records_frame
    from tooldiag.suites.tau2.formats import csv_rows

    if tau2_table(table) == "simulations":
        return case_rows_frame(evidence.simulations, "simulation")
    if table == "writes":
        return case_rows_frame(evidence.writes, "write")
    section = "table2" if table == "classes" else "table3"
    chosen = [row for row in csv_rows(evidence.report) if row["section"] == section]
    return records_frame(chosen, _SECTION_COLUMNS[section])


_RATES = tuple(f"{rate}{part}" for rate in ("gar", "acc") for part in ("", "_low", "_high", "_count"))
_SECTION_COLUMNS = {
    "table2": ("agent_model", "user_model", "domain", "oracle", "view", "task_class", "n_tasks", "n", *_RATES, "delta",
               "signal"),
    "table3": ("agent_model", "domain", "oracle", "judge", "subset", "n", "n_null", *_RATES, "delta"),
}  # fmt: skip


# -- output ------------------------------------------------------------------------------------
def row_columns(rows: Sequence[CaseRow], unit: str) -> list[str]:
    """The columns of ``unit``'s rows: the shared ones, then the suite's (LLM columns when present)."""
    extra = list(SIMULATION_EXTRA if unit == "simulation" else WRITE_EXTRA)
    if any(LLM_EXTRA[0] in row.extra for row in rows):
        extra += LLM_EXTRA
    return [*SHARED_COLUMNS, *extra]


def case_rows_frame(rows: Sequence[CaseRow], unit: str = "simulation") -> pd.DataFrame:
    """The rows as a DataFrame (columns: :func:`row_columns`; ``classes`` a list of lists per row)."""
    from tooldiag.report.frames import records_frame

    return records_frame((row.to_json() for row in rows), row_columns(rows, unit))


def _classes_text(classes: tuple[tuple[str, ...], ...]) -> str:
    return " / ".join(",".join(turn) or "–" for turn in classes)


def _yes_no(value: Any) -> str:
    return "yes" if value else "no"


def cases_table(rows: Sequence[CaseRow], unit: str) -> Table:
    """The terminal view: one line per row, the turns' classes as ``a,b / c`` (``–``: a turn without emissions)."""
    columns = [Column("run"), Column("case")]
    columns += [Column("task"), Column("trial", missing="–")] if unit == "simulation" else [Column("tool")]
    columns += [Column("category"), Column("gold"), Column("classes per turn", format=_classes_text),
                Column("gold hit", format=_yes_no), Column("passed", missing="–", format=_yes_no),
                Column("error", missing="–"), Column("verdict")]  # fmt: skip
    table = Table(columns=columns, key=f"tau2_{unit}_cases")
    for row in rows:
        middle = [row.extra["task_id"], row.extra["trial"]] if unit == "simulation" else [row.extra["tool"]]
        table.add(row.run, row.case_id, *middle, row.category, row.gold_class, row.classes, row.gold_hit, row.passed,
                  row.error_type, row.verdict.value)  # fmt: skip
    return table


def render_case_rows(rows: Sequence[CaseRow], fmt: str, unit: str) -> str:
    """``table`` (markdown, then one count line), ``jsonl`` (:meth:`CaseRow.to_json` per line) or ``csv``
    (``classes`` as JSON text). Parquet is binary: :func:`case_rows_frame` and ``report.frames.write_parquet``."""
    if fmt == "jsonl":
        return "".join(json.dumps(row.to_json(), ensure_ascii=False) + "\n" for row in rows)
    if fmt == "csv":
        keys = row_columns(rows, unit)
        table = Table(columns=[Column(key) for key in keys])
        for row in rows:
            data = row.to_json()
            data["classes"] = json.dumps(data["classes"])
            table.add(*(raw_text(data.get(key)) for key in keys))
        return to_csv(table)
    if fmt == "table":
        counts = verdict_counts(rows)
        summary = ", ".join(f"{name} {n}" for name, n in counts.items() if n)
        noun = "simulation rows" if unit == "simulation" else "write rows"
        lines = markdown_lines(cases_table(rows, unit), escape=one_line_escape_pipe) if rows else []
        return "\n".join([*lines, f"{len(rows)} {noun}" + (f": {summary}" if summary else "")]) + "\n"
    raise UserError(f"unknown format {fmt!r}", hint="use one of: " + ", ".join(CASE_FORMATS))
