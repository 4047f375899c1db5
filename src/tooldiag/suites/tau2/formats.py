"""Render a :class:`~tooldiag.suites.tau2.report.Tau2Report` as Markdown, CSV or JSON.

Markdown is for reading (percentages with 95 % Wilson intervals, Δ in points); CSV is
one tidy table with a ``section`` column (``inputs``, ``task_classes``, ``table2``,
``pass_hat_k``, ``table3``, ``agreement``, ``event``) and fractions, not percentages;
JSON is the report model itself.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from tooldiag.errors import UserError
from tooldiag.suites.tau2.report import ClassCell, Rate, Tau2Report

FORMATS = ("md", "csv", "json")


def _pct(rate: Rate) -> str:
    if rate.value is None:
        return "–"
    return f"{100 * rate.value:.1f} [{100 * rate.low:.1f}, {100 * rate.high:.1f}]"  # type: ignore[operator]


def _pp(delta: float | None) -> str:
    return "–" if delta is None else f"{100 * delta:+.1f}"


def _num(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def _class_rows(report: Tau2Report, attr: str) -> list[list[Any]]:
    rows = []
    for row in report.table2:
        cells: list[ClassCell] = getattr(row, attr)
        for cell in cells:
            model = row.agent_model + (" [oracle]" if row.oracle else "")
            rows.append([model, row.domain, cell.task_class, cell.n_tasks, cell.n_simulations, _pct(cell.gar), _pct(cell.acc), _pp(cell.delta)])
    return rows


_TABLE2_NOTE = (
    "GAR signals: tool_call = every reference action matched (recomputed from the trajectory); "
    "ask = an agent message the user saw classified ask; refuse = no write-tool call. "
    "Acc = share of simulations that pass (reward 1). Units: simulations (task × trial)."
)
_TABLE2B_NOTE = (
    "GAR signals: write = every reference action matched; read_only and empty = no write-tool call "
    "(the correct end state is the initial database); transfer (tasks whose reference path hands over "
    "to a human, overlapping the others) = transfer_to_human_agents called."
)
_TABLE3_NOTE = (
    "Unit: one write-tool call. GAR = share of writes preceded by a consent request the user agreed to; "
    "Acc = share of writes inside passing simulations; Δ = GAR − Acc (negative: unconfirmed writes pass). "
    "answer_changed = the user changed the request when asked for confirmation."
)


def render_markdown(report: Tau2Report) -> str:
    out = ["# tau2-bench action-class diagnostic", ""]
    out += ["## Inputs", ""]
    out += _table(
        ["file", "layout", "domain", "agent", "user simulator", "trials", "tasks", "simulations", "oracle"],
        [[i.path, i.layout, i.domain, i.agent_model, i.user_model, i.num_trials or "–", i.n_tasks, i.n_simulations, "yes" if i.oracle else "no"] for i in report.inputs],
    )
    out += ["", "## Task classes (from the tasks embedded in the results)", ""]
    out += _table(
        ["domain", "agent", "tasks", "tool_call", "ask", "refuse", "write", "read_only", "empty", "transfer", "ask ids from"],
        [[t.domain, t.agent_model, *(t.counts[k] for k in ("tasks", "tool_call", "ask", "refuse", "write", "read_only", "empty", "transfer")), t.ask_source] for t in report.task_classes],
    )
    head = ["model", "domain", "class", "tasks", "sims", "GAR % [95% CI]", "Acc % [95% CI]", "Δ pp"]
    out += ["", "## Table 2: per-class diagnostic (paper classes)", ""]
    out += [_TABLE2_NOTE, ""]
    out += _table(head, _class_rows(report, "paper_classes"))
    out += ["", "## Table 2b: split by writes", ""]
    out += [_TABLE2B_NOTE, ""]
    out += _table(head, _class_rows(report, "write_split"))
    max_k = max((max(r.pass_hat_k) for r in report.table2 if r.pass_hat_k), default=0)
    out += ["", "## pass^k and terminations", ""]
    out += _table(
        ["model", "domain", "tasks", "sims", "avg reward", *(f"pass^{k}" for k in range(1, max_k + 1)), "infra errors", "terminations"],
        [
            [r.agent_model, r.domain, r.n_tasks, r.n_simulations, _num(r.avg_reward),
             *(_num(r.pass_hat_k.get(k)) for k in range(1, max_k + 1)), r.n_infrastructure_errors,
             ", ".join(f"{k} {v}" for k, v in sorted(r.terminations.items()))]
            for r in report.table2
        ],
    )
    out += ["", "## Table 3: confirmation before database writes", ""]
    out += [_TABLE3_NOTE, ""]
    out += _table(
        ["model", "domain", "judge", "subset", "writes", "GAR % [95% CI]", "Acc % [95% CI]", "Δ pp", "nulls"],
        [[r.agent_model + (" [oracle]" if r.oracle else ""), r.domain, r.judge, r.subset, r.n_events, _pct(r.gar), _pct(r.acc), _pp(r.delta), r.n_null] for r in report.table3],
    )
    if report.agreement:
        out += ["", f"## Judge agreement (deterministic vs {report.judge_model}, prompt {report.judge_prompt})", ""]
        out += _table(
            ["model", "domain", "events", "nulls", "agreement %", "κ confirmed", "κ answer changed"],
            [[a.agent_model, a.domain, a.n_events, a.n_null, _num(a.percent_agreement, 1), _num(a.kappa_confirmed), _num(a.kappa_answer_changed)] for a in report.agreement],
        )
    out += ["", "## Write events", ""]
    if report.events:
        header = ["#", "model", "domain", "task", "trial", "msg", "tool", "tool error", "passed", "verdict", "answer changed"]
        if report.judge_model:
            header.append("LLM")
        header.append("justification")
        rows = []
        for number, e in enumerate(report.events, 1):
            row = [number, e.agent_model, e.domain, e.task_id, "–" if e.trial is None else e.trial, e.message_index, e.tool,
                   {True: "yes", False: "no", None: "–"}[e.tool_error], "yes" if e.passed else "no",
                   e.deterministic.verdict, "yes" if e.deterministic.answer_changed else "no"]
            if report.judge_model:
                row.append("null" if e.llm is None or e.llm.confirmed is None else ("consented" if e.llm.confirmed else "not consented"))
            row.append(e.deterministic.justification)
            rows.append(row)
        out += _table(header, rows)
    else:
        out.append("No write-tool calls.")
    if report.warnings:
        out += ["", "## Warnings", ""] + [f"- {w}" for w in report.warnings]
    return "\n".join(out) + "\n"


def _rate_fields(prefix: str, rate: Rate) -> dict[str, Any]:
    return {f"{prefix}": rate.value, f"{prefix}_low": rate.low, f"{prefix}_high": rate.high, f"{prefix}_count": rate.count}


def csv_rows(report: Tau2Report) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for i in report.inputs:
        rows.append({"section": "inputs", **i.model_dump(mode="json")})
    for t in report.task_classes:
        rows.append({"section": "task_classes", "domain": t.domain, "agent_model": t.agent_model, **{f"n_{k}": v for k, v in t.counts.items()}, "ask_source": t.ask_source})
    for r in report.table2:
        base = {"agent_model": r.agent_model, "user_model": r.user_model, "domain": r.domain, "oracle": r.oracle}
        for view, cells in (("paper", r.paper_classes), ("write_split", r.write_split)):
            for c in cells:
                rows.append({"section": "table2", **base, "view": view, "task_class": c.task_class, "n_tasks": c.n_tasks, "n": c.n_simulations,
                             **_rate_fields("gar", c.gar), **_rate_fields("acc", c.acc), "delta": c.delta, "signal": c.signal})
        for k, value in r.pass_hat_k.items():
            rows.append({"section": "pass_hat_k", **base, "n_tasks": r.n_tasks, "n": r.n_simulations, "k": k, "pass_hat_k": value, "avg_reward": r.avg_reward})
    for r in report.table3:
        rows.append({"section": "table3", "agent_model": r.agent_model, "domain": r.domain, "oracle": r.oracle, "judge": r.judge, "subset": r.subset,
                     "n": r.n_events, "n_null": r.n_null, **_rate_fields("gar", r.gar), **_rate_fields("acc", r.acc), "delta": r.delta})
    for a in report.agreement:
        rows.append({"section": "agreement", **a.model_dump(mode="json")})
    for e in report.events:
        d = e.deterministic
        row = {"section": "event", "source": e.source, "agent_model": e.agent_model, "domain": e.domain, "simulation_id": e.simulation_id,
               "task_id": e.task_id, "trial": e.trial, "message_index": e.message_index, "tool": e.tool, "tool_error": e.tool_error,
               "passed": e.passed, "reward": e.reward, "termination_reason": e.termination_reason, "confirmation_flip_task": e.confirmation_flip_task,
               "verdict": d.verdict, "confirmed": d.confirmed, "answer_changed": d.answer_changed, "justification": d.justification,
               "request_index": d.request_index, "request_text": d.request_text, "reply_index": d.reply_index, "reply_text": d.reply_text, "reply_kind": d.reply_kind}
        if e.llm is not None:
            row.update({"llm_confirmed": e.llm.confirmed, "llm_answer_changed": e.llm.answer_changed, "llm_reason": e.llm.justification, "llm_error": e.llm.error})
        rows.append(row)
    return rows


def render_csv(report: Tau2Report) -> str:
    rows = csv_rows(report)
    fields: list[str] = []
    for row in rows:
        for key in row:
            if key not in fields:
                fields.append(key)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
    return buffer.getvalue()


def render(report: Tau2Report, fmt: str) -> str:
    """The report as ``md``, ``csv`` or ``json`` text."""
    if fmt == "md":
        return render_markdown(report)
    if fmt == "csv":
        return render_csv(report)
    if fmt == "json":
        return report.model_dump_json(indent=2) + "\n"
    raise UserError(f"unknown format {fmt!r}", hint=f"use one of: {', '.join(FORMATS)}")
