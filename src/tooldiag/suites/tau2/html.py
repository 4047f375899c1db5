"""The tau2 section of the HTML report: Table 2 with its figure, Table 3, and every write with its evidence.

:func:`tau2_section` shows paper 001 Table 2 (GAR and Acc per task class, Wilson 95 % CIs) as a
figure above the table of its numbers, the spread over trials with pass^k and flip rates (results
with several trials per task, :mod:`.trials`), Table 3 (consent before database writes), and one row per
write-tool call with its verdict and the messages that decided it: the agent's consent request
(or the last agent message before the user's reply, when it asked nothing) and the user's answer,
as excerpts. The write rows carry ``data-verdict`` (the case verdict: ok, masked, ...) and
``data-consent`` (consented, no_request, not_agreed) for the page's filters, so that a reader can
list the unconfirmed writes that passed (``#tau2-writes:verdict=masked``) without a command.

The rows come from :func:`.cases.write_rows`, the same pass over the files as the tables, so a
row's verdict and Table 3's count cannot disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tooldiag.metrics.cases import CaseRow, Verdict
from tooldiag.report.html import Section, esc, figure_html, note_html, render_page, table_html
from tooldiag.report.table import Column, Table
from tooldiag.suites.tau2.formats import (
    _TABLE2_NOTE,
    _TABLE3_NOTE,
    _TRIALS_NOTE,
    _class_table,
    _pass_hat_k_table,
    _table3_table,
    _trials_table,
)
from tooldiag.suites.tau2.report import ClassCell, Tau2Report, WriteEvent
from tooldiag.suites.tau2.report import Verdict as ConsentVerdict

if TYPE_CHECKING:
    from tooldiag.suites.tau2.cases import Tau2Evidence

#: Characters of a message shown in a write row (the rest is cut with an ellipsis).
EXCERPT_CHARS = 240
WRITES_TABLE = "tau2-writes"
TRIALS_TABLE = "tau2-trials"


def excerpt(text: str | None, limit: int = EXCERPT_CHARS) -> str:
    """``text`` on one line, cut at ``limit`` characters."""
    if not text:
        return ""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _groups(report: Tau2Report) -> list[tuple[str, list[ClassCell]]]:
    return [(f"{r.agent_model}{' [oracle]' if r.oracle else ''} · {r.domain}", r.paper_classes) for r in report.table2]


def class_figure(report: Tau2Report) -> str:
    """Per model and domain (panels), GAR and Acc of each task class with their Wilson 95 % CIs."""
    from tooldiag.report.html.svg import new_figure, svg_of

    groups = _groups(report)
    figure, first = new_figure(min(9.0, 3.0 * len(groups) + 0.8), 3.2)
    figure.delaxes(first)
    grid = figure.subplots(1, len(groups), squeeze=False, sharey=True)[0]
    for axes, (title, cells) in zip(grid, groups, strict=True):
        for offset, name, color, label in ((-0.12, "gar", "C0", "GAR"), (0.12, "acc", "C1", "Acc")):
            points = [(i, getattr(c, name)) for i, c in enumerate(cells) if getattr(c, name).value is not None]
            x = [i + offset for i, _ in points]
            y = [100 * rate.value for _, rate in points]
            low = [100 * (rate.value - rate.low) for _, rate in points]
            high = [100 * (rate.high - rate.value) for _, rate in points]
            axes.errorbar(x, y, yerr=[low, high], fmt="o", color=color, capsize=3, label=label)
        axes.set_xticks(range(len(cells)), [c.task_class for c in cells])
        axes.set_xlim(-0.6, len(cells) - 0.4)
        axes.set_ylim(-3, 103)
        axes.set_title(title, fontsize=9)
        axes.grid(axis="y", alpha=0.3)
    grid[0].set_ylabel("% of simulations (95 % CI)")
    grid[0].legend(fontsize=8, loc="lower left")
    return svg_of(figure, label="GAR and Acc per task class")


def _event_key(source: Any, simulation_id: Any, task_id: Any, trial: Any, message_index: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in (source, simulation_id, task_id, trial, message_index))


def _events_by_key(report: Tau2Report) -> dict[tuple[str, ...], WriteEvent]:
    return {_event_key(e.source, e.simulation_id, e.task_id, e.trial, e.message_index): e for e in report.events}


def _request(event: WriteEvent | None) -> str:
    """The agent message the consent verdict rests on, as ``msg N: text``."""
    judgment = event.deterministic if event else None
    if judgment is None or judgment.request_index is None:
        return ""
    return f"msg {judgment.request_index}: {excerpt(judgment.request_text)}"


def writes_table(report: Tau2Report, rows: Sequence[CaseRow]) -> tuple[Table, list[dict[str, str]]]:
    """One line per write row with its evidence, and the row attributes the filters read."""
    judged = any("llm_confirmed" in row.extra for row in rows)
    columns = [Column("#"), Column("run"), Column("case"), Column("tool"), Column("passed", missing="–"),
               Column("verdict"), Column("consent"), Column("answer changed"), Column("consent request (agent)"),
               Column("user's answer"), Column("justification")]  # fmt: skip
    if judged:
        columns.append(Column("LLM judge", missing="null"))
    table = Table(columns=columns, key=WRITES_TABLE)
    attrs = []
    events = _events_by_key(report)
    for number, row in enumerate(rows, 1):
        x = row.extra
        event = events.get(_event_key(x["source"], x["simulation_id"], x["task_id"], x["trial"], x["message_index"]))
        reply = (
            f"msg {x['reply_index']} ({x['reply_kind']}): {excerpt(x['reply_text'])}"
            if x["reply_index"] is not None
            else ""
        )
        cells: list[Any] = [number, row.run, row.case_id, x["tool"], None if row.passed is None else
                            ("yes" if row.passed else "no"), row.verdict.value, x["consent_verdict"],
                            "yes" if x["answer_changed"] else "no", _request(event), reply,
                            excerpt(x["justification"], 2 * EXCERPT_CHARS)]  # fmt: skip
        if judged:
            llm = x.get("llm_confirmed")
            cells.append(None if llm is None else ("consented" if llm else "not consented"))
        table.add(*cells)
        attrs.append(
            {
                "data-verdict": row.verdict.value,
                "data-consent": str(x["consent_verdict"]),
                "data-category": row.category,
            }
        )
    return table, attrs


def _select(attr: str, label: str, values: Sequence[str]) -> str:
    options = "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in values)
    return (
        f'<label>{esc(label)} <select data-attr="{esc(attr)}"><option value="">all</option>{options}</select></label>'
    )


def writes_filters() -> str:
    """The filter controls of the write table (page.js applies them; the hash presets them)."""
    return (
        f'<div class="filters" data-table="{WRITES_TABLE}">'
        + _select("verdict", "verdict", [v.value for v in Verdict])
        + _select("consent", "consent", [v.value for v in ConsentVerdict])
        + _select("category", "user's answer", ["answer_changed", "answer_unchanged"])
        + '<input type="search" data-attr="text" placeholder="search the rows" aria-label="search the rows">'
        + '<span class="count"></span></div>'
    )


def _headline(report: Tau2Report, rows: Sequence[CaseRow]) -> list[str]:
    models = sorted({i.agent_model for i in report.inputs})
    masked = sum(1 for row in rows if row.verdict == Verdict.MASKED)
    notes = [
        note_html(
            f"{len(report.inputs)} result file(s); agents: {', '.join(models) or '–'}; "
            f"{sum(i.n_simulations for i in report.inputs)} simulations; {len(rows)} database writes."
        )
    ]
    if masked:
        notes.append(note_html(f"{masked} write(s) passed without a confirmed consent request (masked).", "warn"))
    notes += [note_html(w, "warn") for w in report.warnings]
    return notes


def tau2_section(
    report: Tau2Report, write_rows: Sequence[CaseRow], *, section_id: str = "tau2", title: str = "tau2-bench"
) -> Section:
    """Table 2 with its figure, pass^k, the trials table (several trials), Table 3, the write rows with filters."""
    body = _headline(report, write_rows)
    if report.table2:
        body += [
            "<h3>Table 2: GAR and Acc per task class</h3>",
            note_html(_TABLE2_NOTE),
            figure_html(class_figure(report), "GAR (blue) and Acc (orange) per task class; whiskers: Wilson 95 % "
                        "CI. Acc above GAR: simulations pass without the gold action.", figure_id="tau2-fig-classes"),
            table_html(_class_table(report, "paper_classes"), table_id="tau2-classes",
                       caption="Table 2 (the points above)"),
            table_html(_class_table(report, "write_split"), table_id="tau2-classes-writes",
                       caption="Table 2b: split by writes"),
            table_html(_pass_hat_k_table(report), table_id="tau2-pass-k", caption="pass^k and terminations"),
        ]  # fmt: skip
    if report.trials:  # only results whose tasks ran several trials (the markdown's "Trials" section)
        body += [
            "<h3>Trials: spread, pass^k and flip rates</h3>",
            note_html(_TRIALS_NOTE),
            table_html(_trials_table(report), table_id=TRIALS_TABLE, caption="Over the trials of each task"),
        ]
    body += [
        "<h3>Table 3: confirmation before database writes</h3>",
        note_html(_TABLE3_NOTE),
        table_html(_table3_table(report), table_id="tau2-consent", caption="Table 3"),
        "<h3>Write events and the messages that decided them</h3>",
    ]
    if write_rows:
        table, attrs = writes_table(report, write_rows)
        body += [
            note_html(
                "verdict: ok = consent confirmed and the simulation passed, masked = passed without confirmed "
                "consent, execution_failure = confirmed but failed, fail = neither. Filter by verdict, consent "
                f"or text; a link such as #{WRITES_TABLE}:verdict=masked opens the page filtered."
            ),
            writes_filters(),
            table_html(table, table_id=WRITES_TABLE, row_attrs=attrs, caption="Every write-tool call"),
        ]
    else:
        body.append(note_html("No write-tool calls."))
    return Section(id=section_id, title=title, body="".join(body))


def tau2_page(evidence: Tau2Evidence, title: str = "tau2-bench action-class diagnostic") -> str:
    """One HTML document holding the tau2 section (``tooldiag tau2 diagnose --format html``)."""
    section = tau2_section(evidence.report, evidence.writes)
    return render_page(title, [section], subtitle="tooldiag tau2 diagnose", footer="tooldiag")
