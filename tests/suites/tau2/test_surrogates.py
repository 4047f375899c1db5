"""A lone surrogate escape (``"\\ud800"``) in a tau2 message is valid JSON that Python decodes to
text it cannot encode; `tau2 diagnose` once crashed on it in the classifier's language detection
(found by the nightly fuzz profile). Both readers, the streamed results file and a run folder's
small simulation files, now hand U+FFFD on, and the classifier itself never fails on such text."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from tooldiag.classify import classify_signals
from tooldiag.cli.main import app

TAU2 = Path(__file__).resolve().parents[2] / "data" / "tau2"
SURROGATE = '"\\ud800 I cannot cancel this reservation."'


def _with_surrogate_in_last_assistant_text(raw: str) -> str:
    value = json.loads(raw)
    simulations = value["simulations"] if isinstance(value, dict) and "simulations" in value else [value]
    for message in reversed(simulations[0]["messages"]):  # the last reply (an opening greeting may be skipped)
        if message.get("role") == "assistant" and message.get("content"):
            message["content"] = "@@MARK@@"
            break
    else:  # pragma: no cover - the fixtures have assistant text
        raise AssertionError("no assistant text in the fixture")
    return json.dumps(value).replace('"@@MARK@@"', SURROGATE, 1)


def _diagnose(path: Path) -> dict:
    result = CliRunner().invoke(app, ["tau2", "diagnose", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_results_file_with_a_lone_surrogate_is_diagnosed(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(_with_surrogate_in_last_assistant_text((TAU2 / "retail_v0.json").read_text()))
    assert "\\ud800" in path.read_text()
    clean = _diagnose(TAU2 / "retail_v0.json")
    assert _diagnose(path).keys() == clean.keys()


def test_a_run_folder_with_a_lone_surrogate_is_diagnosed(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(TAU2 / "airline_v1", folder)
    simulation = sorted((folder / "simulations").glob("*.json"))[0]
    simulation.write_text(_with_surrogate_in_last_assistant_text(simulation.read_text()))
    assert "\\ud800" in simulation.read_text()
    assert _diagnose(folder)


def test_the_classifier_reads_raw_surrogates():
    assert "refuse" in {cls.value for cls in classify_signals("\ud800 I cannot cancel this reservation.")}
