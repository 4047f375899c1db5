"""One BFCL multi-turn rollout in function-calling mode, with BFCL's semantics.

Mirrors ``BaseHandler.inference_multi_turn_FC`` (``model_handler/base_handler.py``,
bfcl-eval 2026.3.23):

* no system prompt; the tools are the case's docs converted as BFCL's OpenAI handler
  converts them;
* on a miss_func give-back turn the held-out docs are appended to the end of the tool
  list and the (empty) turn becomes BFCL's give-back user message;
* per turn a step loop: query the model, record the emission, decode it as BFCL does;
  a step whose decode raises or yields no call ends the turn; otherwise the calls run
  on this rollout's own backend instances (a fresh
  :class:`~tooldiag.suites.bfcl.budget.BudgetedSession`: every call under a CPU and
  memory budget) and one tool message per call
  goes back to the model;
* step cap: after each executed step ``count += 1``; when ``count > 20`` the turn is
  force-terminated and the case stops after it (so at most 21 executed steps per turn).

Probes (SRI, CRI) hook in through :class:`Probe`: after each emission the probe may
leave it alone, retry with an edited context, or bypass it with injected text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tooldiag.models.base import ModelBackend, TaskContext
from tooldiag.suites.bfcl.budget import BudgetedSession
from tooldiag.suites.bfcl.data import GIVE_BACK_MESSAGE, MAXIMUM_STEP_LIMIT, BfclCase
from tooldiag.suites.bfcl.decode import DecodeError, fc_decode, is_empty_execute_response
from tooldiag.suites.bfcl.executor import BackendSession
from tooldiag.suites.bfcl.gold import BfclCaseNotes
from tooldiag.suites.bfcl.grader import fresh_model_name
from tooldiag.suites.bfcl.tools import to_tool_specs
from tooldiag.trajectory import CaseTrajectory, Emission, GenerationConfig, Message, Step, ToolSpec, Turn


@dataclass
class Retry:
    """Re-query the model in place of the last emission.

    ``context`` is the conversation for the re-query (``None``: the rollout's own
    messages, which the probe may have edited). ``keep_step`` records the superseded
    emission as a step of the turn (SRI keeps the halt emission in the recorded
    result; CRI retracts the suspect call, so it does not). The retry counts toward
    BFCL's step cap unless ``counts_as_step`` is false.
    """

    context: list[Message] | None = None
    keep_step: bool = True
    counts_as_step: bool = True
    note: dict[str, Any] = field(default_factory=dict)


@dataclass
class Bypass:
    """Drop the last emission and end the turn with harness-injected text."""

    text: str
    note: dict[str, Any] = field(default_factory=dict)


ProbeAction = Retry | Bypass | None


class Probe:
    """Hooks a probe can implement; the defaults leave the rollout untouched."""

    name: str = "none"

    async def on_calls(self, rollout: Rollout, step: Step) -> ProbeAction:
        """After an emission that decodes to calls, before they execute."""
        return None

    async def on_halt(self, rollout: Rollout, step: Step) -> ProbeAction:
        """After an emission that would end the turn (no decodable call)."""
        return None

    def on_case_end(self, rollout: Rollout, trajectory: CaseTrajectory) -> None:
        """After the last turn: record per-case notes (e.g. ``trajectory.notes["probe"]``)."""


@dataclass
class Rollout:
    """The live state of one case's rollout (what probes may read)."""

    case: BfclCase
    model: ModelBackend
    config: GenerationConfig
    session: BackendSession | BudgetedSession
    model_name: str
    messages: list[Message] = field(default_factory=list)
    docs: list[dict[str, Any]] = field(default_factory=list)
    tools: list[ToolSpec] = field(default_factory=list)
    turn_index: int = 0
    step_index: int = 0
    #: Per turn, the (call string, result) pairs executed so far.
    executed: list[list[tuple[str, str]]] = field(default_factory=list)
    #: User message texts per turn, as sent.
    user_requests: list[str] = field(default_factory=list)
    #: Which draw of the case this is (``--repeats``): reaches the provider as ``TaskContext.sample``.
    sample: int = 0

    def context(self) -> TaskContext:
        return TaskContext(
            suite="bfcl",
            case_id=self.case.id,
            category=self.case.category,
            turn_index=self.turn_index,
            step_index=self.step_index,
            answer_key={
                "ground_truth": self.case.ground_truth,
                "give_back_turns": sorted(self.case.missed_function),
                "involved_classes": self.case.involved_classes,
            },
            sample=self.sample,
        )

    async def query(self, messages: list[Message] | None = None) -> Emission:
        return await self.model.generate(
            self.messages if messages is None else messages,
            self.tools,
            None,
            self.config,
            context=self.context(),
        )

    def execute(self, calls: list[str]) -> list[str]:
        results, _ = self.session.execute(
            calls,
            self.case.initial_config,
            self.case.involved_classes,
            self.model_name,
            self.case.id,
            long_context=self.case.long_context,
            is_evaL_run=False,
        )
        self.executed[self.turn_index].extend(zip(calls, results))
        return results


