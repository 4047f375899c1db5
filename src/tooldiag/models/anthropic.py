"""``anthropic/<model>``: Claude through the Anthropic Messages API (optional SDK).

The ``anthropic`` SDK is imported when a model string names this provider, never
before; without it the factory raises :class:`~tooldiag.errors.MissingDependencyError`
with the install command. The SDK's own retries are switched off (``max_retries=0``)
so failures go through the same classified policy as every other provider
(:mod:`tooldiag.models.retry`).

Conversion, both ways, from the OpenAI-shaped :class:`~tooldiag.trajectory.Message`:

* system messages -> the top-level ``system`` text (joined with blank lines, wherever
  they stood: the Messages API has no system role);
* an assistant's tool calls -> ``tool_use`` blocks; tool messages -> ``tool_result``
  blocks in a user message, matched by id (a missing or unknown id takes the oldest
  unanswered call, so harnesses that do not keep ids still convert). Ids are made
  safe for the API's ``[A-Za-z0-9_-]`` pattern. Arguments that did not parse are sent
  as ``{}``: the API only accepts objects;
* consecutive messages of one role are merged into one (the API wants alternation);
* ``tool_choice``: auto -> ``auto``, required -> ``any``, none -> ``none``, a name ->
  that ``tool``;
* the answer: ``text`` blocks -> text, ``tool_use`` -> tool calls (arguments arrive
  as objects), ``thinking`` -> reasoning; ``stop_reason`` is mapped to the OpenAI
  vocabulary (end_turn/stop_sequence -> stop, tool_use -> tool_calls,
  max_tokens -> length) so that downstream code sees one vocabulary.

Generation config: ``max_tokens`` (required by the API; 4096 when unset),
``stop`` -> ``stop_sequences``, ``extra_body`` merged into the request, ``timeout_s``.
``temperature`` and ``top_p`` are sent only when the installed SDK still accepts
them: SDK 2.x speaks API version 2026-10-21, which rejects sampling parameters
(HTTP 400), so there they are left out and Claude samples at its default. ``seed``
has no Anthropic counterpart and is ignored.

Size cap (``--max-response-bytes``): the SDK reads the body itself, so its HTTP client (the SDK's
own default client class) gets :func:`~tooldiag.models.network.cap_event_hooks`: a body over
the cap is refused at its ``Content-Length`` or as soon as the streamed bytes pass it, and the
SDK's wrapped error becomes the same ``too_large`` failure as for every provider (never
retried, the call fails as ``REJECTED``).
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import re
from collections import deque
from typing import Any

from tooldiag.errors import MissingDependencyError
from tooldiag.models.base import ModelBackend, ModelOptions, ModelRequest, ToolChoice
from tooldiag.models.cache import with_cache
from tooldiag.models.endpoints import PerLoop, check_base_url, resolve_api_key
from tooldiag.models.network import NetworkBackend, cap_event_hooks, cap_failure_of
from tooldiag.models.registry import provider
from tooldiag.models.retry import AttemptFailure, failure_for_status, parse_retry_after, redact_json
from tooldiag.trajectory import Emission, Message, ToolCall, ToolSpec, Usage

DEFAULT_ENDPOINT = "https://api.anthropic.com"
DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"
DEFAULT_MAX_TOKENS = 4096
INSTALL_HINT = "pip install 'tooldiag[anthropic]'  (in a clone of tooldiag: uv sync --extra anthropic)"

_STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length"}
_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_-]")


def import_sdk() -> Any:
    try:
        import anthropic as sdk
    except ImportError:
        raise MissingDependencyError(
            "the anthropic provider needs the 'anthropic' package, which is not installed", hint=INSTALL_HINT
        ) from None
    return sdk


@functools.lru_cache(maxsize=1)
def _sdk_accepts_sampling(sdk: Any) -> bool:
    create = sdk.resources.messages.AsyncMessages.create
    return "temperature" in inspect.signature(create).parameters


def to_anthropic_messages(messages: list[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """OpenAI-shaped messages -> ``(system, messages)`` for the Messages API."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    pending: deque[str] = deque()  # tool_use ids not yet answered, oldest first
    id_map: dict[str, str] = {}

    def append(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for index, message in enumerate(messages):
        text_block = [{"type": "text", "text": message.content}] if message.content else []
        if message.role == "system":
            system.extend([message.content] if message.content else [])
        elif message.role == "user":
            append("user", text_block)
        elif message.role == "assistant":
            blocks: list[dict[str, Any]] = list(text_block)
            for j, call in enumerate(message.tool_calls):
                safe_id = _UNSAFE_ID.sub("_", call.id) if call.id else f"toolu_{index}_{j}"
                if call.id:
                    id_map[call.id] = safe_id
                pending.append(safe_id)
                blocks.append({"type": "tool_use", "id": safe_id, "name": call.name, "input": call.arguments or {}})
            append("assistant", blocks)
        else:  # tool result
            wanted = id_map.get(message.tool_call_id or "")
            if wanted is not None and wanted in pending:
                pending.remove(wanted)
            elif pending:
                wanted = pending.popleft()
            else:
                wanted = _UNSAFE_ID.sub("_", message.tool_call_id or "") or f"toolu_orphan_{index}"
            append("user", [{"type": "tool_result", "tool_use_id": wanted, "content": message.content or ""}])
    return ("\n\n".join(system) or None), out


def to_anthropic_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]


def to_anthropic_tool_choice(tool_choice: ToolChoice) -> dict[str, Any] | None:
    if tool_choice is None:
        return None
    named = {"auto": {"type": "auto"}, "required": {"type": "any"}, "none": {"type": "none"}}
    return named.get(tool_choice, {"type": "tool", "name": tool_choice})


