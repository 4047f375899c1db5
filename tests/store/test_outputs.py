"""No ``--out`` overwrites a run (issue 20, defect 9: `export RUN --out RUN/run.sqlite` truncated the
store to 0 bytes; `report RUN --out RUN/run.sqlite` replaced it with Markdown and exited 0)."""

from __future__ import annotations

import pytest

import tooldiag
from tooldiag.cli.main import main as cli_main


def main(argv: list[str]) -> int:
    """The CLI in process; its exit status (0 when it returns)."""
    try:
        cli_main(argv)
    except SystemExit as stop:
        return int(stop.code or 0)
    return 0


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("outputs") / "run"
    tooldiag.run_bfcl("ref/oracle", run_dir, categories=["base"], limit=2)
    return run_dir


@pytest.mark.parametrize(
    "argv",
    [
        ["export", "{run}", "--out", "{run}/run.sqlite"],
        ["export", "{run}", "--format", "parquet", "--out", "{run}/run.sqlite"],
        ["report", "{run}", "--out", "{run}/run.sqlite"],
        ["report", "{run}", "--format", "html", "--out", "{run}/run.sqlite"],
        ["report", "{run}", "--format", "parquet", "--out", "{run}/run.sqlite"],
        ["cases", "{run}", "--out", "{run}/run.sqlite"],
        ["cases", "{run}", "--out", "{run}/run.sqlite-wal"],
    ],
)
def test_an_out_onto_the_store_is_refused_and_the_store_is_untouched(run, argv, capsys):
    before = (run / "run.sqlite").read_bytes()
    assert main([a.format(run=run) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --out ") and ("refusing" in err or "journal name" in err), err
    assert (run / "run.sqlite").read_bytes() == before
    assert not (run / "run.sqlite-wal").exists()
    assert tooldiag.report_runs([run])[0].overall_acc == 100.0  # the store still reads


def test_a_new_file_may_go_into_a_run_directory_but_not_replace_one(run, capsys):
    target = run / "report.md"
    assert main(["report", str(run), "--out", str(target)]) == 0
    text = target.read_text()
    assert main(["report", str(run), "--out", str(target)]) == 2
    assert "already exists inside the run directory" in capsys.readouterr().err
    assert target.read_text() == text
    target.unlink()


def test_outside_a_run_directory_an_out_is_replaced_as_before(run, tmp_path):
    target = tmp_path / "report.md"
    target.write_text("old")
    assert main(["report", str(run), "--out", str(target)]) == 0
    assert target.read_text().startswith("## Calibration profile")
