"""Meta-judge validation of the difficulty rewrites (paper 000 App. N, Table 22).

Why: a medium or hard query is only a harder test of the *same* plan if it keeps every fact the
calls need and is in fact harder. For each rewritten triplet (easy, medium, hard) every meta-judge
answers two questions per transition (easy -> medium, medium -> hard), seeing the two queries and
the reference calls but no model's plan: **preserved** (same intent, values and entities) and
**hardened** (vaguer or less explicit than its source). The table gives, per transition, each
judge's share preserved and hardened, and across judges the unanimity rate (every judge the same
answer), split into unanimous yes and unanimous no, all with counts. The paper found hard over
medium unanimously harder but easy -> medium unanimous for under 60 %: many medium rewrites are
paraphrases.

A transition whose rewrite has status ``FAILED`` kept its source query and is not judged (it is
counted apart). Votes are one request per (judge, record, transition) (prompt file
``metajudge.txt``), run through :func:`tooldiag.runner.run_pool` and committed as they finish
(``metajudge.sqlite``, :mod:`.rewrite_store`), so an interrupted run resumes; a reply without a
readable vote is asked again (``retries``), then stored as ``null`` and reported, never counted.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tooldiag.errors import ModelCallError, UserError
from tooldiag.judges.reply import draw_until_parsed, parse_reply
from tooldiag.models.base import ModelBackend, TaskContext
from tooldiag.runner import ProgressSink
from tooldiag.suites.judgebench.construct.rewrite import (
    parameter_names,
    pin_step_settings,
    start_step,
    write_jsonl,
)
from tooldiag.suites.judgebench.construct.rewrite_store import ConstructStore
from tooldiag.suites.judgebench.generate import fatal, run_units
from tooldiag.suites.judgebench.prompts import load_template
from tooldiag.suites.judgebench.records import JudgeBenchRecord
from tooldiag.trajectory import GenerationConfig

#: Transition name -> (source difficulty, rewrite difficulty).
TRANSITIONS: dict[str, tuple[str, str]] = {"easy->medium": ("easy", "medium"), "medium->hard": ("medium", "hard")}
QUESTIONS = ("preserved", "hardened")
STORE_NAME = "metajudge.sqlite"
DEFAULT_RETRIES = 2


class MetaVote(BaseModel):
    """A meta-judge's reply: two booleans (``true``/``false``, ``yes``/``no``) and a reason."""

    preserved: bool
    hardened: bool
    reason: str = ""


@dataclass(frozen=True)
class Item:
    """One transition of one record to vote on."""

    record: JudgeBenchRecord
    transition: str
    source: str
    rewrite: str


@dataclass
class MetaJudgeSummary:
    judge: str
    ran: int = 0
    skipped: int = 0
    #: (transition, status) -> count over the votes this call ran.
    statuses: Counter = field(default_factory=Counter)
    wall_s: float = 0.0


def triplet_items(records: Sequence[JudgeBenchRecord]) -> tuple[list[Item], Counter]:
    """The transitions to vote on, and per transition the number left out because the rewrite FAILED."""
    if not any(r.query_medium and r.query_hard for r in records):
        raise UserError(
            "these records hold no rewrites (no query_medium and query_hard)",
            hint="run `tooldiag judgebench rewrite records.jsonl --model M --out rewritten.jsonl` first",
        )
    items: list[Item] = []
    failed: Counter = Counter()
    for record in records:
        for name, (source_level, rewrite_level) in TRANSITIONS.items():
            source, rewrite = record.query(source_level), record.query(rewrite_level)
            status = record.rewrite_medium_status if rewrite_level == "medium" else record.rewrite_hard_status
            if not source or not rewrite:
                continue
            if (status or "").upper() == "FAILED":
                failed[name] += 1
                continue
            items.append(Item(record, name, source, rewrite))
    return items, failed


def _valid(row: dict[str, Any] | None, item: Item) -> bool:
    return (
        row is not None and row["status"] != "error" and (row["source"], row["rewrite"]) == (item.source, item.rewrite)
    )


