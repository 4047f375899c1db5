"""One case, turn by turn, with the action class of every emission and the reason for it.

A calibration profile says that a grader passed cases without the gold action; a
transcript shows one of them: what the user asked at each turn, what the model emitted
(text, reasoning, tool calls with their raw arguments, parse errors), the class the
classifier gave each emission and why (:class:`~tooldiag.classify.explain.Explanation`),
how the benchmark decoded the calls and what the tools answered, which turns are gold
turns, and the verdicts: the grader's (passed, error type, message) and the diagnostic's
(:mod:`tooldiag.metrics.cases`: gold_hit, masked / execution_failure / ok / fail).

Suite-agnostic: an adapter (``suites/bfcl/transcript.py``, ``diagnose/transcript.py``)
hands :func:`build_transcript` the shared :class:`~tooldiag.trajectory.Turn` objects and
the case's facts; the verdict comes from the same functions ``tooldiag cases`` uses, on
the counted emissions only (injected text is shown, marked, and never counted).
Renderers: :func:`render_text` (rich, for a terminal, long tool results cut with a
marker) and :meth:`Transcript.to_json` (complete, nothing cut).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tooldiag.classify.classes import ActionClass
from tooldiag.classify.explain import Explanation, explain_many
from tooldiag.metrics.cases import case_verdict, gold_hit
from tooldiag.metrics.gar import CaseObservation
from tooldiag.trajectory import Turn

if TYPE_CHECKING:
    from rich.console import Console

#: Characters of a tool result (or raw argument string) the terminal view shows before the cut marker.
TEXT_RESULT_CHARS = 400
#: Columns the terminal view is laid out for.
TEXT_WIDTH = 100
#: Colour of each class in the terminal view.
CLASS_STYLES = {
    ActionClass.TOOL_CALL: "bold cyan",
    ActionClass.ASK: "bold yellow",
    ActionClass.REFUSE: "bold red",
    ActionClass.CONFIRM: "bold magenta",
    ActionClass.OTHER: "dim",
}


@dataclass(frozen=True)
class TranscriptCall:
    """One tool call as the model emitted it."""

    name: str
    raw_arguments: str | None
    arguments: dict[str, Any] | None
    parse_error: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "raw_arguments": self.raw_arguments,
            "arguments": self.arguments,
            "parse_error": self.parse_error,
        }


@dataclass(frozen=True)
class TranscriptStep:
    """One model emission, its class and reason, and what the harness did with it."""

    index: int
    text: str | None
    reasoning: str | None
    tool_calls: tuple[TranscriptCall, ...]
    #: Harness text in the model's place (a probe's placeholder): shown, never counted.
    injected: bool
    cached: bool
    latency_s: float | None
    finish_reason: str | None
    action_class: ActionClass
    explanation: Explanation
    #: Calls as the benchmark decoded them (BFCL ``name(k=v)`` strings), ``None`` when none / failed.
    decoded_calls: tuple[str, ...] | None
    decode_error: str | None
    tool_results: tuple[str, ...]

    @property
    def counted(self) -> bool:
        """Does this emission count in GAR and the verdict? (Injected text does not.)"""
        return not self.injected

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "text": self.text,
            "reasoning": self.reasoning,
            "tool_calls": [call.to_json() for call in self.tool_calls],
            "injected": self.injected,
            "counted": self.counted,
            "cached": self.cached,
            "latency_s": self.latency_s,
            "finish_reason": self.finish_reason,
            "action_class": self.action_class.value,
            "explanation": self.explanation.to_json(),
            "decoded_calls": None if self.decoded_calls is None else list(self.decoded_calls),
            "decode_error": self.decode_error,
            "tool_results": list(self.tool_results),
        }


@dataclass(frozen=True)
class TranscriptTurn:
    """One user turn: the user's messages, then the model's steps answering it."""

    index: int
    user_messages: tuple[str, ...]
    steps: tuple[TranscriptStep, ...]
    #: Is the gold class due at this turn? (Every turn when the suite names no gold turns.)
    gold_turn: bool
    force_terminated: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "gold_turn": self.gold_turn,
            "force_terminated": self.force_terminated,
            "user_messages": list(self.user_messages),
            "steps": [step.to_json() for step in self.steps],
        }


@dataclass(frozen=True)
class Transcript:
    """One case, as ``tooldiag show`` prints it (docs/evidence.md, "tooldiag show")."""

    #: The run's name (model, plus probe) and where it was read from.
    run: str
    source: str
    case_id: str
    category: str
    #: ``None`` for a category without a known gold class (no diagnostic verdict then).
    gold_class: ActionClass | None
    gold_turns: tuple[int, ...] | None
    turns: tuple[TranscriptTurn, ...]
    gold_hit: bool | None
    #: ``masked`` / ``execution_failure`` / ``ok`` / ``fail`` / ``ungraded`` (tooldiag.metrics.cases).
    verdict: str | None
    passed: bool | None
    error_type: str | None
    error_message: str | None
    #: The classifier scheme that gave the classes.
    scheme: str
    #: Set when inference failed (an error row: not graded).
    inference_error: str | None = None
    notes: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    def steps(self) -> list[TranscriptStep]:
        """Every step of every turn, in order."""
        return [step for turn in self.turns for step in turn.steps]

    def to_json(self) -> dict[str, Any]:
        """The whole transcript as plain JSON (``tooldiag show --format json``): nothing cut."""
        return {
            "run": self.run,
            "source": self.source,
            "case_id": self.case_id,
            "category": self.category,
            "gold_class": None if self.gold_class is None else self.gold_class.value,
            "gold_turns": None if self.gold_turns is None else list(self.gold_turns),
            "gold_hit": self.gold_hit,
            "verdict": self.verdict,
            "passed": self.passed,
            "error_type": self.error_type,
            "error_message": self.error_message,
            "inference_error": self.inference_error,
            "scheme": self.scheme,
            "notes": list(self.notes),
            "extra": dict(self.extra),
            "turns": [turn.to_json() for turn in self.turns],
        }


def build_transcript(
    turns: Sequence[Turn],
    classifier: Any,
    *,
    run: str,
    source: str,
    case_id: str,
    category: str,
    gold_class: ActionClass | None,
    gold_turns: Sequence[int] | None,
    passed: bool | None,
    error_type: str | None = None,
    error_message: str | None = None,
    errored: bool = False,
    inference_error: str | None = None,
    notes: Sequence[str] = (),
    extra: dict[str, Any] | None = None,
    explanations: Sequence[Explanation] | None = None,
) -> Transcript:
    """Classify and explain every emission of ``turns`` and attach the case's verdicts.

    ``gold_turns`` ``None`` means every turn is a gold turn. The verdict is
    :func:`~tooldiag.metrics.cases.case_verdict` of the counted emissions, as in ``tooldiag cases``.
    ``explanations`` (one per emission of ``turns``, in order: :func:`emission_items` of the
    turns, explained by the caller) lets a batch builder explain a whole run in one call.
    """
    items = emission_items(turns)
    if explanations is None:
        explanations = explain_many(classifier, items)
    elif len(explanations) != len(items):
        raise ValueError(f"{len(explanations)} explanations for {len(items)} emissions")
    reasons = iter(explanations)
    gold_set = None if gold_turns is None else set(gold_turns)
    out_turns = []
    counted: list[tuple[ActionClass, ...]] = []
    for turn_index, turn in enumerate(turns):
        steps = []
        for step_index, step in enumerate(turn.steps):
            emission = step.emission
            why = next(reasons)
            calls = tuple(
                TranscriptCall(call.name, call.raw_arguments, call.arguments, call.parse_error)
                for call in emission.tool_calls
            )
            steps.append(
                TranscriptStep(
                    index=step_index,
                    text=emission.text,
                    reasoning=emission.reasoning,
                    tool_calls=calls,
                    injected=emission.injected,
                    cached=emission.cached,
                    latency_s=emission.latency_s,
                    finish_reason=emission.finish_reason,
                    action_class=why.label,
                    explanation=why,
                    decoded_calls=None if step.decoded_calls is None else tuple(step.decoded_calls),
                    decode_error=step.decode_error,
                    tool_results=tuple(step.tool_results),
                )
            )
        counted.append(tuple(step.action_class for step in steps if step.counted))
        out_turns.append(
            TranscriptTurn(
                index=turn_index,
                user_messages=tuple(_message_text(m.content) for m in turn.user_messages),
                steps=tuple(steps),
                gold_turn=gold_set is None or turn_index in gold_set,
                force_terminated=turn.force_terminated,
            )
        )
    hit: bool | None = None
    verdict: str | None = None
    if gold_class is not None:
        observation = CaseObservation(
            case_id=case_id,
            category=category,
            gold=gold_class,
            passed=None if errored else passed,
            turns=tuple(frozenset(classes) - {ActionClass.OTHER} for classes in counted),
            gold_turns=None if gold_turns is None else tuple(gold_turns),
            errored=errored,
            emissions=tuple(counted),
            error_type=error_type,
        )
        hit = gold_hit(observation)
        verdict = case_verdict(observation).value
    return Transcript(
        run=run,
        source=source,
        case_id=case_id,
        category=category,
        gold_class=gold_class,
        gold_turns=None if gold_turns is None else tuple(gold_turns),
        turns=tuple(out_turns),
        gold_hit=hit,
        verdict=verdict,
        passed=None if errored else passed,
        error_type=error_type,
        error_message=error_message,
        scheme=str(getattr(classifier, "name", "")),
        inference_error=inference_error,
        notes=tuple(notes),
        extra=dict(extra or {}),
    )


def emission_items(turns: Sequence[Turn]) -> list[tuple[Any, bool]]:
    """``(text, has_calls)`` of every emission of ``turns``, in order: what the classifier reads."""
    return [(step.emission.text, bool(step.emission.tool_calls)) for turn in turns for step in turn.steps]


def explain_distinct(classifier: Any, items: Sequence[tuple[Any, bool]]) -> list[Explanation]:
    """:func:`~tooldiag.classify.explain.explain_many` of ``items``, each distinct item explained once.

    A whole run repeats itself (every structured call is ``(None, True)``, a policy's closing
    sentence recurs in every case): batch builders explain a run in a fraction of the time.
    The classifiers' promise (one label per input) makes the answer the same as explaining each.
    """
    keys: dict[tuple[Any, bool], int] = {}
    distinct: list[tuple[Any, bool]] = []
    positions: list[int] = []
    for text, has_calls in items:
        key = (text if text is None or isinstance(text, str) else json.dumps(text, sort_keys=True), has_calls)
        position = keys.get(key)
        if position is None:
            position = keys[key] = len(distinct)
            distinct.append((text, has_calls))
        positions.append(position)
    reasons = explain_many(classifier, distinct)
    return [reasons[position] for position in positions]


def _message_text(content: Any) -> str:
    return "" if content is None else content if isinstance(content, str) else json.dumps(content)


# -- rendering ---------------------------------------------------------------------------------
def cut(text: str, limit: int = TEXT_RESULT_CHARS) -> str:
    """``text`` up to ``limit`` characters, then a marker saying how much was left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f" … [cut: {len(text) - limit} more characters; --format json has all]"


