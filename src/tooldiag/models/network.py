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
"""

from __future__ import annotations

import abc
import time
from typing import Generic, TypeVar

from tooldiag.models.base import ModelBackend, ModelOptions, ModelRequest
from tooldiag.models.endpoints import check_concurrency, endpoint_semaphore
from tooldiag.models.retry import call_with_retries, policy_from_options
from tooldiag.trajectory import Emission

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
        async with endpoint_semaphore(self.provider_name, self.endpoint, self.concurrency):
            started = time.perf_counter()
            reply = await self.send(prepared, request)
            latency = time.perf_counter() - started
        emission = self.parse_reply(reply)
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
