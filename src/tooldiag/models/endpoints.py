"""What the providers share about an endpoint: its concurrency bound, per-event-loop
client objects, and its API key.

Concurrency is bounded per endpoint, not per backend object: every backend that talks
to the same ``(provider, base_url)`` inside one event loop takes its slots from the
same :class:`asyncio.Semaphore`, so a run whose agent and judge (or whose several
probes) share one vLLM server still never sends it more than ``--concurrency``
requests at once. asyncio primitives and HTTP connection pools belong to the event
loop that first used them, so both are kept per loop (a new ``asyncio.run`` gets
fresh ones instead of failing with "attached to a different loop").
"""

from __future__ import annotations

import asyncio
import os
import re
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar
from urllib.parse import parse_qsl, urlsplit

from tooldiag.errors import UserError

T = TypeVar("T")

_SEMAPHORES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str], asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary()
)


def check_concurrency(concurrency: int) -> int:
    if not isinstance(concurrency, int) or concurrency < 1:
        raise UserError(f"--concurrency must be 1 or more, got {concurrency!r}", hint="e.g. --concurrency 8")
    return concurrency


def endpoint_semaphore(provider: str, endpoint: str, limit: int) -> asyncio.Semaphore:
    """The semaphore bounding requests to ``(provider, endpoint)`` in the running loop.

    The first backend to ask sets the limit; later ones with the same key share it.
    """
    loop = asyncio.get_running_loop()
    per_loop = _SEMAPHORES.get(loop)
    if per_loop is None:
        per_loop = _SEMAPHORES[loop] = {}
    key = (provider, endpoint)
    semaphore = per_loop.get(key)
    if semaphore is None:
        semaphore = per_loop[key] = asyncio.Semaphore(limit)
    return semaphore


class PerLoop(Generic[T]):
    """One lazily built object (an HTTP client, an SDK client) per running event loop."""

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._items: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, T] = weakref.WeakKeyDictionary()

    def get(self) -> T:
        loop = asyncio.get_running_loop()
        item = self._items.get(loop)
        if item is None:
            item = self._items[loop] = self._build()
        return item

    def pop_current(self) -> T | None:
        """Remove and return the running loop's object (to close it), if any."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
        return self._items.pop(loop, None)


def resolve_api_key(api_key_env: str | None, default_env: str, *, required: bool, provider: str) -> str | None:
    """The API key from the environment variable the user named (or the default one).

    Keys are only ever read from the environment, never from arguments or files, so
    they cannot end up in a stored run config. ``required``: the endpoint cannot work
    without one (a hosted API); a local server needs none.
    """
    env_name = api_key_env or default_env
    key = os.environ.get(env_name) or None
    if key is None and (required or api_key_env):
        named = "the variable you named with --api-key-env" if api_key_env else "its API key variable"
        raise UserError(
            f"{provider}: environment variable {env_name} is not set ({named})",
            hint=f"export {env_name}=... before running, or name another variable with --api-key-env",
        )
    return key


def check_base_url(base_url: str) -> str:
    if not base_url.startswith(("http://", "https://")):
        raise UserError(
            f"--base-url {base_url!r} is not an http(s) URL",
            hint="e.g. --base-url http://127.0.0.1:8000/v1",
        )
    if "@" in base_url.split("://", 1)[1].split("/", 1)[0]:
        # Credentials in the URL would be stored in the run config and shown in errors.
        raise UserError(
            "--base-url holds credentials (user:password@host); keys are read from the environment only",
            hint="put the key in an environment variable and name it with --api-key-env",
        )
    secret = _credential_parameter(base_url)
    if secret is not None:
        # The same for a key in the query string (?api_key=...): never echo its value.
        raise UserError(
            f"--base-url holds a credential in its query string (parameter {secret!r}); "
            "keys are read from the environment only",
            hint="drop the parameter, put the key in an environment variable and name it with --api-key-env",
        )
    return base_url.rstrip("/")


#: Query parameter names that carry a secret (matched case-insensitively, anywhere in the name).
_CREDENTIAL_NAME = re.compile(r"key|token|secret|passw|auth|signature|^sig$|credential|session", re.IGNORECASE)


def _credential_parameter(url: str) -> str | None:
    """The name of the first query (or fragment) parameter of ``url`` that looks like a credential."""
    parts = urlsplit(url)
    for text in (parts.query, parts.fragment):
        for name, _value in parse_qsl(text, keep_blank_values=True):
            if _CREDENTIAL_NAME.search(name):
                return name
    return None


class ClientPool(Generic[T]):
    """Single-connection HTTP clients, one per request in flight, reused LIFO.

    One shared httpx client with many connections costs O(connections) CPU per
    request in httpcore's pool bookkeeping (about 2 ms per request at 32 in flight,
    measured by ``bench/harness_overhead.py``); a client per in-flight request keeps
    that constant (about 0.9 ms). The pool grows to the number of requests in flight,
    which the endpoint semaphore bounds, and never shrinks.
    """

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._idle: list[T] = []
        self.clients: list[T] = []

    def acquire(self) -> T:
        if self._idle:
            return self._idle.pop()
        client = self._build()
        self.clients.append(client)
        return client

    def release(self, client: T) -> None:
        self._idle.append(client)
