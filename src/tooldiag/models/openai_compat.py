"""``openai/<model>``: any OpenAI-compatible chat-completions server, over HTTP.

vLLM, SGLang, Ollama, llama.cpp's server, LM Studio, TGI and hosted OpenAI all speak
``POST {base_url}/chat/completions``. No SDK: single-connection clients pooled per event loop
(:mod:`tooldiag.models.http11`'s lean client for a plain ``http://`` endpoint reached without a
proxy, where the harness is CPU-bound; httpx for ``https://`` and proxies), requests bounded
per endpoint, timed and retried by the shared
:class:`~tooldiag.models.network.NetworkBackend` (this module only builds the body,
posts it and parses the reply), answers cached by :mod:`tooldiag.models.cache`.

Parsing never drops what the model emitted: every tool call becomes a
:class:`~tooldiag.trajectory.ToolCall` with its raw argument text, and arguments that
are not a JSON object keep a ``parse_error`` instead of being discarded, because the
action-class diagnostic has to classify malformed calls too.
"""

from __future__ import annotations

import functools
import json
import os
import re
import ssl
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from tooldiag.models.base import ModelBackend, ModelOptions, ModelRequest, ToolChoice
from tooldiag.models.body_encoding import ToolListEncoder
from tooldiag.models.cache import with_cache
from tooldiag.models.endpoints import ClientPool, PerLoop, check_base_url, resolve_api_key
from tooldiag.models.http11 import LeanHTTPClient, Origin
from tooldiag.models.network import ByteCap, NetworkBackend, check_declared_length
from tooldiag.models.registry import provider
from tooldiag.models.retry import AttemptFailure, FailureKind, failure_for_status, parse_retry_after, redact
from tooldiag.trajectory import (
    MAX_STORED_DEPTH,
    Emission,
    GenerationConfig,
    Message,
    ToolCall,
    ToolSpec,
    Usage,
    repair_emission,
)

if TYPE_CHECKING:  # httpx is imported where it is used: a local http:// endpoint never needs it, and
    import httpx  # its import costs about 0.3 s without bytecode (bench/README.md, "Sixth pass")

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
_NAMED_CHOICES = ("auto", "none", "required")


class MalformedResponse(ValueError):
    """A 2xx body that is not a chat completion."""


def build_request_body(
    model: str,
    messages: list[Message],
    tools: list[ToolSpec] | None,
    tool_choice: ToolChoice,
    config: GenerationConfig,
) -> dict[str, Any]:
    """The JSON body of one chat-completions request.

    Unset sampling fields (``None``) are left out so the server's defaults apply;
    ``extra_body`` is merged last and may override anything (e.g. vLLM's
    ``chat_template_kwargs`` or ``max_completion_tokens`` for OpenAI reasoning models).
    ``tool_choice`` is sent only with tools; a value other than auto/none/required
    names the one function the model must call.
    """
    body: dict[str, Any] = {"model": model, "messages": [m.to_openai() for m in messages]}
    if tools:
        body["tools"] = [t.to_openai() for t in tools]
        if tool_choice is not None:
            body["tool_choice"] = _tool_choice_body(tool_choice)
    for field, value in (
        ("temperature", config.temperature),
        ("top_p", config.top_p),
        ("max_tokens", config.max_tokens),
        ("seed", config.seed),
        ("stop", config.stop),
    ):
        if value is not None:
            body[field] = value
    body.update(config.extra_body)
    return body


def _tool_choice_body(tool_choice: str) -> str | dict[str, Any]:
    if tool_choice in _NAMED_CHOICES:
        return tool_choice
    return {"type": "function", "function": {"name": tool_choice}}


#: ``extra_body`` keys that override what :func:`encode_request_bytes` splices: such a body is encoded whole.
_SPLICED_KEYS = frozenset({"model", "messages", "tools", "tool_choice"})


