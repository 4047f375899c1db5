"""The JSON text of each tool list sent, encoded once (as UTF-8 bytes).

A BFCL multi-turn request is about 30 KiB, most of it the case's tool list, and a case
sends that same list on every step (7.5 steps per case on average): ``json.dumps`` of the
whole body was a sixth of the harness's CPU per request (``bench/README.md``, profile).
:class:`ToolListEncoder` keeps the encoded text of the tool lists sent lately and
``openai_compat.encode_request_bytes`` splices it into the body, so each list is encoded
once per case. The body is the same text as ``json.dumps(build_request_body(...),
ensure_ascii=False)``, byte for byte (``tests/models/test_body_encoding.py``). A
list is recognised by identity (the list object and the objects in it), which is how
every runner passes tools: one list per case, replaced (not edited) when the tools
change. A caller that edits a :class:`~tooldiag.trajectory.ToolSpec` in place between
two requests of the same list would get the old text; no runner does, and
:meth:`ToolListEncoder.data` documents it.

The cache holds the list's UTF-8 bytes, not its text (issue 16, sixth pass): the body is
spliced as bytes (``openai_compat.encode_request_bytes``), so the 25 KiB tool list is neither
copied into a new string nor encoded again per request; one non-ASCII character in a message
used to make the whole spliced string a wide one, whose ``encode`` cost about 0.2 ms.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict

from tooldiag.trajectory import ToolSpec


class ToolListEncoder:
    """The JSON text of recently sent tool lists (least recently used first out).

    An entry holds the list itself, so neither it nor its tools can be collected and
    their ids reused while the entry lives. ``size`` bounds the memory (entries of about
    30 KiB for BFCL, which also keep their tools alive: a cache of every case of a run
    cost 20 MB of peak RSS and more CPU in the garbage collector); it should exceed the
    number of cases in flight, a little.
    """

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._entries: OrderedDict[int, tuple[list[ToolSpec], tuple[int, ...], bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def lists(self) -> list[list[ToolSpec]]:
        """The lists held, least recently used first."""
        with self._lock:
            return [entry[0] for entry in self._entries.values()]

    def data(self, tools: list[ToolSpec]) -> bytes:
        """``json.dumps([t.to_openai() for t in tools], ensure_ascii=False)`` as UTF-8 bytes (what the
        body splices), from the cache when this very list (with the same tool objects in it) was
        encoded before. Tools are treated as values: build a new ``ToolSpec`` rather than edit one
        in place."""
        key, members = id(tools), tuple(map(id, tools))
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] is tools and entry[1] == members:
                self._entries.move_to_end(key)
                return entry[2]
        data = json.dumps([t.to_openai() for t in tools], ensure_ascii=False).encode("utf-8")
        with self._lock:
            self._entries[key] = (tools, members, data)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return data
