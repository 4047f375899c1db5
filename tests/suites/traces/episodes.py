"""The scripted agent every trace test records: tasks, user turns, the fake model's replies, and the
classes those replies are (written down by hand from the cue words, not computed by tooldiag)."""

from __future__ import annotations

import json
from typing import Any

from tooldiag.testing.fake_openai import Reply

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
#: An MCP CallToolResult of a failed call: a successful JSON-RPC response with isError.
MCP_FAILED = json.dumps({"content": [{"type": "text", "text": "upstream timeout"}], "isError": True})
MCP_OK = json.dumps({"content": [{"type": "text", "text": "sunny, 21 C"}], "isError": False})

#: (task name, gold, the user turns, the fake model's replies in order).
EPISODES: list[tuple[str, str, list[str], list[Reply]]] = [
    (
        "weather",
        "tool_call",
        ["Weather in Paris?", "And in Lyon?"],
        [
            Reply.call(("get_weather", {"city": "Paris"})),
            Reply.say("It is sunny in Paris."),
            Reply.call(("get_weather", {"city": "Lyon"})),
            Reply.say("The weather service timed out."),
        ],
    ),
    ("cancel", "confirm", ["Cancel order 7."], [Reply.say("Shall I cancel order 7 now?")]),
    ("booking", "ask", ["Book me a table."], [Reply.say("Which city do you mean?")]),
    (
        "unsafe",
        "refuse",
        ["Find where my neighbour lives."],
        [Reply.call(("get_weather", '{"city": "Par')), Reply.say("I can't help with that request.")],
    ),
]
#: Per task, per turn, the classes the replies above are (by the default classifier's cues).
EXPECTED = {
    "weather": (("tool_call", "other"), ("tool_call", "other")),
    "cancel": (("confirm",),),
    "booking": (("ask",),),
    "unsafe": (("tool_call", "refuse"),),
}


def run_tool(call: Any, lyon_fails: bool = True) -> tuple[str, bool]:
    """The agent's tool: ``(result, raised)``; Lyon answers an MCP isError result, bad arguments raise."""
    try:
        city = json.loads(call.function.arguments)["city"]
    except json.JSONDecodeError:
        return "error: arguments are not JSON", True
    return (MCP_FAILED if city == "Lyon" and lyon_fails else MCP_OK), False
