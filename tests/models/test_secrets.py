"""API keys never reach exception text, logs, stored emissions or the cache."""

from __future__ import annotations

import asyncio
import logging
import sqlite3

import pytest

from tests.support.fake_openai import Reply
from tooldiag.errors import ModelCallError, UserError
from tooldiag.models import ModelOptions, resolve_model
from tooldiag.trajectory import Message

KEY = "sk-test-9f8e7d6c5b4a39281706"
CHAT = [Message(role="user", content="hi")]


@pytest.fixture
def keyed(monkeypatch):
    monkeypatch.setenv("TOOLDIAG_TEST_KEY", KEY)


def generate(backend):
    return asyncio.run(backend.generate(CHAT))


def test_rejected_key_echoed_by_the_server_is_redacted(server, options, keyed, caplog):
    server.api_key = "sk-the-right-one"  # the server answers 401 and echoes the key it got
    backend = resolve_model("openai/m", options(api_key_env="TOOLDIAG_TEST_KEY"))
    with caplog.at_level(logging.DEBUG), pytest.raises(ModelCallError) as info:
        generate(backend)
    assert info.value.fatal and info.value.status == 401
    assert "Incorrect API key provided: ***" in info.value.message
    for text in (str(info.value), repr(info.value), info.value.message, caplog.text, repr(backend)):
        assert KEY not in text


def test_retried_errors_echoing_the_key_are_redacted_in_logs_and_final_error(server, options, keyed, caplog):
    server.script(*[Reply.fail(500, f"upstream rejected {KEY}")] * 3)
    backend = resolve_model("openai/m", options(api_key_env="TOOLDIAG_TEST_KEY", max_retries=2))
    with caplog.at_level(logging.DEBUG), pytest.raises(ModelCallError) as info:
        generate(backend)
    assert "upstream rejected ***" in info.value.message
    assert "retrying" in caplog.text and KEY not in caplog.text
    assert KEY not in str(info.value)


def test_key_echoed_in_a_successful_body_is_not_stored(server, options, keyed, tmp_path):
    server.script(Reply.say(f"your key is {KEY}"))
    backend = resolve_model(
        "openai/m", options(api_key_env="TOOLDIAG_TEST_KEY", cache=True, cache_path=str(tmp_path / "c.sqlite"))
    )
    emission = generate(backend)
    assert server.requests[0].headers["Authorization"] == f"Bearer {KEY}"  # it was sent...
    assert KEY not in emission.model_dump_json()  # ...but never kept
    rows = sqlite3.connect(tmp_path / "c.sqlite").execute("SELECT key, model, emission FROM responses").fetchall()
    assert rows and all(KEY not in "".join(row) for row in rows)


def test_a_missing_key_is_reported_by_variable_name(monkeypatch):
    monkeypatch.setenv("OTHER", KEY)
    with pytest.raises(UserError) as info:
        resolve_model("openai/gpt-4o", ModelOptions())
    assert "OPENAI_API_KEY" in str(info.value) and KEY not in str(info.value)


def test_credentials_in_the_base_url_are_refused_before_anything_is_stored(tmp_path):
    import pytest as _pytest

    from tooldiag.errors import UserError
    from tooldiag.models import ModelOptions, resolve_model

    with _pytest.raises(UserError, match="holds credentials") as info:
        resolve_model("openai/m", ModelOptions(base_url="https://user:sk-secret-123@example.invalid/v1"))
    assert "sk-secret-123" not in str(info.value)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/v1?api_key=sk-secret-123",
        "https://example.invalid/v1?x=1&access_token=sk-secret-123",
        "https://example.invalid/v1?AUTH=sk-secret-123",
        "https://example.invalid/v1?sig=sk-secret-123",
        "https://example.invalid/v1#key=sk-secret-123",
    ],
)
def test_a_credential_in_the_query_string_is_refused_without_echoing_it(url, tmp_path, capsys):
    """Issue 20, defect 16: a key in `?api_key=` was stored in the run config and printed in errors."""
    from tooldiag.cli.main import main

    with pytest.raises(UserError, match="credential in its query string") as info:
        resolve_model("openai/m", ModelOptions(base_url=url))
    assert "sk-secret-123" not in str(info.value) and "sk-secret-123" not in info.value.hint
    with pytest.raises(SystemExit) as stop:
        main(
            ["run", "bfcl", "--model", "openai/m", "--base-url", url, "--run-dir", str(tmp_path / "r"), "--limit", "1"]
        )
    assert stop.value.code == 2 and "sk-secret-123" not in capsys.readouterr().err
    assert not (tmp_path / "r").exists() or not any(
        "sk-secret-123" in p.read_bytes().decode("latin-1") for p in (tmp_path / "r").rglob("*") if p.is_file()
    )


def test_an_ordinary_query_string_is_kept():
    backend = resolve_model("openai/m", ModelOptions(base_url="https://example.invalid/openai?api-version=2024-10-21"))
    assert backend is not None
