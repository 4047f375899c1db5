"""CLI: run, export, and one clear line with exit status 2 on bad input."""

import json
import sqlite3
import subprocess
import sys

import pytest

from tooldiag.cli.main import main


def cli(*args):
    return subprocess.run([sys.executable, "-m", "tooldiag", *args], capture_output=True, text=True)


def halt_run(run_dir, limit):
    """``tooldiag run bfcl`` of ref/halt on the first ``limit`` base cases, in process."""
    main(
        [
            "run",
            "bfcl",
            "--model",
            "ref/halt",
            "--run-dir",
            str(run_dir),
            "--categories",
            "base",
            "--limit",
            str(limit),
            "-q",
        ]
    )


def test_run_then_export_jsonl(tmp_path, capsys):
    main(
        [
            "run",
            "bfcl",
            "--model",
            "ref/oracle",
            "--run-dir",
            str(tmp_path / "r"),
            "--ids",
            "multi_turn_miss_param_0,multi_turn_base_2",
            "-q",
        ]
    )
    out_file = tmp_path / "out.jsonl"
    main(["export", str(tmp_path / "r"), "--format", "jsonl", "--out", str(out_file)])
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert [r["case_id"] for r in rows] == ["multi_turn_base_2", "multi_turn_miss_param_0"]
    for row in rows:
        assert row["passed"] is True and row["error_type"] is None
        assert isinstance(row["turns"], list) and all(isinstance(t, list) for t in row["turns"])
        emission = row["turns"][0][0]
        assert set(emission) >= {"text", "tool_calls"}
        assert all(set(c) >= {"name", "arguments"} for c in emission["tool_calls"])
    ask_turn = rows[1]["turns"][next(i for i, n in enumerate(rows[1]["turns"]) if n and n[0]["text"])]
    assert ask_turn[0]["text"].startswith("Could you")


def test_export_bfcl_format_roundtrip(tmp_path):
    halt_run(tmp_path / "r", 2)
    main(["export", str(tmp_path / "r"), "--format", "bfcl", "--out", str(tmp_path / "bfcl")])
    lines = (tmp_path / "bfcl" / "BFCL_v4_multi_turn_base_result.json").read_text().splitlines()
    entry = json.loads(lines[0])
    assert entry["id"] == "multi_turn_base_0"
    first_step = entry["result"][0][0]
    assert isinstance(first_step, list) and isinstance(next(iter(first_step[0].values())), str)


def test_export_out_paths(tmp_path):
    """A jsonl --out in a new folder is created; a folder/file mix-up is one clear line."""
    halt_run(tmp_path / "r", 1)
    nested = tmp_path / "new" / "deeper" / "run.jsonl"
    main(["export", str(tmp_path / "r"), "--out", str(nested)])
    assert json.loads(nested.read_text())["case_id"] == "multi_turn_base_0"
    for args, message in (
        (["--out", str(tmp_path)], "is a folder"),
        (["--format", "bfcl", "--out", str(nested)], "is a file"),
    ):
        proc = cli("export", str(tmp_path / "r"), *args)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert proc.stderr.startswith("error: ") and message in proc.stderr
    assert json.loads(nested.read_text())["case_id"] == "multi_turn_base_0"


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "bfcl", "--model", "nonsense", "--run-dir", "{d}/x"], "has no provider"),
        (["run", "bfcl", "--model", "acme/x", "--run-dir", "{d}/x"], "unknown model provider"),
        (["run", "bfcl", "--model", "ref/nope", "--run-dir", "{d}/x"], "unknown reference policy"),
        (
            ["run", "bfcl", "--model", "ref/oracle", "--run-dir", "{d}/x", "--categories", "simple"],
            "unknown BFCL category",
        ),
        (
            ["run", "bfcl", "--model", "ref/oracle", "--run-dir", "{d}/x", "--ids", "multi_turn_base_200"],
            "unknown BFCL case id",
        ),
        (
            ["run", "bfcl", "--model", "ref/oracle", "--run-dir", "{d}/x", "--extra-body", "{bad"],
            "--extra-body is not valid JSON",
        ),
        (["export", "{d}/missing"], "holds no tooldiag run"),
    ],
)
def test_bad_input_is_one_clear_line(tmp_path, args, message):
    proc = cli(*[a.replace("{d}", str(tmp_path)) for a in args])
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: ") and message in proc.stderr


