"""Judge replies and model replies: whatever a server sends, a parser answers or refuses in its own terms.

These parsers see text a model wrote, not a user's file, so the contract is theirs:
the judgebench reply parsers return a verdict or ``None`` (an unparseable reply, which
the runner redraws), and the chat-completion parser returns an :class:`Emission` or
raises :class:`MalformedResponse` (which the retry logic classifies). Any other
exception would escape the per-case handling.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.hostile import TEXT, dumps, mutated
from tests.fuzz.profiles import fuzz_settings

JUDGE_SEED = {
    "tool_selection_accuracy": {"accuracy": 1.0, "justification": "right tools"},
    "parameter_structure_accuracy": {"accuracy": 0.5, "justification": "one extra key"},
    "sequence_accuracy": 1,
    "coverage": "0.75",
    "overall_assessment": "fine",
}
PLAN_SEED = {"tool_calls": [{"function": {"name": "cd", "arguments": {"folder": "a"}}}, {"name": "ls"}]}
WRAPPERS = st.sampled_from(
    ["{}", "```json\n{}\n```", "<think>{{</think>{}", "Verdict: {} Done.", "{}{}", "[RESULT] {}"]
)


@st.composite
def judge_texts(draw: st.DrawFn, seed: object) -> str:
    """A reply: the seed object mutated and dumped, wrapped as judges wrap JSON, or plain hostile text."""
    if draw(st.integers(0, 4)) == 0:
        return draw(TEXT)
    body = dumps(draw(mutated(seed)))
    if draw(st.booleans()):
        body = body[: draw(st.integers(0, len(body)))]
    return draw(WRAPPERS).replace("{}", body, 1)


@fuzz_settings(150)
@given(text=judge_texts(JUDGE_SEED))
def test_judge_reply_parsers_never_raise(text: str) -> None:
    from tooldiag.suites.judgebench.parsing import parse_judge_reply, parse_prometheus_reply

    verdict = parse_judge_reply(text)
    assert verdict is None or set(verdict.values) == {
        "tool_selection",
        "parameter_structure",
        "sequence",
        "coverage",
    }
    score = parse_prometheus_reply(text)
    assert score is None or 1 <= score <= 5


@fuzz_settings(150)
@given(text=judge_texts(PLAN_SEED))
def test_plan_reply_parser_never_raises(text: str) -> None:
    from tooldiag.suites.judgebench.parsing import calls_from_text

    calls = calls_from_text(text)
    assert calls is None or all(isinstance(call["name"], str) for call in calls)


COMPLETION_SEED = {
    "id": "x",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "ok"}],
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "cd", "arguments": "{}"}}],
                "reasoning_content": "think",
            },
        }
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 2},
}


@fuzz_settings(100)
@given(body=mutated(COMPLETION_SEED))
def test_chat_completion_parser_answers_or_refuses(body: object) -> None:
    from tooldiag.models.openai_compat import MalformedResponse, parse_chat_completion
    from tooldiag.trajectory import Emission

    try:
        emission = parse_chat_completion(body)
    except MalformedResponse:
        return
    assert isinstance(emission, Emission)
