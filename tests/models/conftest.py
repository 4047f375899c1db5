"""Fixtures for the model-backend tests: a fake OpenAI-compatible server on
127.0.0.1 and options with millisecond retry delays (so retry tests stay fast)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.fake_openai import FakeOpenAIServer
from tooldiag.models import ModelOptions

FAST_RETRIES = {"retry_base_s": 0.001, "retry_max_s": 0.01}


@pytest.fixture(autouse=True)
def _private_cache_dir(tmp_path, monkeypatch) -> None:
    """No test may read or write the user's real response cache."""
    monkeypatch.setenv("TOOLDIAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


@pytest.fixture
def fast_retry_policy(monkeypatch) -> None:
    """Millisecond backoff for calls built from CLI-level options (the CLI has no option for it):
    for tests that drive whole runs rather than a backend built with :func:`options_for`."""
    from tooldiag.models.retry import RetryPolicy

    monkeypatch.setattr(
        "tooldiag.models.network.policy_from_options",
        lambda max_retries, extra: RetryPolicy(max_retries=max_retries, base_delay_s=0.001, max_delay_s=0.01),
    )


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def options_for(server: FakeOpenAIServer, **overrides) -> ModelOptions:
    """Options pointing at ``server``, without cache, with fast retries."""
    values = {"base_url": server.base_url, "cache": False, "extra": dict(FAST_RETRIES)}
    values.update(overrides)
    return ModelOptions(**values)


@pytest.fixture
def options(server: FakeOpenAIServer):
    """``options(**overrides)`` -> :func:`options_for` the running ``server``."""
    return lambda **overrides: options_for(server, **overrides)
