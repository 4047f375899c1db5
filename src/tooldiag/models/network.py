"""The base class of every provider that reaches a model over the network.

A network request goes through the same steps whatever the provider: build the
provider's request once, then per attempt take a slot of the endpoint's semaphore,
send, time the answer, release the slot, and parse the reply; failures are classified
by the provider and retried by one policy. :class:`NetworkBackend` owns that sequence
(a template method, :meth:`NetworkBackend.complete`), so retries
(:mod:`tooldiag.models.retry`), the per-endpoint concurrency bound
(:mod:`tooldiag.models.endpoints`), latency timing and the count of retries behind each
answer (:attr:`~tooldiag.trajectory.Emission.retries`) exist once; a provider
implements only the three steps that differ:

* :meth:`~NetworkBackend.build_request`: the :class:`~tooldiag.models.base.ModelRequest`
  in the provider's wire shape (built once, reused by every attempt);
* :meth:`~NetworkBackend.send`: one attempt; the only step timed and the only one
  inside the semaphore. Transport failures become an
  :class:`~tooldiag.models.retry.AttemptFailure`;
* :meth:`~NetworkBackend.parse_reply`: the answer -> :class:`~tooldiag.trajectory.Emission`
  (an error status or a malformed body becomes an ``AttemptFailure`` too). It runs
  after the slot is released, so parsing never holds back another request.

Three guarantees hold here, once for every provider (issue 20):

* a whole-request deadline: :meth:`~NetworkBackend.send` runs under ``asyncio.timeout``
  of the request's timeout (``ModelOptions.timeout``, else ``GenerationConfig.timeout_s``),
  so a server that drips one byte at a time cannot hold a request past it; the attempt
  fails as a retryable ``timeout``;
* every parsing failure is classified: whatever exception :meth:`~NetworkBackend.parse_reply`
  raises (a ``TypeError`` from a content part whose text is a number, a ``RecursionError``
  from absurd nesting...) becomes a retryable ``malformed`` :class:`AttemptFailure`, never
  an exception the retry loop and the runners do not know;
* surrogate-safe text: the parsed emission passes through
  :func:`~tooldiag.trajectory.repair_emission`, so a lone ``\ud800`` escape in a reply
  becomes U+FFFD (counted in ``Emission.text_repairs``) before any cache, store or
  terminal sees it (:meth:`~NetworkBackend.emission_of`; a provider may skip the pass for a
  reply that provably holds no surrogate).

The response size cap (``ModelOptions.max_response_bytes``, defect 13) is checked here too, once:
:func:`too_large` is its one failure (kind ``too_large``, never retried), :func:`check_declared_length`
refuses a larger ``Content-Length`` before reading, :class:`ByteCap` counts a body as it streams in,
and :func:`cap_event_hooks` puts both on an SDK's httpx client, so that an SDK that reads bodies
itself (Anthropic) stops reading at the cap too.
"""

from __future__ import annotations

import abc
import asyncio
import functools
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Generic, TypeVar

from tooldiag.errors import UserError
from tooldiag.models.base import ModelBackend, ModelOptions, ModelRequest
from tooldiag.models.endpoints import check_concurrency, endpoint_semaphore
from tooldiag.models.retry import AttemptFailure, call_with_retries, policy_from_options
from tooldiag.trajectory import Emission, repair_emission

Prepared = TypeVar("Prepared")
Reply = TypeVar("Reply")


def too_large(limit: int, seen: str) -> AttemptFailure:
    """The one failure of a reply over the cap, whatever provider read it: not retried (the same
    request brings the same answer), so the call fails as ``REJECTED``."""
    return AttemptFailure(
        "too_large",
        f"response body {seen} exceeds the cap of {limit} bytes; not retried "
        f"(raise --max-response-bytes if such answers are expected; a resume with a larger cap asks again)",
        size_cap=limit,
    )


def check_declared_length(headers: Mapping[str, str], limit: int) -> None:
    """Refuse, before reading a byte of it, a body whose ``Content-Length`` is over ``limit``."""
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large(limit, f"of {int(declared)} bytes (Content-Length)")


