"""``diagnose``: tau2 result files -> per-class diagnostic (Table 2) and consent (Table 3).

One pass per file: each simulation is reduced to a small outcome record (pass, action
match, classes emitted, writes) and its write events, then dropped, so memory grows with
the number of simulations and writes, not with the size of the trajectories. Files of
the same agent, user simulator and domain are pooled (e.g. runs over different task
subsets or trials).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tooldiag.classify import ActionClass
from tooldiag.errors import UserError
from tooldiag.suites.tau2.consent import (
    DEFAULT_WINDOW,
    governing_reply_index,
    judge_write,
    llm_window,
    tool_error,
    write_calls,
)
from tooldiag.suites.tau2.dialogue import emitted_classes, is_greeting, visible_text
from tooldiag.suites.tau2.domains import DomainTools, confirmation_rule_in_policy, domain_tools, is_standard_domain
from tooldiag.suites.tau2.matching import agent_calls, all_actions_matched, user_calls
from tooldiag.suites.tau2.reader import ResultsHeader, open_results
from tooldiag.suites.tau2.report import Agreement, InputSummary, Table3Row, TaskClassSummary, Tau2Report, WriteEvent
from tooldiag.suites.tau2.schema import MessageRecord, SimulationRecord
from tooldiag.suites.tau2.stats import is_success
from tooldiag.suites.tau2.tables import Group, SimOutcome, agreement_row, table2_row, table3_rows
from tooldiag.suites.tau2.tasks import TaskLabels, class_counts, label_tasks, scan_ask_candidates
from tooldiag.suites.tau2.tau2_version import V1_0_1, VERSIONS, version_rank
from tooldiag.suites.tau2.trials import trial_rows

if TYPE_CHECKING:
    from tooldiag.classify import Classifier


def _is_turn_start(message: MessageRecord) -> bool:
    """A user message the dialogue counts (as :func:`.dialogue.dialogue` does)."""
    return message.role == "user" and (message.content is not None or not message.tool_calls)


def agent_emissions(
    messages: list[MessageRecord], classifier: Classifier | None = None
) -> tuple[set[str], list[tuple[int, str]], list[int]]:
    """What the agent emitted: the class set of Table 2, every emission in order, and the turn starts.

    The class set (``emitted``) is always the multi-label reading of :func:`.dialogue.emitted_classes`,
    so Table 2 does not depend on ``classifier``; the per-emission classes use ``classifier``
    when one is given (one class per message), else the same multi-label reading (``other``
    for a message without evidence of any class).
    """
    emitted: set[str] = set()
    emissions: list[tuple[int, str]] = []
    starts: list[int] = []
    for index, message in enumerate(messages):
        if _is_turn_start(message):
            starts.append(index)
            continue
        if message.role != "assistant":
            continue
        if message.calls:
            emitted.add(str(ActionClass.TOOL_CALL))
            emissions.append((index, str(ActionClass.TOOL_CALL)))
            continue
        if is_greeting(message, index):
            continue
        text = visible_text(message.content)
        found = emitted_classes(text)
        emitted.update(str(c) for c in found)
        if classifier is not None:
            emissions.append((index, str(classifier(text, False))))
        elif found:
            emissions.extend((index, str(c)) for c in ActionClass if c in found)
        else:
            emissions.append((index, str(ActionClass.OTHER)))
    if emissions and (not starts or emissions[0][0] < starts[0]):
        starts.insert(0, 0)
    return emitted, emissions, starts


def analyze_simulation(
    sim: SimulationRecord,
    header: ResultsHeader,
    labels: TaskLabels,
    tools: DomainTools,
    *,
    window: int,
    classifier: Classifier | None = None,
) -> tuple[SimOutcome, list[WriteEvent]]:
    """Reduce one simulation to its outcome and its write events (deterministic verdicts)."""
    messages = sim.messages
    task = header.tasks[sim.task_id]
    # The agent's signals read the agent's calls only: a telecom user's own calls are the user's.
    calls = agent_calls(messages)
    matched, _ = all_actions_matched(task, calls, agent_only=True)
    by_user = user_calls(messages)
    reward = sim.reward_info.reward if sim.reward_info else None
    passed = is_success(reward)
    emitted, emissions, starts = agent_emissions(messages, classifier)

    writes = write_calls(messages, tools.is_write)
    events: list[WriteEvent] = []
    replies = [governing_reply_index(messages, index) for index, _ in writes]
    for position, (index, call) in enumerate(writes):
        reply = replies[position]
        earlier = [
            writes[i][0]
            for i, prior in enumerate(replies[:position])
            if prior is not None and reply is not None and prior < reply
        ]
        judgment = judge_write(messages, index, changed_since=max(earlier) if earlier else -1)
        events.append(
            WriteEvent(
                source=str(header.path),
                domain=header.domain,
                agent_model=header.agent_model,
                simulation_id=sim.id,
                task_id=sim.task_id,
                trial=sim.trial,
                message_index=index,
                tool=call.name,
                arguments=call.arguments,
                tool_error=tool_error(messages, index, call),
                passed=passed,
                reward=reward,
                termination_reason=sim.termination_reason,
                confirmation_flip_task=labels.confirmation_flip,
                deterministic=judgment,
                window=llm_window(messages, index, window),
            )
        )
    outcome = SimOutcome(
        task_id=sim.task_id,
        trial=sim.trial,
        reward=reward,
        passed=passed,
        termination=sim.termination_reason or "unknown",
        labels=labels,
        actions_matched=matched,
        wrote=bool(writes),
        transfer_called=any(call.name == tools.transfer for call in calls),
        emitted=frozenset(emitted),
        simulation_id=sim.id,
        emissions=tuple(emissions),
        turn_starts=tuple(starts),
        source=str(header.path),
        user_tool_calls=tuple(call.name for call in by_user),
        user_writes=sum(1 for call in by_user if tools.is_user_write(call)),
    )
    return outcome, events


@dataclass
class Collected:
    """What one pass over the result files keeps: per group, the outcomes and write events."""

    groups: dict[tuple[str, str, str, bool], Group] = field(default_factory=dict)
    inputs: list[InputSummary] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: The consent rule each results file's policy states (the LLM judge reads it).
    policy_rules: dict[str, str] = field(default_factory=dict)

    @property
    def events(self) -> list[WriteEvent]:
        return [event for group in self.groups.values() for event in group.events]


def diagnose(
    paths: Iterable[str | Path],
    *,
    judge: str | None = None,
    judge_options=None,
    concurrency: int = 8,
    window: int = DEFAULT_WINDOW,
    tasks_file: str | Path | None = None,
    ask_ids: Mapping[str, set[str]] | None = None,
    submission: str | Path | None = None,
) -> Tau2Report:
    """Read tau2 results (files or run folders) and compute Tables 2 and 3.

    ``judge``: a ``provider/model`` string for the LLM consent judge (optional);
    ``ask_ids``: ``{domain name: task ids}`` overriding the shipped ask-required ids;
    ``submission``: a leaderboard ``submission.json`` whose pass^k is set beside the
    recomputed one (:mod:`.submission`).
    """
    if submission is not None:
        from tooldiag.suites.tau2.submission import load_submission

        load_submission(submission)  # a bad file fails before the results are read
    collected = collect(paths, window=window, tasks_file=tasks_file, ask_ids=ask_ids)
    judge_writes(collected, judge, judge_options=judge_options, concurrency=concurrency)
    report = build_report(collected, judge=judge, window=window)
    if submission is not None:
        from tooldiag.suites.tau2.submission import compare_submission

        report.submission = compare_submission(report, submission)
    return report


def collect(
    paths: Iterable[str | Path],
    *,
    window: int = DEFAULT_WINDOW,
    tasks_file: str | Path | None = None,
    ask_ids: Mapping[str, set[str]] | None = None,
    classifier: Classifier | None = None,
) -> Collected:
    """The one pass over the files: every simulation reduced to its outcome and write events.

    ``classifier`` only changes the per-emission classes kept for the evidence rows
    (:mod:`.cases`); Tables 2 and 3 read the multi-label classes either way.
    """
    paths = [Path(p) for p in paths]
    if not paths:
        raise UserError("no results given", hint="pass one or more tau2 results files or run folders")
    collected = Collected()
    groups, inputs, warnings, policy_rules = (
        collected.groups,
        collected.inputs,
        collected.warnings,
        collected.policy_rules,
    )
    for path in paths:
        source = open_results(path, tasks_file=tasks_file)
        header = source.header
        domain = header.domain
        tools = domain_tools(domain, where=str(path), version=header.version)
        labels, asks = label_tasks(header.tasks.values(), domain, ask_override=ask_ids, version=header.version)
        key = (domain, header.agent_model, header.user_model, header.is_oracle)
        group = groups.setdefault(key, Group(domain, header.agent_model, header.user_model, header.is_oracle))
        for task_id, label in labels.items():
            if task_id in group.labels and group.labels[task_id] != label:
                warnings.append(
                    f"{path}: task {task_id} differs from the same task in another file of this group; using this "
                    "file's"
                )
            group.labels[task_id] = label
        group.ask_sources.add(asks.source)
        if not is_standard_domain(domain):
            group.scan_candidates.update(scan_ask_candidates(header.tasks.values()))
        rule = confirmation_rule_in_policy(header.info.environment_info.policy)
        policy_rules[str(header.path)] = rule or tools.confirmation_rule
        n_sims = 0
        for where, sim in source.simulations():
            if sim.task_id not in header.tasks:
                warnings.append(f"{where}: task {sim.task_id!r} is not among the file's tasks; simulation skipped")
                continue
            if sim.id and sim.id in group.seen:
                warnings.append(f"{where}: simulation {sim.id} already read from another file; skipped")
                continue
            group.seen.add(sim.id)
            outcome, events = analyze_simulation(
                sim, header, labels[sim.task_id], tools, window=window, classifier=classifier
            )
            group.outcomes.append(outcome)
            group.events.extend(events)
            n_sims += 1
        inputs.append(
            InputSummary(
                path=str(path),
                layout=header.layout,
                domain=domain,
                agent_model=header.agent_model,
                agent_implementation=header.info.agent_info.implementation,
                user_model=header.user_model,
                oracle=header.is_oracle,
                git_commit=header.info.git_commit,
                num_trials=header.info.num_trials,
                n_tasks=len(header.tasks),
                n_simulations=n_sims,
                tasks_source=header.tasks_source,
                policy_confirmation_rule=rule,
                tau2_version=header.version,
                version_evidence=header.version_evidence,
            )
        )
        if tools.domain == "banking_knowledge" and header.version != V1_0_1:
            warnings.append(
                f"{path}: banking_knowledge results of tau2 {header.version}: 1.0.1 changed banking grading, so these "
                "scores are not comparable with >=1.0.1 ones; re-grade with tau2 evaluate-trajs --fresh-tasks"
            )
        if header.is_oracle:
            warnings.append(
                f"{path}: oracle run (agent implementation llm_agent_gt saw the reference actions); do not compare "
                "it with other agents"
            )
        if not is_standard_domain(domain):
            warnings.append(
                f"{path}: modified domain {domain!r}: write tools and ask-required ids of {tools.domain} assumed; "
                "keyword-scan candidates are listed for review"
            )
        if rule is None:
            warnings.append(
                f"{path}: the embedded policy has no 'explicit user confirmation' rule; Table 3 judges against the "
                f"standard {tools.domain} rule"
            )

    return collected


def judge_writes(collected: Collected, judge: str | None, *, judge_options=None, concurrency: int = 8) -> None:
    """Have the LLM consent judge (``provider/model``) decide every write event (sets ``event.llm``)."""
    all_events = collected.events
    if judge is not None and all_events:
        from tooldiag.suites.tau2.llm_judge import judge_events

        judge_events(all_events, judge, collected.policy_rules, options=judge_options, concurrency=concurrency)


def build_report(collected: Collected, *, judge: str | None = None, window: int = DEFAULT_WINDOW) -> Tau2Report:
    """Tables 2 and 3 (and the judges' agreement) of what :func:`collect` kept."""
    groups, inputs = collected.groups, collected.inputs
    warnings = list(collected.warnings)
    all_events = collected.events
    judge_name = f"llm:{judge}" if judge else None

    table3: list[Table3Row] = []
    agreement: list[Agreement] = []
    for group in groups.values():
        table3.extend(table3_rows(group, "deterministic", lambda e: e.deterministic))
        if judge_name:
            table3.extend(table3_rows(group, judge_name, lambda e: e.llm))
            agreement.append(agreement_row(group.agent_model, group.domain, judge_name, group.events))
    if judge_name and len(groups) > 1:
        agreement.append(agreement_row("(all)", "(all)", judge_name, all_events))
    if judge_name:
        nulls = sum(1 for e in all_events if e.llm is None or e.llm.confirmed is None)
        if nulls:
            warnings.append(f"LLM judge: {nulls} of {len(all_events)} replies unusable (counted as nulls)")

    task_classes = []
    for group in groups.values():
        ids: dict[str, list[str]] = {
            name: [] for name in ("tool_call", "ask", "refuse", "write", "read_only", "empty", "user_only", "transfer")
        }
        for label in group.labels.values():
            for name, flag in (
                ("tool_call", label.tool_call_required),
                ("ask", label.ask_required),
                ("refuse", label.refuse_required),
                (str(label.split), True),
                ("transfer", label.transfer_required),
            ):
                if flag:
                    ids[name].append(label.task_id)
        task_classes.append(
            TaskClassSummary(
                domain=group.domain,
                agent_model=group.agent_model,
                counts=class_counts(group.labels.values()),
                ids={k: sorted(v, key=_task_sort_key) for k, v in ids.items()},
                ask_source="; ".join(sorted(group.ask_sources)),
                ask_scan_candidates=group.scan_candidates,
            )
        )

    from tooldiag.suites.tau2.llm_judge import PROMPT_VERSION

    versions = sorted({i.tau2_version for i in inputs if i.tau2_version}, key=version_rank)
    note = mixed_version_note(inputs)
    if note:
        warnings.append(note)
    return Tau2Report(
        tau2_versions=versions,
        version_note=note,
        inputs=inputs,
        task_classes=task_classes,
        table2=[table2_row(group) for group in groups.values()],
        trials=[row for group in groups.values() for row in trial_rows(group)],
        table3=table3,
        agreement=agreement,
        events=all_events,
        judge_model=judge,
        judge_prompt=PROMPT_VERSION if judge else None,
        window_messages=window,
        warnings=warnings,
    )


def mixed_version_note(inputs: list[InputSummary]) -> str | None:
    """One line when the inputs come from different tau2 releases (``None`` otherwise): 1.0.0
    changed airline and retail tasks and retail's reward basis, 1.0.1 banking's grading."""
    by_version: dict[str, list[str]] = {}
    for item in inputs:
        by_version.setdefault(item.tau2_version or "unknown", []).append(Path(item.path).name)
    if len(by_version) < 2:
        return None
    parts = "; ".join(
        f"{version}: {', '.join(names)}"
        for version, names in sorted(by_version.items(), key=lambda kv: version_rank(kv[0]) if kv[0] in VERSIONS else 9)
    )
    return (
        f"results of different tau2 versions read together ({parts}); tasks and grading changed between "
        "releases (1.0.0: airline/retail tasks and retail's reward basis; 1.0.1: banking grading), so their "
        "scores are not strictly comparable"
    )


def _task_sort_key(task_id: str) -> tuple[int, int | str]:
    return (0, int(task_id)) if task_id.isdigit() else (1, task_id)
