"""A hostile OpenAI-compatible server: every way a reply can be broken, one kind at a time.

:mod:`tooldiag.testing.fake_openai` answers well-formed bodies and a few clean faults (429,
500, a short malformed body, a stall). This server breaks the reply at the byte level, where
real servers, proxies and load balancers break it (issue 20):

===================  ==========================================================================
``truncated``        a ``Content-Length`` promising more than is sent, then the connection closes
``reset``            the connection is reset (TCP RST) before any answer
``html_error``       HTTP 502 with an HTML page (a proxy's error page)
``html_200``         HTTP 200 with an HTML page (a captive portal, a misrouted URL)
``not_json``         HTTP 200 with a body that is not JSON at all
``drip``             headers, then one byte every 0.2 s, never finishing (only a whole-request
                     deadline ends it)
``oversized``        a valid chat completion padded to :attr:`FaultServer.oversized_bytes`
``nonstring_text``   content parts whose ``text`` is a number (``[{"type": "text", "text": 5}]``)
``bad_args``         a tool call whose arguments are not JSON
``huge_args``        a tool call whose arguments are a 256 KB JSON object
``surrogate``        a lone surrogate escape (``\\ud800``) in the text and in every tool call's
                     arguments
===================  ==========================================================================

Transport and format faults (``truncated`` ... ``nonstring_text``) are *transient* by default:
each distinct request body meets the fault on its first arrival only, so a client that retries
gets the good answer. Content faults (``bad_args``, ``huge_args``, ``surrogate``) are answers,
not failures: they are sent every time, because a deterministic model sends them every time.
``persistent=True`` makes every fault permanent.

The good answer is the agent-loop stand-in of the fake server: call the first offered tool
after a user message (its first parameter set to ``"x"``), else say ``done``; a request without
tools (a judge) gets ``judge_text``. A POST to a path ending in ``/messages`` (the Anthropic
Messages API) gets a Messages-shaped text answer instead, broken the same way by transport faults.
``declare_length=False`` sends the oversized body without ``Content-Length`` (it ends when the
connection closes), so that only a client counting streamed bytes can stop it.
"""

from __future__ import annotations

import collections
import hashlib
import json
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TRANSPORT_FAULTS = ("truncated", "reset", "html_error", "html_200", "not_json", "drip", "oversized", "nonstring_text")
CONTENT_FAULTS = ("bad_args", "huge_args", "surrogate")
FAULTS = TRANSPORT_FAULTS + CONTENT_FAULTS

HTML_PAGE = "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"


def _first_parameter(tool: dict[str, Any]) -> str | None:
    properties = (tool.get("function") or {}).get("parameters", {}).get("properties") or {}
    return next(iter(properties), None)


