"""The two detectors behind the probes: the Halt Detector (SRI) and the Call Detector (CRI).

Both are pure functions of what the rollout has seen so far (user messages, executed
calls and their results, the in-context tools) plus one piece of benchmark metadata:
the gold action class of the current turn. Paper 001 is explicit that the probes are
diagnostic instruments that need this label to choose the seam they watch (§5,
"Limitations"); nothing the model sees is derived from it.

Gold class of a turn (:func:`turn_gold_class`)
    * a turn whose ground truth holds calls: ``tool_call``;
    * miss_func: the turn right before the first give-back turn
      (``min(missed_function) - 1``, the paper code's ``_cri_gold_turn_idx``), when its
      ground truth is empty: ``refuse``;
    * miss_param: the turn BFCL inserted, which omits a value (empty ground truth) and
      is followed by the turn that supplies it (:func:`miss_param_gold_turn`; the
      paper code keeps the same index in a sidecar file): ``ask``;
    * any other turn with empty ground truth (base_167 turn 4, base_180 turns 3-4 and
      their copies): no gold class, and neither probe acts there.

Outstanding sub-tasks (:func:`outstanding_subtasks`)
    Paper 001 App. B asks for "at least one outstanding sub-task open in the user
    request" as judged by a runtime state extractor. tooldiag judges it at the level
    of operations: the sub-tasks a turn requests are the functions its ground-truth
    calls invoke (a multiset of names, e.g. ``cd, cd, mv``), and a sub-task is
    reflected in the runtime state when this turn executed a call of that function
    whose result is not an execution error. Arguments are deliberately not compared:
    the detector must say "the model stopped before doing all the kinds of things it
    was asked to", not "the model's state differs from the gold state" (that would be
    the grader itself). BFCL's ground truth never produces an execution error (all
    4,625 ground-truth calls of the four categories run clean), so a model that
    executes the ground truth never leaves a sub-task open.

Call detector (:func:`detect_suspect_calls`), paper 001 §3.3 and the paper code's
``_cri_detect``:
    * **MC** (missing capability): the call names a function absent from the
      in-context tool list of this step;
    * **UR** (unresolved referent): a required parameter present in the call has a
      scalar value with no antecedent in the conversation: not found in the user
      messages or in any tool result so far, not one of the schema's ``enum`` values,
      not equal to its ``default``. A required parameter the call omits is not UR
      (that is under-specification, not an invented value).
    Matching rules (:class:`Antecedents`):
    * text is compared after folding typographic quotes to ASCII, case-folding and
      collapsing whitespace; surrounding quotes of the value are stripped; a string
      value is resolved when it is a substring of the folded conversation text;
    * numbers (ints, floats, and strings that parse as numbers) are also resolved when
      the conversation contains a number equal to them (``10``, ``10.0``, ``10.00``
      and ``1,000`` = ``1000`` all match), so formatting never creates a suspect;
    * booleans, ``None``, lists and dicts, and values shorter than two characters
      count as resolved (the paper code's rule, which keeps false positives low).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tooldiag.classify.cues import QUOTE_FOLD
from tooldiag.trajectory import Emission, ToolCall, ToolSpec

#: The gold action class names (values of ``tooldiag.classify.ActionClass``).
TOOL_CALL, ASK, REFUSE = "tool_call", "ask", "refuse"

_SPACES = re.compile(r"\s+")
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w])")
_EXECUTION_ERROR_PREFIX = "Error during execution"

#: SRI-Gate's ask heuristic (the paper code's ``is_asking_response``): a ``?`` or any of
#: these phrases, case-insensitive. The same 18 phrases as the paper's ASK cue list.
SRI_ASKING_PHRASES: tuple[str, ...] = (
    "could you",
    "please provide",
    "please specify",
    "please tell",
    "please confirm",
    "i need to know",
    "i need the",
    "what is the",
    "what's the",
    "kindly provide",
    "would you provide",
    "i'll need",
    "could you confirm",
    "could you let me know",
    "could you tell",
    "please clarify",
    "please share",
    "please indicate",
)


# -- gold class of a turn -------------------------------------------------------------
def miss_param_gold_turn(ground_truth: Sequence[Sequence[str]]) -> int | None:
    """The turn BFCL's miss_param variant inserted: it omits a value (empty ground truth)
    and the next turn supplies it (ground truth with calls).

    Taken as the first empty turn followed by a turn with calls. On all 200 entries this
    equals the turn found by aligning the entry with its base copy (which lacks exactly
    that turn); it differs from "the first empty turn" nowhere, and from "any empty
    turn" on miss_param_167 and _180, which keep base's empty closing turns.
    """
    for index, turn in enumerate(ground_truth[:-1]):
        if not turn and ground_truth[index + 1]:
            return index
    return None


def turn_gold_class(case: Any, turn_index: int) -> str | None:
    """``tool_call``, ``ask``, ``refuse`` or ``None`` for one turn of a BFCL case (see module doc)."""
    ground_truth = case.ground_truth
    if ground_truth[turn_index]:
        return TOOL_CALL
    if case.category == "miss_func" and case.missed_function:
        return REFUSE if turn_index == min(case.missed_function) - 1 else None
    if case.category == "miss_param":
        return ASK if turn_index == miss_param_gold_turn(ground_truth) else None
    return None


# -- halt detector ----------------------------------------------------------------------
def is_execution_error(result: str) -> bool:
    """BFCL's own error shapes: ``Error during execution: ...`` or a JSON object with ``error``.

    Deliberately narrow: file contents or messages that merely contain the word
    "failed" are results, not errors.
    """
    text = result.lstrip()
    if text.startswith(_EXECUTION_ERROR_PREFIX):
        return True
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            return False
        return isinstance(value, dict) and "error" in value
    return False


def call_name(call: str) -> str:
    """``mv(source='a')`` -> ``mv``."""
    return call.split("(", 1)[0].strip()


def outstanding_subtasks(requested_calls: Sequence[str], executed: Iterable[tuple[str, str]]) -> list[str]:
    """Requested operations of the turn not yet reflected by a successful execution.

    ``requested_calls`` are the turn's ground-truth call strings, ``executed`` the
    (call, result) pairs this turn ran. Counted as multisets of function names.
    """
    open_tasks = Counter(call_name(c) for c in requested_calls)
    for call, result in executed:
        name = call_name(call)
        if open_tasks.get(name, 0) > 0 and not is_execution_error(result):
            open_tasks[name] -= 1
    return sorted(open_tasks.elements())


def is_asking_response(text: str | None) -> bool:
    """SRI-Gate: the halt is an ask-user reply (``?`` or an ask phrase)."""
    if not text:
        return False
    if "?" in text:
        return True
    lower = text.translate(QUOTE_FOLD).lower()
    return any(phrase in lower for phrase in SRI_ASKING_PHRASES)


@dataclass
class HaltVerdict:
    """What the Halt Detector decided at one turn boundary, and why."""

    fired: bool
    #: ``halt`` when fired; otherwise the first condition that failed.
    reason: str
    halt_class: str | None = None
    outstanding: list[str] = field(default_factory=list)

    def as_note(self) -> dict[str, Any]:
        return {"hd": self.reason, "halt_class": self.halt_class, "outstanding": self.outstanding}


def detect_halt(
    *,
    gold_class: str | None,
    user_messages_so_far: int,
    halt_class: str,
    outstanding: list[str],
) -> HaltVerdict:
    """Paper 001 App. B, "Halt Detector (HD), full form".

    Called at a step whose emission ends the turn (no decodable call). Fires when
    (1) more than one user message has been issued so far, (2) the turn's gold class is
    tool_call, (3) the emission's class is ask, refuse, confirm or other (a text that
    itself looks like a call is a malformed call, not a halt), and (4) at least one
    requested sub-task is still open.
    """
    if user_messages_so_far <= 1:
        return HaltVerdict(False, "first_user_message", halt_class)
    if gold_class != TOOL_CALL:
        return HaltVerdict(False, "gold_not_tool_call", halt_class)
    if halt_class == TOOL_CALL:
        return HaltVerdict(False, "emission_is_tool_call", halt_class)
    if not outstanding:
        return HaltVerdict(False, "no_outstanding_subtask", halt_class)
    return HaltVerdict(True, "halt", halt_class, list(outstanding))


# -- call detector ----------------------------------------------------------------------
def fold_text(text: str) -> str:
    """Quotes folded to ASCII, case-folded, whitespace collapsed."""
    return _SPACES.sub(" ", text.translate(QUOTE_FOLD).casefold()).strip()


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(float(value)) else None
    if isinstance(value, str):
        text = value.strip().replace(",", "")
        try:
            number = float(text)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def numbers_in(text: str) -> list[float]:
    """Every number written in ``text`` (``1,000`` is one thousand, ``-2.5e3`` works)."""
    out = []
    for match in _NUMBER.finditer(text):
        token = match.group(0)
        if not any(ch.isdigit() for ch in token):
            continue
        number = _as_number(token)
        if number is not None:
            out.append(number)
    return out


@dataclass
class Antecedents:
    """What the conversation has supplied so far: user text and tool results."""

    text: str = ""
    numbers: frozenset[float] = frozenset()

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> Antecedents:
        parts = [t for t in texts if t]
        joined = "\n".join(parts)
        return cls(text=fold_text(joined), numbers=frozenset(numbers_in(joined.translate(QUOTE_FOLD))))

    def resolves(self, value: Any, schema: dict[str, Any] | None = None) -> bool:
        """True when ``value`` has an antecedent (see the module doc for the rules)."""
        schema = schema or {}
        if value is None or isinstance(value, (bool, dict, list)):
            return True
        enum = schema.get("enum")
        if isinstance(enum, list) and value in enum:
            return True
        if "default" in schema and value == schema["default"]:
            return True
        raw = str(value).strip()
        if len(raw) < 2:
            return True
        folded = fold_text(raw).strip("'\"`")
        if len(folded) < 2 or folded in self.text:
            return True
        number = _as_number(value)
        return number is not None and any(math.isclose(number, n, rel_tol=1e-9, abs_tol=1e-12) for n in self.numbers)


@dataclass
class CallVerdict:
    """The Call Detector's verdict on one emitted call."""

    name: str
    mc: bool
    ur: bool
    ur_param: str | None = None

    @property
    def suspect(self) -> bool:
        return self.mc or self.ur

    def as_note(self) -> dict[str, Any]:
        return {"name": self.name, "mc": self.mc, "ur": self.ur, "ur_param": self.ur_param}


