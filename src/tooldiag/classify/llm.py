"""The optional ``llm`` scheme: a judge model labels each text emission, for audits.

Rule-based schemes are cheap and reproducible; a judge is slower and not
deterministic across providers, but it reads meaning, so comparing it with
``default`` on a run shows where the cue lists fall short. The judge model is any
``provider/model`` string (``TOOLDIAG_CLASSIFY_MODEL`` or ``--judge``). Tool calls are
still decided by syntax, never by the judge. An answer the judge garbles, and a request
that fails for good, fall back to the ``default`` scheme's label and are counted in
:attr:`LLMClassifier.fallbacks`: a judge that is down never stops a report, it makes the
report say how many labels are the rules'. Once the judge is found unreachable (or refuses
the key, or does not know the model) it is not asked again, and the judge gets
:data:`JUDGE_MAX_RETRIES` retries unless the caller's options say otherwise, so a judge
that is down costs about a second, not minutes of backoff. The prompt file, reply schema
and request pool are the shared LLM-judge toolkit's (:mod:`tooldiag.judges`) and worker
pool's (:mod:`tooldiag.runner`).

``executor="ray"`` (``--executor ray`` with ``--scheme llm``) sends the emissions the judge must
read, one unit each, to Ray tasks (:mod:`tooldiag.runner.ray_units`): each worker rebuilds the
judge from the model string and options and asks it exactly what a local run asks; the labels
come back to this process, which keeps the fallbacks, the first error and the executor's counts,
so the labels do not depend on the executor.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, field_validator

from tooldiag.classify.classes import ActionClass
from tooldiag.classify.explain import Explanation
from tooldiag.classify.registry import Classifier, SchemeOptions, scheme
from tooldiag.errors import ModelCallError, ModelCallErrorKind, UserError
from tooldiag.judges.extract import BY_POSITION
from tooldiag.judges.prompts import PromptTemplate, load_prompt
from tooldiag.judges.reply import draw_until_parsed, parse_reply
from tooldiag.runner import run_pool

if TYPE_CHECKING:
    from tooldiag.models.base import ModelOptions
    from tooldiag.runner.ray_units import ExecutorCounts
    from tooldiag.trajectory import GenerationConfig

#: Environment variable naming the judge model of the ``llm`` scheme.
MODEL_ENV = "TOOLDIAG_CLASSIFY_MODEL"

#: Bumped whenever the prompt changes, so stored labels name the prompt they came from.
PROMPT_VERSION = "action-class-judge-v2"

#: Requests in flight when the classifier's model options name no concurrency (the requests
#: were unbounded before the shared pool; 8 is every runner's default).
DEFAULT_CONCURRENCY = 8

#: Retries per judge request when the caller gives no model options (a model's default is 6,
#: whose backoff waits about half a minute before a server that is down counts as down).
JUDGE_MAX_RETRIES = 2


@cache
def judge_template() -> PromptTemplate:
    """The versioned prompt (``prompts/action-class-judge-v2.txt``): tagged ``PROMPT_VERSION``."""
    return load_prompt("tooldiag.classify", PROMPT_VERSION)


def judge_prompt(text: str) -> str:
    """The judge's prompt for one message text (already cut to the classifier's ``max_chars``)."""
    return judge_template().render(message_text=text)


class ActionClassReply(BaseModel):
    """The judge's reply: ``{"action_class": "ask" | "refuse" | "confirm" | "other"}`` (any case).

    ``tool_call`` is not a judge answer: tool calls are decided by syntax before the judge is asked.
    """

    action_class: Literal["ask", "refuse", "confirm", "other"]

    @field_validator("action_class", mode="before")
    @classmethod
    def _normalise(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value


def parse_judge_answer(answer: str | None) -> ActionClass | None:
    """The class in a judge answer (JSON, possibly wrapped in prose or fences); ``None`` if absent."""
    if not answer:
        return None
    reply = parse_reply(answer, ActionClassReply, BY_POSITION)
    return ActionClass(reply.action_class) if reply is not None else None


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
    #: A judge reads every language: no emission is outside its cue data.
    languages: frozenset[str] | None = None
    #: The prompt every label of this classifier came from.
    prompt_version = PROMPT_VERSION

    def __init__(
        self,
        model: str,
        *,
        options: ModelOptions | None = None,
        rules: Classifier | None = None,
        max_chars: int = 6000,
        executor: str = "local",
        ray_address: str | None = None,
    ) -> None:
        from tooldiag.models.base import ModelOptions
        from tooldiag.runner.ray_units import ExecutorCounts, check_executor_options

        #: ``local``, or ``ray``: the judge's requests as Ray tasks (on ``ray_address``, or a local Ray).
        self.executor = check_executor_options(executor, ray_address)
        self.ray_address = ray_address
        #: With Ray: the units retried and the workers lost (the summary's executor line).
        self.executor_counts: ExecutorCounts = ExecutorCounts(executor)

        self.model = model
        #: The judge's endpoint, key variable, concurrency, timeout, cache and retries (resolved by the caller).
        self.options = options if options is not None else ModelOptions(max_retries=JUDGE_MAX_RETRIES)
        self.max_chars = max_chars
        #: Text emissions the rules labelled instead of the judge (garbled answer or failed request).
        self.fallbacks = 0
        #: The first request failure, as the models layer worded it (``None``: every request answered).
        self.judge_error: str | None = None
        #: Cue files of the fallback rules (named in reports).
        self.cue_files: tuple[str, ...] = ()
        #: Set once the judge cannot be reached at all: the remaining emissions go to the rules at once.
        self._down = False
        if rules is None:
            from tooldiag.classify import get_classifier

            rules = get_classifier("default")
        #: The rules that decide tool calls and empty text, and stand in for a garbled answer.
        self._rules = rules

    def _syntax_or_empty(self, text: Any, has_calls: bool) -> ActionClass | None:
        label = self._rules(text, has_calls)
        if label is ActionClass.TOOL_CALL:
            return label
        if not isinstance(text, str) or not text.strip():
            return ActionClass.OTHER
        return None

    async def aclassify_many(self, items: Sequence[tuple[Any, bool]]) -> list[ActionClass]:
        """Labels for ``(text, has_calls)`` pairs, in order, querying the judge through the shared
        worker pool (at most :meth:`_concurrency` requests in flight)."""
        return [label for label, _ in await self._alabel_many(items)]

    async def _alabel_many(self, items: Sequence[tuple[Any, bool]]) -> list[tuple[ActionClass, str]]:
        """Each label with who gave it: ``judge``, ``rules`` (syntax or empty text), or
        ``fallback: <why>`` (the judge did not label it)."""
        from tooldiag.models.registry import resolve_model
        from tooldiag.trajectory import Message

        if self.executor == "ray":
            return self._label_on_ray(items)
        backend = resolve_model(self.model, self.options)
        config = judge_config(self.options)

        labels: list[tuple[ActionClass, str]] = [(ActionClass.OTHER, "rules")] * len(items)

        async def one(index: int) -> tuple[ActionClass, str]:
            text, has_calls = items[index]
            early = self._syntax_or_empty(text, has_calls)
            if early is not None:
                return early, "rules"
            if self._down:
                return self._fall_back(text), f"fallback: the judge is unreachable ({self.judge_error})"
            prompt = judge_prompt(str(text)[: self.max_chars])
            try:
                draws = await draw_until_parsed(
                    backend, [Message(role="user", content=prompt)], config, parse_judge_answer
                )
            except ModelCallError as exc:
                self.judge_error = self.judge_error or str(exc)
                # unreachable, bad key, unknown model: no later request can do better
                self._down = self._down or exc.kind is ModelCallErrorKind.FATAL
                return self._fall_back(text), f"fallback: the request failed ({exc})"
            if draws.value is None:
                return self._fall_back(text), "fallback: the judge's answer named no action class"
            return draws.value, "judge"

        def keep(index: int, label: tuple[ActionClass, str]) -> None:
            labels[index] = label

        try:
            await run_pool(range(len(items)), one, self._concurrency(), keep)
        finally:
            await backend.aclose()
        return labels

    def _label_on_ray(self, items: Sequence[tuple[Any, bool]]) -> list[tuple[ActionClass, str]]:
        """:meth:`_alabel_many` with the judge's units as Ray tasks; syntax, empty text and every
        fallback stay here, so the labels and counts are a local run's."""
        labels: list[tuple[ActionClass, str]] = [(ActionClass.OTHER, "rules")] * len(items)
        units: list[tuple[int, str]] = []
        for index, (text, has_calls) in enumerate(items):
            early = self._syntax_or_empty(text, has_calls)
            if early is not None:
                labels[index] = (early, "rules")
            elif self._down:
                labels[index] = (self._fall_back(text), f"fallback: the judge is unreachable ({self.judge_error})")
            else:
                units.append((index, str(text)[: self.max_chars]))

        def land(result: tuple[int, str | None, str | None, bool]) -> None:
            index, value, error, fatal = result
            text = items[index][0]
            if value is not None:
                labels[index] = (ActionClass(value), "judge")
            elif error is None:
                labels[index] = (self._fall_back(text), "fallback: the judge's answer named no action class")
            else:
                self.judge_error = self.judge_error or error
                self._down = self._down or fatal
                labels[index] = (self._fall_back(text), f"fallback: the request failed ({error})")

        if units:
            from tooldiag.runner.ray_units import run_units_on_ray

            payload = LabelPayload(self.model, self.options)
            run_units_on_ray(
                units, label_shard, payload, self._concurrency(), land, self.executor_counts, self.ray_address
            )
        return labels

    def explain_many(self, items: Sequence[tuple[Any, bool]]) -> list[Explanation]:
        """Why each label: the judge (model and prompt version), or the rules and why the judge was not used."""
        from tooldiag.classify.explain import explain

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            labelled = asyncio.run(self._alabel_many(items))
        else:
            raise UserError("the llm scheme was called inside a running event loop", hint="await it instead")
        out = []
        for (text, has_calls), (label, how) in zip(items, labelled):
            if how == "judge":
                detail = f"judge {self.model}, prompt {self.prompt_version}"
                out.append(Explanation(label=label, rule="judge", scheme=self.name, detail=detail))
                continue
            rules = explain(self._rules, text, has_calls)  # the rules gave this label: their reason
            rule = rules.rule if how == "rules" else "fallback:" + rules.rule
            detail = "tool calls and empty text are the rules', never the judge's" if how == "rules" else how
            out.append(replace(rules, label=label, rule=rule, scheme=self.name, detail=detail))
        return out

    def explain(self, text: Any, has_calls: bool = False) -> Explanation:
        """:meth:`explain_many` of one emission."""
        return self.explain_many([(text, has_calls)])[0]

    def _fall_back(self, text: Any) -> ActionClass:
        """The rules' label for a text emission the judge did not label (counted)."""
        self.fallbacks += 1
        return self._rules(text, False)

    def _concurrency(self) -> int:
        """Judge requests in flight: the ``concurrency`` of the model options the classifier was
        given, else :data:`DEFAULT_CONCURRENCY`."""
        return max(1, self.options.concurrency or DEFAULT_CONCURRENCY)

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