async def vote_items(
    store: ConstructStore,
    items: Sequence[Item],
    judge: str,
    backend: ModelBackend,
    *,
    config: GenerationConfig | None = None,
    retries: int = DEFAULT_RETRIES,
    concurrency: int = 8,
    prompt_dir: str | Path | None = None,
    progress: ProgressSink | None = None,
) -> MetaJudgeSummary:
    """Ask ``judge`` for its two votes on every item not yet voted; each vote is committed as it comes."""
    started, progress, config = start_step(progress, config, retries, DEFAULT_RETRIES)
    template = load_template("metajudge", prompt_dir)
    pin_step_settings(
        store, f"metajudge_settings:{judge}", {"prompt": template.tag}, config, retries, f"meta-judge {judge}"
    )
    summary = MetaJudgeSummary(judge)
    stored = {(v["record_id"], v["transition"]): v for v in store.votes() if v["judge"] == judge}
    units = [item for item in items if not _valid(stored.get((item.record.id, item.transition)), item)]
    summary.skipped = len(items) - len(units)
    progress.start(len(items), summary.skipped)

    async def work(item: Item) -> None:
        source_level, rewrite_level = TRANSITIONS[item.transition]
        message = template.message(
            source_label=source_level.upper(),
            rewrite_label=rewrite_level.upper(),
            source=item.source,
            rewrite=item.rewrite,
            expected_calls=item.record.expected_calls(),
        )

        def context(attempt: int) -> TaskContext:
            return TaskContext(
                suite="judgebench",
                case_id=item.record.id,
                category=f"metajudge_{item.transition}",
                sample=attempt,
                answer_key={
                    "role": "metajudge",
                    "transition": item.transition,
                    "source": item.source,
                    "rewrite": item.rewrite,
                    "parameter_names": parameter_names(item.record),
                },
            )

        try:
            draws = await draw_until_parsed(
                backend,
                [message],
                config,
                lambda text: parse_reply(text, MetaVote),
                retries=retries,
                context=context,
            )
        except ModelCallError as exc:
            if exc.fatal:
                raise fatal(judge, exc) from None
            status = "error"
            store.put_vote(
                judge,
                item.record.id,
                item.transition,
                status,
                None,
                None,
                item.source,
                item.rewrite,
                None,
                None,
                exc.message,
                0,
            )
        else:
            vote = draws.value
            status = "ok" if vote is not None else "null"
            store.put_vote(
                judge,
                item.record.id,
                item.transition,
                status,
                vote.preserved if vote is not None else None,
                vote.hardened if vote is not None else None,
                item.source,
                item.rewrite,
                vote.reason if vote is not None else None,
                draws.texts,
                None if vote is not None else "no readable vote after the retries",
                draws.attempts,
            )
        summary.statuses[(item.transition, status)] += 1
        summary.ran += 1
        progress.advance(status)

    return await run_units(
        units, work, concurrency, progress=progress, backend=backend, summary=summary, started=started
    )


# --------------------------------------------------------------------------- the table


def _pct(k: int, n: int) -> float | None:
    return round(100.0 * k / n, 1) if n else None


@dataclass
class MetaJudgeTable:
    """Table 22: per judge and transition, and the agreement across judges."""

    #: One row per transition x judge: n, preserved, preserved_pct, hardened, hardened_pct, null, error.
    per_judge: list[dict[str, Any]]
    #: One row per transition x question: judges, n, unanimous_yes(_pct), unanimous_no(_pct), split, unanimity_pct.
    agreement: list[dict[str, Any]]
    #: One row per transition: items voted on, rewrites left out because they FAILED.
    items: list[dict[str, Any]]


def current_votes(
    votes: Sequence[dict[str, Any]], judges: Sequence[str], items: Sequence[Item]
) -> list[dict[str, Any]]:
    """The stored votes of ``judges`` on ``items`` as they stand now (a vote on an older rewrite is left out)."""
    wanted = {(i.record.id, i.transition): i for i in items}
    return [
        v
        for v in votes
        if v["judge"] in judges
        and (i := wanted.get((v["record_id"], v["transition"]))) is not None
        and (v["source"], v["rewrite"]) == (i.source, i.rewrite)
    ]


