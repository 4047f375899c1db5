"""Agent logs (``diagnose``, ``cases``, ``show``, ``classify``): hostile JSON lines end in ``error:`` or success."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import run_cli
from tests.fuzz.hostile import hostile_jsonl
from tests.fuzz.profiles import fuzz_settings

EXAMPLE_LOG = Path(__file__).resolve().parents[2] / "examples" / "agent_log.jsonl"
SEEDS = [json.loads(line) for line in EXAMPLE_LOG.read_text(encoding="utf-8").splitlines() if line.strip()][:3]
COMMANDS = st.sampled_from(
    [
        ["diagnose", "{log}"],
        ["diagnose", "{log}", "--format", "json"],
        ["cases", "{log}"],
        ["show", "{log}", SEEDS[0]["id"], "--format", "json"],
        ["show", "{log}", SEEDS[0]["id"]],
        ["classify", "{log}"],
    ]
)


@fuzz_settings(25)
@given(data=hostile_jsonl(SEEDS), command=COMMANDS)
def test_agent_log_commands_never_crash(tmp_path_factory, data: bytes, command: list[str]) -> None:
    log = tmp_path_factory.mktemp("log") / "agent.jsonl"
    log.write_bytes(data)
    outcome = run_cli([part.format(log=log) for part in command])
    assert outcome.clean, outcome.explain()


@fuzz_settings(10)
@given(data=hostile_jsonl(SEEDS[:1]))
def test_classify_stdin_never_crashes(data: bytes) -> None:
    outcome = run_cli(["classify", "-"], stdin=data)
    assert outcome.clean, outcome.explain()