def judge_config(options: ModelOptions) -> GenerationConfig:
    """The request of every label: temperature 0, 50 tokens, the options' timeout."""
    from tooldiag.trajectory import GenerationConfig

    config = GenerationConfig(temperature=0.0, max_tokens=50)
    if options.timeout is not None:
        config = config.model_copy(update={"timeout_s": options.timeout})
    return config


@dataclass(frozen=True)
class LabelPayload:
    """What a Ray worker needs to rebuild the judge: its model string and options."""

    model: str
    options: ModelOptions


async def label_shard(payload: LabelPayload, units: list[Any], concurrency: int, emit: Callable[[Any], None]) -> None:
    """A Ray worker's entry point: ask the judge about each ``(index, text)`` unit and emit
    ``(index, class value or None, error or None, whether the error was fatal)``. Once a request
    fails for good (unreachable, bad key) the worker's remaining units are not asked either."""
    from tooldiag.models.registry import resolve_model
    from tooldiag.trajectory import Message

    backend = resolve_model(payload.model, replace(payload.options, concurrency=concurrency))
    config = judge_config(payload.options)
    down: list[str] = []

    async def one(unit: Any) -> tuple[int, str | None, str | None, bool]:
        index, text = unit
        if down:
            return index, None, down[0], True
        try:
            draws = await draw_until_parsed(
                backend, [Message(role="user", content=judge_prompt(text))], config, parse_judge_answer
            )
        except ModelCallError as exc:
            fatal = exc.kind is ModelCallErrorKind.FATAL
            if fatal:
                down.append(str(exc))
            return index, None, str(exc), fatal
        return index, draws.value.value if draws.value is not None else None, None, False

    try:
        await run_pool(units, one, concurrency, lambda _, result: emit(result))
    finally:
        await backend.aclose()


@scheme("llm")
def llm_scheme(options: SchemeOptions) -> LLMClassifier:
    """A judge model labels each text emission; ``options.judge`` names it. Its rules (tool
    calls, empty text, garbled answers) are the default scheme with ``options.cue_files``."""
    if not options.judge:
        raise _no_judge()
    from tooldiag.classify.default import default_scheme

    classifier = LLMClassifier(
        options.judge,
        options=options.judge_options,
        rules=default_scheme(options),
        executor=options.executor,
        ray_address=options.ray_address,
    )
    classifier.cue_files = tuple(str(path) for path in options.cue_files)
    return classifier
