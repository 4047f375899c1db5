"""``score-plan``: hostile plan lines (file and stdin, plain and ``--schema-aware``) end in ``error:`` or success."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import run_cli
from tests.fuzz.hostile import hostile_jsonl
from tests.fuzz.profiles import fuzz_settings

TOOL = {"name": "cd", "parameters": {"type": "object", "properties": {"folder": {"type": "string"}}}}
SEEDS = [
    {
        "id": "a",
        "expected": [{"name": "cd", "arguments": {"folder": "docs"}}],
        "predicted": [{"function": {"name": "cd", "arguments": '{"folder": "docs", "x": 1}'}}],
        "tools": [TOOL],
    },
    {"expected": [{"name": "ls", "arguments": {}}, {"name": "cd", "arguments": {"folder": "a"}}], "predicted": []},
]
OPTIONS = st.sampled_from([[], ["--schema-aware"]])


@fuzz_settings(40)
@given(data=hostile_jsonl(SEEDS), options=OPTIONS)
def test_score_plan_never_crashes(data: bytes, options: list[str]) -> None:
    outcome = run_cli(["score-plan", "-", *options], stdin=data)
    assert outcome.clean, outcome.explain()
