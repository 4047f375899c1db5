"""Content-addressed response cache in SQLite, wrapped around any provider.

Re-running a report, a probe or a crashed run must not pay for (or wait for) answers
it already has. The key is the SHA-256 of a canonical JSON of everything that
determines the answer: provider, model name, messages, tools, tool choice and the
generation config without its timeout (a timeout changes whether an answer arrives,
not what it says), and the request's ``TaskContext.sample`` when it is not 0 (a runner
re-asking after an unusable answer wants a new draw, not the cached one). The endpoint
URL is deliberately not part of the key, so a vLLM server restarted on another port
still hits; use ``--no-cache`` when the weights behind a model name changed.

Only deterministic requests are cached: the cache is used when
``ModelOptions.cache`` is on (``--no-cache`` turns it off) *and* the temperature is
exactly 0. Successful emissions are stored; failures never are. A hit comes back
with ``Emission.cached = True`` and the original latency, usage and raw body (and no
``retries``: those were paid by the run that stored it).

Storage: one table in a WAL-mode SQLite file opened through :mod:`tooldiag.sqlite`
(readers never block the writer; several processes can share the file; ``busy_timeout``
absorbs lock contention), named by ``meta(format = tooldiag-response-cache,
schema_version)`` (files from before the meta table get it on first open), at
``ModelOptions.cache_path``, else ``$TOOLDIAG_CACHE_DIR/responses.sqlite``, else
``$XDG_CACHE_HOME/tooldiag/responses.sqlite`` (default ``~/.cache/tooldiag/``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path

from pydantic import TypeAdapter

from tooldiag import sqlite
from tooldiag.errors import UserError
from tooldiag.models.base import ModelBackend, ModelOptions, ModelRequest, ToolChoice
from tooldiag.trajectory import Emission, GenerationConfig, Message, ToolSpec

logger = logging.getLogger("tooldiag.models")

#: Bumped when the key recipe or the stored value changes shape.
CACHE_FORMAT = 1
#: The file's name in its meta table. Informative only: the format is part of every key, so a
#: file holding rows of another format is read, those rows just never hit.
HEADER = sqlite.Header(
    format_key="format", format="tooldiag-response-cache", version_key="schema_version", version=CACHE_FORMAT
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    emission TEXT NOT NULL,
    created_at REAL NOT NULL
)
"""


def default_cache_path() -> Path:
    directory = os.environ.get("TOOLDIAG_CACHE_DIR")
    if directory:
        return Path(directory).expanduser() / "responses.sqlite"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "tooldiag" / "responses.sqlite"


_MESSAGES = TypeAdapter(list[Message])
_TOOLS = TypeAdapter(list[ToolSpec])


def cache_key(
    provider: str,
    model: str,
    messages: list[Message],
    tools: list[ToolSpec] | None,
    tool_choice: ToolChoice,
    config: GenerationConfig,
    sample: int = 0,
) -> str:
    """SHA-256 hex digest identifying one request's answer (see the module docstring).

    The parts are serialised by pydantic's compiled serialiser (about 0.1 ms for a
    30 KiB BFCL request, five times faster than sorted ``json.dumps``) and joined with
    NUL bytes, which JSON text never contains. Dict-valued fields keep their
    insertion order, so a request rebuilt with differently ordered keys is a miss,
    never a wrong hit.
    """
    digest = hashlib.sha256()
    parts = [CACHE_FORMAT, provider, model, tool_choice] + ([sample] if sample else [])
    header = json.dumps(parts, ensure_ascii=False)
    for part in (
        header.encode("utf-8"),
        _MESSAGES.dump_json(messages, exclude_defaults=True),
        _TOOLS.dump_json(tools or [], exclude_defaults=True),
        config.model_dump_json(exclude={"timeout_s"}).encode("utf-8"),
    ):
        digest.update(part)
        digest.update(b"\0")
    return digest.hexdigest()


class ResponseCache:
    """A SQLite file of ``key -> Emission`` rows; one connection per thread."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._local = threading.local()
        self._connect()  # fail early, with a clear message, on an unusable path

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite.connect(self.path, autocommit=True, shared_across_threads=True)
            conn.execute(_SCHEMA)
            conn.execute(sqlite.META_TABLE)
            sqlite.add_missing_meta(conn, HEADER.items())
        except (OSError, sqlite3.Error) as exc:
            raise UserError(
                f"cannot open the response cache {self.path}: {exc}",
                hint=(
                    "set TOOLDIAG_CACHE_DIR to a writable folder, delete the file if it is corrupt, or pass --no-cache"
                ),
            ) from None
        self._local.conn = conn
        return conn

    def get(self, key: str) -> Emission | None:
        try:
            row = self._connect().execute("SELECT emission FROM responses WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            logger.warning("response cache %s unreadable (%s); treating as a miss", self.path, exc)
            return None
        if row is None:
            return None
        try:
            emission = Emission.model_validate_json(row[0])
        except ValueError:
            return None  # written by an incompatible version: a miss, overwritten on put
        # The retries were paid by the run that stored the answer, not by this one.
        return emission.model_copy(update={"cached": True, "retries": {}})

    def put(self, key: str, model: str, emission: Emission) -> None:
        value = emission.model_dump_json()
        try:
            self._connect().execute(
                "INSERT OR REPLACE INTO responses (key, model, emission, created_at) VALUES (?, ?, ?, ?)",
                (key, model, value, time.time()),
            )
        except sqlite3.Error as exc:
            logger.warning("response cache %s not written (%s)", self.path, exc)

    def __len__(self) -> int:
        return int(self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


_OPEN_CACHES: dict[Path, ResponseCache] = {}
_OPEN_LOCK = threading.Lock()


def open_cache(path: str | os.PathLike[str] | None = None) -> ResponseCache:
    """The process-wide :class:`ResponseCache` for ``path`` (default: :func:`default_cache_path`)."""
    resolved = Path(path).expanduser().resolve() if path else default_cache_path().resolve()
    with _OPEN_LOCK:
        cache = _OPEN_CACHES.get(resolved)
        if cache is None:
            cache = _OPEN_CACHES[resolved] = ResponseCache(resolved)
        return cache


class CachedBackend(ModelBackend):
    """Answers temperature-0 requests from the cache; asks ``inner`` otherwise."""

    def __init__(self, inner: ModelBackend, provider: str, model: str, cache: ResponseCache) -> None:
        self.inner = inner
        self.provider = provider
        self.model = model
        self.cache = cache

    async def complete(self, request: ModelRequest) -> Emission:
        config = request.config
        if config.temperature != 0:
            return await self.inner.complete(request)
        sample = request.context.sample if request.context is not None else 0
        key = cache_key(self.provider, self.model, request.messages, request.tools, request.tool_choice, config, sample)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        emission = await self.inner.complete(request)
        self.cache.put(key, f"{self.provider}/{self.model}", emission)
        return emission

    async def aclose(self) -> None:
        await self.inner.aclose()

    @property
    def deterministic(self) -> bool:
        return self.inner.deterministic


def with_cache(backend: ModelBackend, provider: str, model: str, options: ModelOptions) -> ModelBackend:
    """``backend`` wrapped in the response cache when ``options.cache`` is on.

    Every provider factory ends with this call; reference policies, being
    deterministic and offline, are returned unwrapped.
    """
    if not options.cache or backend.deterministic:
        return backend
    return CachedBackend(backend, provider, model, open_cache(options.cache_path))