def _yes_no(value: bool | None) -> str:
    return "-" if value is None else "yes" if value else "no"


def render_text(transcript: Transcript, console: Console) -> None:
    """Print ``transcript`` for a terminal (readable at :data:`TEXT_WIDTH` columns, classes coloured)."""
    from rich.markup import escape
    from rich.rule import Rule
    from rich.text import Text

    t = transcript
    console.print(Text.assemble(("case ", "bold"), (t.case_id, "bold"), f"  ({t.category})  run {t.run}"))
    console.print(Text(f"source {t.source}", style="dim"))
    gold = t.gold_class.value if t.gold_class else "-"
    header = Text.assemble(
        "gold ",
        (gold, CLASS_STYLES.get(t.gold_class, "") if t.gold_class else ""),
        f" · gold turns {_gold_turns_text(t)} · gold hit {_yes_no(t.gold_hit)} · passed {_yes_no(t.passed)} · verdict ",
        ((t.verdict or "-").upper(), "bold red" if t.verdict in ("masked", "execution_failure") else "bold"),
    )
    console.print(header)
    if t.error_type or t.error_message:
        console.print(Text(f"grader: {t.error_type or '-'}: {cut(t.error_message or '-', 600)}", style="red"))
    if t.inference_error:
        console.print(Text(f"inference error: {t.inference_error}", style="red"))
    console.print(Text(f"classifier: {t.scheme}", style="dim"))
    for note in t.notes:
        console.print(Text(f"note: {note}", style="dim"))
    for turn in t.turns:
        title = f"turn {turn.index}" + (" · GOLD TURN" if turn.gold_turn and t.gold_turns is not None else "")
        if turn.force_terminated:
            title += " · stopped at the step cap"
        console.print(Rule(escape(title), style="bold" if turn.gold_turn else "dim"))
        for message in turn.user_messages:
            console.print(Text.assemble(("user: ", "bold green"), message))
        if not turn.steps:
            console.print(Text("(no model emission)", style="dim"))
        for step in turn.steps:
            _render_step(step, console)


