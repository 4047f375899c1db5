"""bench/replay_server.py answers a BFCL-shaped conversation with that case's ground truth.

The bench compares BFCL's harness and ours on this server, so if it answered the wrong
case, turn or step both harnesses would still agree with each other and the comparison
would silently measure something else. Expectations come from BFCL's data files directly.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _load_bench_module():
    spec = importlib.util.spec_from_file_location("replay_server", ROOT / "bench" / "replay_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _raw_case(category: str, index: int) -> tuple[dict, list[list[str]]]:
    from tooldiag.suites.bfcl.data import bfcl_package_dir

    data = bfcl_package_dir() / "data"
    name = f"BFCL_v4_multi_turn_{category}.json"
    question = json.loads((data / name).read_text().splitlines()[index])
    answer = json.loads((data / "possible_answer" / name).read_text().splitlines()[index])
    return question, answer["ground_truth"]


async def _post(port: int, path: str, body: dict) -> tuple[int, dict]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    payload = json.dumps(body).encode()
    writer.write(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(payload)}\r\n\r\n".encode() + payload)
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = int(re.search(rb"Content-Length: (\d+)", head).group(1))
    reply = json.loads(await reader.readexactly(length))
    writer.close()
    return status, reply


def test_replay_server_answers_ground_truth_three_calls_per_message():
    bench = _load_bench_module()
    question, truth = _raw_case("base", 16)
    first_turn = truth[0]
    assert len(first_turn) == 4  # the case splits its first turn over two messages
    names = [re.match(r"(\w+)\(", call).group(1) for call in first_turn]
    user = {"role": "user", "content": question["question"][0][0]["content"]}

    async def go():
        server = await bench.ReplayServer(bench.build_table(limit=17, categories=["base"])).start()
        try:
            path = "/base/v1/chat/completions"
            status, step0 = await _post(server.port, path, {"model": "m", "messages": [user], "tools": []})
            assert status == 200
            calls = step0["choices"][0]["message"]["tool_calls"]
            assert [c["function"]["name"] for c in calls] == names[:3]
            # After our calls ran (an assistant message and its tool results), the next three.
            history = [user, step0["choices"][0]["message"], {"role": "tool", "content": "ok", "tool_call_id": "a"}]
            _, step1 = await _post(server.port, path, {"model": "m", "messages": history})
            assert [c["function"]["name"] for c in step1["choices"][0]["message"]["tool_calls"]] == names[3:]
            # The same question under another category's namespace is unknown: HTTP 400.
            status, _ = await _post(server.port, "/miss_func/v1/chat/completions", {"model": "m", "messages": [user]})
            assert status == 400
            return server.requests, server.unknown
        finally:
            await server.close()

    assert asyncio.run(go()) == (3, 1)


def test_request_count_of_the_800_cases_matches_ground_truth_sizes():
    bench = _load_bench_module()
    table = bench.build_table(limit=2, categories=["base"])
    expected = 0
    for index in range(2):
        _, truth = _raw_case("base", index)
        expected += sum(-(-len(turn) // 3) + 1 for turn in truth)
    assert bench.expected_requests(table) == expected