def call_arguments(call: ToolCall) -> dict[str, Any]:
    if call.arguments is not None:
        return call.arguments
    if call.raw_arguments:
        try:
            value = json.loads(call.raw_arguments)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}
    return {}


def detect_suspect_calls(
    calls: Sequence[ToolCall], tools: Sequence[ToolSpec], antecedents: Antecedents
) -> list[CallVerdict]:
    """MC/UR verdict for each call of one emission (paper 001 §3.3, "CRI")."""
    by_name = {tool.name: tool for tool in tools}
    verdicts = []
    for call in calls:
        tool = by_name.get(call.name)
        if tool is None:
            verdicts.append(CallVerdict(call.name, mc=True, ur=False))
            continue
        parameters = tool.parameters or {}
        required = parameters.get("required") or []
        properties = parameters.get("properties") or {}
        arguments = call_arguments(call)
        ur_param = None
        for name in required:
            if name not in arguments:
                continue
            if not antecedents.resolves(arguments[name], properties.get(name) or {}):
                ur_param = name
                break
        verdicts.append(CallVerdict(call.name, mc=False, ur=ur_param is not None, ur_param=ur_param))
    return verdicts


def emission_class(emission: Emission, scheme: str = "default") -> str:
    """The action class of one emission by the project's classifier (``tooldiag.classify``).

    The Halt Detector only asks whether it is ``tool_call`` (a call written in the text
    that BFCL's FC decoder could not read) or one of the four text classes.
    """
    from tooldiag.classify import classify

    return classify(emission.text, emission.tool_calls, scheme=scheme).value