def _gold_turns_text(t: Transcript) -> str:
    if t.gold_turns is None:
        return "all"
    return ", ".join(str(i) for i in t.gold_turns) or "none"


def _render_step(step: TranscriptStep, console: Console) -> None:
    from rich.text import Text

    why = step.explanation
    head = Text.assemble(
        f"  step {step.index}  ",
        (step.action_class.value, CLASS_STYLES[step.action_class]),
        f"  [{why.rule}]",
    )
    if why.cue:
        head.append(f" cue {cut(why.cue, 80)!r}", style="dim")
    if why.language and why.language != "en":
        head.append(f" lang {why.language}", style="dim")
    flags = [flag for flag, on in (("INJECTED, not counted", step.injected), ("cached", step.cached)) if on]
    if step.latency_s is not None:
        flags.append(f"{step.latency_s:.2f}s")
    if flags:
        head.append("  (" + ", ".join(flags) + ")", style="yellow" if step.injected else "dim")
    console.print(head)
    if why.detail:
        console.print(Text(f"    why: {why.detail}", style="dim"))
    if step.reasoning:
        console.print(Text(f"    reasoning: {cut(step.reasoning, 600)}", style="dim italic"))
    if step.text:
        console.print(Text("    text: ") + Text(step.text))
    for call in step.tool_calls:
        line = Text.assemble("    call: ", (call.name, "cyan"), f" {cut(call.raw_arguments or '', 300)}")
        if call.parse_error:
            line.append(f"  parse error: {call.parse_error}", style="red")
        console.print(line)
    if step.decoded_calls:
        console.print(Text("    decoded: " + cut("; ".join(step.decoded_calls), 600)))
    if step.decode_error:
        style = "red" if step.tool_calls else "dim"  # text steps always fail to decode: worth a dim line only
        console.print(Text(f"    decode error: {cut(step.decode_error, 300)}", style=style))
    for result in step.tool_results:
        console.print(Text("    result: " + cut(result), style="green"))


