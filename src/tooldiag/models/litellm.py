"""``litellm/<route>``: the hundred-odd providers LiteLLM routes to (optional SDK).

``litellm/bedrock/anthropic.claude-3-5-sonnet``, ``litellm/vertex_ai/gemini-2.0-flash``,
``litellm/groq/llama-3.3-70b-versatile``... : everything after ``litellm/`` is passed
to ``litellm.acompletion`` as the model route. LiteLLM answers in OpenAI's shape, so
the response is parsed by the OpenAI-compatible parser
(:func:`tooldiag.models.openai_compat.parse_chat_completion`), and its own retries are
off (``num_retries=0``) so failures go through :mod:`tooldiag.models.retry`, like every
:class:`~tooldiag.models.network.NetworkBackend`.

Credentials: LiteLLM reads each provider's usual variables itself
(``AWS_*``, ``GROQ_API_KEY``...); ``--api-key-env NAME`` passes the key in ``NAME``
explicitly, ``--base-url`` becomes ``api_base``. ``extra_body`` entries are passed as
keyword arguments, which LiteLLM forwards to the provider.

Size cap (``--max-response-bytes``): LiteLLM reads each body itself, through a client per
provider family (the OpenAI SDK for some routes, its own httpx or aiohttp handler for others)
and offers no per-call hook that reaches all of them. So the cap is checked on the answer as
LiteLLM returns it (its JSON size): an answer over the cap fails with the same ``too_large``
failure as every provider (never retried, never cached or stored), but the memory of reading
it is bounded only by LiteLLM, not by the cap.
"""

from __future__ import annotations

import json
from typing import Any

from tooldiag.errors import MissingDependencyError
from tooldiag.models.base import ModelBackend, ModelOptions, ModelRequest
from tooldiag.models.cache import with_cache
from tooldiag.models.endpoints import check_base_url, resolve_api_key
from tooldiag.models.network import NetworkBackend, too_large
from tooldiag.models.openai_compat import MalformedResponse, build_request_body, parse_chat_completion
from tooldiag.models.registry import provider
from tooldiag.models.retry import AttemptFailure, failure_for_status, parse_retry_after, redact_json
from tooldiag.trajectory import Emission

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


def answer_size(body: Any) -> int:
    """Bytes of ``body`` as compact JSON: the size the cap compares (about the size of the wire body)."""
    return len(json.dumps(body, default=str, separators=(",", ":")).encode("utf-8", errors="replace"))


class LiteLLMBackend(NetworkBackend[dict[str, Any], Any]):
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
        super().__init__(
            provider_name="litellm",
            endpoint=self.base_url or route.split("/", 1)[0],
            describe=f"litellm/{route}" + (f" at {self.base_url}" if self.base_url else ""),
            options=options,
            secrets=(self._api_key,),
        )

    def __repr__(self) -> str:
        return f"LiteLLMBackend(route={self.route!r})"

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """Keyword arguments for ``litellm.acompletion``: the OpenAI body plus routing and retry settings."""
        config = request.config
        kwargs = build_request_body(self.route, request.messages, request.tools, request.tool_choice, config)
        kwargs.update(timeout=config.timeout_s, num_retries=0)
        if self.base_url:
            kwargs["api_base"] = self.base_url
        if self._api_key:
            kwargs["api_key"] = self._api_key
        return kwargs

    async def send(self, prepared: dict[str, Any], request: ModelRequest) -> Any:
        try:
            response = await self._sdk.acompletion(**prepared)
        except Exception as exc:  # noqa: BLE001 - every provider error is classified
            raise classify_litellm_error(exc) from None
        body = _as_dict(response)
        size = answer_size(body)
        if size > self.max_response_bytes:  # after the read: LiteLLM reads bodies itself (module docstring)
            raise too_large(self.max_response_bytes, f"of {size} bytes (the answer LiteLLM read)")
        return body

    def parse_reply(self, reply: Any) -> Emission:
        try:
            emission = parse_chat_completion(_as_dict(reply))
        except MalformedResponse as exc:
            raise AttemptFailure("malformed", f"malformed response: {exc}") from None
        if self._api_key:
            emission.raw = redact_json(emission.raw, self.secrets)
        return emission


@provider("litellm")
def make_litellm(name: str, options: ModelOptions) -> ModelBackend:
    return with_cache(LiteLLMBackend(name, options), "litellm", name, options)
