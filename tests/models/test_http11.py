"""The lean HTTP/1.1 client (:mod:`tooldiag.models.http11`) against real local servers: each test
scripts the raw bytes a server writes, so framing, keep-alive and failures are what is tested,
not a server library's idea of them."""

from __future__ import annotations

import asyncio
import gzip
import socket
import struct
from collections.abc import Awaitable, Callable

import pytest

from tooldiag.models import ModelOptions
from tooldiag.models.base import ModelRequest
from tooldiag.models.http11 import LeanHTTPClient, Origin
from tooldiag.models.openai_compat import OpenAICompatBackend, lean_origin
from tooldiag.models.retry import AttemptFailure
from tooldiag.trajectory import GenerationConfig, Message

Handler = Callable[["ScriptedServer", asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class ScriptedServer:
    """An asyncio server on 127.0.0.1 that runs ``handler(server, reader, writer)`` per connection and
    counts connections (the handler reads requests through the server, which notes them)."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.requests: list[bytes] = []
        self._server: asyncio.AbstractServer | None = None
        self.origin = Origin("127.0.0.1", 0, "")

    async def __aenter__(self) -> ScriptedServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.origin = Origin.of(f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}")
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    async def read_request(self, reader: asyncio.StreamReader) -> bytes:
        """One request's head and body (by its Content-Length), noted in :attr:`requests`."""
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
        )
        body = await reader.readexactly(length)
        self.requests.append(head + body)
        return body

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await self.handler(self, reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def reply(body: bytes, status: str = "200 OK", extra: str = "") -> bytes:
    return f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode() + body


def run(coroutine: Awaitable[None]) -> None:
    asyncio.run(asyncio.wait_for(coroutine, 10))  # type: ignore[arg-type]


def test_sequential_requests_reuse_one_connection_and_echo_the_body():
    async def echo(server: ScriptedServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            body = await server.read_request(reader)
            writer.write(reply(b"echo:" + body))
            await writer.drain()

    async def main() -> None:
        async with ScriptedServer(echo) as scripted:
            client = LeanHTTPClient(scripted.origin, {"Content-Type": "application/json", "Authorization": "Bearer k"})
            answers = [await client.post("/v1/chat/completions?x=1", f"n{i}".encode(), 1000) for i in range(5)]
            await client.aclose()
        assert [a.content for a in answers] == [f"echo:n{i}".encode() for i in range(5)]
        assert {a.status_code for a in answers} == {200}
        assert scripted.connections == 1 and client.connections_opened == 1
        first = scripted.requests[0].decode()
        assert first.startswith("POST /v1/chat/completions?x=1 HTTP/1.1\r\n")
        assert f"Host: 127.0.0.1:{scripted.origin.port}\r\n" in first
        assert "Authorization: Bearer k\r\n" in first and "Content-Length: 2\r\n" in first

    run(main())


def test_a_chunked_body_with_extensions_and_trailers_is_decoded_and_the_connection_kept():
    async def chunked(server: ScriptedServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await server.read_request(reader)
            writer.write(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Thing: a\r\nX-Thing: b\r\n\r\n"
                b"5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n"
            )
            await writer.drain()

    async def main() -> None:
        async with ScriptedServer(chunked) as scripted:
            client = LeanHTTPClient(scripted.origin, {})
            first = await client.post("/", b"{}", 1000)
            second = await client.post("/", b"{}", 1000)
            await client.aclose()
        assert first.content == second.content == b"hello, world"
        assert first.headers["x-thing"] == "a, b"
        assert scripted.connections == 1

    run(main())


def test_a_gzip_body_is_decoded_and_a_body_that_ends_with_the_connection_is_read_whole():
    packed = gzip.compress(b'{"ok": true}')

    async def gzipped(server: ScriptedServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_request(reader)
        writer.write(reply(packed, extra="Content-Encoding: gzip\r\n"))
        await server.read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end")
        await writer.drain()

    async def main() -> None:
        async with ScriptedServer(gzipped) as scripted:
            client = LeanHTTPClient(scripted.origin, {})
            assert (await client.post("/", b"{}", 1000)).content == b'{"ok": true}'
            assert (await client.post("/", b"{}", 1000)).content == b"until the end"
            await client.aclose()

    run(main())


@pytest.mark.parametrize("framing", ["content-length", "chunked", "gzip"])
def test_a_body_past_the_cap_is_refused_as_too_large(framing):
    payload = b"z" * 5000

    async def big(server: ScriptedServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_request(reader)
        if framing == "content-length":
            writer.write(reply(payload))
        elif framing == "chunked":
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"400\r\n" + b"z" * 1024 + b"\r\n")
            await asyncio.sleep(5)  # more would follow: the cap must not wait for it
        else:  # 5000 bytes packed into far fewer: the cap counts what they decode to
            writer.write(reply(gzip.compress(payload), extra="Content-Encoding: gzip\r\n"))
        await writer.drain()
        await asyncio.sleep(5)

    async def main() -> None:
        async with ScriptedServer(big) as scripted:
            client = LeanHTTPClient(scripted.origin, {})
            with pytest.raises(AttemptFailure) as caught:
                await client.post("/", b"{}", 1000)
            await client.aclose()
        assert caught.value.kind == "too_large"
        assert "exceeds the cap of 1000 bytes" in str(caught.value)

    run(main())


def test_a_cancelled_request_drops_its_connection_and_the_next_one_opens_a_new_one():
    async def slow_then_fast(
        server: ScriptedServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await server.read_request(reader)
        if server.connections == 1:  # the first connection drips its body and never finishes
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
            while True:
                writer.write(b" ")
                await writer.drain()
                await asyncio.sleep(0.02)
        writer.write(reply(b"fast"))
        await writer.drain()

    async def main() -> None:
        async with ScriptedServer(slow_then_fast) as scripted:
            client = LeanHTTPClient(scripted.origin, {})
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.2):  # what NetworkBackend wraps every attempt in
                    await client.post("/", b"{}", 1000)
            assert (await client.post("/", b"{}", 1000)).content == b"fast"
            await client.aclose()
        assert client.connections_opened == 2 and scripted.connections == 2

    run(main())


def test_a_reset_a_cut_body_and_a_silent_close_are_connection_failures_and_a_refused_connect_is_unreachable():
    async def breaks(server: ScriptedServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_request(reader)
        if server.connections == 1:  # TCP RST before any answer
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return
        if server.connections == 2:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nonly part")  # then the connection closes
            await writer.drain()
        # the third connection closes without a word

    async def main() -> None:
        async with ScriptedServer(breaks) as scripted:
            client = LeanHTTPClient(scripted.origin, {})
            failures = []
            for _ in range(3):
                with pytest.raises(AttemptFailure) as caught:
                    await client.post("/", b"{}", 1000)
                failures.append(caught.value)
            await client.aclose()
        assert [(f.kind, f.unreachable) for f in failures] == [("connection", False)] * 3
        assert "Connection reset" in str(failures[0])
        assert "after 9 of 50 bytes" in str(failures[1])
        assert "before the reply's head ended (0 bytes of it)" in str(failures[2])
        # a port nobody listens on: the port the server had, now closed
        refused = LeanHTTPClient(scripted.origin, {})
        with pytest.raises(AttemptFailure) as caught:
            await refused.post("/", b"{}", 1000)
        assert caught.value.kind == "connection" and caught.value.unreachable
        assert "cannot connect" in str(caught.value)

    run(main())


def test_a_connection_the_server_closed_while_idle_is_replaced_before_reuse():
    async def one_each(server: ScriptedServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_request(reader)
        writer.write(reply(b"ok"))  # keep-alive by HTTP/1.1's default, then closed anyway (an idle timeout)
        await writer.drain()

    async def main() -> None:
        async with ScriptedServer(one_each) as scripted:
            client = LeanHTTPClient(scripted.origin, {})
            assert (await client.post("/", b"{}", 1000)).content == b"ok"
            await asyncio.sleep(0.1)  # the close reaches the client while it is idle
            assert (await client.post("/", b"{}", 1000)).content == b"ok"
            await client.aclose()
        assert client.connections_opened == 2

    run(main())


def test_a_reply_that_is_not_http_is_a_connection_failure():
    async def garbage(server: ScriptedServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_request(reader)
        writer.write(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")
        await writer.drain()

    async def main() -> None:
        async with ScriptedServer(garbage) as scripted:
            client = LeanHTTPClient(scripted.origin, {})
            with pytest.raises(AttemptFailure, match=r"not an HTTP/1\.1 reply") as caught:
                await client.post("/", b"{}", 1000)
            await client.aclose()
        assert caught.value.kind == "connection"

    run(main())


def test_only_plain_http_without_a_proxy_takes_the_lean_client(monkeypatch):
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert lean_origin("https://api.openai.com/v1") is None
    assert lean_origin("http://gpu-box:8000/v1") == Origin("gpu-box", 8000, "gpu-box:8000")
    assert lean_origin("http://[::1]/v1") == Origin("::1", 80, "[::1]")
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    assert lean_origin("http://gpu-box:8000/v1") is None  # httpx honours the proxy
    assert lean_origin("http://127.0.0.1:8000/v1") is not None  # a local server is reached directly


def test_the_backend_answers_over_the_lean_client_with_the_servers_error_text():
    async def chat(server: ScriptedServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await server.read_request(reader)
            if len(server.requests) == 1:
                body = b'{"choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}'
                writer.write(reply(body, extra="Content-Type: application/json\r\n"))
            else:
                writer.write(reply(b'{"error": {"message": "context too long"}}', status="400 Bad Request"))
            await writer.drain()

    async def main() -> None:
        async with ScriptedServer(chat) as scripted:
            options = ModelOptions(base_url=f"http://127.0.0.1:{scripted.origin.port}/v1", max_retries=0)
            backend = OpenAICompatBackend("m", options)
            assert backend._origin is not None  # the lean path, not httpx
            request = ModelRequest(messages=[Message(role="user", content="hello")], config=GenerationConfig())
            emission = await backend.complete(request)
            with pytest.raises(Exception, match="context too long"):
                await backend.complete(request)
            await backend.aclose()
        assert emission.text == "hi"
        assert scripted.requests[0].startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
        assert scripted.connections == 1

    run(main())
