"""Aggregation of simulation outcomes into Table 2, Table 3 and the judges' agreement.

Pure functions over the records :mod:`.analysis` keeps per simulation and per write.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from tooldiag.classify import ActionClass
from tooldiag.suites.tau2.report import Agreement, ClassCell, Judgment, Rate, Table2Row, Table3Row, WriteEvent
from tooldiag.suites.tau2.schema import INFRASTRUCTURE_ERROR
from tooldiag.suites.tau2.stats import cohen_kappa, mean, pass_hat_ks, wilson
from tooldiag.suites.tau2.tasks import TaskLabels


@dataclass
class SimOutcome:
    """What the diagnostic keeps of one simulation."""

    task_id: str
    trial: int | None
    reward: float | None
    passed: bool
    termination: str
    labels: TaskLabels
    actions_matched: bool | None
    wrote: bool
    transfer_called: bool
    emitted: frozenset[str]
    #: The simulation's id (tau2's ``id``; empty in files that carry none).
    simulation_id: str = ""
    #: ``(message index, class)`` of every agent emission in order (the greeting left out): a
    #: tool-call message is ``tool_call``; a text message gives each class it shows evidence of
    #: (multi-label, as ``emitted``) or ``other``; with a classifier, that classifier's one class.
    emissions: tuple[tuple[int, str], ...] = ()
    #: Message index where each turn starts (a turn runs from one user message to the next;
    #: agent messages before the first user message form a turn only when there are any).
    turn_starts: tuple[int, ...] = ()
    #: The results file the simulation was read from.
    source: str = ""
    #: The user simulator's own tool calls, in order (telecom, banking): user-side, so in no
    #: agent class, GAR or write event; kept so the rows can show them.
    user_tool_calls: tuple[str, ...] = ()
    #: How many of them were writes by the domain's user-tool types.
    user_writes: int = 0

    @property
    def infrastructure_error(self) -> bool:
        return self.termination == INFRASTRUCTURE_ERROR


@dataclass
class Group:
    """The simulations of one agent, user simulator and domain, pooled over files."""

    domain: str
    agent_model: str
    user_model: str
    oracle: bool
    labels: dict[str, TaskLabels] = field(default_factory=dict)
    ask_sources: set[str] = field(default_factory=set)
    scan_candidates: dict[str, list[str]] = field(default_factory=dict)
    outcomes: list[SimOutcome] = field(default_factory=list)
    events: list[WriteEvent] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)


def _cell(
    name: str,
    signal: str,
    outcomes: list[SimOutcome],
    member: Callable[[SimOutcome], bool],
    hit: Callable[[SimOutcome], bool],
) -> ClassCell:
    sims = [o for o in outcomes if member(o)]
    gar = wilson(sum(1 for o in sims if hit(o)), len(sims))
    acc = wilson(sum(1 for o in sims if o.passed), len(sims))
    delta = None if gar.value is None or acc.value is None else gar.value - acc.value
    return ClassCell(
        task_class=name,
        signal=signal,
        n_tasks=len({o.task_id for o in sims}),
        n_simulations=len(sims),
        gar=Rate.of(gar),
        acc=Rate.of(acc),
        delta=delta,
    )


_NO_WRITE = "no write-tool call in the trajectory"
_MATCHED = "every reference action matched by some tool call (recomputed)"
_ASKED = "an agent message the user saw was classified ask"
_TRANSFERRED = "transfer_to_human_agents called"


#: One class of Table 2: (view, class, signal in words, which simulations belong, which hit the gold action).
ClassSpec = tuple[str, str, str, Callable[[SimOutcome], bool], Callable[[SimOutcome], bool]]


def class_specs(group: Group) -> list[ClassSpec]:
    """The classes of Table 2 (``paper``) and Table 2b (``split``) with their GAR signals, in table order.

    One list for every view of the classes (Table 2 and the trial spread of :mod:`.trials`), so
    that a class's membership and hit are defined once.
    """
    specs: list[ClassSpec] = [
        ("paper", "tool_call", _MATCHED, lambda o: o.labels.tool_call_required, lambda o: o.actions_matched is True),
        ("paper", "ask", _ASKED, lambda o: o.labels.ask_required, lambda o: str(ActionClass.ASK) in o.emitted),
        ("paper", "refuse", _NO_WRITE, lambda o: o.labels.refuse_required, lambda o: not o.wrote),
        ("split", "write", _MATCHED, lambda o: str(o.labels.split) == "write", lambda o: o.actions_matched is True),
        ("split", "read_only", _NO_WRITE, lambda o: str(o.labels.split) == "read_only", lambda o: not o.wrote),
        ("split", "empty", _NO_WRITE, lambda o: str(o.labels.split) == "empty", lambda o: not o.wrote),
    ]
    if any(str(label.split) == "user_only" for label in group.labels.values()):
        specs.append(
            ("split", "user_only", _NO_WRITE, lambda o: str(o.labels.split) == "user_only", lambda o: not o.wrote)
        )
    # Overlaps the rows above; tau2's DB check cannot see a missing transfer (notes §4).
    specs.append(("split", "transfer", _TRANSFERRED, lambda o: o.labels.transfer_required, lambda o: o.transfer_called))
    return specs


def table2_row(group: Group) -> Table2Row:
    """Paper 001 Table 2 for one group; rates over simulations (task x trial)."""
    scored = [o for o in group.outcomes if not o.infrastructure_error]
    by_task: dict[str, list[bool]] = {}
    for outcome in scored:
        by_task.setdefault(outcome.task_id, []).append(outcome.passed)
    # The leaderboard convention of RELEASE_NOTES 1.0.1: an infrastructure error is a failed trial.
    by_task_all: dict[str, list[bool]] = {}
    for outcome in group.outcomes:
        by_task_all.setdefault(outcome.task_id, []).append(outcome.passed and not outcome.infrastructure_error)
    specs = class_specs(group)
    paper = [_cell(name, signal, scored, member, hit) for view, name, signal, member, hit in specs if view == "paper"]
    split = [_cell(name, signal, scored, member, hit) for view, name, signal, member, hit in specs if view == "split"]
    return Table2Row(
        agent_model=group.agent_model,
        user_model=group.user_model,
        domain=group.domain,
        oracle=group.oracle,
        n_tasks=len(by_task),
        n_simulations=len(scored),
        n_infrastructure_errors=len(group.outcomes) - len(scored),
        avg_reward=mean(o.reward or 0.0 for o in scored),
        pass_hat_k=pass_hat_ks(by_task),
        pass_hat_k_infra_as_failure=pass_hat_ks(by_task_all),
        terminations=dict(Counter(o.termination for o in group.outcomes)),
        n_user_tool_calls=sum(len(o.user_tool_calls) for o in group.outcomes),
        n_user_writes=sum(o.user_writes for o in group.outcomes),
        paper_classes=paper,
        write_split=split,
    )


def table3_rows(group: Group, judge: str, pick: Callable[[WriteEvent], Judgment | None]) -> list[Table3Row]:
    rows: list[Table3Row] = []
    judged = [(e, pick(e)) for e in group.events]
    subsets: list[tuple[str, Callable[[Judgment], bool]]] = [
        ("all", lambda j: True),
        ("answer_changed", lambda j: j.answer_changed is True),
        ("answer_unchanged", lambda j: j.answer_changed is False),
    ]
    for subset, keep in subsets:
        chosen = [(e, j) for e, j in judged if j is not None and j.confirmed is not None and keep(j)]
        nulls = sum(1 for _, j in judged if j is None or j.confirmed is None) if subset == "all" else 0
        gar = wilson(sum(1 for _, j in chosen if j.confirmed), len(chosen))
        acc = wilson(sum(1 for e, _ in chosen if e.passed), len(chosen))
        rows.append(
            Table3Row(
                agent_model=group.agent_model,
                domain=group.domain,
                oracle=group.oracle,
                judge=judge,
                subset=subset,
                n_events=len(chosen),
                n_null=nulls,
                gar=Rate.of(gar),
                acc=Rate.of(acc),
                delta=None if gar.value is None or acc.value is None else gar.value - acc.value,
            )
        )
    return rows


def agreement_row(agent_model: str, domain: str, judge: str, events: list[WriteEvent]) -> Agreement:
    # (deterministic, llm) judgments of the events both judges decided
    paired = [(e.deterministic, e.llm) for e in events if e.llm is not None and e.llm.confirmed is not None]
    det = [bool(d.confirmed) for d, _ in paired]
    llm = [bool(j.confirmed) for _, j in paired]
    changed = [(d, j) for d, j in paired if j.answer_changed is not None]
    kappa = cohen_kappa(det, llm) if paired else None
    kappa_changed = (
        cohen_kappa([bool(d.answer_changed) for d, _ in changed], [bool(j.answer_changed) for _, j in changed])
        if changed
        else None
    )
    return Agreement(
        agent_model=agent_model,
        domain=domain,
        judge=judge,
        n_events=len(paired),
        n_null=len(events) - len(paired),
        percent_agreement=(100.0 * sum(a == b for a, b in zip(det, llm)) / len(paired)) if paired else None,
        kappa_confirmed=None if kappa is None or math.isnan(kappa) else kappa,
        kappa_answer_changed=None if kappa_changed is None or math.isnan(kappa_changed) else kappa_changed,
    )