def transcript_text(transcript: Transcript, width: int = TEXT_WIDTH) -> str:
    """The terminal view as plain text (no colour codes), e.g. for tests and files."""
    import io

    from rich.console import Console

    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False, highlight=False)
    render_text(transcript, console)
    out = console.file
    assert isinstance(out, io.StringIO)
    return out.getvalue()


# -- the compact form (the HTML report's case browser) -----------------------------------------
#: Characters of a user message, text or reasoning the compact form keeps before the cut marker.
COMPACT_TEXT_CHARS = 400
#: Characters of a tool result, raw argument string, decoded call list or error message it keeps.
COMPACT_RESULT_CHARS = 240
#: Characters of a classifier cue it keeps.
COMPACT_CUE_CHARS = 80


def page_cut(text: str, limit: int) -> str:
    """``text`` up to ``limit`` characters, then a marker naming where the rest is (the page has no CLI flag)."""
    if len(text) <= limit:
        return text
    return text[:limit] + f" … [cut: {len(text) - limit} more characters; tooldiag show --format json has all]"


def _put(out: dict[str, Any], key: str, value: Any, limit: int | None = None) -> None:
    """Set ``out[key]`` unless ``value`` is empty (None, False, "", []): the compact form omits defaults."""
    if value is None or value is False or value == "" or value == []:
        return
    out[key] = page_cut(value, limit) if limit is not None and isinstance(value, str) else value