def encode_request_bytes(
    model: str,
    messages: list[Message],
    tools: list[ToolSpec] | None,
    tool_choice: ToolChoice,
    config: GenerationConfig,
    encoder: ToolListEncoder | None = None,
) -> bytes:
    """``json.dumps(build_request_body(...), ensure_ascii=False)`` as the UTF-8 bytes sent, with the
    tool list's JSON taken from ``encoder`` (encoded once per list, not once per step) and spliced as
    bytes: never copied into a string first (``body_encoding.py``)."""
    if encoder is None or not tools or not _SPLICED_KEYS.isdisjoint(config.extra_body):
        body = build_request_body(model, messages, tools, tool_choice, config)
        return json.dumps(body, ensure_ascii=False).encode("utf-8")
    rest = build_request_body(model, messages, None, None, config)
    head = json.dumps({"model": rest.pop("model"), "messages": rest.pop("messages")}, ensure_ascii=False)
    parts = [head[:-1].encode("utf-8"), b', "tools": ', encoder.data(tools)]
    if tool_choice is not None:
        choice = json.dumps(_tool_choice_body(tool_choice), ensure_ascii=False)
        parts.append(f', "tool_choice": {choice}'.encode())
    parts.append(f", {json.dumps(rest, ensure_ascii=False)[1:]}".encode() if rest else b"}")
    return b"".join(parts)


#: The only way JSON text that is valid UTF-8 yields a lone surrogate: a ``\\uD800``-``\\uDFFF`` escape.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")


def surrogate_free(content: bytes, emission: Emission) -> bool:
    """True when :func:`~tooldiag.trajectory.repair_emission` would return ``emission`` (parsed
    from ``content``) unchanged, told without serialising it (issue 16, sixth pass).

    ``content`` is decoded as UTF-8 with replacement, so its text holds a lone surrogate only
    through an escape of one, which the byte pattern finds in ``content`` (a surrogate pair,
    e.g. an emoji sent escaped, matches too and takes the repair's pass: correct, only slower);
    arguments parsed from a call's ``raw_arguments`` (a decoded string, whose escapes may have
    been escaped themselves) are checked in that string. The repair's check also fails on
    nesting past the JSON serialiser's limit: the raw body nests at most as deep as ``content``
    has brackets, and parsed arguments past :data:`~tooldiag.trajectory.MAX_STORED_DEPTH` are
    dropped by :meth:`~tooldiag.trajectory.ToolCall.from_raw`, so a reply with fewer brackets
    than that is safe; any other reply takes the repair's pass, as before."""
    if content.count(b"[") + content.count(b"{") > MAX_STORED_DEPTH or _SURROGATE_ESCAPE_BYTES.search(content):
        return False
    return not any(
        call.raw_arguments is not None and _SURROGATE_ESCAPE.search(call.raw_arguments) for call in emission.tool_calls
    )


def _content_text(content: Any) -> str | None:
    """Message content as text; some servers send a list of typed parts."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
        for part in parts:  # a None text too (``next(..., None)`` would not tell it from "none found")
            if not isinstance(part, str):
                raise MalformedResponse(f"a content part's text is a {type(part).__name__}, not a string")
        return "".join(parts)
    raise MalformedResponse(f"message content is a {type(content).__name__}")


def _tool_call(raw: Any, index: int) -> ToolCall:
    if not isinstance(raw, dict):
        raise MalformedResponse(f"tool_calls[{index}] is not an object")
    function = raw.get("function")
    if not isinstance(function, dict):
        function = {}
    name = function.get("name")
    arguments = function.get("arguments")
    if arguments is not None and not isinstance(arguments, (str, dict)):
        arguments = json.dumps(arguments)
    call = ToolCall.from_raw(name if isinstance(name, str) else "", arguments, str(raw.get("id") or ""))
    if not call.name:
        reason = "no function name" + (f"; {call.parse_error}" if call.parse_error else "")
        call = call.model_copy(update={"parse_error": reason})
    return call


def _token_count(value: Any) -> int | None:
    """A usage count, or ``None`` when the server sent something else (never fatal)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def parse_chat_completion(body: Any) -> Emission:
    """An OpenAI chat-completion body -> :class:`Emission` (without latency).

    Reads ``choices[0]``: ``content`` (string or text parts), every entry of
    ``tool_calls`` (an empty list means no call) or the legacy ``function_call``,
    ``reasoning_content`` (vLLM, DeepSeek) or ``reasoning`` (Ollama, OpenRouter),
    ``finish_reason`` and ``usage``. Raises :class:`MalformedResponse` when the body
    is not a chat completion.
    """
    if not isinstance(body, dict):
        raise MalformedResponse(f"body is a JSON {type(body).__name__}, not an object")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedResponse("no choices in the response")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise MalformedResponse("choices[0] has no message")
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise MalformedResponse("tool_calls is not a list")
    calls = [_tool_call(raw, i) for i, raw in enumerate(raw_calls)]
    legacy = message.get("function_call")
    if not calls and isinstance(legacy, dict):
        calls = [_tool_call({"function": legacy}, 0)]
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    usage = body.get("usage")
    finish_reason = choice.get("finish_reason")
    # usage and finish_reason are metadata: an odd value there must not discard the answer
    return Emission(
        text=_content_text(message.get("content")),
        tool_calls=calls,
        reasoning=reasoning if isinstance(reasoning, str) else None,
        finish_reason=finish_reason if isinstance(finish_reason, str) else None,
        usage=Usage(
            input_tokens=_token_count(usage.get("prompt_tokens")),
            output_tokens=_token_count(usage.get("completion_tokens")),
        )
        if isinstance(usage, dict)
        else None,
        raw=body,
    )


