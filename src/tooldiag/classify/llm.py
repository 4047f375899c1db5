"""The optional ``llm`` scheme: a judge model labels each text emission, for audits.

Rule-based schemes are cheap and reproducible; a judge is slower and not
deterministic across providers, but it reads meaning, so comparing it with
``default`` on a run shows where the cue lists fall short. The judge model is any
``provider/model`` string (``TOOLDIAG_CLASSIFY_MODEL`` or ``--judge``). Tool calls are
still decided by syntax, never by the judge. An answer the judge garbles falls back to
the ``default`` scheme's label and is counted in :attr:`LLMClassifier.fallbacks`.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tooldiag.classify.classes import ActionClass
from tooldiag.classify.registry import SchemeOptions, scheme
from tooldiag.errors import UserError

if TYPE_CHECKING:
    from tooldiag.models.base import ModelOptions

#: Environment variable naming the judge model of the ``llm`` scheme.
MODEL_ENV = "TOOLDIAG_CLASSIFY_MODEL"

#: Bumped whenever the prompt changes, so stored labels name the prompt they came from.
PROMPT_VERSION = "action-class-judge-v1"

JUDGE_PROMPT = textwrap.dedent(
    """\
    You label one message that an AI agent with tools sent to its user. Pick exactly one class:

    - ask: the agent requests information it needs to proceed: a missing value, a choice between
      options, an identifier, or asks the user to check a value ("Could you double-check the order
      number?", "Please provide the amount.", "Which folder?").
    - refuse: the agent declines or says it cannot do the request or part of it (missing function or
      capability, policy, impossibility), including partial refusals ("I can't do X, but I can do Y").
    - confirm: the agent asks for explicit consent before a consequential action it is about to take
      ("Shall I proceed with the booking for $350?", "Reply yes to confirm the cancellation").
    - other: results, summaries, completion reports, greetings, offers of further help, pleasantries.

    If several apply, prefer refuse, then ask, then confirm. An apology followed by a request for
    information is ask. "Confirm the order ID" is ask (checking a value); "confirm the cancellation"
    is confirm. "Would you like more details?" is other.

    Examples:
    "I'm sorry, I couldn't find that reservation. Could you double-check the confirmation code?" -> ask
    "There is no function to send emails, so I can't do that part." -> refuse
    "I'll cancel order #W1 and refund $54 to your Visa. Do you want me to go ahead?" -> confirm
    "Done! Your order has been cancelled. Anything else?" -> other

    Answer with JSON only: {"action_class": "ask" | "refuse" | "confirm" | "other"}

    Message:
    <<<
    MESSAGE_TEXT
    >>>"""
)

_JSON_OBJECT = re.compile(r"\{[^{}]*\}")


def parse_judge_answer(answer: str | None) -> ActionClass | None:
    """The class in a judge answer (JSON, possibly wrapped in prose); ``None`` if absent."""
    if not answer:
        return None
    for match in _JSON_OBJECT.finditer(answer):
        try:
            value = json.loads(match.group(0)).get("action_class")
        except (json.JSONDecodeError, AttributeError):
            continue
        if isinstance(value, str) and value.strip().lower() in {"ask", "refuse", "confirm", "other"}:
            return ActionClass(value.strip().lower())
    return None


def _no_judge() -> UserError:
    return UserError(
        "the llm scheme needs a judge model",
        hint=f"set {MODEL_ENV}=PROVIDER/MODEL (e.g. openai/gpt-4o-mini) or pass --judge",
    )


def judge_from_env(judge: str | None) -> str:
    """``judge``, else the model named by :data:`MODEL_ENV`; a clear error when neither is set."""
    model = judge or os.environ.get(MODEL_ENV)
    if not model:
        raise _no_judge()
    return model


class LLMClassifier:
    """Classify with a judge model; tool calls by syntax first."""

    name = "llm"

    def __init__(self, model: str, *, options: ModelOptions | None = None, max_chars: int = 6000) -> None:
        from tooldiag.classify.default import default_scheme

        self.model = model
        #: The judge's endpoint, key variable, concurrency, cache and retries (resolved by the caller).
        self.options = options
        self.max_chars = max_chars
        self.fallbacks = 0
        self._rules = default_scheme(SchemeOptions())

    @classmethod
    def from_env(cls, options: ModelOptions | None = None) -> LLMClassifier:
        """The judge named by :data:`MODEL_ENV` (what ``--judge`` defaults to)."""
        return cls(judge_from_env(None), options=options)

    def _syntax_or_empty(self, text: Any, has_calls: bool) -> ActionClass | None:
        label = self._rules(text, has_calls)
        if label is ActionClass.TOOL_CALL:
            return label
        if not isinstance(text, str) or not text.strip():
            return ActionClass.OTHER
        return None

    async def aclassify_many(self, items: Sequence[tuple[Any, bool]]) -> list[ActionClass]:
        """Labels for ``(text, has_calls)`` pairs, querying the judge concurrently."""
        from tooldiag.models.registry import resolve_model
        from tooldiag.trajectory import GenerationConfig, Message

        backend = resolve_model(self.model, self.options)
        config = GenerationConfig(temperature=0.0, max_tokens=50)

        async def one(text: Any, has_calls: bool) -> ActionClass:
            early = self._syntax_or_empty(text, has_calls)
            if early is not None:
                return early
            prompt = JUDGE_PROMPT.replace("MESSAGE_TEXT", str(text)[: self.max_chars])
            emission = await backend.generate([Message(role="user", content=prompt)], None, None, config)
            label = parse_judge_answer(emission.text)
            if label is None:
                self.fallbacks += 1
                return self._rules(text, False)
            return label

        try:
            return list(await asyncio.gather(*(one(text, calls) for text, calls in items)))
        finally:
            await backend.aclose()

    def classify_many(self, items: Sequence[tuple[Any, bool]]) -> list[ActionClass]:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.aclassify_many(items))
        raise UserError("the llm scheme was called inside a running event loop", hint="await aclassify_many() instead")

    def __call__(self, text: Any, has_calls: bool) -> ActionClass:
        early = self._syntax_or_empty(text, has_calls)
        if early is not None:
            return early
        return self.classify_many([(text, has_calls)])[0]


@scheme("llm")
def llm_scheme(options: SchemeOptions) -> LLMClassifier:
    """A judge model labels each text emission; ``options.judge`` names it."""
    if not options.judge:
        raise _no_judge()
    return LLMClassifier(options.judge, options=options.judge_options)
