"""Classified retries: what is retried, how long it waits, what fails fast, what is fatal."""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import time

import pytest

from tests.support.fake_openai import Reply
from tests.support.model_calls import generate_once
from tooldiag.errors import ModelCallError, ModelCallErrorKind
from tooldiag.models import resolve_model
from tooldiag.models.retry import AttemptFailure, RetryPolicy, call_with_retries, parse_retry_after
from tooldiag.trajectory import GenerationConfig, Message

CHAT = [Message(role="user", content="hi")]


def generate(backend, config=None):
    return generate_once(backend, CHAT, config=config)


@pytest.mark.parametrize(
    "failure",
    [
        Reply.fail(500, "boom"),
        Reply.fail(502),
        Reply.fail(503),
        Reply.fail(408),
        Reply.fail(409),
        Reply.fail(429, "slow down"),
        Reply.malformed(),
        Reply.malformed('{"object": "error"}'),
        Reply.malformed("<html>gateway</html>"),
        Reply.disconnect(),
    ],
    ids=["500", "502", "503", "408", "409", "429", "truncated", "no-choices", "html", "hang-up"],
)
def test_transient_failures_are_retried_until_success(server, options, failure):
    server.script(failure, failure, Reply.say("finally"))
    emission = generate(resolve_model("openai/m", options()))
    assert emission.text == "finally"
    assert server.request_count == 3


def test_retries_are_bounded_and_the_last_error_is_reported(server, options):
    server.script(*[Reply.fail(500, "still broken")] * 10)
    with pytest.raises(ModelCallError) as info:
        generate(resolve_model("openai/m", options(max_retries=3)))
    assert server.request_count == 4
    error = info.value
    assert (error.status, error.kind) == (500, ModelCallErrorKind.TRANSIENT)
    assert "gave up after 4 attempts" in error.message and "still broken" in error.message
    assert "openai/m at http://127.0.0.1" in error.message


def test_max_retries_zero_means_one_attempt(server, options):
    server.script(Reply.fail(503))
    with pytest.raises(ModelCallError, match="gave up after 1 attempt;"):
        generate(resolve_model("openai/m", options(max_retries=0)))
    assert server.request_count == 1


@pytest.mark.parametrize("status", [400, 413, 422])
def test_other_client_errors_fail_fast_with_the_servers_message(server, options, status):
    server.script(Reply.fail(status, "tools[0].parameters is not a valid JSON schema"), Reply.say("never"))
    with pytest.raises(ModelCallError) as info:
        generate(resolve_model("openai/m", options()))
    assert server.request_count == 1
    assert (info.value.status, info.value.kind) == (status, ModelCallErrorKind.REJECTED)
    assert f"HTTP {status}: tools[0].parameters is not a valid JSON schema" in info.value.message


@pytest.mark.parametrize("status", [401, 403, 404])
def test_auth_and_not_found_are_fatal(server, options, status):
    server.script(Reply.fail(status, "nope"))
    with pytest.raises(ModelCallError) as info:
        generate(resolve_model("openai/m", options()))
    assert server.request_count == 1
    assert info.value.kind is ModelCallErrorKind.FATAL and info.value.status == status
    if status == 404:
        assert "--base-url" in info.value.message


def test_retry_after_header_is_honoured(server, options):
    server.script(Reply.fail(429, "rate limited", retry_after="0.3"), Reply.say("ok"))
    started = time.perf_counter()
    assert generate(resolve_model("openai/m", options())).text == "ok"
    assert time.perf_counter() - started >= 0.3  # backoff alone would wait ~1 ms
    assert server.request_count == 2


def test_retry_after_ms_header_is_honoured(server, options):
    server.script(Reply.fail(429, retry_after_ms="250"), Reply.say("ok"))
    started = time.perf_counter()
    assert generate(resolve_model("openai/m", options())).text == "ok"
    assert time.perf_counter() - started >= 0.25


def test_stalls_longer_than_the_timeout_are_retried(server, options):
    server.script(Reply.stall(2.0), Reply.say("fast"))
    started = time.perf_counter()
    emission = generate(resolve_model("openai/m", options()), GenerationConfig(timeout_s=0.2))
    assert emission.text == "fast"
    assert time.perf_counter() - started < 1.5
    assert server.requests[0].body == server.requests[1].body


