"""``litellm/<route>``: the hundred-odd providers LiteLLM routes to (optional SDK).

``litellm/bedrock/anthropic.claude-3-5-sonnet``, ``litellm/vertex_ai/gemini-2.0-flash``,
``litellm/groq/llama-3.3-70b-versatile``... : everything after ``litellm/`` is passed
to ``litellm.acompletion`` as the model route. LiteLLM answers in OpenAI's shape, so
the response is parsed by the OpenAI-compatible parser
(:func:`tooldiag.models.openai_compat.parse_chat_completion`), and its own retries are
off (``num_retries=0``) so failures go through :mod:`tooldiag.models.retry`.

Credentials: LiteLLM reads each provider's usual variables itself
(``AWS_*``, ``GROQ_API_KEY``...); ``--api-key-env NAME`` passes the key in ``NAME``
explicitly, ``--base-url`` becomes ``api_base``. ``extra_body`` entries are passed as
keyword arguments, which LiteLLM forwards to the provider.
"""

from __future__ import annotations

import time
from typing import Any

from tooldiag.errors import MissingDependencyError
from tooldiag.models.base import ModelBackend, ModelOptions, TaskContext, ToolChoice
from tooldiag.models.cache import with_cache
from tooldiag.models.endpoints import check_base_url, check_concurrency, endpoint_semaphore, resolve_api_key
from tooldiag.models.openai_compat import MalformedResponse, build_request_body, parse_chat_completion
from tooldiag.models.registry import provider
from tooldiag.models.retry import (
    AttemptFailure,
    call_with_retries,
    failure_for_status,
    parse_retry_after,
    policy_from_options,
    redact_json,
)
from tooldiag.trajectory import Emission, GenerationConfig, Message, ToolSpec

INSTALL_HINT = "pip install 'tooldiag[litellm]'  (in a clone of tooldiag: uv sync --extra litellm)"


def import_sdk() -> Any:
    try:
        import litellm as sdk
    except ImportError:
        raise MissingDependencyError(
            "the litellm provider needs the 'litellm' package, which is not installed", hint=INSTALL_HINT
        ) from None
    return sdk


def classify_litellm_error(exc: Exception) -> AttemptFailure:
    """LiteLLM's exceptions mirror OpenAI's: classify by ``status_code`` and class name."""
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    message = str(getattr(exc, "message", None) or exc)
    if "Timeout" in name:
        return AttemptFailure("timeout", f"no answer in time ({name})")
    if "APIConnectionError" in name:
        return AttemptFailure("connection", f"connection failed: {message}")
    if isinstance(status, int) and status >= 400:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None) or {}
        return failure_for_status(status, message, parse_retry_after(dict(headers)))
    return AttemptFailure("malformed", f"{name}: {message}")


def _as_dict(response: Any) -> Any:
    for method in ("model_dump", "dict", "to_dict"):
        if hasattr(response, method):
            return getattr(response, method)()
    return response


class LiteLLMBackend(ModelBackend):
    """A model reached through ``litellm.acompletion``."""

    def __init__(self, route: str, options: ModelOptions) -> None:
        self._sdk = import_sdk()
        self.route = route
        self.base_url = check_base_url(options.base_url) if options.base_url else None
        self._api_key = (
            resolve_api_key(options.api_key_env, options.api_key_env, required=True, provider=f"litellm/{route}")
            if options.api_key_env
            else None
        )
        self.concurrency = check_concurrency(options.concurrency)
        self.policy = policy_from_options(options.max_retries, options.extra)
        self._endpoint = self.base_url or route.split("/", 1)[0]
        self._describe = f"litellm/{route}" + (f" at {self.base_url}" if self.base_url else "")

    def __repr__(self) -> str:
        return f"LiteLLMBackend(route={self.route!r})"

    def request_kwargs(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None,
        tool_choice: ToolChoice,
        config: GenerationConfig,
    ) -> dict[str, Any]:
        kwargs = build_request_body(self.route, messages, tools, tool_choice, config)
        kwargs.update(timeout=config.timeout_s, num_retries=0)
        if self.base_url:
            kwargs["api_base"] = self.base_url
        if self._api_key:
            kwargs["api_key"] = self._api_key
        return kwargs

    async def generate(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None = None,
        tool_choice: ToolChoice = None,
        config: GenerationConfig | None = None,
        *,
        context: TaskContext | None = None,
    ) -> Emission:
        kwargs = self.request_kwargs(messages, tools, tool_choice, config or GenerationConfig())
        return await call_with_retries(
            lambda: self._attempt(kwargs), policy=self.policy, describe=self._describe, secrets=(self._api_key,)
        )

    async def _attempt(self, kwargs: dict[str, Any]) -> Emission:
        async with endpoint_semaphore("litellm", self._endpoint, self.concurrency):
            started = time.perf_counter()
            try:
                response = await self._sdk.acompletion(**kwargs)
            except Exception as exc:  # noqa: BLE001 - every provider error is classified
                raise classify_litellm_error(exc) from None
            latency = time.perf_counter() - started
        try:
            emission = parse_chat_completion(_as_dict(response))
        except MalformedResponse as exc:
            raise AttemptFailure("malformed", f"malformed response: {exc}") from None
        if self._api_key:
            emission.raw = redact_json(emission.raw, (self._api_key,))
        emission.latency_s = latency
        return emission


@provider("litellm")
def make_litellm(name: str, options: ModelOptions) -> ModelBackend:
    return with_cache(LiteLLMBackend(name, options), "litellm", name, options)