def test_corrupt_and_foreign_stores_are_refused_without_damage(tmp_path):
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "run.sqlite").write_bytes(b"this is not sqlite at all" * 100)
    proc = cli("run", "bfcl", "--model", "ref/oracle", "--run-dir", str(corrupt))
    assert proc.returncode == 2 and "not a tooldiag run store" in proc.stderr and "Traceback" not in proc.stderr
    assert (corrupt / "run.sqlite").read_bytes() == b"this is not sqlite at all" * 100

    foreign = tmp_path / "foreign"
    foreign.mkdir()
    with sqlite3.connect(foreign / "run.sqlite") as conn:
        conn.execute("CREATE TABLE meta (key TEXT, value TEXT)")
        conn.execute("INSERT INTO meta VALUES ('format', 'something-else')")
    proc = cli("export", str(foreign))
    assert proc.returncode == 2 and "not a tooldiag run store" in proc.stderr

    # a tooldiag header over a damaged body: one line, never a traceback
    run_dir = tmp_path / "damaged"
    halt_run(run_dir, 1)
    with sqlite3.connect(run_dir / "run.sqlite") as conn:
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    for statement, message in (
        ("UPDATE meta SET value = 'x' WHERE key = 'schema_version'", "unreadable schema version"),
        ("DROP TABLE cases", "has no cases table"),
    ):
        with sqlite3.connect(run_dir / "run.sqlite") as conn:
            conn.execute(statement)
        proc = cli("export", str(run_dir))
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr
        with sqlite3.connect(run_dir / "run.sqlite") as conn:
            conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (version,))


def test_different_config_refused_and_store_kept(tmp_path):
    run_dir = tmp_path / "r"
    halt_run(run_dir, 2)
    before = (run_dir / "run.sqlite").stat().st_size
    proc = cli(
        "run", "bfcl", "--model", "ref/oracle", "--run-dir", str(run_dir), "--categories", "base", "--limit", "2"
    )
    assert proc.returncode == 2 and "holds a different run" in proc.stderr
    assert (run_dir / "run.sqlite").stat().st_size == before
    with sqlite3.connect(run_dir / "run.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM cases").fetchone()[0] == 2
    proc = cli(
        "run",
        "bfcl",
        "--model",
        "ref/halt",
        "--run-dir",
        str(run_dir),
        "--categories",
        "base",
        "--limit",
        "2",
        "--temperature",
        "0.7",
    )
    assert proc.returncode == 2 and "temperature" in proc.stderr


def test_import_then_export_bfcl_regrades_identically(tmp_path):
    """An imported folder exported back as BFCL files imports to the same grades."""
    import pathlib

    from tooldiag.store import RunStore

    fixtures = pathlib.Path(__file__).parents[1] / "data" / "bfcl_results"
    for folder in sorted(p for p in fixtures.iterdir() if p.is_dir()):
        main(["import", "bfcl", str(folder), "--model-name", "m", "--run-dir", str(tmp_path / folder.name / "a"), "-q"])
        main(
            [
                "export",
                str(tmp_path / folder.name / "a"),
                "--format",
                "bfcl",
                "--out",
                str(tmp_path / folder.name / "x"),
            ]
        )
        main(
            [
                "import",
                "bfcl",
                str(tmp_path / folder.name / "x"),
                "--model-name",
                "m",
                "--run-dir",
                str(tmp_path / folder.name / "b"),
                "-q",
            ]
        )
        grades = []
        for run in ("a", "b"):
            with RunStore.open(tmp_path / folder.name / run) as store:
                grades.append([(r.case_id, r.passed, r.error_type) for r in store.iter_cases()])
        assert grades[0] == grades[1] and grades[0], folder.name


@pytest.mark.parametrize(
    "args",
    [
        ["report", "--bogus"],
        ["run", "bfcl", "--model", "ref/oracle", "--run-dir", "x", "--limit", "0"],
        ["run", "bfcl", "--run-dir", "x"],
        ["nosuchcommand"],
    ],
)
def test_usage_errors_are_short_and_exit_2(args):
    proc = cli(*args)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "Usage:" in proc.stderr