class ByteCap:
    """Counts the bytes of one body as they arrive; :meth:`add` raises :func:`too_large` past ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.seen = 0

    def add(self, chunk: bytes) -> None:
        self.seen += len(chunk)
        if self.seen > self.limit:
            raise too_large(self.limit, f"of more than {self.limit} bytes")


class _CappedStream:
    """A response byte stream that stops (raising :func:`too_large`) once it passes the cap.

    httpx reads only streams of its own ``AsyncByteStream`` type, so the class used is a subclass
    of this one and of the ``AsyncByteStream`` of the response's package (:func:`_capped_stream_class`)."""

    def __init__(self, inner: Any, limit: int) -> None:
        self._inner = inner
        self._limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        cap = ByteCap(self._limit)
        async for chunk in self._inner:
            cap.add(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


def cap_event_hooks(limit: int) -> dict[str, list[Callable[[Any], Awaitable[None]]]]:
    """``event_hooks`` for an httpx (or ``httpx2``) client that enforce the size cap on every response.

    SDKs that read the body themselves accept an ``http_client``; a client built with these hooks
    refuses a larger ``Content-Length`` at once and stops reading a streamed body at the cap, so
    memory stays bounded (the response hook runs after the headers, before the body is read). The
    request asks for ``Accept-Encoding: identity``, so the bytes counted are the body's own bytes.
    The :class:`AttemptFailure` raised reaches the SDK, which wraps it as a connection error; the
    provider finds it again in the error's cause chain (:func:`cap_failure_of`). Hooks rather than a
    transport keep the SDK's own transport (proxies from the environment, connection limits).
    """

    async def ask_identity(request: Any) -> None:
        request.headers["Accept-Encoding"] = "identity"

    async def cap(response: Any) -> None:
        check_declared_length(response.headers, limit)
        package = sys.modules[type(response).__module__.partition(".")[0]]  # httpx, or httpx2
        response.stream = _capped_stream_class(package.AsyncByteStream)(response.stream, limit)

    return {"request": [ask_identity], "response": [cap]}


@functools.cache
def _capped_stream_class(byte_stream: type) -> type[_CappedStream]:
    return type("CappedStream", (_CappedStream, byte_stream), {})


def cap_failure_of(exc: BaseException) -> AttemptFailure | None:
    """The :func:`too_large` failure behind an SDK's exception (its cause chain), if the cap ended it."""
    seen: BaseException | None = exc
    for _ in range(8):  # a cause chain is short; never loop on a cycle
        if seen is None:
            return None
        if isinstance(seen, AttemptFailure) and seen.kind == "too_large":
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


class NetworkBackend(ModelBackend, Generic[Prepared, Reply]):
    """A provider reached over the network; subclasses implement build / send / parse.

    ``Prepared`` is what :meth:`build_request` makes (a JSON body, SDK keyword
    arguments); ``Reply`` is what :meth:`send` returns (an HTTP response, a dict).
    """

    def __init__(
        self,
        *,
        provider_name: str,
        endpoint: str,
        describe: str,
        options: ModelOptions,
        secrets: tuple[str | None, ...],
    ) -> None:
        """``endpoint`` keys the shared semaphore (with ``provider_name``); ``describe``
        names the model in error messages; ``secrets`` are redacted from them. The
        concurrency bound and the retry policy come from ``options`` (and are checked)."""
        self.provider_name = provider_name
        self.endpoint = endpoint
        self.describe = describe
        self.concurrency = check_concurrency(options.concurrency)
        self.policy = policy_from_options(options.max_retries, options.extra)
        self.secrets = secrets
        #: ``ModelOptions.timeout`` overrides each request's ``timeout_s`` when set.
        self.timeout_s = options.timeout
        if options.max_response_bytes < 1:
            raise UserError(
                f"--max-response-bytes must be 1 or more, got {options.max_response_bytes}",
                hint="e.g. --max-response-bytes 8388608 (8 MiB, the default)",
            )
        self.max_response_bytes = options.max_response_bytes

    def deadline_s(self, request: ModelRequest) -> float:
        """Seconds one attempt may take from sending to the last byte of the reply."""
        return self.timeout_s if self.timeout_s is not None else request.config.timeout_s

    async def complete(self, request: ModelRequest) -> Emission:
        prepared = self.build_request(request)
        retries: dict[str, int] = {}
        emission = await call_with_retries(
            lambda: self._attempt(prepared, request),
            policy=self.policy,
            describe=self.describe,
            secrets=self.secrets,
            retries=retries,
        )
        emission.retries = retries  # what this answer cost: the run summary counts them
        return emission

    async def _attempt(self, prepared: Prepared, request: ModelRequest) -> Emission:
        deadline = self.deadline_s(request)
        async with endpoint_semaphore(self.provider_name, self.endpoint, self.concurrency):
            started = time.perf_counter()
            try:
                async with asyncio.timeout(deadline):
                    reply = await self.send(prepared, request)
            except TimeoutError:
                raise AttemptFailure("timeout", f"no answer within {deadline:g} s (whole-request deadline)") from None
            latency = time.perf_counter() - started
        try:
            emission = self.emission_of(reply)
        except AttemptFailure:
            raise
        except Exception as exc:  # noqa: BLE001 - a reply no parser foresaw is still a classified failure
            raise AttemptFailure("malformed", f"malformed response: {type(exc).__name__}: {exc}") from None
        emission.latency_s = latency
        return emission

    def emission_of(self, reply: Reply) -> Emission:
        """:meth:`parse_reply`, then the surrogate repair (:func:`~tooldiag.trajectory.repair_emission`).

        A provider that can tell from the reply itself that the repair would change nothing
        (no surrogate can be in it) may return the parsed emission as it is: the repair's check
        serialises the whole emission, raw body included, on every request (issue 16)."""
        return repair_emission(self.parse_reply(reply))

    @abc.abstractmethod
    def build_request(self, request: ModelRequest) -> Prepared:
        """The request in the provider's own shape."""

    @abc.abstractmethod
    async def send(self, prepared: Prepared, request: ModelRequest) -> Reply:
        """One attempt; raises :class:`~tooldiag.models.retry.AttemptFailure` when it failed."""

    @abc.abstractmethod
    def parse_reply(self, reply: Reply) -> Emission:
        """The reply as an emission (latency is set by the caller); raises ``AttemptFailure``."""
