"""Classified retries for model requests, in one place for every provider.

A provider turns each failed attempt into an :class:`AttemptFailure` that says what
kind of failure it was; :func:`call_with_retries` decides what to do with it, so that
the policy (what is retried, how long to wait, when to give up, what counts as fatal)
is the same for OpenAI-compatible servers, Anthropic and LiteLLM (the network
providers' base class, :class:`tooldiag.models.network.NetworkBackend`, is its one
caller). This follows the design of Inspect AI's ``RetryDecision`` /
``model_retry_config``, written as a small loop instead of a tenacity dependency.

Policy:

* retried: HTTP 429 (waiting what ``Retry-After`` / ``retry-after-ms`` asks), 408, 409,
  every 5xx, timeouts, connection errors, and malformed response bodies, with
  exponential backoff and jitter, at most ``max_retries`` times;
* not retried: every other 4xx, which fails at once with the server's own message, and a
  reply body over the size cap (``too_large``: the same request would bring it again);
* fatal (the runner stops the whole run): 401, 403 and 404, and a server that could
  not be reached at all in any attempt. Everything else is a per-case failure that
  the runner stores as an error row and retries on resume.

Secrets: every message built here passes through :func:`redact`, so an API key that a
server echoes back (OpenAI's 401 message does) never reaches an exception, a log line
or the store.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit, urlunsplit

from tooldiag.errors import ModelCallError, ModelCallErrorKind, UserError

logger = logging.getLogger("tooldiag.models")

T = TypeVar("T")

FailureKind = Literal["rate_limit", "server", "timeout", "connection", "malformed", "client", "too_large"]
"""What went wrong in one attempt.

``rate_limit``: HTTP 429. ``server``: 5xx, 408 or 409. ``timeout``: no complete answer within
the request timeout (a whole-request deadline: a server dripping bytes does not extend it).
``connection``: the connection failed or broke. ``malformed``: an answer that is not a chat
completion, whatever made its parsing fail. ``client``: any other 4xx (never retried).
``too_large``: a reply body over ``ModelOptions.max_response_bytes``; never retried (the
same request asks for the same answer), so the call fails as ``REJECTED``."""

#: Kinds that no retry can fix.
NOT_RETRIED: frozenset[str] = frozenset({"client", "too_large"})

#: Statuses retried besides 429 and 5xx (the set the official OpenAI SDK retries).
RETRYABLE_STATUSES = frozenset({408, 409, 429})
#: Statuses that no other case of the run can escape either: bad key, no access,
#: unknown model or wrong URL.
FATAL_STATUSES = frozenset({401, 403, 404})

REDACTED = "***"


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every occurrence of each (non-trivial) secret replaced by ``***``."""
    for secret in secrets:
        if secret and len(secret) >= 4 and secret in text:
            text = text.replace(secret, REDACTED)
    return text


def public_url(url: str | None) -> str | None:
    """``url`` without what may be a secret: user and password (``user:pass@``), query
    (``?key=...``) and fragment are dropped; scheme, host, port and path stay. Run configs
    and reports keep this form of an endpoint."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "<unparseable URL withheld>"
    netloc = (f"[{host}]" if ":" in host else host) + (f":{port}" if port is not None else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def redact_json(value: Any, secrets: Iterable[str | None]) -> Any:
    """A JSON-able ``value`` with secrets redacted (returned unchanged when none occurs)."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    cleaned = redact(text, secrets)
    return value if cleaned == text else json.loads(cleaned)