def parse_anthropic_message(body: Any) -> Emission:
    """A Messages API response (as a dict) -> :class:`Emission` (without latency)."""
    if not isinstance(body, dict) or not isinstance(body.get("content"), list):
        raise ValueError("not a Messages API response (no content list)")
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[ToolCall] = []
    for block in body["content"]:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(block.get("text") or "")
        elif kind == "thinking":
            thinking.append(block.get("thinking") or "")
        elif kind == "tool_use":
            arguments = block.get("input")
            raw = arguments if isinstance(arguments, dict) else json.dumps(arguments)
            calls.append(ToolCall.from_raw(block.get("name") or "", raw, block.get("id") or ""))
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else None
    stop = body.get("stop_reason")
    return Emission(
        text="".join(texts) if texts else None,
        tool_calls=calls,
        reasoning="\n".join(thinking) if thinking else None,
        finish_reason=_STOP_REASONS.get(stop, stop) if isinstance(stop, str) else stop,
        usage=Usage(input_tokens=usage.get("input_tokens"), output_tokens=usage.get("output_tokens"))
        if usage
        else None,
        raw=body,
    )


def classify_sdk_error(sdk: Any, exc: Exception) -> AttemptFailure:
    """An Anthropic SDK exception -> a classified :class:`AttemptFailure`."""
    capped = cap_failure_of(exc)
    if capped is not None:  # the size cap stopped the read (the SDK wrapped it as a connection error)
        return capped
    if isinstance(exc, sdk.APIStatusError):
        body = exc.body
        message = exc.message
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            message = str(body["error"].get("message") or message)
        return failure_for_status(exc.status_code, message, parse_retry_after(exc.response.headers))
    cause = type(exc.__cause__).__name__
    if isinstance(exc, sdk.APITimeoutError):
        unreachable = cause == "ConnectTimeout"
        return AttemptFailure("connection" if unreachable else "timeout", "no answer in time", unreachable=unreachable)
    if isinstance(exc, sdk.APIConnectionError):
        return AttemptFailure("connection", f"connection failed ({cause})", unreachable=cause == "ConnectError")
    return AttemptFailure("malformed", f"malformed response: {type(exc).__name__}: {exc}")


def capped_http_client(sdk: Any, limit: int) -> Any:
    """The SDK's default async HTTP client (its timeouts, limits and proxies) with the size cap's hooks."""
    return sdk.DefaultAsyncHttpxClient(event_hooks=cap_event_hooks(limit))


class AnthropicBackend(NetworkBackend[dict[str, Any], Any]):
    """A Claude model behind the Messages API."""

    def __init__(self, model: str, options: ModelOptions) -> None:
        self._sdk = import_sdk()
        self.model = model
        base_url = options.base_url or os.environ.get("ANTHROPIC_BASE_URL")
        self.base_url = check_base_url(base_url) if base_url else None
        self._api_key = resolve_api_key(
            options.api_key_env, DEFAULT_KEY_ENV, required=self.base_url is None, provider=f"anthropic/{model}"
        )
        endpoint = self.base_url or DEFAULT_ENDPOINT
        super().__init__(
            provider_name="anthropic",
            endpoint=endpoint,
            describe=f"anthropic/{model} at {endpoint}",
            options=options,
            secrets=(self._api_key,),
        )
        self._clients: PerLoop[Any] = PerLoop(self._new_client)

    def _new_client(self) -> Any:
        # A local stand-in server needs no key, but the SDK insists on one.
        return self._sdk.AsyncAnthropic(
            api_key=self._api_key or "none",
            base_url=self.base_url,
            max_retries=0,
            http_client=capped_http_client(self._sdk, self.max_response_bytes),
        )

    def __repr__(self) -> str:
        return f"AnthropicBackend(model={self.model!r}, endpoint={self.endpoint!r})"

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """Keyword arguments for ``messages.create`` (see the module docstring)."""
        config = request.config
        system, converted = to_anthropic_messages(request.messages)
        params: dict[str, Any] = {
            "model": self.model,
            "messages": converted,
            "max_tokens": config.max_tokens or DEFAULT_MAX_TOKENS,
            "timeout": config.timeout_s,
        }
        if system:
            params["system"] = system
        if request.tools:
            params["tools"] = to_anthropic_tools(request.tools)
            choice = to_anthropic_tool_choice(request.tool_choice)
            if choice is not None:
                params["tool_choice"] = choice
        if config.stop:
            params["stop_sequences"] = config.stop
        if _sdk_accepts_sampling(self._sdk):
            for field in ("temperature", "top_p"):
                if getattr(config, field) is not None:
                    params[field] = getattr(config, field)
        if config.extra_body:
            params["extra_body"] = dict(config.extra_body)
        return params

    async def send(self, prepared: dict[str, Any], request: ModelRequest) -> Any:
        """The response body as a dict (converting the SDK's object is part of the answer's time)."""
        client = self._clients.get()
        try:
            response = await client.messages.create(**prepared)
            return response.model_dump(mode="json") if hasattr(response, "model_dump") else response
        except self._sdk.AnthropicError as exc:
            raise classify_sdk_error(self._sdk, exc) from None
        except ValueError as exc:  # a body that is not JSON
            raise AttemptFailure("malformed", f"malformed response: {exc}") from None

    def parse_reply(self, reply: Any) -> Emission:
        body = redact_json(reply, self.secrets) if self._api_key else reply
        try:
            return parse_anthropic_message(body)
        except ValueError as exc:
            raise AttemptFailure("malformed", f"malformed response: {exc}") from None

    async def aclose(self) -> None:
        client = self._clients.pop_current()
        if client is not None:
            await client.close()


@provider("anthropic")
def make_anthropic(name: str, options: ModelOptions) -> ModelBackend:
    return with_cache(AnthropicBackend(name, options), "anthropic", name, options)
