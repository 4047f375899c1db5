"""Render a :class:`~tooldiag.suites.tau2.report.Tau2Report` as Markdown, CSV or JSON.

Markdown is for reading (percentages with 95 % Wilson intervals, Δ in points); CSV is
one tidy table with a ``section`` column (``inputs``, ``task_classes``, ``table2``,
``pass_hat_k``, ``trials``, ``submission``, ``table3``, ``agreement``, ``event``) and fractions, not percentages;
JSON is the report model itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tooldiag.errors import UserError
from tooldiag.report.table import (
    BLANK,
    Column,
    Table,
    markdown_lines,
    no_escape,
    one_line_escape_pipe,
    to_csv,
    to_markdown,
)
from tooldiag.suites.tau2.report import ClassCell, Rate, Tau2Report, TrialRow, TrialSpread

if TYPE_CHECKING:
    import pandas as pd

FORMATS = ("md", "csv", "json")


def _pct(rate: Rate) -> str:
    if rate.value is None:
        return "–"
    return f"{100 * rate.value:.1f} [{100 * rate.low:.1f}, {100 * rate.high:.1f}]"  # type: ignore[operator]


def _yes_no(value: Any) -> str:
    return "yes" if value else "no"


def _terminations(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))


def _consent(confirmed: bool) -> str:
    return "consented" if confirmed else "not consented"


def _col(name: str) -> Column:
    return Column(name, missing="–")


def _rate(name: str) -> Column:
    """A :class:`Rate` as "percent [low, high]" (95 % Wilson interval)."""
    return Column(name, format=_pct)


def _pp(name: str) -> Column:
    """GAR - Acc (fractions) in signed percentage points."""
    return Column(name, decimals=1, percent=True, signed=True, missing="–")


def _number(name: str, digits: int = 3) -> Column:
    return Column(name, decimals=digits, missing="–")


def _markdown(table: Table) -> list[str]:
    # Cells hold free text (justifications, file names): one line each, pipes escaped.
    return markdown_lines(table, escape=one_line_escape_pipe)


def _class_table(report: Tau2Report, attr: str) -> Table:
    columns = [_col("model"), _col("domain"), _col("class"), _col("tasks"), _col("sims"),
               _rate("GAR % [95% CI]"), _rate("Acc % [95% CI]"), _pp("Δ pp")]  # fmt: skip
    table = Table(columns=columns, key=attr)
    for row in report.table2:
        cells: list[ClassCell] = getattr(row, attr)
        for cell in cells:
            model = row.agent_model + (" [oracle]" if row.oracle else "")
            table.add(model, row.domain, cell.task_class, cell.n_tasks, cell.n_simulations,
                      cell.gar, cell.acc, cell.delta)  # fmt: skip
    return table


def _inputs_table(report: Tau2Report) -> Table:
    names = ["file", "layout", "domain", "agent", "user simulator", "trials", "tasks", "simulations"]
    columns = [*map(_col, names), Column("oracle", format=_yes_no), _col("tau2 version")]
    table = Table(columns=columns, key="inputs")
    for i in report.inputs:
        table.add(i.path, i.layout, i.domain, i.agent_model, i.user_model, i.num_trials or None,
                  i.n_tasks, i.n_simulations, i.oracle, i.tau2_version)  # fmt: skip
    return table


_CLASS_COUNTS = ("tasks", "tool_call", "ask", "refuse", "write", "read_only", "empty", "transfer")


def _task_class_table(report: Tau2Report) -> Table:
    names = list(_CLASS_COUNTS)
    if any("user_only" in t.counts for t in report.task_classes):  # telecom: the user's actions only
        names.insert(names.index("empty") + 1, "user_only")
    table = Table(columns=[*map(_col, ["domain", "agent", *names, "ask ids from"])], key="task_classes")
    for t in report.task_classes:
        table.add(t.domain, t.agent_model, *(t.counts.get(k, 0) for k in names), t.ask_source)
    return table


def _pass_hat_k_table(report: Tau2Report) -> Table:
    max_k = max((max(r.pass_hat_k) for r in report.table2 if r.pass_hat_k), default=0)
    user_calls = any(r.n_user_tool_calls for r in report.table2)
    columns = [_col("model"), _col("domain"), _col("tasks"), _col("sims"), _number("avg reward"),
               *(_number(f"pass^{k}") for k in range(1, max_k + 1)), _col("infra errors"),
               Column("terminations", format=_terminations)]  # fmt: skip
    if user_calls:  # telecom, banking: the user simulator's own calls, apart from the agent's
        columns.append(_col("user tool calls (writes)"))
    table = Table(columns=columns, key="pass_hat_k")
    for r in report.table2:
        cells: list[Any] = [r.agent_model + (" [oracle]" if r.oracle else ""), r.domain, r.n_tasks, r.n_simulations,
                            r.avg_reward, *(r.pass_hat_k.get(k) for k in range(1, max_k + 1)),
                            r.n_infrastructure_errors, r.terminations]  # fmt: skip
        if user_calls:
            cells.append(f"{r.n_user_tool_calls} ({r.n_user_writes})")
        table.add(*cells)
    return table


def _submission_table(report: Tau2Report) -> Table:
    columns = [_col("domain"), _col("model"), _col("k"), _number("submitted %", 1), _number("recomputed %", 1),
               _number("infra as failure %", 1), _number("difference pp", 1)]  # fmt: skip
    table = Table(columns=columns, key="submission")
    assert report.submission is not None
    for r in report.submission.rows:
        table.add(r.domain, r.agent_model, r.k, r.submitted, r.recomputed, r.recomputed_infra_as_failure, r.difference)
    return table


def _spread_text(cell: TrialSpread | None) -> str:
    """mean ± sd [min, max] in percent (points for Δ) over the trials."""
    if cell is None or cell.mean is None:
        return "–"
    sd = "" if cell.sd is None else f" ± {100 * cell.sd:.1f}"
    return f"{100 * cell.mean:.1f}{sd} [{100 * cell.low:.1f}, {100 * cell.high:.1f}]"  # type: ignore[operator]


def _pass_ks_text(values: dict[int, float]) -> str:
    return " / ".join(f"{100 * values[k]:.1f}" for k in sorted(values)) or "–"


def _flip_text(flips: int, n: int) -> str:
    return "–" if not n else f"{100 * flips / n:.1f} ({flips}/{n})"


def _trials_table(report: Tau2Report) -> Table:
    text = [
        Column(name, format=str)
        for name in (
            "Acc % mean ± sd [min, max]",
            "GAR % mean ± sd [min, max]",
            "Δ pp mean ± sd [min, max]",
            "pass^k Acc % (k=1..)",
            "pass^k GAR % (k=1..)",
            "flip Acc % (tasks)",
            "flip GAR % (tasks)",
        )
    ]
    columns = [_col("model"), _col("domain"), _col("class"), _col("trials"), _col("tasks"), *text]  # fmt: skip
    table = Table(columns=columns, key="trials")
    for r in report.trials:
        table.add(r.agent_model + (" [oracle]" if r.oracle else ""), r.domain, r.task_class, r.trials, r.n_tasks,
                  _spread_text(r.acc), _spread_text(r.gar), _spread_text(r.delta), _pass_ks_text(r.pass_hat_k_acc),
                  _pass_ks_text(r.pass_hat_k_gar) if r.gar is not None else "–",
                  _flip_text(r.flips_acc, r.flip_n_acc),
                  _flip_text(r.flips_gar, r.flip_n_gar) if r.gar is not None else "–")  # fmt: skip
    return table


_TRIALS_NOTE = (
    "Over the trials of each task (infrastructure errors left out): per trial the class's Acc (reward 1) and "
    "GAR (Table 2's signal), their mean ± sample sd [min, max]; pass^k as tau2 defines it (per task "
    "C(c, k) / C(n, k), k up to the fewest trials of a task); flip = share of tasks with >= 2 trials whose "
    "verdict / gold-action hit is not the same in every trial. Class all: every task, Acc only."
)


_SUBMISSION_NOTE = (
    "pass^k as tau2 defines it: per task C(c, k) / C(n, k), averaged over tasks (metrics/agent_metrics.py); "
    "recomputed = infrastructure errors left out (tau2's metrics), infra as failure = counted as failed trials "
    "(the 1.0.1 leaderboard convention); difference = recomputed − submitted."
)


def _table3_table(report: Tau2Report) -> Table:
    columns = [_col("model"), _col("domain"), _col("judge"), _col("subset"), _col("writes"),
               _rate("GAR % [95% CI]"), _rate("Acc % [95% CI]"), _pp("Δ pp"), _col("nulls")]  # fmt: skip
    table = Table(columns=columns, key="table3")
    for r in report.table3:
        model = r.agent_model + (" [oracle]" if r.oracle else "")
        table.add(model, r.domain, r.judge, r.subset, r.n_events, r.gar, r.acc, r.delta, r.n_null)
    return table


def _agreement_table(report: Tau2Report) -> Table:
    columns = [_col("model"), _col("domain"), _col("events"), _col("nulls"), _number("agreement %", 1),
               _number("κ confirmed"), _number("κ answer changed")]  # fmt: skip
    table = Table(columns=columns, key="agreement")
    for a in report.agreement:
        table.add(a.agent_model, a.domain, a.n_events, a.n_null,
                  a.percent_agreement, a.kappa_confirmed, a.kappa_answer_changed)  # fmt: skip
    return table


def _events_table(report: Tau2Report) -> Table:
    columns = [_col("#"), _col("model"), _col("domain"), _col("task"), _col("trial"), _col("msg"), _col("tool"),
               Column("tool error", missing="–", format=_yes_no), Column("passed", format=_yes_no), _col("verdict"),
               Column("answer changed", format=_yes_no)]  # fmt: skip
    if report.judge_model:
        columns.append(Column("LLM", missing="null", format=_consent))
    columns.append(_col("justification"))
    table = Table(columns=columns, key="events")
    for number, e in enumerate(report.events, 1):
        row: list[Any] = [number, e.agent_model, e.domain, e.task_id, e.trial, e.message_index, e.tool, e.tool_error,
                          e.passed, e.deterministic.verdict, bool(e.deterministic.answer_changed)]  # fmt: skip
        if report.judge_model:
            row.append(None if e.llm is None else e.llm.confirmed)
        row.append(e.deterministic.justification)
        table.add(*row)
    return table


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
    out += _markdown(_inputs_table(report))
    out += ["", "## Task classes (from the tasks embedded in the results)", ""]
    out += _markdown(_task_class_table(report))
    out += ["", "## Table 2: per-class diagnostic (paper classes)", ""]
    out += [_TABLE2_NOTE, ""]
    out += _markdown(_class_table(report, "paper_classes"))
    out += ["", "## Table 2b: split by writes", ""]
    out += [_TABLE2B_NOTE, ""]
    out += _markdown(_class_table(report, "write_split"))
    out += ["", "## pass^k and terminations", ""]
    out += _markdown(_pass_hat_k_table(report))
    if report.trials:
        out += ["", "## Trials: spread, pass^k and flip rates", ""]
        out += [_TRIALS_NOTE, ""]
        out += _markdown(_trials_table(report))
    if report.submission is not None:
        sub = report.submission
        version = f", tau2 {sub.declared_version}" if sub.declared_version else ""
        out += ["", f"## Leaderboard submission vs trajectories ({sub.model_name}{version})", ""]
        out += [_SUBMISSION_NOTE, ""]
        out += _markdown(_submission_table(report)) if sub.rows else ["No domain in common."]
        out += [f"- {note}" for note in sub.notes]
    out += ["", "## Table 3: confirmation before database writes", ""]
    out += [_TABLE3_NOTE, ""]
    out += _markdown(_table3_table(report))
    if report.agreement:
        out += ["", f"## Judge agreement (deterministic vs {report.judge_model}, prompt {report.judge_prompt})", ""]
        out += _markdown(_agreement_table(report))
    out += ["", "## Write events", ""]
    if report.events:
        out += _markdown(_events_table(report))
    else:
        out.append("No write-tool calls.")
    if report.warnings:
        out += ["", "## Warnings", ""] + [f"- {w}" for w in report.warnings]
    return "\n".join(out) + "\n"


def ask_scan_markdown(rows: list[dict[str, Any]]) -> str:
    """``tooldiag tau2 ask-scan``: each candidate task with its phrases, then a count line per source."""
    columns = [Column("source"), Column("domain"), Column("task"), Column("phrases", format="; ".join),
               Column("shipped ask id", missing="–", format=_yes_no)]  # fmt: skip
    table = Table(columns=columns, key="ask_scan")
    for row in rows:
        for hit in row["candidates"]:
            table.add(row["source"], row["domain"], hit["task_id"], hit["phrases"], hit["shipped"])
        count = f"({len(row['candidates'])} candidates of {row['n_tasks']} tasks)"
        table.add(row["source"], row["domain"], count, BLANK, BLANK)
    return to_markdown(table, escape=no_escape, trailing_blanks="tight")


def _rate_fields(prefix: str, rate: Rate) -> dict[str, Any]:
    return {
        f"{prefix}": rate.value,
        f"{prefix}_low": rate.low,
        f"{prefix}_high": rate.high,
        f"{prefix}_count": rate.count,
    }


def csv_rows(report: Tau2Report) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for i in report.inputs:
        rows.append({"section": "inputs", **i.model_dump(mode="json")})
    for t in report.task_classes:
        rows.append(
            {
                "section": "task_classes",
                "domain": t.domain,
                "agent_model": t.agent_model,
                **{f"n_{k}": v for k, v in t.counts.items()},
                "ask_source": t.ask_source,
            }
        )
    for r in report.table2:
        base = {"agent_model": r.agent_model, "user_model": r.user_model, "domain": r.domain, "oracle": r.oracle}
        for view, cells in (("paper", r.paper_classes), ("write_split", r.write_split)):
            for c in cells:
                rows.append(
                    {
                        "section": "table2",
                        **base,
                        "view": view,
                        "task_class": c.task_class,
                        "n_tasks": c.n_tasks,
                        "n": c.n_simulations,
                        **_rate_fields("gar", c.gar),
                        **_rate_fields("acc", c.acc),
                        "delta": c.delta,
                        "signal": c.signal,
                    }
                )
        for k, value in r.pass_hat_k.items():
            rows.append(
                {
                    "section": "pass_hat_k",
                    **base,
                    "n_tasks": r.n_tasks,
                    "n": r.n_simulations,
                    "k": k,
                    "pass_hat_k": value,
                    "avg_reward": r.avg_reward,
                }
            )
    for trial_row in report.trials:
        rows.append({"section": "trials", **_trial_fields(trial_row)})
    if report.submission is not None:
        for s in report.submission.rows:
            rows.append({"section": "submission", **s.model_dump(mode="json")})
    for t3 in report.table3:
        rows.append(
            {
                "section": "table3",
                "agent_model": t3.agent_model,
                "domain": t3.domain,
                "oracle": t3.oracle,
                "judge": t3.judge,
                "subset": t3.subset,
                "n": t3.n_events,
                "n_null": t3.n_null,
                **_rate_fields("gar", t3.gar),
                **_rate_fields("acc", t3.acc),
                "delta": t3.delta,
            }
        )
    for a in report.agreement:
        rows.append({"section": "agreement", **a.model_dump(mode="json")})
    for e in report.events:
        d = e.deterministic
        row = {
            "section": "event",
            "source": e.source,
            "agent_model": e.agent_model,
            "domain": e.domain,
            "simulation_id": e.simulation_id,
            "task_id": e.task_id,
            "trial": e.trial,
            "message_index": e.message_index,
            "tool": e.tool,
            "tool_error": e.tool_error,
            "passed": e.passed,
            "reward": e.reward,
            "termination_reason": e.termination_reason,
            "confirmation_flip_task": e.confirmation_flip_task,
            "verdict": d.verdict,
            "confirmed": d.confirmed,
            "answer_changed": d.answer_changed,
            "justification": d.justification,
            "request_index": d.request_index,
            "request_text": d.request_text,
            "reply_index": d.reply_index,
            "reply_text": d.reply_text,
            "reply_kind": d.reply_kind,
        }
        if e.llm is not None:
            row.update(
                {
                    "llm_confirmed": e.llm.confirmed,
                    "llm_answer_changed": e.llm.answer_changed,
                    "llm_reason": e.llm.justification,
                    "llm_error": e.llm.error,
                }
            )
        rows.append(row)
    return rows


def _trial_fields(row: TrialRow) -> dict[str, Any]:
    """One trial row as flat columns (fractions): mean, sd, min, max of each rate; pass^k per k; flips."""
    fields: dict[str, Any] = {"agent_model": row.agent_model, "domain": row.domain, "oracle": row.oracle,
                              "task_class": row.task_class, "trials": row.trials, "n_tasks": row.n_tasks}  # fmt: skip
    for name in ("acc", "gar", "delta"):
        cell = getattr(row, name)
        for stat in ("mean", "sd", "low", "high"):
            fields[f"{name}_{stat}"] = None if cell is None else getattr(cell, stat)
    for metric in ("acc", "gar"):
        for k, value in getattr(row, f"pass_hat_k_{metric}").items():
            fields[f"pass_hat_{k}_{metric}"] = value
        fields[f"flip_rate_{metric}"] = getattr(row, f"flip_rate_{metric}")
        fields[f"flips_{metric}"] = getattr(row, f"flips_{metric}")
        fields[f"flip_n_{metric}"] = getattr(row, f"flip_n_{metric}")
    return fields


def report_frame(report: Tau2Report) -> pd.DataFrame:
    """The tidy table of ``--format csv`` as a DataFrame (``--format parquet``): the same rows and
    keys, values typed (fractions, counts, booleans; missing as null) instead of text."""
    from tooldiag.report.frames import records_frame

    return records_frame(csv_rows(report))


def render_csv(report: Tau2Report) -> str:
    """One tidy table: the union of every section's keys, blank where a section has none."""
    return to_csv(Table.from_records(csv_rows(report)))


def render(report: Tau2Report, fmt: str) -> str:
    """The report as ``md``, ``csv`` or ``json`` text."""
    if fmt == "md":
        return render_markdown(report)
    if fmt == "csv":
        return render_csv(report)
    if fmt == "json":
        return report.model_dump_json(indent=2) + "\n"
    raise UserError(f"unknown format {fmt!r}", hint=f"use one of: {', '.join(FORMATS)}")
