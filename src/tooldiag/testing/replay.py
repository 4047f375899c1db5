"""Recorded answers for the fake OpenAI server: a table keyed by URL namespace and by
the request's messages and tools, saved as JSON lines (``--replay FILE``)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from tooldiag.testing.fake_openai import RecordedRequest, Reply


def request_key(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    """Identity of a chat request for replay: SHA-256 of its messages and tools.

    Computed on the JSON the server receives, or equally on ``Message.to_openai()`` /
    ``ToolSpec.to_openai()`` before sending (the JSON round trip preserves it).
    """
    text = json.dumps({"messages": messages, "tools": tools or []}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def path_namespace(path: str) -> str:
    """``/base/v1/chat/completions`` -> ``base``; ``/v1/chat/completions`` -> ``""``."""
    return path.split("?")[0].rstrip("/").removesuffix("/chat/completions").removesuffix("/v1").strip("/")


class ReplayTable:
    """Recorded answers keyed by namespace and :func:`request_key`; a server responder.

    The namespace is the URL path before ``/v1`` (``--base-url http://HOST:PORT/base/v1``
    selects namespace ``base``), so recordings whose requests coincide but whose
    answers differ (BFCL's base and long_context variants of one case open with the
    same request yet have different ground truth) can be served by one server.
    An unknown request gets HTTP 400 naming the miss, so a replay that drifts from
    its recording fails visibly instead of answering something plausible.
    """

    def __init__(self) -> None:
        self.namespaces: dict[str, dict[str, Reply]] = {}
        self.misses = 0

    def add(self, namespace: str, key: str, reply: Reply) -> Reply | None:
        """Record ``reply``; returns the different reply already recorded, if any."""
        replies = self.namespaces.setdefault(namespace, {})
        previous = replies.get(key)
        replies[key] = reply
        return previous if previous is not None and previous != reply else None

    def __len__(self) -> int:
        return sum(len(r) for r in self.namespaces.values())

    def __call__(self, request: RecordedRequest) -> Reply:
        replies = self.namespaces.get(path_namespace(request.path), {})
        reply = replies.get(request_key(request.body.get("messages", []), request.body.get("tools")))
        if reply is None:
            self.misses += 1
            return Reply.fail(400, "fake server: no recorded reply for this request (replay miss)")
        return reply

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as out:
            for namespace, replies in self.namespaces.items():
                for key, reply in replies.items():
                    record = {
                        "ns": namespace,
                        "key": key,
                        "text": reply.text,
                        "tool_calls": [[n, a if isinstance(a, str) else json.dumps(a)] for n, a in reply.tool_calls],
                        "call_ids": reply.call_ids,
                        "finish_reason": reply.finish_reason,
                    }
                    out.write(json.dumps(record) + "\n")

    @classmethod
    def load(cls, path: str) -> ReplayTable:
        table = cls()
        with open(path, encoding="utf-8") as lines:
            for line in lines:
                record = json.loads(line)
                reply = Reply(
                    text=record["text"],
                    tool_calls=[(n, a) for n, a in record["tool_calls"]],
                    call_ids=record["call_ids"],
                    finish_reason=record["finish_reason"],
                )
                table.add(record.get("ns", ""), record["key"], reply)
        return table