def _compact_step(step: dict[str, Any]) -> dict[str, Any]:
    why = step.get("explanation") or {}
    out: dict[str, Any] = {"k": step["action_class"], "r": why.get("rule") or ""}
    _put(out, "q", why.get("cue"), COMPACT_CUE_CHARS)
    if why.get("language") not in (None, "en"):
        out["lang"] = why["language"]
    _put(out, "x", step.get("text"), COMPACT_TEXT_CHARS)
    _put(out, "rs", step.get("reasoning"), COMPACT_TEXT_CHARS)
    calls = [
        [call["name"], page_cut(call.get("raw_arguments") or "", COMPACT_RESULT_CHARS), call.get("parse_error")]
        for call in step.get("tool_calls") or []
    ]
    _put(out, "c", calls)
    decoded = step.get("decoded_calls")
    _put(out, "d", None if not decoded else "; ".join(decoded), COMPACT_RESULT_CHARS)
    _put(out, "de", step.get("decode_error"), COMPACT_RESULT_CHARS)
    _put(out, "o", [page_cut(result, COMPACT_RESULT_CHARS) for result in step.get("tool_results") or []])
    _put(out, "inj", 1 if step.get("injected") else None)
    _put(out, "ca", 1 if step.get("cached") else None)
    if step.get("latency_s"):
        out["l"] = round(float(step["latency_s"]), 2)
    return out


def compact_json(transcript: Transcript | Mapping[str, Any]) -> dict[str, Any]:
    """The transcript as the HTML case browser embeds it: short keys, defaults left out, long texts cut.

    Takes a :class:`Transcript` or its :meth:`~Transcript.to_json` form. Cut texts end with a
    marker naming ``tooldiag show --format json`` (which has everything). Keys (absent = empty):

    * case: ``id`` case id, ``cat`` category, ``g`` gold class, ``gt`` gold turns (absent: every
      turn), ``h`` gold hit, ``v`` verdict, ``p`` passed, ``et`` error type, ``em`` the grader's
      message, ``ie`` inference error, ``sc`` scheme, ``n`` notes, ``t`` turns;
    * turn: ``g`` 1 at a gold turn, ``ft`` 1 when stopped at the step cap, ``u`` user messages,
      ``s`` steps;
    * step: ``k`` class, ``r`` rule, ``q`` cue, ``lang`` language (when not English), ``x`` text,
      ``rs`` reasoning, ``c`` calls as ``[name, raw arguments, parse error]``, ``d`` decoded calls
      (joined with ``; ``), ``de`` decode error, ``o`` tool results, ``inj`` 1 when injected (not
      counted), ``ca`` 1 when cached, ``l`` latency in seconds.

    Explanations keep their rule and cue only (the matched sentence and the judge's detail are
    in the full form).
    """
    data = transcript.to_json() if isinstance(transcript, Transcript) else transcript
    out: dict[str, Any] = {"id": data["case_id"], "cat": data["category"]}
    _put(out, "g", data.get("gold_class"))
    if data.get("gold_turns") is not None:
        out["gt"] = list(data["gold_turns"])
    for key, name in (("h", "gold_hit"), ("p", "passed")):
        if data.get(name) is not None:
            out[key] = bool(data[name])
    _put(out, "v", data.get("verdict"))
    _put(out, "et", data.get("error_type"))
    _put(out, "em", data.get("error_message"), COMPACT_TEXT_CHARS)
    _put(out, "ie", data.get("inference_error"), COMPACT_TEXT_CHARS)
    _put(out, "sc", data.get("scheme"))
    _put(out, "n", list(data.get("notes") or []))
    turns = []
    for turn in data.get("turns") or []:
        compact: dict[str, Any] = {}
        _put(compact, "g", 1 if turn.get("gold_turn") else None)
        _put(compact, "ft", 1 if turn.get("force_terminated") else None)
        _put(compact, "u", [page_cut(message, COMPACT_TEXT_CHARS) for message in turn.get("user_messages") or []])
        compact["s"] = [_compact_step(step) for step in turn.get("steps") or []]
        turns.append(compact)
    out["t"] = turns
    return out
