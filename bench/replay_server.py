"""An OpenAI-compatible chat server that replays BFCL's multi-turn ground truth to any harness.

``bench/compare_bfcl.py`` points BFCL's own harness (``bfcl generate``) and ``tooldiag run
bfcl`` at the same server, so both meet the same model: the ground truth of every turn, up
to 3 calls per assistant message, then one text message that ends the turn (a turn with
empty ground truth gets the text at once). 800 cases take 6,424 requests.

The two harnesses format requests differently (assistant messages, call ids, tool order),
so the server does not key on the exact request. It recognises where a request is from the
conversation alone, which both send alike:

* the **category** from the URL (``http://HOST:PORT/<category>/v1``; BFCL's variants of one
  case open with the same question but differ in ground truth, so each category has its own
  namespace, and each harness runs one process per category);
* the **case and turn** from the user messages so far (the questions, and BFCL's give-back
  message on miss_func's give-back turns); over the 800 cases no two conversations with the
  same user messages have different ground truth for that turn (checked on start);
* the **step** from the number of assistant messages after the last user message.

A request the table does not know gets HTTP 400, so drift is loud. ``GET /_stats`` returns
``{"requests": N, "unknown": M}`` (chat requests answered so far), which is how the bench
counts each harness's requests.

The server is asyncio over raw streams: HTTP/1.1 keep-alive, TCP_NODELAY, each response
written in one send, ``--latency-ms`` slept per response without holding a thread.

    python bench/replay_server.py --port 8000 --latency-ms 50
    python bench/replay_server.py --judge        # fake_openai answering judge requests with a verdict
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import sys
from typing import Any

CALLS_PER_MESSAGE = 3
TURN_END_TEXT = "Here are the results of the requested operations."
EMPTY_TURN_TEXT = "I cannot do that with the functions and values I have."
#: ``(category, user message texts so far)`` -> per step, the ``(name, JSON arguments)`` calls.
Table = dict[tuple[str, tuple[str, ...]], list[list[tuple[str, str]]]]


def build_table(limit: int | None = None, categories: list[str] | None = None) -> Table:
    """Every turn of the cases (``limit`` per category) as its steps of ground-truth calls."""
    from tooldiag.suites.bfcl.data import GIVE_BACK_MESSAGE, load_cases
    from tooldiag.suites.bfcl.policies import ground_truth_call

    table: Table = {}
    for case in load_cases(categories, limit=limit):
        users: list[str] = []
        for turn_index, messages in enumerate(case.turns):
            if turn_index in case.missed_function:
                messages = [{"role": "user", "content": GIVE_BACK_MESSAGE}]
            users.extend(m["content"] for m in messages if m.get("role") == "user")
            calls = [ground_truth_call(text, case.involved_classes, "") for text in case.ground_truth[turn_index]]
            steps = [
                [(c.name, json.dumps(c.arguments)) for c in calls[i : i + CALLS_PER_MESSAGE]]
                for i in range(0, len(calls), CALLS_PER_MESSAGE)
            ]
            key = (case.category, tuple(users))
            if key in table and table[key] != steps:
                raise ValueError(f"{case.id} turn {turn_index}: same conversation, different ground truth")
            table[key] = steps
    return table


def expected_requests(table: Table) -> int:
    """Requests a harness that follows the replay makes: each step, plus the closing text."""
    return sum(len(steps) + 1 for steps in table.values())


def locate(body: dict[str, Any], category: str) -> tuple[tuple[str, tuple[str, ...]], int]:
    """``(table key, step index)`` of a chat request."""
    messages = body.get("messages") or []
    users = tuple(str(m.get("content") or "") for m in messages if m.get("role") == "user")
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    step = sum(1 for m in messages[last_user + 1 :] if m.get("role") == "assistant")
    return (category, users), step


def completion(table: Table, category: str, body: dict[str, Any], serial: int) -> dict[str, Any] | None:
    """The chat completion for ``body``, or ``None`` when the conversation is unknown."""
    key, step = locate(body, category)
    steps = table.get(key)
    if steps is None:
        return None
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if step < len(steps):
        turn = len(key[1]) - 1
        message["tool_calls"] = [
            {"id": f"call_{turn}_{step}_{i}", "type": "function", "function": {"name": name, "arguments": args}}
            for i, (name, args) in enumerate(steps[step])
        ]
        finish = "tool_calls"
    else:
        message["content"] = TURN_END_TEXT if steps else EMPTY_TURN_TEXT
        finish = "stop"
    return {
        "id": f"chatcmpl-{serial}",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "replay"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


class ReplayServer:
    """The asyncio HTTP server; :meth:`start` inside a running loop, then ``port``."""

    def __init__(self, table: Table, latency_s: float = 0.0) -> None:
        self.table = table
        self.latency_s = latency_s
        self.requests = 0
        self.unknown = 0
        self._server: asyncio.AbstractServer | None = None

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> ReplayServer:
        self._server = await asyncio.start_server(self._serve, host, port, backlog=512)
        return self

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:] if h)}
                raw = await reader.readexactly(int(headers.get("content-length") or 0))
                status, payload = await self._answer(method, path, raw)
                keep = headers.get("connection", "").lower() != "close"
                writer.write(
                    f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\n"
                    f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
                    f"Connection: {'keep-alive' if keep else 'close'}\r\n\r\n".encode()
                    + payload
                )
                await writer.drain()
                if not keep:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    async def _answer(self, method: str, path: str, raw: bytes) -> tuple[int, bytes]:
        route = path.split("?", 1)[0].rstrip("/")
        if method == "GET" and route == "/_stats":
            return 200, json.dumps({"requests": self.requests, "unknown": self.unknown}).encode()
        if method == "GET" and route.endswith("/models"):
            return 200, b'{"object": "list", "data": [{"id": "replay", "object": "model"}]}'
        if method != "POST" or not route.endswith("/chat/completions"):
            return 404, json.dumps({"error": {"message": f"no route {method} {path}"}}).encode()
        category = route.removeprefix("/").split("/", 1)[0]
        self.requests += 1
        try:
            body = json.loads(raw)
            reply = completion(self.table, category, body, self.requests)
        except (ValueError, AttributeError, TypeError) as exc:
            self.unknown += 1
            return 400, json.dumps({"error": {"message": f"bad request: {exc}"}}).encode()
        if reply is None:
            self.unknown += 1
            key, step = locate(body, category)
            print(f"unknown: {category} step {step} users {[u[:60] for u in key[1]]}", file=sys.stderr, flush=True)
            return 400, json.dumps({"error": {"message": "conversation not in the replay table"}}).encode()
        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)
        return 200, json.dumps(reply).encode()


def judge_verdict_server(latency_s: float, port: int) -> None:
    """``tooldiag.testing.fake_openai`` answering every request with a judge verdict."""
    from tooldiag.metrics.structural import RELEASED_KEYS
    from tooldiag.testing.fake_openai import FakeOpenAIServer, Reply

    # The JSON object answers the metric conditions, the trailing grade the Prometheus ones.
    scores = {key: {"accuracy": 1.0, "justification": "ok"} for key in RELEASED_KEYS.values()}
    verdict = json.dumps(scores) + "\n[RESULT] 5"
    server = FakeOpenAIServer(
        responder=lambda request: Reply.say(verdict), latency_s=latency_s, port=port, record=False
    )
    print(f"listening on {server.root_url}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


async def _serve_forever(table: Table, latency_s: float, port: int) -> None:
    server = await ReplayServer(table, latency_s).start(port=port)
    print(f"listening on http://127.0.0.1:{server.port}", flush=True)
    await asyncio.Event().wait()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="slept before every answer")
    parser.add_argument("--limit", type=int, default=None, help="cases per category (default: all)")
    parser.add_argument("--judge", action="store_true", help="serve judge verdicts (fake_openai) instead")
    args = parser.parse_args(argv)
    if args.judge:
        judge_verdict_server(args.latency_ms / 1000.0, args.port)
        return
    table = build_table(args.limit)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_forever(table, args.latency_ms / 1000.0, args.port))


if __name__ == "__main__":
    main()