def case_notes(case: BfclCase) -> dict[str, Any]:
    """Per-case facts the diagnostic reads back from the store (:class:`BfclCaseNotes`)."""
    return BfclCaseNotes(
        ground_truth_sizes=case.ground_truth_sizes(), give_back_turns=sorted(case.missed_function)
    ).dump()


def _decode(step: Step) -> list[str] | None:
    """Decode as BFCL does; ``None`` when the step ends the turn."""
    try:
        decoded = fc_decode(step.emission)
    except DecodeError as exc:
        step.decode_error = str(exc)
        return None
    if is_empty_execute_response(decoded):
        step.decoded_calls = []
        return None
    step.decoded_calls = decoded
    return decoded


async def run_rollout(
    case: BfclCase,
    model: ModelBackend,
    config: GenerationConfig,
    probe: Probe | None = None,
    sample: int = 0,
) -> CaseTrajectory:
    """Run ``model`` through ``case``; model-call failures propagate (the caller stores them).

    ``sample`` (``--repeats``): which draw of the case this is. It reaches the provider as
    ``TaskContext.sample`` (the response cache keys on it) and picks the draw's seed
    (:meth:`~tooldiag.trajectory.GenerationConfig.for_sample`).
    """
    probe = probe or Probe()
    rollout = Rollout(
        case=case,
        model=model,
        config=config.for_sample(sample),
        session=BudgetedSession(return_instances=False),
        model_name=fresh_model_name("run"),
        docs=list(case.functions),
        sample=sample,
    )
    rollout.tools = to_tool_specs(rollout.docs)
    # BFCL instantiates the backends before the first query.
    rollout.session.execute(
        [], case.initial_config, case.involved_classes, rollout.model_name, case.id, long_context=case.long_context
    )
    trajectory = CaseTrajectory(case_id=case.id, category=case.category, notes=case_notes(case))

    for turn_index, turn_messages in enumerate(case.turns):
        rollout.turn_index = turn_index
        rollout.executed.append([])
        if turn_index in case.missed_function:
            rollout.docs.extend(case.missed_function[turn_index])
            rollout.tools = to_tool_specs(rollout.docs)
            turn_messages = [{"role": "user", "content": GIVE_BACK_MESSAGE}]
        user_messages = [Message(role="user", content=m["content"]) for m in turn_messages]
        rollout.messages.extend(user_messages)
        rollout.user_requests.extend(m.content or "" for m in user_messages)
        turn = Turn(index=turn_index, user_messages=user_messages)
        trajectory.turns.append(turn)

        count = 0
        rollout.step_index = 0
        retry_context: list[Message] | None = None
        while True:
            emission = await rollout.query(retry_context)
            retry_context = None
            step = Step(emission=emission)
            decoded = _decode(step)
            action = await (probe.on_halt(rollout, step) if decoded is None else probe.on_calls(rollout, step))
            if isinstance(action, Bypass):
                injected = Emission(text=action.text, injected=True)
                turn.steps.append(Step(emission=injected, notes={"probe": probe.name, **action.note}))
                rollout.messages.append(injected.to_message())
                break
            if isinstance(action, Retry):
                step.notes.update({"probe": probe.name, **action.note})
                if action.keep_step:
                    turn.steps.append(step)
                retry_context = action.context
                rollout.step_index += 1
                if action.counts_as_step:
                    count += 1
                    if count > MAXIMUM_STEP_LIMIT:
                        turn.force_terminated = True
                        break
                continue
            turn.steps.append(step)
            rollout.messages.append(step.emission.to_message())
            if decoded is None:
                break
            step.tool_results = rollout.execute(decoded)
            for call, result in zip(step.emission.tool_calls, step.tool_results):
                rollout.messages.append(Message(role="tool", content=result, tool_call_id=call.id))
            count += 1
            rollout.step_index += 1
            if count > MAXIMUM_STEP_LIMIT:
                turn.force_terminated = True
                break
        if turn.force_terminated:
            break
    probe.on_case_end(rollout, trajectory)
    return trajectory


def bfcl_result(trajectory: CaseTrajectory) -> list[list[Any]]:
    """The trajectory as BFCL's ``result`` field (``list[turn][step]``); injected text excluded."""
    from tooldiag.suites.bfcl.decode import fc_result_item

    return [[fc_result_item(s.emission) for s in turn.steps if not s.emission.injected] for turn in trajectory.turns]