class FaultServer:
    """Serves one fault kind on 127.0.0.1; use with ``with``. ``base_url`` ends in ``/v1``."""

    def __init__(
        self,
        fault: str | None,
        *,
        persistent: bool = False,
        judge_text: str = "ok",
        oversized_bytes: int = 2 * 1024 * 1024,
        drip_interval_s: float = 0.2,
        declare_length: bool = True,
    ) -> None:
        if fault is not None and fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; one of {', '.join(FAULTS)}")
        self.fault = fault
        self.persistent = persistent or fault in CONTENT_FAULTS
        self.judge_text = judge_text
        self.oversized_bytes = oversized_bytes
        self.drip_interval_s = drip_interval_s
        self.declare_length = declare_length
        #: What the server did, by outcome (``fault:<kind>`` or ``ok``).
        self.outcomes: collections.Counter[str] = collections.Counter()
        self._seen: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> FaultServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    # -- deciding ----------------------------------------------------------------------

    def _fault_for(self, raw: bytes) -> str | None:
        if self.fault is None:
            return None
        digest = hashlib.sha256(raw).hexdigest()
        with self._lock:
            first = self._seen[digest] == 0
            self._seen[digest] += 1
        return self.fault if (self.persistent or first) else None

    def _record(self, outcome: str) -> None:
        with self._lock:
            self.outcomes[outcome] += 1

    def good_message(self, body: dict[str, Any], fault: str | None) -> dict[str, Any]:
        """The assistant message of the good answer, bent by a content fault."""
        messages = body.get("messages") or []
        tools = body.get("tools") or []
        if not tools:
            return {"role": "assistant", "content": self.judge_text + ("\ud800" if fault == "surrogate" else "")}
        if not messages or messages[-1].get("role") != "user":
            return {"role": "assistant", "content": "done\ud800" if fault == "surrogate" else "done"}
        parameter = _first_parameter(tools[0])
        arguments: dict[str, Any] = {parameter: "x"} if parameter else {}
        raw = json.dumps(arguments)
        if fault == "bad_args":
            raw = raw[:-1] + ', "unterminated'
        elif fault == "huge_args":
            raw = json.dumps({**arguments, "padding": "y" * 256_000})
        elif fault == "surrogate":
            # json.dumps escapes the surrogate: the outer body carries "\\ud800" (a lone escape, once parsed)
            raw = json.dumps({parameter or "p": "x\ud800"})
        name = tools[0]["function"]["name"]
        call = {"id": f"call_{len(messages)}", "type": "function", "function": {"name": name, "arguments": raw}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    def completion(self, body: dict[str, Any], fault: str | None) -> dict[str, Any]:
        message = self.good_message(body, fault)
        if fault == "nonstring_text":
            message = {"role": "assistant", "content": [{"type": "text", "text": 5}, {"type": "text", "text": None}]}
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        return {
            "id": "chatcmpl-fault",
            "object": "chat.completion",
            "model": body.get("model", "fault"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1},
        }

    def messages_reply(self, body: dict[str, Any]) -> dict[str, Any]:
        """The good answer in the Anthropic Messages API's shape: ``judge_text`` as one text block."""
        return {
            "id": "msg_fault",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fault"),
            "content": [{"type": "text", "text": self.judge_text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that give up mid-answer are the point of this server, not worth a traceback."""


def _handler(server: FaultServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _head(self, status: int, length: int | None, content_type: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            if length is not None:
                self.send_header("Content-Length", str(length))
            self.end_headers()

        def _send(self, status: int, payload: bytes, content_type: str = "application/json") -> None:
            self._head(status, len(payload), content_type)
            self.wfile.write(payload)

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw)
            except ValueError:
                self._send(400, b'{"error": {"message": "bad request"}}')
                return
            fault = server._fault_for(raw)
            server._record(f"fault:{fault}" if fault else "ok")
            try:
                self._answer(body, fault, self.path.rstrip("/").endswith("/messages"))
            except OSError:
                self.close_connection = True

        def _answer(self, body: dict[str, Any], fault: str | None, messages_api: bool = False) -> None:
            reply = server.messages_reply(body) if messages_api else server.completion(body, fault)
            good = json.dumps(reply).encode()
            if fault == "truncated":
                self._head(200, len(good))
                self.wfile.write(good[: len(good) // 2])
                self.wfile.flush()
                self.close_connection = True
            elif fault == "reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
            elif fault in ("html_error", "html_200"):
                self._send(502 if fault == "html_error" else 200, HTML_PAGE.encode(), "text/html")
            elif fault == "not_json":
                self._send(200, b"upstream said: OK, here is your answer\n")
            elif fault == "drip":
                self._head(200, None)  # no length: the body ends when the connection does, i.e. never
                while not server._stopping.is_set():
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(server.drip_interval_s)
                self.close_connection = True
            elif fault == "oversized":
                padding = max(0, server.oversized_bytes - len(good))
                payload = good[:-1] + b', "padding": "' + b"z" * padding + b'"}'
                if server.declare_length:
                    self._send(200, payload)
                else:  # no length: the body ends when the connection closes
                    self._head(200, None)
                    self.wfile.write(payload)
                    self.wfile.flush()
                    self.close_connection = True
            else:
                self._send(200, good)

    return Handler