def server_message(response: httpx.Response | HTTPReply) -> str:
    """The error text a server put in its body (OpenAI shape, or plain text), shortened."""
    text = response.text
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error", data.get("detail", data.get("message")))
        if isinstance(error, dict):
            error = error.get("message") or json.dumps(error)
        if error is not None:
            text = str(error)
    text = " ".join(text.split())
    return text[:500] + ("..." if len(text) > 500 else "")


@functools.lru_cache(maxsize=1)
def _ssl_context() -> ssl.SSLContext:
    """One TLS context for every client: building one costs about 30 ms of CPU."""
    import httpx

    return httpx.create_ssl_context()


@dataclass(frozen=True)
class HTTPReply:
    """A reply read whole (status, headers, decoded body), within the size cap."""

    status_code: int
    headers: Mapping[str, str]
    content: bytes

    @property
    def text(self) -> str:
        """The body as text; bytes that are not UTF-8 become U+FFFD (never an exception)."""
        return self.content.decode("utf-8", errors="replace")


async def read_capped(response: httpx.Response, limit: int) -> bytes:
    """The decoded body of a streamed ``response``, refused as soon as it passes ``limit``
    bytes, so memory stays bounded whatever the server sends (issue 20, defect 13)."""
    check_declared_length(response.headers, limit)
    cap = ByteCap(limit)
    body = bytearray()
    async for chunk in response.aiter_bytes():
        cap.add(chunk)
        body += chunk
    return bytes(body)


