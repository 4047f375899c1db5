"""Each answer carries the failed attempts behind it, by kind (``Emission.retries``)."""

from __future__ import annotations

import asyncio

from tests.support.fake_openai import Reply
from tests.support.model_calls import generate_once
from tooldiag.models import resolve_model
from tooldiag.models.retry import AttemptFailure, RetryPolicy, call_with_retries, public_url
from tooldiag.trajectory import Message

CHAT = [Message(role="user", content="hi")]


def generate(backend):
    return generate_once(backend, CHAT)


def test_retried_attempts_are_counted_by_kind(server, options):
    server.script(Reply.fail(429), Reply.fail(503), Reply.malformed(), Reply.fail(429), Reply.say("there"))
    emission = generate(resolve_model("openai/m", options()))
    assert emission.text == "there"
    assert emission.retries == {"rate_limit": 2, "server": 1, "malformed": 1}


def test_a_first_try_answer_has_no_retries(server, options):
    server.script(Reply.say("at once"))
    assert generate(resolve_model("openai/m", options())).retries == {}


def test_a_cache_hit_carries_no_retries_of_the_run_that_stored_it(server, options, tmp_path):
    server.script(Reply.fail(429), Reply.say("cached"))
    backend = resolve_model("openai/m", options(cache=True, cache_path=str(tmp_path / "c.sqlite")))
    assert generate(backend).retries == {"rate_limit": 1}
    hit = generate(resolve_model("openai/m", options(cache=True, cache_path=str(tmp_path / "c.sqlite"))))
    assert hit.cached and hit.retries == {}


def test_call_with_retries_fills_the_callers_dict():
    failures = [AttemptFailure("timeout", "slow"), AttemptFailure("connection", "reset")]

    async def attempt() -> str:
        if failures:
            raise failures.pop(0)
        return "ok"

    async def no_sleep(_: float) -> None:
        return None

    counts: dict[str, int] = {}
    result = asyncio.run(call_with_retries(attempt, policy=RetryPolicy(), describe="x", sleep=no_sleep, retries=counts))
    assert (result, counts) == ("ok", {"timeout": 1, "connection": 1})


def test_public_url_drops_credentials_query_and_fragment():
    assert public_url("https://u:p@api.example.com:8443/v1?key=s#frag") == "https://api.example.com:8443/v1"
    assert public_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert public_url("http://[::1]:9/v1?x=1") == "http://[::1]:9/v1"
    assert public_url(None) is None and public_url("") == ""
