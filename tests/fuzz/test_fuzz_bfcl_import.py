"""``import bfcl``: hostile result folders (every layout of tests/data/bfcl_results) end in ``error:`` or success."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import run_cli
from tests.fuzz.hostile import hostile_jsonl
from tests.fuzz.profiles import fuzz_settings

RESULTS = Path(__file__).resolve().parents[1] / "data" / "bfcl_results"
#: ``(layout folder, result file relative to it, its first two entries)`` per layout.
SEEDS = [
    (layout.name, file.relative_to(layout), [json.loads(line) for line in file.read_text().splitlines()[:2]])
    for layout in sorted(path for path in RESULTS.iterdir() if path.is_dir())
    for file in sorted(layout.rglob("*_base_result.json"))[:1]
]


@st.composite
def result_folders(draw: st.DrawFn) -> tuple[Path, bytes]:
    _, name, entries = draw(st.sampled_from(SEEDS))
    return name, draw(hostile_jsonl(entries))


@fuzz_settings(15)
@given(folder=result_folders())
def test_import_bfcl_never_crashes(tmp_path_factory, folder: tuple[Path, bytes]) -> None:
    name, data = folder
    root = tmp_path_factory.mktemp("bfcl")
    (root / "result" / name).parent.mkdir(parents=True, exist_ok=True)
    (root / "result" / name).write_bytes(data)
    outcome = run_cli(
        ["import", "bfcl", str(root / "result"), "--model-name", "m", "--run-dir", str(root / "run"), "-q"]
    )
    assert outcome.clean, outcome.explain()
