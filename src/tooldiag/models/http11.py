"""A lean HTTP/1.1 client for plain ``http://`` endpoints: one keep-alive connection per client.

Why not httpx here: against a local server (vLLM, SGLang, a replay server) the harness is
CPU-bound, and httpx with httpcore cost about 0.5 ms of CPU per request in their request,
cookie, pool and stream layers (``bench/README.md``), about half of a BFCL request's harness
CPU. A request of ours is one POST of a body already encoded, answered by one body read
whole, so this module does only that over asyncio streams: write head and body, read the
status line and headers, read a ``Content-Length`` or chunked body (or one that ends with the
connection), under the response size cap, and keep the connection for the next request.
``https://`` and proxied endpoints keep httpx (TLS, proxies and HTTP/2 are its business).

What the caller relies on (:class:`~tooldiag.models.openai_compat.OpenAICompatBackend`):

* the whole-request deadline is the caller's (``asyncio.timeout`` in
  :class:`~tooldiag.models.network.NetworkBackend`): a cancelled request closes its
  connection, which is then in an unknown state, and the next request opens a new one;
* failures are :class:`~tooldiag.models.retry.AttemptFailure` of the same kinds as httpx's
  were: ``connection`` with ``unreachable`` when the connection cannot be opened, ``connection``
  when it breaks (reset, closed mid-body, a reply that is not HTTP), ``too_large`` past the cap
  (by ``Content-Length`` before reading, else as soon as the body passes it);
* ``gzip`` and ``deflate`` bodies are decoded (we ask for neither; some servers send them
  anyway), the cap counting decoded bytes as httpx's ``aiter_bytes`` did;
* a kept connection that the server closed while idle (a keep-alive timeout) is noticed before
  reuse and replaced; a request is never sent twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from tooldiag.models.network import too_large
from tooldiag.models.retry import AttemptFailure

#: Longest status line plus headers accepted (a reply past it is not an API answer).
MAX_HEAD_BYTES = 64 * 1024
_READ_SIZE = 64 * 1024
_NO_BODY_STATUSES = frozenset({204, 304})


@dataclass(frozen=True)
class Origin:
    """Where a plain ``http://`` URL's requests go, and what its ``Host`` header says."""

    host: str
    port: int
    host_header: str

    @classmethod
    def of(cls, url: str) -> Origin:
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"not a plain http:// URL: {url!r}")
        port = parts.port or 80
        shown = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        return cls(parts.hostname, port, shown if port == 80 else f"{shown}:{port}")


@dataclass(frozen=True)
class RawReply:
    """A reply read whole: status, headers (names lowercased, repeats joined), decoded body."""

    status_code: int
    headers: dict[str, str]
    content: bytes


class _Broken(Exception):
    """The connection broke or spoke something that is not HTTP/1.1 (text: what happened)."""


class _Body:
    """Decoded body bytes under the cap (``Content-Encoding`` undone as they arrive)."""

    def __init__(self, limit: int, encoding: str) -> None:
        self.limit = limit
        self.data = bytearray()
        self._decoder: zlib._Decompress | None = None
        #: No ``Content-Encoding``: the bytes read are the body's bytes.
        self.identity = encoding in ("", "identity")
        if encoding in ("gzip", "x-gzip"):
            self._decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._decoder = zlib.decompressobj()
        elif encoding not in ("", "identity"):
            raise _Broken(f"unsupported Content-Encoding {encoding!r}")

    def add(self, chunk: bytes) -> None:
        if self._decoder is not None:
            try:  # never more than the cap allows, so a zip bomb costs no memory
                chunk = self._decoder.decompress(chunk, self.limit + 1 - len(self.data))
            except zlib.error as exc:
                raise _Broken(f"cannot decode the body: {exc}") from None
        self.data += chunk
        if len(self.data) > self.limit:
            raise too_large(self.limit, f"of more than {self.limit} bytes")


