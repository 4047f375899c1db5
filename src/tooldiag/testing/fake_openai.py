"""A small OpenAI-compatible chat server for tests and benchmarks (stdlib only).

It answers ``POST .../chat/completions`` in OpenAI's shape and ``POST .../v1/messages``
in Anthropic's, so both providers can be tested end to end over real HTTP on
127.0.0.1 without any network. What it answers is, in order of precedence:

1. a fault, when a :class:`FaultSpec` is set: 429 with ``Retry-After``, 500, a
   malformed body, or a stall longer than the client's timeout. The draw is seeded
   and keyed by (request body, how often that body was seen), so a given run meets
   the same faults whatever the order in which concurrent requests arrive, and a
   retried request eventually gets through;
2. the next scripted :class:`Reply` (:meth:`FakeOpenAIServer.script`);
3. ``responder(request)``, a function of the request (e.g. replaying ground truth);
4. ``Reply.say("ok")``.

It records every request (path, headers, parsed body) and the highest number of
requests it was serving at once, which is how tests prove the concurrency bound.

In a test::

    with FakeOpenAIServer() as server:
        server.script(Reply.call(("get_weather", {"city": "Paris"}), ("get_time", "{}")))
        backend = resolve_model("openai/fake", ModelOptions(base_url=server.base_url, cache=False))

As a script (``bench/`` uses this)::

    python -m tooldiag.testing.fake_openai --port 8000 --latency-ms 50 \\
        --faults 429=0.033,500=0.033,malformed=0.034,stall=0.03 --stall-s 5
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import hashlib
import json
import random
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ToolCallSpec = tuple[str, "str | dict[str, Any]"]


@dataclass
class Reply:
    """One scripted answer. Build with the class methods."""

    text: str | None = None
    #: ``(name, arguments)``; arguments as a dict or as the exact raw text to send.
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    reasoning: str | None = None
    #: ``reasoning_content`` (vLLM, DeepSeek) or ``reasoning`` (Ollama, OpenRouter).
    reasoning_field: str = "reasoning_content"
    finish_reason: str | None = None
    status: int = 200
    error: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    #: Sent verbatim instead of a well-formed body.
    raw_body: str | None = None
    #: Seconds to wait before answering (on top of the server's latency).
    delay_s: float = 0.0
    #: Close the connection without answering.
    hang_up: bool = False
    #: Tool-call ids to send (default: ``call_<request serial>_<index>``).
    call_ids: list[str] | None = None

    @classmethod
    def say(cls, text: str, *, reasoning: str | None = None, reasoning_field: str = "reasoning_content") -> Reply:
        return cls(text=text, reasoning=reasoning, reasoning_field=reasoning_field)

    @classmethod
    def call(cls, *calls: ToolCallSpec, text: str | None = None) -> Reply:
        return cls(text=text, tool_calls=list(calls))

    @classmethod
    def fail(
        cls, status: int, message: str = "", *, retry_after: str | None = None, retry_after_ms: str | None = None
    ) -> Reply:
        headers = {}
        if retry_after is not None:
            headers["Retry-After"] = retry_after
        if retry_after_ms is not None:
            headers["retry-after-ms"] = retry_after_ms
        return cls(status=status, error=message or f"fake error {status}", headers=headers)

    @classmethod
    def malformed(cls, body: str = '{"choices": [{"message": ') -> Reply:
        return cls(raw_body=body)

    @classmethod
    def stall(cls, seconds: float, then: Reply | None = None) -> Reply:
        return replace(then or cls.say("ok"), delay_s=seconds)

    @classmethod
    def disconnect(cls) -> Reply:
        return cls(hang_up=True)


@dataclass
class FaultSpec:
    """Random faults: each request draws one of 429, 500, malformed, stall, or none."""

    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_malformed: float = 0.0
    rate_stall: float = 0.0
    stall_s: float = 5.0
    retry_after: str = "0.05"
    seed: int = 0

    @classmethod
    def parse(cls, text: str, *, stall_s: float = 5.0, seed: int = 0) -> FaultSpec:
        """``"429=0.033,500=0.033,malformed=0.034,stall=0.03"`` -> FaultSpec."""
        rates = {"429": 0.0, "500": 0.0, "malformed": 0.0, "stall": 0.0}
        for part in filter(None, (p.strip() for p in text.split(","))):
            name, _, value = part.partition("=")
            if name not in rates:
                raise ValueError(f"unknown fault {name!r}; use {', '.join(rates)}")
            rates[name] = float(value)
        return cls(
            rate_429=rates["429"],
            rate_500=rates["500"],
            rate_malformed=rates["malformed"],
            rate_stall=rates["stall"],
            stall_s=stall_s,
            seed=seed,
        )

    def draw(self, u: float) -> Reply | None:
        for rate, reply in (
            (self.rate_429, Reply.fail(429, "rate limited (injected)", retry_after=self.retry_after)),
            (self.rate_500, Reply.fail(500, "internal error (injected)")),
            (self.rate_malformed, Reply.malformed()),
            (self.rate_stall, None),
        ):
            if u < rate:
                return reply if reply is not None else Reply(delay_s=self.stall_s)
            u -= rate
        return None


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: Any
    #: What the server did: ok, scripted, 429, 500, malformed, stall, 401...
    outcome: str = ""


Responder = Callable[[RecordedRequest], "Reply | None"]


class FakeOpenAIServer:
    """The server; start with ``with`` (or :meth:`start`/:meth:`stop`)."""

    def __init__(
        self,
        *,
        responder: Responder | None = None,
        faults: FaultSpec | None = None,
        latency_s: float = 0.0,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        record: bool = True,
    ) -> None:
        self.responder = responder
        self.faults = faults
        self.latency_s = latency_s
        #: When set, requests must carry this key (``Authorization: Bearer`` or ``x-api-key``).
        self.api_key = api_key
        self.record = record
        self.requests: list[RecordedRequest] = []
        self.outcomes: collections.Counter[str] = collections.Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self._arrivals = 0
        self._script: collections.deque[Reply] = collections.deque()
        self._seen: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _HTTPServer((host, port), _make_handler(self))
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (``http://127.0.0.1:PORT/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root_url(self) -> str:
        """The server root (``http://127.0.0.1:PORT``), the Anthropic SDK's base URL."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def request_count(self) -> int:
        """Chat requests received so far (counted on arrival, stalled ones included)."""
        return self._arrivals

    def script(self, *replies: Reply) -> None:
        """Queue replies, answered in order before the responder is asked."""
        with self._lock:
            self._script.extend(replies)

    def reset_counters(self) -> None:
        with self._lock:
            self.requests.clear()
            self.outcomes.clear()
            self._arrivals = 0
            self.max_in_flight = self.in_flight

    def start(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread until interrupted (the ``python -m`` entry point)."""
        try:
            self._httpd.serve_forever()
        finally:
            self._httpd.server_close()

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling (called from handler threads) ---------------------------

    def _choose(self, request: RecordedRequest, raw_body: bytes) -> tuple[Reply, str]:
        if self.faults is not None:
            digest = hashlib.sha256(raw_body).hexdigest()
            with self._lock:
                occurrence = self._seen[digest]
                self._seen[digest] += 1
            fault = self.faults.draw(random.Random(f"{self.faults.seed}:{digest}:{occurrence}").random())
            if fault is not None and fault.delay_s:
                # A stall is a slow server: the right answer, late. (It used to be an empty reply, which a
                # client whose event loop was starved past the stall read as the model's answer.)
                answer, _ = self._answer(request)
                return replace(answer, delay_s=answer.delay_s + fault.delay_s), "stall"
            if fault is not None:
                return fault, "malformed" if fault.raw_body else str(fault.status)
        return self._answer(request)

    def _answer(self, request: RecordedRequest) -> tuple[Reply, str]:
        """The scripted or responder's reply to ``request`` (no fault)."""
        with self._lock:
            scripted = self._script.popleft() if self._script else None
        if scripted is not None:
            return scripted, "scripted"
        reply = self.responder(request) if self.responder is not None else None
        return (reply or Reply.say("ok")), "ok"

    def _enter(self) -> None:
        with self._lock:
            self._arrivals += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _record(self, outcome: str) -> None:
        with self._lock:
            self.outcomes[outcome] += 1

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that vanish (timed out, killed) are routine here, not worth a traceback."""
        error = sys.exc_info()[1]
        if not isinstance(error, (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def _openai_body(reply: Reply, request_body: dict[str, Any], serial: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text, "tool_calls": []}
    for i, (name, arguments) in enumerate(reply.tool_calls):
        message["tool_calls"].append(
            {
                "id": reply.call_ids[i] if reply.call_ids else f"call_{serial}_{i}",
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
        )
    if reply.reasoning is not None:
        message[reply.reasoning_field] = reply.reasoning
    finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
    return {
        "id": f"chatcmpl-{serial}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request_body.get("model", "fake"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _anthropic_body(reply: Reply, request_body: dict[str, Any], serial: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.reasoning is not None:
        content.append({"type": "thinking", "thinking": reply.reasoning, "signature": "fake"})
    if reply.text is not None:
        content.append({"type": "text", "text": reply.text})
    for i, (name, arguments) in enumerate(reply.tool_calls):
        parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
        content.append({"type": "tool_use", "id": f"toolu_{serial}_{i}", "name": name, "input": parsed})
    stop = reply.finish_reason or ("tool_use" if reply.tool_calls else "end_turn")
    return {
        "id": f"msg_{serial}",
        "type": "message",
        "role": "assistant",
        "model": request_body.get("model", "fake"),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def _error_body(status: int, message: str, anthropic: bool) -> dict[str, Any]:
    if anthropic:
        kind = {429: "rate_limit_error", 401: "authentication_error", 404: "not_found_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": "fake_error", "code": status}}


def _make_handler(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes; without this, Nagle's algorithm and
        # delayed ACKs add ~40 ms to every answer.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                self.close_connection = True  # the client gave up (e.g. timed out)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, json.dumps({"object": "list", "data": [{"id": "fake", "object": "model"}]}).encode())
            else:
                self._send(404, json.dumps(_error_body(404, f"no route {self.path}", False)).encode())

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            anthropic = self.path.rstrip("/").endswith("/messages")
            if not (anthropic or self.path.rstrip("/").endswith("/chat/completions")):
                self._send(404, json.dumps(_error_body(404, f"no route {self.path}", False)).encode())
                return
            server._enter()
            try:
                answer = self._answer(raw, anthropic)
                if answer is None:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                else:
                    self._send(*answer)
            finally:
                server._leave()

        def _answer(self, raw: bytes, anthropic: bool) -> tuple[int, bytes, dict[str, str]] | None:
            """``(status, body, headers)``, or None to hang up.

            The outcome is counted as soon as it is decided (before any stall), so a
            client that has its answer always sees it counted.
            """
            try:
                body = json.loads(raw)
                if not isinstance(body, dict) or "messages" not in body or "model" not in body:
                    raise ValueError("a request needs 'model' and 'messages'")
            except ValueError as exc:
                server._record("400")
                return 400, json.dumps(_error_body(400, f"invalid request: {exc}", anthropic)).encode(), {}
            request = RecordedRequest(self.path, dict(self.headers.items()), body)
            serial = 0
            if server.record:
                with server._lock:
                    server.requests.append(request)
                    serial = len(server.requests)
            if server.api_key is not None:
                given = self.headers.get("x-api-key") or (self.headers.get("Authorization") or "").removeprefix(
                    "Bearer "
                )
                if given != server.api_key:
                    # Like OpenAI's own 401, the message echoes the key it was given.
                    message = f"Incorrect API key provided: {given}"
                    request.outcome = "401"
                    server._record("401")
                    return 401, json.dumps(_error_body(401, message, anthropic)).encode(), {}
            reply, outcome = server._choose(request, raw)
            request.outcome = "hang_up" if reply.hang_up else outcome
            server._record(request.outcome)
            server._wait(server.latency_s + reply.delay_s)
            if reply.hang_up:
                return None
            if reply.raw_body is not None:
                return reply.status, reply.raw_body.encode(), reply.headers
            if reply.status >= 400:
                payload = _error_body(reply.status, reply.error or "", anthropic)
                return reply.status, json.dumps(payload).encode(), reply.headers
            build = _anthropic_body if anthropic else _openai_body
            return 200, json.dumps(build(reply, body, serial)).encode(), reply.headers

    return Handler


def auto_responder(request: RecordedRequest) -> Reply:
    """An agent-loop stand-in: call the first offered tool after a user message, else answer."""
    body = request.body
    messages = body.get("messages") or []
    tools = body.get("tools") or []
    if tools and messages and messages[-1].get("role") == "user":
        return Reply.call((tools[0]["function"]["name"], {}))
    return Reply.say("done")


def main(argv: list[str] | None = None) -> None:
    from tooldiag.testing.replay import ReplayTable

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="added to every answer")
    parser.add_argument("--faults", default="", help="e.g. 429=0.033,500=0.033,malformed=0.034,stall=0.03")
    parser.add_argument("--stall-s", type=float, default=5.0, help="how long an injected stall lasts")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--api-key", default=None, help="require this key")
    parser.add_argument("--reply", choices=["auto", "text"], default="auto", help="answer when not replaying")
    parser.add_argument("--replay", default=None, help="JSONL of recorded replies (ReplayTable.save)")
    args = parser.parse_args(argv)
    faults = FaultSpec.parse(args.faults, stall_s=args.stall_s, seed=args.seed) if args.faults else None
    server = FakeOpenAIServer(
        responder=ReplayTable.load(args.replay) if args.replay else (auto_responder if args.reply == "auto" else None),
        faults=faults,
        latency_s=args.latency_ms / 1000.0,
        api_key=args.api_key,
        host=args.host,
        port=args.port,
        record=False,
    )
    print(f"listening on {server.base_url}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    # Run the imported module's main, so replies built by tooldiag.testing.replay and
    # the server share one set of classes.
    from tooldiag.testing.fake_openai import main as imported_main

    imported_main()
