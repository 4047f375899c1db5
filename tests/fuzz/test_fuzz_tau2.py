"""``tau2 diagnose``: hostile tau2 results (a v0 results file, a >=1.0 run folder) end in ``error:`` or success."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import run_cli
from tests.fuzz.hostile import hostile_document
from tests.fuzz.profiles import fuzz_settings

TAU2 = Path(__file__).resolve().parents[1] / "data" / "tau2"
_V0 = json.loads((TAU2 / "retail_v0.json").read_text(encoding="utf-8"))
#: The v0 file cut to two tasks and two simulations, so a mutation lands anywhere in it.
V0_SEED = {**_V0, "tasks": _V0["tasks"][:2], "simulations": _V0["simulations"][:2]}
RUN_FOLDER = TAU2 / "airline_v1"
SIMULATION = sorted((RUN_FOLDER / "simulations").glob("*.json"))[0]
SIMULATION_SEED = json.loads(SIMULATION.read_text(encoding="utf-8"))
FORMATS = st.sampled_from([[], ["--format", "json"]])


@fuzz_settings(15)
@given(data=hostile_document(V0_SEED), options=FORMATS)
def test_tau2_results_file_never_crashes(tmp_path_factory, data: bytes, options: list[str]) -> None:
    path = tmp_path_factory.mktemp("tau2") / "results.json"
    path.write_bytes(data)
    outcome = run_cli(["tau2", "diagnose", str(path), *options])
    assert outcome.clean, outcome.explain()


@fuzz_settings(10)
@given(data=hostile_document(SIMULATION_SEED))
def test_tau2_run_folder_never_crashes(tmp_path_factory, data: bytes) -> None:
    folder = tmp_path_factory.mktemp("tau2") / "run"
    shutil.copytree(RUN_FOLDER, folder)
    (folder / "simulations" / SIMULATION.name).write_bytes(data)
    outcome = run_cli(["tau2", "diagnose", str(folder)])
    assert outcome.clean, outcome.explain()