def test_persistent_stalls_end_in_a_non_fatal_timeout_error(server, options):
    server.script(*[Reply.stall(2.0)] * 3)
    with pytest.raises(ModelCallError) as info:
        generate(resolve_model("openai/m", options(max_retries=1)), GenerationConfig(timeout_s=0.1))
    assert "no answer within 0.1 s" in info.value.message
    assert info.value.kind is ModelCallErrorKind.TRANSIENT


def test_unreachable_server_is_fatal_after_retries(options):
    with socket.socket() as sock:  # a port that was free a moment ago and has no listener
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    backend = resolve_model("openai/m", options(base_url=f"http://127.0.0.1:{port}/v1", max_retries=2))
    with pytest.raises(ModelCallError) as info:
        generate(backend)
    assert info.value.kind is ModelCallErrorKind.FATAL and info.value.status is None
    assert "gave up after 3 attempts (server unreachable)" in info.value.message


def test_retries_are_logged(server, options, caplog):
    server.script(Reply.fail(503, "overloaded"), Reply.say("ok"))
    with caplog.at_level(logging.INFO, logger="tooldiag.models"):
        generate(resolve_model("openai/m", options()))
    assert "HTTP 503: overloaded; retrying in" in caplog.text


# -- the policy itself, without a server --------------------------------------------


def test_parse_retry_after_forms():
    assert parse_retry_after({"Retry-After": "7"}) == 7.0
    assert parse_retry_after({"retry-after": "0.5"}) == 0.5
    assert parse_retry_after({"retry-after-ms": "1500", "Retry-After": "9"}) == 1.5
    date = parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})
    assert date == 0.0  # a date in the past: retry now
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


def test_backoff_is_exponential_with_jitter_and_capped():
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=8.0)
    rng = random.Random(0)
    failure = AttemptFailure("server", "x")
    for n, ceiling in enumerate([1, 2, 4, 8, 8, 8]):
        delays = [policy.delay_s(n, failure, rng) for _ in range(200)]
        assert min(delays) >= ceiling / 2 and max(delays) <= ceiling
        assert max(delays) - min(delays) > ceiling / 4  # jittered, not constant
    waited = policy.delay_s(0, AttemptFailure("rate_limit", "x", retry_after_s=30.0), rng)
    assert 30.0 <= waited <= 33.0
    capped = RetryPolicy(max_retry_after_s=5.0).delay_s(0, AttemptFailure("rate_limit", "x", retry_after_s=999), rng)
    assert capped <= 5.5


def test_call_with_retries_sleeps_between_attempts_only():
    waits: list[float] = []
    outcomes = iter([AttemptFailure("timeout", "t1"), AttemptFailure("connection", "c"), "done"])

    async def attempt():
        item = next(outcomes)
        if isinstance(item, Exception):
            raise item
        return item

    async def sleep(seconds):
        waits.append(seconds)

    policy = RetryPolicy(max_retries=5, base_delay_s=1.0)
    result = asyncio.run(call_with_retries(attempt, policy=policy, describe="x", sleep=sleep))
    assert result == "done"
    assert len(waits) == 2 and 0.5 <= waits[0] <= 1.0 and 1.0 <= waits[1] <= 2.0


def test_connection_failure_after_contact_is_not_fatal():
    outcomes = iter([AttemptFailure("connection", "down", unreachable=True), AttemptFailure("server", "500")])

    async def attempt():
        raise next(outcomes)

    async def sleep(seconds):
        pass

    with pytest.raises(ModelCallError) as info:
        asyncio.run(call_with_retries(attempt, policy=RetryPolicy(max_retries=1), describe="x", sleep=sleep))
    assert info.value.kind is ModelCallErrorKind.TRANSIENT


def test_the_error_kind_is_one_closed_value_and_the_flags_derive_from_it():
    assert {k.value for k in ModelCallErrorKind} == {"fatal", "transient", "rejected"}
    assert ModelCallError("x").kind is ModelCallErrorKind.TRANSIENT
    flags = {k: (ModelCallError("x", kind=k).fatal, ModelCallError("x", kind=k).transient) for k in ModelCallErrorKind}
    assert flags == {
        ModelCallErrorKind.FATAL: (True, False),
        ModelCallErrorKind.TRANSIENT: (False, True),
        ModelCallErrorKind.REJECTED: (False, False),
    }