def metajudge_table(
    votes: Sequence[dict[str, Any]], judges: Sequence[str], items: Sequence[Item], failed: Counter
) -> MetaJudgeTable:
    """The App. N table from stored votes of ``judges`` on ``items`` (other rows are ignored)."""
    wanted = {(i.record.id, i.transition) for i in items}
    chosen = current_votes(votes, judges, items)
    per_judge: list[dict[str, Any]] = []
    agreement: list[dict[str, Any]] = []
    counts: list[dict[str, Any]] = []
    for transition in TRANSITIONS:
        here = [v for v in chosen if v["transition"] == transition]
        counts.append(
            {
                "transition": transition,
                "items": sum(1 for key in wanted if key[1] == transition),
                "failed_rewrites": failed.get(transition, 0),
            }
        )
        for judge in judges:
            mine = [v for v in here if v["judge"] == judge]
            ok = [v for v in mine if v["status"] == "ok"]
            row: dict[str, Any] = {"transition": transition, "judge": judge, "n": len(ok)}
            for question in QUESTIONS:
                yes = sum(1 for v in ok if v[question])
                row[question] = yes
                row[f"{question}_pct"] = _pct(yes, len(ok))
            row["null"] = sum(1 for v in mine if v["status"] == "null")
            row["error"] = sum(1 for v in mine if v["status"] == "error")
            per_judge.append(row)
        by_item: dict[str, dict[str, dict[str, Any]]] = {}
        for v in here:
            if v["status"] == "ok":
                by_item.setdefault(v["record_id"], {})[v["judge"]] = v
        complete = [answers for answers in by_item.values() if len(answers) == len(judges)]
        for question in QUESTIONS:
            yes = sum(1 for answers in complete if all(a[question] for a in answers.values()))
            no = sum(1 for answers in complete if not any(a[question] for a in answers.values()))
            n = len(complete)
            agreement.append(
                {
                    "transition": transition,
                    "question": question,
                    "judges": len(judges),
                    "n": n,
                    "unanimous_yes": yes,
                    "unanimous_yes_pct": _pct(yes, n),
                    "unanimous_no": no,
                    "unanimous_no_pct": _pct(no, n),
                    "split": n - yes - no,
                    "unanimity_pct": _pct(yes + no, n),
                }
            )
    return MetaJudgeTable(per_judge, agreement, counts)


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def table_markdown(table: MetaJudgeTable) -> str:
    """Table 22 as markdown: judges' shares, then agreement across judges, then the item counts."""
    lines = [
        "## Rewrite validation by meta-judges (paper 000 App. N, Table 22)",
        "",
        "| transition | judge | n | preserved | preserved % | hardened | hardened % | null | error |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table.per_judge:
        cells = [r["transition"], r["judge"], r["n"], r["preserved"], r["preserved_pct"], r["hardened"]]
        cells += [r["hardened_pct"], r["null"], r["error"]]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    lines += [
        "",
        "Across judges (items every judge voted on):",
        "",
        "| transition | question | judges | n | unanimous yes | yes % | unanimous no | no % | split | unanimity % |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table.agreement:
        cells = [r["transition"], r["question"], r["judges"], r["n"], r["unanimous_yes"], r["unanimous_yes_pct"]]
        cells += [r["unanimous_no"], r["unanimous_no_pct"], r["split"], r["unanimity_pct"]]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    lines += ["", "| transition | items voted on | FAILED rewrites (not judged) |", "|---|---|---|"]
    lines += [f"| {r['transition']} | {r['items']} | {r['failed_rewrites']} |" for r in table.items]
    return "\n".join(lines) + "\n"


def _csv(rows: Sequence[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]) if rows else [], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def write_table(table: MetaJudgeTable, votes: Sequence[dict[str, Any]], out_dir: str | Path) -> list[Path]:
    """``table22.md``, ``table22.json``, ``table22_judges.csv``, ``table22_agreement.csv`` and ``votes.jsonl``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    body = {"per_judge": table.per_judge, "agreement": table.agreement, "items": table.items}
    files = {
        "table22.md": table_markdown(table),
        "table22.json": json.dumps(body, sort_keys=True, ensure_ascii=False, indent=2) + "\n",
        "table22_judges.csv": _csv(table.per_judge),
        "table22_agreement.csv": _csv(table.agreement),
    }
    written = []
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
        written.append(out / name)
    keys = ("judge", "record_id", "transition", "status", "preserved", "hardened", "reason", "source", "rewrite")
    written.append(write_jsonl([{k: v[k] for k in keys} for v in votes], out / "votes.jsonl", sort_keys=True))
    return written