class LeanHTTPClient:
    """One keep-alive HTTP/1.1 connection to one origin; one request at a time (the
    :class:`~tooldiag.models.endpoints.ClientPool` hands each client to one request)."""

    def __init__(self, origin: Origin, headers: dict[str, str]) -> None:
        self.origin = origin
        fixed = {"Host": origin.host_header, "Accept": "*/*", "User-Agent": "tooldiag", **headers}
        self._head_lines = "".join(f"{name}: {value}\r\n" for name, value in fixed.items())
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        #: Connections opened so far (the keep-alive tests read it).
        self.connections_opened = 0

    async def post(self, target: str, body: bytes, limit: int) -> RawReply:
        """``POST target`` (a path with its query) with ``body``; the reply read whole."""
        head = f"POST {target} HTTP/1.1\r\n{self._head_lines}Content-Length: {len(body)}\r\n\r\n".encode("latin-1")
        reader, writer = await self._connection()
        try:
            writer.write(head + body)
            await writer.drain()
            reply, reusable = await _read_reply(reader, limit)
        except AttemptFailure:
            self._drop()
            raise
        except _Broken as exc:
            self._drop()
            raise AttemptFailure("connection", f"connection failed: {exc}") from None
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
            self._drop()
            raise AttemptFailure("connection", f"connection failed: {_describe(exc)}") from None
        except BaseException:  # cancelled (the whole-request deadline): the connection is mid-reply
            self._drop()
            raise
        if not reusable:
            self._drop()
        return reply

    async def _connection(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        reader, writer = self._reader, self._writer
        if reader is not None and writer is not None:
            if not (reader.at_eof() or writer.is_closing()):
                return reader, writer
            self._drop()  # the server closed it while idle: start afresh
        try:
            reader, writer = await asyncio.open_connection(self.origin.host, self.origin.port, limit=MAX_HEAD_BYTES)
        except OSError as exc:
            raise AttemptFailure("connection", f"cannot connect: {_describe(exc)}", unreachable=True) from None
        self.connections_opened += 1
        self._reader, self._writer = reader, writer
        return reader, writer

    def _drop(self) -> None:
        writer, self._reader, self._writer = self._writer, None, None
        if writer is not None:
            writer.close()  # not awaited: this may run inside a cancellation

    async def aclose(self) -> None:
        writer = self._writer
        self._drop()
        if writer is not None:
            with contextlib.suppress(OSError):
                await writer.wait_closed()


def _describe(exc: BaseException) -> str:
    if isinstance(exc, asyncio.IncompleteReadError):
        if exc.expected is None:  # in the status line or headers
            return f"the server closed the connection before the reply's head ended ({len(exc.partial)} bytes of it)"
        return f"the server closed the connection after {len(exc.partial)} of {exc.expected} bytes"
    if isinstance(exc, asyncio.LimitOverrunError):
        return f"reply headers longer than {MAX_HEAD_BYTES} bytes"
    text = str(exc) or "no detail"
    return f"{type(exc).__name__}: {text}"


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, str, dict[str, str]]:
    """``(status, HTTP version, headers)`` of the next final reply (1xx interim replies skipped)."""
    while True:
        raw = await reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        version, _, rest = lines[0].partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/1.") or not code.isdigit():
            raise _Broken(f"not an HTTP/1.1 reply: {lines[0][:80]!r}")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if not line:
                continue
            name, colon, value = line.partition(":")
            if not colon:
                raise _Broken(f"malformed header line {line[:80]!r}")
            key, value = name.strip().lower(), value.strip()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        status = int(code)
        if status >= 200 or status == 101:
            return status, version, headers


async def _read_reply(reader: asyncio.StreamReader, limit: int) -> tuple[RawReply, bool]:
    """The reply and whether its connection may carry the next request."""
    status, version, headers = await _read_head(reader)
    connection = headers.get("connection", "").lower()
    reusable = version == "HTTP/1.1" and "close" not in connection
    body = _Body(limit, headers.get("content-encoding", "").strip().lower())
    transfer = headers.get("transfer-encoding", "").lower()
    if status in _NO_BODY_STATUSES:
        pass
    elif "chunked" in transfer:
        await _read_chunked(reader, body.add)
    elif "content-length" in headers:
        declared = headers["content-length"].split(",")[0].strip()
        if not declared.isdigit():
            raise _Broken(f"bad Content-Length {declared[:40]!r}")
        length = int(declared)
        if length > limit:
            raise too_large(limit, f"of {length} bytes (Content-Length)")
        if body.identity:  # the bytes are the body, within the cap: one read, no copy through the buffer
            return RawReply(status, headers, await reader.readexactly(length)), reusable
        remaining = length
        while remaining:
            chunk = await reader.read(min(remaining, _READ_SIZE))
            if not chunk:
                raise asyncio.IncompleteReadError(bytes(length - remaining), length)
            remaining -= len(chunk)
            body.add(chunk)
    else:  # the body ends when the server closes the connection
        reusable = False
        while chunk := await reader.read(_READ_SIZE):
            body.add(chunk)
    return RawReply(status, headers, bytes(body.data)), reusable


async def _read_chunked(reader: asyncio.StreamReader, add: Callable[[bytes], None]) -> None:
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size_text = size_line.split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise _Broken(f"bad chunk size {size_text[:40]!r}") from None
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers, then the blank line
                pass
            return
        remaining = size
        while remaining:
            chunk = await reader.read(min(remaining, _READ_SIZE))
            if not chunk:
                raise asyncio.IncompleteReadError(b"", remaining)
            remaining -= len(chunk)
            add(chunk)
        if await reader.readexactly(2) != b"\r\n":
            raise _Broken("a chunk does not end with CRLF")