class AttemptFailure(Exception):
    """One failed attempt, classified by the provider that saw it."""

    def __init__(
        self,
        kind: FailureKind,
        message: str,
        *,
        status: int | None = None,
        retry_after_s: float | None = None,
        unreachable: bool = False,
        size_cap: int | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind
        #: ``too_large`` only: the cap the body passed (carried to :class:`ModelCallError`).
        self.size_cap = size_cap
        self.message = message
        self.status = status
        self.retry_after_s = retry_after_s
        #: True when no connection to the server could be opened at all.
        self.unreachable = unreachable

    @property
    def retryable(self) -> bool:
        return self.kind not in NOT_RETRIED


def failure_for_status(status: int, server_message: str, retry_after_s: float | None = None) -> AttemptFailure:
    """Classify a non-2xx HTTP answer."""
    text = f"HTTP {status}: {server_message}" if server_message else f"HTTP {status}"
    if status == 429:
        return AttemptFailure("rate_limit", text, status=status, retry_after_s=retry_after_s)
    if status >= 500 or status in RETRYABLE_STATUSES:
        return AttemptFailure("server", text, status=status, retry_after_s=retry_after_s)
    return AttemptFailure("client", text, status=status)


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``Retry-After`` (seconds or an HTTP date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    value = lowered.get("retry-after-ms")
    if value is not None:
        try:
            return max(0.0, float(value) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry.

    The wait before retry ``n`` (0-based) is drawn uniformly from
    ``[b/2, b]`` with ``b = min(max_delay_s, base_delay_s * 2**n)`` ("equal jitter"),
    or is the server's ``Retry-After`` (capped at ``max_retry_after_s``) plus up to
    10 % jitter when the server sent one.
    """

    max_retries: int = 6
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    max_retry_after_s: float = 120.0

    def delay_s(self, retry_index: int, failure: AttemptFailure, rng: random.Random) -> float:
        if failure.retry_after_s is not None:
            wait = min(failure.retry_after_s, self.max_retry_after_s)
            return wait + rng.uniform(0.0, 0.1 * wait)
        backoff = min(self.max_delay_s, self.base_delay_s * (2**retry_index))
        return rng.uniform(backoff / 2, backoff)


_rng = random.Random()


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    describe: str,
    secrets: Iterable[str | None] = (),
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    retries: dict[str, int] | None = None,
) -> T:
    """Run ``attempt`` until it succeeds, fails for good, or the retries run out.

    ``describe`` names the endpoint in messages (e.g. ``openai/llama at http://...``).
    ``retries``, when given, is filled with the :data:`FailureKind` of every failed
    attempt that was retried (``{"rate_limit": 2}``), so the caller can store what the
    answer cost (:attr:`tooldiag.trajectory.Emission.retries`); the final, unretried
    failure of a call that gives up is not counted.
    Raises :class:`~tooldiag.errors.ModelCallError` on final failure, with ``status``
    and ``kind``: a non-retryable answer is ``FATAL`` (401/403/404) or ``REJECTED``
    (any other 4xx); retries that ran out are ``TRANSIENT``, or ``FATAL`` when no
    attempt reached the server. Its message holds the last failure's text and never a
    secret.
    """
    secrets = tuple(secrets)
    all_unreachable = True
    for retry_index in range(policy.max_retries + 1):
        try:
            return await attempt()
        except AttemptFailure as failure:
            all_unreachable = all_unreachable and failure.unreachable
            message = redact(failure.message, secrets)
            if not failure.retryable:
                raise ModelCallError(
                    f"{describe}: {message}",
                    status=failure.status,
                    kind=ModelCallErrorKind.FATAL if failure.status in FATAL_STATUSES else ModelCallErrorKind.REJECTED,
                    size_cap=failure.size_cap,
                ) from None
            if retry_index == policy.max_retries:
                attempts = policy.max_retries + 1
                unreachable = " (server unreachable)" if all_unreachable else ""
                raise ModelCallError(
                    f"{describe}: gave up after {attempts} attempt{'s' if attempts > 1 else ''}{unreachable}; "
                    f"last error: {message}",
                    status=failure.status,
                    kind=ModelCallErrorKind.FATAL if all_unreachable else ModelCallErrorKind.TRANSIENT,
                ) from None
            if retries is not None:
                retries[failure.kind] = retries.get(failure.kind, 0) + 1
            wait = policy.delay_s(retry_index, failure, _rng)
            logger.info(
                "%s: %s; retrying in %.2f s (attempt %d of %d)",
                describe,
                message,
                wait,
                retry_index + 2,
                policy.max_retries + 1,
            )
            await sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover


def policy_from_options(max_retries: int, extra: Mapping[str, object]) -> RetryPolicy:
    """The policy for ``ModelOptions``: ``max_retries`` plus the Python-API-only knobs
    ``extra["retry_base_s"]``, ``extra["retry_max_s"]`` and ``extra["retry_after_max_s"]``."""
    if max_retries < 0:
        raise UserError(f"--max-retries must be 0 or more, got {max_retries}", hint="e.g. --max-retries 6")
    defaults = RetryPolicy()
    try:
        return RetryPolicy(
            max_retries=max_retries,
            base_delay_s=float(extra.get("retry_base_s", defaults.base_delay_s)),  # type: ignore[arg-type]
            max_delay_s=float(extra.get("retry_max_s", defaults.max_delay_s)),  # type: ignore[arg-type]
            max_retry_after_s=float(extra.get("retry_after_max_s", defaults.max_retry_after_s)),  # type: ignore[arg-type]
        )
    except (TypeError, ValueError) as exc:
        raise UserError(f"invalid retry option in ModelOptions.extra: {exc}", hint="give seconds as numbers") from None