class OpenAICompatBackend(NetworkBackend[bytes, HTTPReply]):
    """A chat model behind an OpenAI-compatible ``/chat/completions`` endpoint."""

    def __init__(self, model: str, options: ModelOptions) -> None:
        self.model = model
        self.base_url = check_base_url(options.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)
        self._api_key = resolve_api_key(
            options.api_key_env,
            DEFAULT_KEY_ENV,
            required=self.base_url == DEFAULT_BASE_URL,
            provider=f"openai/{model}",
        )
        super().__init__(
            provider_name="openai",
            endpoint=self.base_url,
            describe=f"openai/{model} at {self.base_url}",
            options=options,
            secrets=(self._api_key,),
        )
        self._url = f"{self.base_url}/chat/completions"
        self._pools: PerLoop[ClientPool[httpx.AsyncClient]] = PerLoop(lambda: ClientPool(self._new_client))
        self._origin = lean_origin(self.base_url)
        self._lean_pools: PerLoop[ClientPool[LeanHTTPClient]] = PerLoop(lambda: ClientPool(self._new_lean_client))
        self._target = urlsplit(self._url).path or "/"
        if urlsplit(self._url).query:
            self._target += "?" + urlsplit(self._url).query
        #: Each case's tool list is encoded once, not on every step (``models/body_encoding.py``);
        #: about one entry per request in flight, so finished cases' tools are not kept alive.
        self._tool_texts = ToolListEncoder(size=2 * self.concurrency + 8)

    def _new_client(self) -> httpx.AsyncClient:
        import httpx

        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        # Proxy variables apply to remote endpoints only: a local server is reached directly.
        local = urlsplit(self.base_url).hostname in ("127.0.0.1", "localhost", "::1")
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        return httpx.AsyncClient(headers=headers, limits=limits, trust_env=not local, verify=_ssl_context())

    def _new_lean_client(self) -> LeanHTTPClient:
        assert self._origin is not None
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return LeanHTTPClient(self._origin, headers)

    def __repr__(self) -> str:
        return f"OpenAICompatBackend(model={self.model!r}, base_url={self.base_url!r})"

    def build_request(self, request: ModelRequest) -> bytes:
        return encode_request_bytes(
            self.model, request.messages, request.tools, request.tool_choice, request.config, self._tool_texts
        )

    async def send(self, prepared: bytes, request: ModelRequest) -> HTTPReply:
        if self._origin is not None:
            return await self._send_lean(prepared)
        import httpx

        timeout_s = self.deadline_s(request)
        pool = self._pools.get()
        client = pool.acquire()
        try:
            async with client.stream("POST", self._url, content=prepared, timeout=timeout_s) as response:
                content = await read_capped(response, self.max_response_bytes)
                return HTTPReply(response.status_code, response.headers, content)
        except httpx.TimeoutException as exc:
            unreachable = isinstance(exc, httpx.ConnectTimeout)
            kind: FailureKind = "connection" if unreachable else "timeout"
            raise AttemptFailure(
                kind, f"no answer within {timeout_s:g} s ({type(exc).__name__})", unreachable=unreachable
            ) from None
        except httpx.ConnectError as exc:
            raise AttemptFailure("connection", f"cannot connect: {exc}", unreachable=True) from None
        except (httpx.TransportError, httpx.StreamError) as exc:
            raise AttemptFailure("connection", f"connection failed: {type(exc).__name__}: {exc}") from None
        finally:
            pool.release(client)

    async def _send_lean(self, prepared: bytes) -> HTTPReply:
        """One attempt over the lean client; the whole-request deadline is the caller's."""
        pool = self._lean_pools.get()
        client = pool.acquire()
        try:
            raw = await client.post(self._target, prepared, self.max_response_bytes)
        finally:
            pool.release(client)
        return HTTPReply(raw.status_code, raw.headers, raw.content)

    def parse_reply(self, reply: HTTPReply) -> Emission:
        if reply.status_code >= 400:
            message = server_message(reply)
            if reply.status_code == 404:
                message += " (check --base-url, which usually ends in /v1, and the model name)"
            raise failure_for_status(reply.status_code, message, parse_retry_after(reply.headers))
        text = redact(reply.text, self.secrets)
        try:
            return parse_chat_completion(json.loads(text))
        except (ValueError, MalformedResponse) as exc:
            raise AttemptFailure(
                "malformed", f"malformed response (HTTP {reply.status_code}): {exc}", status=reply.status_code
            ) from None

    def emission_of(self, reply: HTTPReply) -> Emission:
        emission = self.parse_reply(reply)
        return emission if surrogate_free(reply.content, emission) else repair_emission(emission)

    async def aclose(self) -> None:
        pool = self._pools.pop_current()
        for client in pool.clients if pool is not None else ():
            await client.aclose()
        lean = self._lean_pools.pop_current()
        for connection in lean.clients if lean is not None else ():
            await connection.aclose()


def lean_origin(base_url: str) -> Origin | None:
    """The origin to reach with the lean client, or ``None`` for httpx: ``https://``, or an
    ``http://`` endpoint that a proxy variable applies to (httpx honours them for remote hosts)."""
    parts = urlsplit(base_url)
    if parts.scheme != "http" or not parts.hostname:
        return None
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:  # e.g. the driver's copy of an --endpoint-per-node template ("{label:port}")
        return None
    local = parts.hostname in ("127.0.0.1", "localhost", "::1")
    if not local:
        proxies = urllib.request.getproxies()
        if ("http" in proxies or "all" in proxies) and not urllib.request.proxy_bypass(parts.hostname):
            return None
    return Origin.of(base_url)


@provider("openai")
def make_openai(name: str, options: ModelOptions) -> ModelBackend:
    return with_cache(OpenAICompatBackend(name, options), "openai", name, options)
