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
  terminal sees it.
"""

from __future__ import annotations

import abc
import asyncio
import time
from typing import Generic, TypeVar

from tooldiag.errors import UserError
from tooldiag.models.base import ModelBackend, ModelOptions, ModelRequest
from tooldiag.models.endpoints import check_concurrency, endpoint_semaphore
from tooldiag.models.retry import AttemptFailure, call_with_retries, policy_from_options
from tooldiag.trajectory import Emission, repair_emission

Prepared = TypeVar("Prepared")
Reply = TypeVar("Reply")


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
            emission = repair_emission(self.parse_reply(reply))
        except AttemptFailure:
            raise
        except Exception as exc:  # noqa: BLE001 - a reply no parser foresaw is still a classified failure
            raise AttemptFailure("malformed", f"malformed response: {type(exc).__name__}: {exc}") from None
        emission.latency_s = latency
        return emission

    @abc.abstractmethod
    def build_request(self, request: ModelRequest) -> Prepared:
        """The request in the provider's own shape."""

    @abc.abstractmethod
    async def send(self, prepared: Prepared, request: ModelRequest) -> Reply:
        """One attempt; raises :class:`~tooldiag.models.retry.AttemptFailure` when it failed."""

    @abc.abstractmethod
    def parse_reply(self, reply: Reply) -> Emission:
        """The reply as an emission (latency is set by the caller); raises ``AttemptFailure``."""
